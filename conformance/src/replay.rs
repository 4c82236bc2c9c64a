//! Replays a trace (written by the model or by hand) against the manager, step by step.

use rebalance_model::trace::TraceError;
use rebalance_model::Trace;

use crate::coverage::Coverage;
use crate::harness::{Harness, Mismatch};

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
    let run = trace.replay().map_err(ReplayError::Invalid)?;
    let model = trace.model();
    let mut harness = Harness::start(&model, &run.states[0])
        .map_err(|mismatch| ReplayError::Divergence { step: 0, mismatch })?;
    let mut coverage = Coverage::default();
    for (i, action) in trace.steps.iter().enumerate() {
        let (pre, post, out) = (&run.states[i], &run.states[i + 1], &run.outputs[i]);
        harness
            .apply(&model, pre, action, post, out)
            .map_err(|mismatch| ReplayError::Divergence {
                step: i + 1,
                mismatch,
            })?;
        coverage.record(action, out);
    }
    Ok(ReplayOk {
        steps: trace.steps.len(),
        coverage,
        progress: harness.manager.progress(),
    })
}
