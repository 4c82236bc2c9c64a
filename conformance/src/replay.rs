//! Replays a trace (written by the model or by hand) against the manager, step by step, and
//! checks the trace's `expect` blocks on the manager's side.

use rebalance_model::trace::expect::ExpectFailure;
use rebalance_model::trace::TraceError;
use rebalance_model::Trace;

use crate::coverage::Coverage;
use crate::expect;
use crate::harness::{Failure, Mismatch};
use crate::lockstep::Lockstep;
use crate::projection::{self, Effects};
use crate::sut::ManagerSide;

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
    /// The trace's expectations the manager did not meet (each was checked on the manager's
    /// projection; where the manager meets one, the model, which agrees with it, does too).
    pub failures: Vec<ExpectFailure>,
}

pub fn replay(trace: &Trace) -> Result<ReplayOk, ReplayError> {
    replay_on::<rebalance_manager::Manager<rebalance_manager::MemStore>>(trace, &()).map_err(|e| {
        match e {
            SideReplayError::Replay(e) => e,
            SideReplayError::Sut { error, .. } => match *error {},
        }
    })
}

/// Why a replay on a manager side did not agree: as [`ReplayError`], or the side itself failed
/// at `step` (1-based; 0 is the start): an implementation under test crashed, hung or sent a
/// malformed line (see [`crate::sut`]).
#[derive(Clone, Debug)]
pub enum SideReplayError<E> {
    Replay(ReplayError),
    Sut { step: usize, error: Box<E> },
}

/// [`replay`] on the manager side `launcher` starts (a child process for `--sut`).
pub fn replay_on<S: ManagerSide>(
    trace: &Trace,
    launcher: &S::Launcher,
) -> Result<ReplayOk, SideReplayError<S::Error>> {
    let model = trace.model();
    // A trace is valid or not as a whole: an invalid one is reported as such even where the
    // manager diverges before its invalid step (the model's own replay, on that path only).
    let diverged = |step, failure| match (trace.replay(), failure) {
        (Err(e), _) => SideReplayError::Replay(ReplayError::Invalid(e)),
        (Ok(_), Failure::Diverged(mismatch)) => {
            SideReplayError::Replay(ReplayError::Divergence { step, mismatch })
        }
        (Ok(_), Failure::Sut(error)) => SideReplayError::Sut {
            step,
            error: Box::new(error),
        },
    };
    let mut lockstep: Lockstep<S> =
        Lockstep::launch(&model, launcher).map_err(|f| diverged(0, f))?;
    let mut effects: Vec<Effects> = Vec::with_capacity(trace.steps.len());
    let mut failures = Vec::new();
    let mut check = |after: usize, lockstep: &Lockstep<'_, S>, effects: &[Effects]| {
        for e in trace.expectations.iter().filter(|e| e.after == after) {
            let state = lockstep.harness().projection();
            let seen = expect::observe(&state, &effects[e.from..e.after]);
            failures.extend(e.check(&seen));
        }
    };
    check(0, &lockstep, &effects);
    for (index, action) in trace.steps.iter().enumerate() {
        match lockstep.try_step(action) {
            Ok(Some(report)) => {
                let mut e = Effects::default();
                projection::manager::effects(action, &report.effects, &mut e);
                effects.push(e);
            }
            Ok(None) => {
                return Err(SideReplayError::Replay(ReplayError::Invalid(
                    trace.replay().err().unwrap_or(TraceError::NotEnabled {
                        index,
                        at: format!("step {}", index + 1),
                        action: *action,
                        enabled: Vec::new(),
                        exhausted: Vec::new(),
                        why: None,
                    }),
                )))
            }
            Err(failure) => return Err(diverged(index + 1, failure)),
        }
        check(index + 1, &lockstep, &effects);
    }
    Ok(ReplayOk {
        steps: trace.steps.len(),
        progress: lockstep.harness().manager.progress(),
        coverage: lockstep.into_coverage(),
        failures,
    })
}
