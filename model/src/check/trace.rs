//! Version 1 JSON traces: a configuration, the bug switches and a list of actions
//! (documented in `spec/trace-format.md`).

use crate::action::{Action, StepOutput};
use crate::bug::{Bug, BugSet};
use crate::config::Config;
use crate::model::RebalanceModel;
use crate::state::SystemState;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trace {
    /// Always 1.
    pub version: u32,
    pub config: Config,
    #[serde(default)]
    pub bugs: Vec<Bug>,
    pub steps: Vec<Action>,
}

/// Why a trace could not be read or replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceError {
    Io(String),
    Parse(String),
    Version(u32),
    Config(String),
    /// Step `index` (0-based) is not enabled in the state reached by the steps before it.
    NotEnabled {
        index: usize,
        action: Action,
    },
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(m) | TraceError::Parse(m) | TraceError::Config(m) => f.write_str(m),
            TraceError::Version(v) => write!(f, "unsupported trace version {v} (expected 1)"),
            TraceError::NotEnabled { index, action } => write!(
                f,
                "step {} is not enabled: {}",
                index + 1,
                crate::describe::action(action)
            ),
        }
    }
}

impl std::error::Error for TraceError {}

/// The states and outputs of a replayed trace: `states[0]` is the initial state,
/// `states[i + 1]` the state after step `i`.
pub struct Replay {
    pub states: Vec<SystemState>,
    pub outputs: Vec<StepOutput>,
}

impl Trace {
    pub fn new(config: Config, bugs: BugSet, steps: Vec<Action>) -> Trace {
        Trace {
            version: 1,
            config,
            bugs: bugs.to_vec(),
            steps,
        }
    }

    pub fn from_json(text: &str) -> Result<Trace, TraceError> {
        let t: Trace = serde_json::from_str(text).map_err(|e| TraceError::Parse(e.to_string()))?;
        if t.version != 1 {
            return Err(TraceError::Version(t.version));
        }
        t.config
            .validate()
            .map_err(|e| TraceError::Config(e.to_string()))?;
        Ok(t)
    }

    pub fn read(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path.as_ref())
            .map_err(|e| TraceError::Io(format!("{}: {e}", path.as_ref().display())))?;
        Trace::from_json(&text)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("traces serialize")
    }

    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        std::fs::write(path.as_ref(), self.to_json() + "\n")
            .map_err(|e| TraceError::Io(format!("{}: {e}", path.as_ref().display())))
    }

    pub fn model(&self) -> RebalanceModel {
        RebalanceModel::new(self.config.clone(), BugSet::of(&self.bugs))
    }

    /// Replays every step through [`RebalanceModel::step`]; reports the first step that is not
    /// enabled.
    pub fn replay(&self) -> Result<Replay, TraceError> {
        let model = self.model();
        let mut states = vec![model.init_state()];
        let mut outputs = Vec::new();
        for (index, action) in self.steps.iter().enumerate() {
            let pre = states.last().expect("init state");
            let (next, out) = model.step(pre, action).ok_or(TraceError::NotEnabled {
                index,
                action: *action,
            })?;
            states.push(next);
            outputs.push(out);
        }
        Ok(Replay { states, outputs })
    }
}
