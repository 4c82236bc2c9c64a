//! Conformance between the checked model (`rebalance-model`) and the production manager
//! (`rebalance-manager`): every model step is mirrored on the manager, and the emitted effects
//! and a projection of both states are compared after every step.
//!
//! - [`harness`]: one step mirrored and compared;
//! - [`replay`]: a trace file, step by step;
//! - [`exhaustive`]: every edge of a preset's reachable graph;
//! - [`random`]: long seeded random walks with shrinking;
//! - [`coverage`], [`report`], [`observe`], [`translate`], [`diff`]: the parts.

pub mod coverage;
pub mod diff;
pub mod exhaustive;
pub mod harness;
pub mod observe;
pub mod random;
pub mod replay;
pub mod report;
pub mod tokens;
pub mod translate;
