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
//!   [`trace::expect::Observation`] for checking a trace's expectations on another implementation.

// The protocol, by concern: the state and its parts (`state/`: the system state, identifiers,
// messages, the inline containers), the step (`step/`: actions, the environment, the
// coordinator's rules, the transition's history, the Stateright model), the verdict vocabulary
// (`verdict/`: properties and companions, bug switches, rule labels) and the configuration with
// its presets (`config/`).
pub mod config;
pub mod state;
pub mod step;
pub mod verdict;

/// The predicates behind spec 9's search reductions (dead and superseded messages), public so
/// that `model/tests/reductions.rs` can check the claim each one makes on every state it is
/// asked about.
pub mod reductions {
    pub use crate::step::environment::{
        adjust_isr_response_dead, nli_dead, nli_superseded, supersedes,
    };
}

/// What a ghost of spec 7.1 reads from a step's output, public so that
/// `model/tests/step_labels.rs` can check it against what the step did to the store.
pub mod ghost_inputs {
    pub use crate::step::coordinator::responses::adjust_isr_accepted;
}

/// The abstract rest of the plan (spec 9, "One bucket against the rest of the plan"): the
/// canonical metadata of an abstract bucket and the abstraction function, public so that
/// `model/tests/rest_premise.rs` can check that every step of the whole model is matched
/// by steps of the abstract one.
pub mod rest {
    pub use crate::step::coordinator::rest::{abstraction, canonical_meta, stale};
}

// Around the protocol, each concern its own folder, one path per module: the trace contract of
// `spec/trace-format.md` that the conformance harness consumes (`trace/`: traces, step
// patterns, expectations, suites), the searches with the reduction and the Stateright glue
// (`check/`), and what people read (`view/`: the Explorer, descriptions, pictures). The checker's benchmark and the churn measurement
// belong to the binary (`src/bin/rebalance-model/`).
pub mod check;
pub mod trace;
pub mod view;

pub use config::presets::{preset, preset_names};
pub use config::{
    BucketConfig, Budgets, Config, ConfigError, PlanEntryConfig, PlanTarget, StoreConfig,
    TaskConfig,
};
pub use state::message::{
    AdjustIsr, AdjustIsrResponse, AdjustIsrResult, Message, Nli, NliResponse,
};
pub use state::types::*;
pub use state::{Event, SystemState};
pub use step::action::{Action, ActionKind, CancelReply, ClientReply, RegisterReply, StepOutput};
pub use step::model::RebalanceModel;
pub use trace::Trace;
pub use verdict::bug::{Bug, BugSet};
pub use verdict::rule::{Rule, RuleSet};
