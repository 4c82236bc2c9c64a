//! The tooling around the protocol: running checks (Stateright's and our own searches), the
//! Explorer's text and picture, traces, and the checker's benchmark. Nothing here is part of
//! the protocol; everything here reads it through `RebalanceModel::step` and the state.

pub mod bench;
pub mod checker;
pub mod churn;
pub mod cycle;
pub mod describe;
pub mod expect;
pub mod explorer;
pub mod lasso;
pub mod pattern;
pub mod render;
pub mod shortest;
pub mod suite;
pub mod trace;
pub mod walk;
