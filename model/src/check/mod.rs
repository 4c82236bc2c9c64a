//! The searches: the exhaustive check with our verdicts ([`checker`]: our own DFS, [`dfs`], or
//! Stateright's BFS and simulation), and our own graph searches over
//! [`crate::RebalanceModel::step`]: depth-first walks with one fingerprint per state ([`walk`]),
//! shortest counterexamples and examples ([`shortest`]), and the fair-cycle search for liveness
//! ([`cycle`], with its lassos in [`lasso`]). Nothing here is part of the protocol; everything
//! reads it through the model's step and state. `stateright_model` is the glue that makes
//! [`crate::RebalanceModel`] a `stateright::Model`, for Stateright's checkers and Explorer.

pub mod checker;
pub mod cycle;
pub mod dfs;
pub mod fault_coverage;
pub mod lasso;
pub mod por;
pub mod shortest;
mod stateright_model;
pub mod walk;
