//! Replays a trace (written by the model or by hand) against the manager, step by step.

use rebalance_model::trace::TraceError;
use rebalance_model::Trace;

use crate::coverage::Coverage;
use crate::harness::Mismatch;
use crate::lockstep::{Lockstep, StepError};

/// Why a replay did not agree.
#[derive(Clone, Debug)]
pub enum ReplayError {
    /// The trace is not a valid model trace: unreadable, or a step the model does not enable.
    Invalid(TraceError),
    /// Model and manager differ at `step` (1-based; 0 is the initial state).
    Divergence { step: usize, mismatch: Mismatch },
}

/// A replay where model and manager agreed at every step.
#[derive(Clone, Debug)]
pub struct ReplayOk {
    pub steps: usize,
    pub coverage: Coverage,
    /// The final per-bucket statuses and overall status, as the manager reports them.
    pub progress: rebalance_manager::Progress,
}

pub fn replay(trace: &Trace) -> Result<ReplayOk, ReplayError> {
    let model = trace.model();
    // A trace is valid or not as a whole: an invalid one is reported as such even where the
    // manager diverges before its invalid step (the model's own replay, on that path only).
    let diverged = |step, mismatch| match trace.replay() {
        Err(e) => ReplayError::Invalid(e),
        Ok(_) => ReplayError::Divergence { step, mismatch },
    };
    let mut lockstep = Lockstep::start(&model).map_err(|m| diverged(0, m))?;
    for (index, action) in trace.steps.iter().enumerate() {
        match lockstep.step(action) {
            Ok(_) => {}
            Err(StepError::Disabled) => {
                return Err(ReplayError::Invalid(TraceError::NotEnabled {
                    index,
                    action: *action,
                }))
            }
            Err(StepError::Diverged(mismatch)) => return Err(diverged(index + 1, mismatch)),
        }
    }
    Ok(ReplayOk {
        steps: trace.steps.len(),
        progress: lockstep.harness().manager.progress(),
        coverage: lockstep.into_coverage(),
    })
}
