//! The harness has teeth: each historical bug's shortest counterexample, replayed against the
//! manager (which implements the fixed protocol), diverges, and it diverges at the step where
//! the old behaviour acts, never earlier.

use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_model::shortest::first_discoveries;
use rebalance_model::{preset, Action, Bug, BugSet, Event, RebalanceModel, Trace};

/// Per bug: the CI preset its counterexample is found on, the 1-based step at which the manager
/// must diverge, and what that step is (the first step where the old behaviour differs).
const EXPECTED: &[(Bug, &str, usize, Acts)] = &[
    // H1: the Timeout event finishes the bucket instead of tracking it.
    (Bug::TimeoutCompletes, "tiny", 4, Acts::TimeoutEvent),
    // H2: the finalize write (here the one a cancel triggers) fails and is ignored.
    (Bug::FinalNotPersisted, "ci-store", 2, Acts::StoreFault),
    // H3: the cancel's intent write fails and the cancel goes ahead.
    (
        Bug::CancelBestEffort,
        "ci-store",
        2,
        Acts::CancelWithStoreFault,
    ),
    // H5: a response with a stale context completes the bucket.
    (Bug::NoRequestFencing, "ci-messages", 6, Acts::Response),
    // H6: the retry of Phase A bumps the bucket epoch.
    (Bug::EpochBumpOnRetry, "tiny", 5, Acts::ReconcileEvent),
    // H8: admission ignores the tracked cap (here right after recovery restored a bucket).
    (
        Bug::UnboundedTracked,
        "ci-two-buckets",
        7,
        Acts::RecoverEvent,
    ),
    // H10 and H13: recovery puts a mid-migration bucket into pending.
    (
        Bug::CancelAfterRestart,
        "ci-two-buckets",
        14,
        Acts::RecoverEvent,
    ),
    (Bug::RecoveryOrder, "ci-two-buckets", 14, Acts::RecoverEvent),
];

/// What the diverging step must be.
#[derive(Clone, Copy, Debug)]
enum Acts {
    TimeoutEvent,
    ReconcileEvent,
    RecoverEvent,
    Response,
    StoreFault,
    CancelWithStoreFault,
}

impl Acts {
    fn matches(self, a: &Action) -> bool {
        match self {
            Acts::TimeoutEvent => matches!(
                a,
                Action::ProcessEvent {
                    event: Event::Timeout { .. },
                    ..
                }
            ),
            Acts::ReconcileEvent => {
                matches!(
                    a,
                    Action::ProcessEvent {
                        event: Event::Reconcile { .. },
                        ..
                    }
                )
            }
            Acts::RecoverEvent => matches!(
                a,
                Action::ProcessEvent {
                    event: Event::Recover,
                    ..
                }
            ),
            Acts::Response => matches!(
                a,
                Action::DeliverNliResponse {
                    fail_store_op: None,
                    ..
                }
            ),
            Acts::StoreFault => a.fail_store_op().is_some(),
            Acts::CancelWithStoreFault => {
                matches!(
                    a,
                    Action::Cancel {
                        fail_store_op: Some(_)
                    }
                )
            }
        }
    }
}

fn describe(a: &Action) -> String {
    rebalance_model::describe::action(a)
}

#[test]
fn every_bug_counterexample_diverges_where_the_old_behaviour_acts() {
    let mut report = Vec::new();
    let mut wrong = Vec::new();
    for &(bug, preset_name, want_step, acts) in EXPECTED {
        let config = preset(preset_name).expect("preset exists");
        let model = RebalanceModel::new(config.clone(), BugSet::of(&[bug]));
        let found = first_discoveries(&model, &[bug.violated_property()]);
        let cx = found
            .iter()
            .find(|c| c.property == bug.violated_property())
            .unwrap_or_else(|| panic!("{bug}: no counterexample on {preset_name}"));
        let trace = Trace::new(config, BugSet::of(&[bug]), cx.actions.clone());
        match replay(&trace) {
            Ok(_) => panic!("{bug}: the manager agreed with the buggy model on every step"),
            Err(ReplayError::Invalid(e)) => panic!("{bug}: the model's own trace is invalid: {e}"),
            Err(ReplayError::Divergence { step, mismatch }) => {
                report.push(format!(
                    "{bug} on {preset_name}: counterexample {} steps, diverges at step {step} ({}): {}",
                    cx.actions.len(),
                    describe(&cx.actions[step - 1]),
                    mismatch.summary
                ));
                if step != want_step {
                    wrong.push(format!(
                        "{bug}: diverged at step {step}, pinned {want_step}"
                    ));
                }
                if !acts.matches(&cx.actions[step - 1]) {
                    wrong.push(format!("{bug}: step {step} is not {acts:?}"));
                }
            }
        }
    }
    println!("{}", report.join("\n"));
    assert!(
        wrong.is_empty(),
        "{}\n{}",
        wrong.join("\n"),
        report.join("\n")
    );
}
