//! State invariants that no bug switch breaks in every way they state: each test takes a
//! reachable state, breaks one clause of the invariant by hand, and checks that the invariant
//! (as `properties::all()` evaluates it) then fails, and that it held before. A verdict alone
//! cannot show that a clause can fail when no behaviour of the model ever violates it (found by
//! mutation testing, spec/findings.md F18: `inv_completed_at_target` with `||` for `&&`
//! survived, since no switch completes a rebalance with a bucket off its target).

mod common;
use common::find;
use rebalance_model::verdict::properties;
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

#[test]
fn a_leader_outside_the_isr_or_outside_the_assignment_breaks_election_clean() {
    // Each clause alone: no rule ever elects outside the ISR or the assignment, so under
    // `contains(l) || assigned(l)` no verdict changed (F18, whole-set shard 3/8).
    let (m, done) = completed();
    let b = done.coordinator.plan[0].bucket as usize;
    let leader = done.store.buckets.lai[b].leader.expect("a leader");
    assert!(holds(&m, "INV-ELECTION-CLEAN", &done));

    let mut outside_isr = done.clone();
    outside_isr.store.buckets.lai[b].isr.remove(leader);
    assert!(outside_isr.store.buckets.assignment[b].contains(&leader));
    assert!(!holds(&m, "INV-ELECTION-CLEAN", &outside_isr));

    let mut unassigned = done.clone();
    unassigned.store.buckets.assignment[b].retain(|r| *r != leader);
    assert!(!unassigned.store.buckets.assignment[b].contains(&leader));
    assert!(unassigned.store.buckets.lai[b].isr.contains(leader));
    assert!(!holds(&m, "INV-ELECTION-CLEAN", &unassigned));
}

/// A liveness goal of spec 7.3 (the predicate the fair-cycle search reads, before the fair-end
/// guard of its property).
fn goal(m: &RebalanceModel, name: &str, s: &SystemState) -> bool {
    let (_, g) = properties::live_goals()
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no goal {name}"));
    g(m, s)
}

#[test]
fn the_final_status_is_not_due_while_a_bucket_is_in_progress() {
    // Goal 4 asks for a stored final status only once no bucket is in progress. Under
    // `recovery_pending && any_in_progress` it was due mid-rebalance, so a lasso on which a
    // bucket never finishes would have been blamed on LIVE-FINAL-STORED as well; no verdict
    // changed, since LIVE-ADMITTED-FINISHES fails on every such run first (F18, shard 3/8).
    let m = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let s = find(&m, |s| {
        let c = &s.coordinator;
        c.rid.is_some() && c.any_in_progress() && !c.recovery_pending && !c.overall_is_final()
    });
    assert!(goal(&m, "LIVE-FINAL-STORED", &s));
    let mut done_but_unstored = s.clone();
    let b = done_but_unstored.coordinator.plan[0].bucket;
    done_but_unstored
        .coordinator
        .set_status(b, BucketStatus::Completed);
    assert!(!done_but_unstored.coordinator.any_in_progress());
    assert!(!goal(&m, "LIVE-FINAL-STORED", &done_but_unstored));
}

/// A state of `ci-inflight2` with a bucket pending and one running, where `name` holds.
fn pending_and_running(name: &str) -> (RebalanceModel, SystemState) {
    let m = RebalanceModel::new(preset("ci-inflight2").unwrap(), BugSet::none());
    let s = find(&m, |s| {
        let c = &s.coordinator;
        !c.pending.is_empty() && c.attempts.iter().any(|(b, _)| c.is_running(*b))
    });
    assert!(holds(&m, name, &s));
    (m, s)
}

#[test]
fn a_not_started_bucket_out_of_pending_or_pending_twice_breaks_structure() {
    // Each half of the pending clause alone (F18, whole-set shard 4/8: `|| pending > 1` -> `&&`).
    let (m, s) = pending_and_running("INV-STRUCTURE");
    let b = *s
        .coordinator
        .pending
        .iter()
        .next()
        .expect("a pending bucket");

    let mut dropped = s.clone();
    dropped.coordinator.pending.retain(|x| *x != b);
    assert_eq!(
        dropped.coordinator.status_of(b),
        Some(BucketStatus::NotStarted)
    );
    assert!(!holds(&m, "INV-STRUCTURE", &dropped));

    let mut twice = s.clone();
    twice.coordinator.pending.push(b);
    assert!(!holds(&m, "INV-STRUCTURE", &twice));
}

#[test]
fn a_pending_bucket_or_an_attempt_without_a_status_breaks_structure() {
    // Each disjunct alone (F18, shard 4/8: the two `any`s joined by `&&`).
    let (m, s) = pending_and_running("INV-STRUCTURE");
    let stray = 7; // a bucket id outside ci-inflight2's plan, so it has no status
    assert_eq!(s.coordinator.status_of(stray), None);

    let mut pending = s.clone();
    pending.coordinator.pending.push(stray);
    assert!(!holds(&m, "INV-STRUCTURE", &pending));

    let mut attempt = s.clone();
    let (_, a) = *attempt
        .coordinator
        .attempts
        .iter()
        .next()
        .expect("an attempt");
    let mut a = a;
    a.key.bucket = stray;
    attempt.coordinator.insert_attempt(stray, a);
    assert!(!holds(&m, "INV-STRUCTURE", &attempt));
}

#[test]
fn a_final_rebalance_that_keeps_an_attempt_breaks_structure() {
    // The clause `|| !attempts.is_empty()` alone (F18, whole-set shard 6/8: `||` -> `&&` with
    // the pending clause before it survived). Only a final bucket status that wants an attempt
    // makes it reachable: TIMEOUT_FINAL, the bug switch `timeout-completes`'s [pre] status.
    let (m, s) = completed();
    assert!(holds(&m, "INV-STRUCTURE", &s));
    let running = find(&m, |t| !t.coordinator.attempts.is_empty());
    let (_, mut a) = running.coordinator.attempts[0];
    let b = s.coordinator.plan[0].bucket;
    a.key.rid = s.coordinator.rid.expect("a rebalance");
    a.key.bucket = b;
    let mut kept = s.clone();
    kept.coordinator.set_status(b, BucketStatus::TimeoutFinal);
    kept.coordinator.insert_attempt(b, a);
    assert!(kept.coordinator.pending.is_empty() && !kept.coordinator.any_in_progress());
    assert!(kept.coordinator.overall_is_final() && !kept.coordinator.finalize_pending);
    assert!(!holds(&m, "INV-STRUCTURE", &kept));
}

#[test]
fn an_attempt_keyed_by_another_rebalance_or_bucket_breaks_one_attempt() {
    // Each clause of the key check alone (F18, shard 4/8: `rid != || bucket !=` -> `&&`).
    let (m, s) = pending_and_running("INV-ONE-ATTEMPT");
    let (b, _) = *s.coordinator.attempts.iter().next().expect("an attempt");

    let mut other_rid = s.clone();
    other_rid.coordinator.attempt_mut(b).unwrap().key.rid += 1;
    assert!(!holds(&m, "INV-ONE-ATTEMPT", &other_rid));

    let mut other_bucket = s.clone();
    other_bucket.coordinator.attempt_mut(b).unwrap().key.bucket = b + 1;
    assert!(!holds(&m, "INV-ONE-ATTEMPT", &other_bucket));

    let mut twice = s.clone();
    let a = *twice.coordinator.attempt(b).unwrap();
    twice.coordinator.attempts.push((b, a));
    assert!(!holds(&m, "INV-ONE-ATTEMPT", &twice));
}
