//! An exhaustive Stateright model of the Fluss coordinator's bucket-rebalance protocol, as
//! stated in `spec/protocol.md`. Rules are cited as `R1`..`R24`, properties by their spec names.
//!
//! Public API for the conformance harness:
//! - [`Config`], [`preset`], [`preset_names`], [`Config::from_json_file`], [`ConfigError`];
//! - [`Bug`], [`BugSet`];
//! - [`RebalanceModel`] (implements `stateright::Model<State = SystemState, Action = Action>`),
//!   [`RebalanceModel::step`], [`RebalanceModel::register_plan`];
//! - [`SystemState`] and its parts, [`Action`], [`StepOutput`], [`ClientReply`];
//! - [`Trace`] (JSON traces, versions 1 and 2, see `spec/trace-format.md`), with
//!   [`expect::Observation`] for checking a trace's expectations on another implementation.

// The protocol: state, actions, the coordinator's rules, the environment, the properties, and
// the Stateright model that steps them.
pub mod action;
pub mod bug;
pub mod config;
mod coordinator;
mod environment;
pub mod inline;
pub mod message;
pub mod model;
pub mod presets;
pub mod properties;
pub mod rule;
pub mod spill;
pub mod state;
pub mod transition;
pub mod types;

/// The predicates behind spec 9's search reductions (dead and superseded messages), public so
/// that `model/tests/reductions.rs` can check the claim each one makes on every state it is
/// asked about.
pub mod reductions {
    pub use crate::environment::{adjust_isr_response_dead, nli_dead, nli_superseded, supersedes};
}

// The tooling (`src/check/`), re-exported at the crate root where it always was.
pub mod check;
pub use check::{
    bench, checker, churn, cycle, describe, expect, explorer, lasso, pattern, render, shortest,
    trace, walk,
};

pub use action::{Action, ActionKind, CancelReply, ClientReply, RegisterReply, StepOutput};
pub use bug::{Bug, BugSet};
pub use config::{
    BucketConfig, Budgets, Config, ConfigError, PlanEntryConfig, PlanTarget, StoreConfig,
    TaskConfig,
};
pub use message::{AdjustIsr, AdjustIsrResponse, AdjustIsrResult, Message, Nli, NliResponse};
pub use model::RebalanceModel;
pub use presets::{preset, preset_names};
pub use rule::{Rule, RuleSet};
pub use state::{Event, SystemState};
pub use trace::Trace;
pub use types::*;
