//! Conformance between the checked model (`rebalance-model`) and the production manager
//! (`rebalance-manager`): every model step is mirrored on the manager, and the emitted effects
//! and a projection of both states are compared after every step.
//!
//! - [`projection`]: what is compared, as plain values built once from each side;
//! - [`harness`]: the manager side of one step, mirrored and compared;
//! - [`lockstep`]: the model and the manager side stepped together, with coverage;
//! - [`replay`]: a trace file, step by step, with its `expect` blocks checked on the manager
//!   ([`expect`]);
//! - [`exhaustive`]: every edge of a preset's reachable graph;
//! - [`random`]: long seeded random walks with shrinking;
//! - [`coverage`], [`report`], [`translate`], [`diff`]: the parts.

pub mod coverage;
pub mod diff;
pub mod exhaustive;
pub mod expect;
pub mod harness;
pub mod lockstep;
pub mod projection;
pub mod random;
pub mod replay;
pub mod report;
pub mod sut;
pub mod translate;
pub mod validate;
