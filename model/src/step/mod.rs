//! The step: the actions ([`action`]), the environment's own moves (tablet servers, network,
//! faults: `environment`), the coordinator's rules R1-R24 (`coordinator`, in parallel with the
//! manager's `impl/src/core/manager/`), the history a transition records ([`transition`]), the
//! initial state (`initial`) and the model that ties them into one transition function
//! ([`model`]).

pub mod action;
pub(crate) mod coordinator;
pub(crate) mod environment;
pub(crate) mod initial;
pub mod model;
pub mod transition;
