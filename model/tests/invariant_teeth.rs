//! State invariants that no bug switch breaks in every way they state: each test takes a
//! reachable state, breaks one clause of the invariant by hand, and checks that the invariant
//! (as `properties::all()` evaluates it) then fails, and that it held before. A verdict alone
//! cannot show that a clause can fail when no behaviour of the model ever violates it (found by
//! mutation testing, spec/findings.md F18: `inv_completed_at_target` with `||` for `&&`
//! survived, since no switch completes a rebalance with a bucket off its target).

mod common;
use common::find;
use rebalance_model::properties;
use rebalance_model::{preset, BucketStatus, BugSet, RebalanceModel, SystemState};

fn holds(m: &RebalanceModel, name: &str, s: &SystemState) -> bool {
    let p = properties::all()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("no property {name}"));
    (p.condition)(m, s)
}

/// A rebalance that completed, on `tiny` (one move bucket).
fn completed() -> (RebalanceModel, SystemState) {
    let m = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let s = find(&m, |s| {
        s.coordinator.overall == Some(rebalance_model::OverallStatus::Completed)
    });
    assert!(holds(&m, "INV-COMPLETED-AT-TARGET", &s));
    (m, s)
}

#[test]
fn a_completed_rebalance_with_a_bucket_off_its_target_breaks_completed_at_target() {
    let (m, mut s) = completed();
    let e = s.coordinator.plan[0];
    s.store.buckets.assignment[e.bucket as usize] = e.ors;
    assert!(!holds(&m, "INV-COMPLETED-AT-TARGET", &s));
}

#[test]
fn a_completed_rebalance_with_a_failed_bucket_breaks_completed_at_target() {
    let (m, mut s) = completed();
    let b = s.coordinator.plan[0].bucket;
    s.coordinator.set_status(b, BucketStatus::Failed);
    assert!(!holds(&m, "INV-COMPLETED-AT-TARGET", &s));
}

/// A state of `name` that `pick` chooses, where INV-STATUS-PROMISE holds.
fn promised(name: &str, pick: impl Fn(&SystemState) -> bool) -> (RebalanceModel, SystemState) {
    let m = RebalanceModel::new(preset(name).unwrap(), BugSet::none());
    let s = find(&m, pick);
    assert!(holds(&m, "INV-STATUS-PROMISE", &s));
    (m, s)
}

#[test]
fn a_completed_bucket_off_its_target_breaks_the_status_promise_before_the_end() {
    // On ci-two-buckets, b0 COMPLETED while b1 is still to go: INV-COMPLETED-AT-TARGET, which
    // reads only a COMPLETED rebalance, cannot see it.
    let (m, mut s) = promised("ci-two-buckets", |s| {
        s.coordinator.status_of(0) == Some(BucketStatus::Completed)
            && s.coordinator.status_of(1) == Some(BucketStatus::Rebalancing)
    });
    s.store.buckets.assignment[0] = s.coordinator.plan[0].ors;
    assert!(holds(&m, "INV-COMPLETED-AT-TARGET", &s));
    assert!(!holds(&m, "INV-STATUS-PROMISE", &s));
}

#[test]
fn a_canceled_bucket_off_its_origin_breaks_the_status_promise_unless_copied_by_recovery() {
    let (m, mut s) = promised("ci-two-buckets", |s| {
        s.coordinator.status_of(1) == Some(BucketStatus::Canceled) && !s.ghost.final_recovered
    });
    s.store.buckets.assignment[1] = s.coordinator.plan[1].trs;
    assert!(!holds(&m, "INV-STATUS-PROMISE", &s));
    s.ghost.final_recovered = true;
    assert!(holds(&m, "INV-STATUS-PROMISE", &s));
}

#[test]
fn an_overall_status_that_misstates_the_cancel_breaks_the_status_promise() {
    use rebalance_model::OverallStatus;
    let (m, mut s) = promised("ci-two-buckets", |s| {
        s.coordinator.overall == Some(OverallStatus::Canceled)
    });
    s.coordinator.cancel_requested = false;
    assert!(!holds(&m, "INV-STATUS-PROMISE", &s));
    s.coordinator.cancel_requested = true;
    s.coordinator.overall = Some(OverallStatus::Failed);
    assert!(!holds(&m, "INV-STATUS-PROMISE", &s));
}
