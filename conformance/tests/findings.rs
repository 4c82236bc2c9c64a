//! Regression traces for findings (spec/findings.md): each replays with model and manager in
//! agreement, every safety property of the model holds along it, and it ends as decided.

use std::path::Path;

use rebalance_conformance::replay::replay;
use rebalance_model::trace::Replay;
use rebalance_model::{BucketStatus, RebalanceModel, Rule, SystemState, Trace};
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

/// F24: a drained bucket reaches its target and completes; the cancel makes the rebalance
/// CANCELED; after a coordinator crash, R16 copies the final task's status to every bucket, so
/// the progress reply shows the moved bucket CANCELED, which otherwise promises a bucket that
/// never left its origin (INV-STATUS-PROMISE exempts exactly this copy, D8). The manager does
/// the same. A client that reads CANCELED per bucket after a failover cannot tell what moved.
#[test]
fn f24_after_a_restart_a_drained_bucket_at_its_target_is_reported_canceled() {
    let run = agreed_run("canceled-copy-hides-a-drained-move.json", 9);
    let before_crash = &run.states[run.states.len() - 3];
    assert_eq!(
        before_crash.coordinator.status_of(0),
        Some(BucketStatus::Completed)
    );
    let last = run.states.last().expect("states");
    let plan = &last.coordinator.plan[0];
    assert_eq!(last.coordinator.status_of(0), Some(BucketStatus::Canceled));
    assert_eq!(
        last.store.buckets.assignment[0], plan.trs,
        "the bucket moved"
    );
    assert_ne!(plan.trs, plan.ors);
    assert!(last.ghost.final_recovered, "a status copied by R16");
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

/// F14: the repair R23.5 makes on the tick after a failed liveness or deletion write, on both
/// sides, with what the tick wrote and left. Each trace names the case it pins.
fn liveness_retry(name: &str, steps: usize) -> (rebalance_model::StepOutput, SystemState) {
    let run = agreed_run(name, steps);
    let tick = run.outputs.last().expect("outputs").clone();
    assert!(
        tick.rules.contains(Rule::R23_5),
        "{name}: the tick ran no R23.5"
    );
    let end = run.states.last().expect("states").clone();
    assert!(
        end.coordinator.liveness_repairs.is_empty() && end.coordinator.deletion_retries.is_empty(),
        "{name}: a retry is left pending"
    );
    (tick, end)
}

#[test]
fn f14_a_failed_crash_write_of_a_one_replica_leader_is_repaired_to_no_leader() {
    let (tick, end) = liveness_retry("liveness-retry-elects-none.json", 3);
    let lai = end.store.buckets.lai[0];
    assert_eq!(
        (lai.leader, lai.isr.iter().collect::<Vec<_>>()),
        (None, vec![0])
    );
    assert_eq!(tick.store_ops, 1);
}

#[test]
fn f14_a_repair_after_the_server_came_back_keeps_the_live_leader_and_writes_nothing() {
    let (tick, end) = liveness_retry("liveness-retry-after-restart-changes-nothing.json", 7);
    assert_eq!(tick.store_ops, 0);
    assert!(tick.sent.is_empty());
    let lai = end.store.buckets.lai[0];
    assert_eq!((lai.leader, lai.bucket_epoch), (Some(0), 2));
}

#[test]
fn f14_a_repair_while_the_server_is_down_removes_it_from_the_isr() {
    let (tick, end) = liveness_retry("liveness-retry-shrinks-isr.json", 6);
    assert_eq!(tick.store_ops, 1);
    let lai = end.store.buckets.lai[0];
    assert_eq!(
        (lai.leader, lai.isr.iter().collect::<Vec<_>>()),
        (Some(0), vec![0])
    );
}

#[test]
fn f14_a_failed_deletion_marker_is_written_on_the_next_tick() {
    let (tick, end) = liveness_retry("deletion-retry-on-tick.json", 3);
    assert_eq!(tick.store_ops, 1);
    assert!(end.store.buckets.deleted[0] && end.coordinator.cache.deleted[0]);
}

/// F22 (F20's scenario under the spec): the leader of a leader-only bucket adopts the view R19
/// sent after server 1's crash, then receives the refusal of its older proposal and parks; R20's
/// resend was absorbed as a copy of the request it already held. The first Reconcile's election
/// over `[2, 0, 1]` keeps leader 0, and R5 resends the current request (no write, no epoch
/// change), which frees it: it proposes again, the ISR grows, the next Reconcile elects 2, whose
/// ack completes the bucket. Model and manager agree on every step and on every expectation the
/// trace states; an implementation replayed with `--sut` must too.
#[test]
fn f22_a_parked_leader_gets_the_current_request_again_at_the_reconcile() {
    let trace = load("refused-leader-resent.json");
    let ok = replay(&trace).expect("model and manager agree, expectations included");
    assert_eq!(ok.steps, 33);
    let run = agreed_run("refused-leader-resent.json", 33);
    let parked = &run.states[7];
    assert!(parked.view(0, 0).as_ref().unwrap().isr_rejected);
    let reconcile = &run.outputs[15];
    assert!(reconcile.rules.contains(Rule::R5));
    assert_eq!(reconcile.store_ops, 0, "the resend writes nothing");
    assert!(reconcile.sent.iter().any(|m| matches!(
        m,
        rebalance_model::Message::Nli(n) if n.to == 0 && n.bucket_epoch == 1
    )));
    assert_eq!(
        run.states.last().unwrap().coordinator.status_of(0),
        Some(BucketStatus::Completed)
    );
}
