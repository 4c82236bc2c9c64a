//! Regression traces for findings (spec/findings.md): each replays with model and manager in
//! agreement, every safety property of the model holds along it, and it ends as decided.

use std::path::Path;

use rebalance_conformance::replay::replay;
use rebalance_model::trace::Replay;
use rebalance_model::{BucketStatus, RebalanceModel, Trace};
use stateright::{Expectation, Model};

fn load(name: &str) -> Trace {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("traces")
        .join(name);
    Trace::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn assert_safe_along(trace: &Trace) {
    let model: RebalanceModel = trace.model();
    let run = trace.replay().expect("valid trace");
    for (i, s) in run.states.iter().enumerate() {
        for p in model.properties() {
            if p.expectation == Expectation::Always {
                assert!((p.condition)(&model, s), "{} fails after step {i}", p.name);
            }
        }
    }
}

/// Replays the regression trace `name`: safe along the way, model and manager agreeing on all
/// `steps` steps. Returns the model's run for the finding's own assertions.
fn agreed_run(name: &str, steps: usize) -> Replay {
    let trace = load(name);
    assert_safe_along(&trace);
    let ok = replay(&trace).expect("model and manager agree");
    assert_eq!(ok.steps, steps);
    trace.replay().expect("valid")
}

#[test]
fn f1_a_drained_leader_only_bucket_back_at_origin_is_canceled_not_reelected() {
    let run = agreed_run("cancel-drained-leader-back-at-origin.json", 11);
    let last = run.states.last().expect("states");
    assert_eq!(last.coordinator.status_of(0), Some(BucketStatus::Canceled));
    assert!(run
        .outputs
        .last()
        .expect("outputs")
        .rules
        .contains(rebalance_model::Rule::R14_1b));
}

/// C4 (found by mutation testing): no CI preset reaches R11's wait, because a one-replica ISR is
/// never shrunk. Here an RF-2 move is at target `[1, 2]` with server 1 down (ISR `{2}`): the new
/// leader's current ack must neither complete the bucket nor rewrite and resend.
#[test]
fn c4_at_target_with_a_target_replica_down_the_new_leaders_ack_waits() {
    let run = agreed_run("at-target-replica-down-waits.json", 7);
    let last = run.outputs.last().expect("outputs");
    assert!(
        last.rules.contains(rebalance_model::Rule::R12)
            && last.rules.contains(rebalance_model::Rule::R11)
    );
    assert!(last.sent.is_empty(), "R11 resent: {:?}", last.sent);
    assert_eq!(last.store_ops, 0, "R11 wrote");
    let end = run.states.last().expect("states");
    assert_eq!(
        end.coordinator.status_of(0),
        Some(BucketStatus::Rebalancing)
    );
}

/// C5 (found by mutation testing): the manager refused malformed plans, but no spec rule said
/// so and the model registered only valid plans, so a manager that accepted them passed every
/// walk. R1 now refuses a plan naming a server twice in a target or a bucket twice, writing
/// nothing; the next valid plan is still rebalance 1.
#[test]
fn c5_register_refuses_an_invalid_plan_and_writes_nothing() {
    let run = agreed_run("hand-written-invalid-plan-refused.json", 3);
    use rebalance_model::{ClientReply, RegisterReply};
    let replies: Vec<_> = run.outputs.iter().map(|o| o.reply.clone()).collect();
    assert_eq!(
        replies,
        [
            Some(ClientReply::Register(RegisterReply::RejectedInvalidPlan)),
            Some(ClientReply::Register(RegisterReply::RejectedInvalidPlan)),
            Some(ClientReply::Register(RegisterReply::Accepted(1))),
        ]
    );
    assert!(run.outputs[..2].iter().all(|o| o.store_ops == 0));
}
