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
