//! The client rules' parts that no verdict reads (spec 5, R1 and R2), checked where they act.
//! Part of the model's mutation oracle: R1's `+ 1` turned to `- 1`, and R2's own finalize
//! turned off, changed no verdict on any CI preset (spec/findings.md F18), since rebalance ids
//! are only ever compared for equality and every CI preset admits a bucket at once.

mod common;
use common::each_edge;
use rebalance_model::check::por::reduced;
use rebalance_model::{
    preset, Action, BucketStatus, BugSet, ClientReply, OverallStatus, RebalanceModel,
    RegisterReply, TaskStatus,
};
use std::collections::HashSet;

/// R1: an accepted Register numbers its rebalance one above the stored task's id, or 1.
#[test]
fn every_accepted_register_numbers_its_rebalance_one_above_the_stored_one() {
    // ci-leader registers twice.
    let (model, _) = reduced(preset("ci-leader").unwrap(), BugSet::none());
    let mut accepted = HashSet::new();
    each_edge(&model, |s, a, next, out| {
        if let (Action::Register { .. }, Some(ClientReply::Register(RegisterReply::Accepted(id)))) =
            (&a, &out.reply)
        {
            let before = s.store.task.as_ref().map_or(0, |t| t.id);
            assert_eq!(*id, before + 1, "{a:?} after task {before}");
            assert_eq!(next.coordinator.rid, Some(*id));
            accepted.insert(*id);
        }
    });
    assert!(
        accepted.len() >= 2,
        "a second register was accepted: {accepted:?}"
    );
}

/// R2 with admission paused (`max_inflight = 0`): the cancel cancels every pending bucket, and
/// with nothing in progress it finalizes at once, the one case where R2's own `finalize()` is
/// what ends the rebalance (no `finish` of an active bucket does).
#[test]
fn a_cancel_with_every_bucket_pending_finalizes_canceled_at_once() {
    let mut c = preset("ci-store").unwrap();
    c.max_inflight = 0;
    let model = RebalanceModel::new(c, BugSet::none());
    let s = model.init_state();
    let register = Action::Register {
        plan: None,
        fail_store_op: None,
    };
    let (s, _) = model.step(&s, &register).expect("register enabled");
    assert_eq!(s.coordinator.status_of(0), Some(BucketStatus::NotStarted));
    let (s, _) = model
        .step(
            &s,
            &Action::Cancel {
                fail_store_op: None,
            },
        )
        .expect("cancel enabled");
    assert_eq!(s.coordinator.status_of(0), Some(BucketStatus::Canceled));
    assert_eq!(s.coordinator.overall, Some(OverallStatus::Canceled));
    assert_eq!(
        s.store.task.as_ref().map(|t| t.status),
        Some(TaskStatus::Canceled)
    );
}
