//! The history invariants of spec 7.1, checked on every transition from the states before and
//! after it and from what the step emitted, whatever rule made the change. A rule that sets a
//! bucket status or rewrites the stored task on a path nobody thought of is still checked,
//! because the check looks at the change, not at the code that made it.
//!
//! Which transitions can violate each history invariant (the ghost flags of `state/mod.rs`):
//!
//! | flag | violating change | examined on |
//! |---|---|---|
//! | `admitted_while_capped` | a new running attempt while `|tracked| >= max_tracked_timed_out` | every step |
//! | `unfenced_completion`, `completed_unacked` | a bucket becomes COMPLETED, not deleted, not a no-op, without a fenced, acked response delivered in the step | every step |
//! | `canceled_off_origin`, `canceled_before_persist` | a bucket becomes CANCELED away from its origin assignment, or without the cancel flag stored | every step |
//! | `admitted_after_final`, `new_work_after_cancel` | a new running attempt, a Phase A (the stored assignment leaves `ors` for `rs`) or a coordinator election of a leader-only bucket while the stored task of `rid` is final, or carries the cancel flag | every step |
//! | `epoch_without_change` | the stored epochs of a bucket rise while its assignment, leader and ISR stay | every step, and at every store write (`write_bucket_raw`), which sees each of several writes to one bucket in a step |
//! | `change_without_epoch` | a bucket's stored assignment, leader or ISR changes and its `bucket_epoch` does not rise, or its leader changes and its `leader_epoch` does not rise, or an epoch falls | every step |
//! | `cancel_effects_incomplete` | right after a Cancel that took effect: the flag not stored or not set, a bucket still pending, or an attempt still active at origin | Cancel steps |
//! | `stale_timeout_acted`, `stale_reconcile_acted` | a stale Timeout or Reconcile event changes anything | event steps (`model.rs`) |
//! | `unfenced_adjust_isr` | an accepted AdjustIsr with other epochs than the cache's | AdjustIsr steps (`model.rs`) |
//!
//! Statuses restored from a final stored task (R16) are not changes a rule made in this run:
//! the task's own final status carries them (`final_recovered`).

use crate::config::Config;
use crate::state::message::NliResponse;
use crate::state::types::{BucketId, BucketStatus, PlanEntry, PlanKind};
use crate::state::SystemState;
use crate::step::action::{Action, CancelReply, ClientReply, StepOutput};

/// What one transition changed, as the checks saw it (tests use it to see that no status change
/// escapes them).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Examined {
    /// Buckets whose status this step set (or, for a new plan, first gave).
    pub status_changes: Vec<(BucketId, Option<BucketStatus>, BucketStatus)>,
    /// Buckets that got a new running attempt.
    pub admissions: Vec<BucketId>,
}

/// Checks one transition and records violations as sticky ghost flags in `post`.
pub fn record(
    config: &Config,
    pre: &SystemState,
    action: &Action,
    out: &StepOutput,
    post: &mut SystemState,
) -> Examined {
    let mut seen = Examined::default();
    let pc = &pre.coordinator;
    let c = &post.coordinator;
    let fresh_plan = pc.rid != c.rid;
    let restored_final = fresh_plan && post.ghost.final_recovered;
    let stored_for_rid = post.store.task.as_ref().filter(|t| Some(t.id) == c.rid);
    let cancel_stored = stored_for_rid.is_some_and(|t| t.cancel_requested);
    let final_stored = stored_for_rid.is_some_and(|t| t.status.is_final());
    let mut v = post.ghost.violations;

    for e in c.plan.iter() {
        let b = e.bucket;
        let before = if fresh_plan { None } else { pc.status_of(b) };
        let Some(after) = c.status_of(b) else {
            continue;
        };
        // A bucket that recovery restored is not admitted, even when it runs at once (only
        // under `recovered-shows-rebalancing`; D1 restores it as tracked, never running).
        let restored_now = fresh_plan && post.ghost.restored.contains(b);
        let admitted = c.is_running(b) && (fresh_plan || pc.attempt(b).is_none()) && !restored_now;
        if admitted {
            seen.admissions.push(b);
            if c.tracked_count() >= config.max_tracked_timed_out as usize {
                v.admitted_while_capped = true;
            }
        }
        // An abstract bucket's metadata is canonical and its Rest steps stand for writes of
        // every kind (spec 9): its admissions are checked, its writes are not told apart.
        let abstract_b = config.is_abstract(b);
        let new_work = admitted
            || !abstract_b
                && (phase_a_started(pre, post, e)
                    || leader_elected(pre, post, e, action, fresh_plan));
        if new_work && cancel_stored {
            v.new_work_after_cancel = true;
        }
        if new_work && final_stored {
            v.admitted_after_final = true;
        }
        if before == Some(after) || restored_final {
            continue;
        }
        seen.status_changes.push((b, before, after));
        let deleted = post.coordinator.cache.deleted[b as usize];
        match after {
            // An abstract bucket's acknowledgement is its Rest step's premise (spec 9).
            BucketStatus::Completed if !deleted && e.kind() != PlanKind::NoOp && !abstract_b => {
                let responses = responses_for(action, out, b);
                if !responses.iter().any(|r| fenced(pre, e, r)) {
                    v.unfenced_completion = true;
                }
                if !responses.iter().any(|r| acked(post, e, r)) {
                    v.completed_unacked = true;
                }
            }
            BucketStatus::Canceled => {
                // The store, not the cache: under `split-bucket-writes` the context can run
                // ahead of it (D15), and the property is about where the bucket really is.
                if post.store.buckets.assignment[b as usize] != e.ors {
                    v.canceled_off_origin = true;
                }
                if !cancel_stored {
                    v.canceled_before_persist = true;
                }
            }
            _ => {}
        }
    }
    for b in 0..post.store.buckets.lai.len() {
        if config.is_abstract(b as BucketId) {
            continue; // canonical metadata, epochs never change (spec 9)
        }
        let (old, new) = (pre.store.buckets.lai[b], post.store.buckets.lai[b]);
        let epochs_rose =
            new.bucket_epoch != old.bucket_epoch || new.leader_epoch != old.leader_epoch;
        let same_metadata = pre.store.buckets.assignment[b] == post.store.buckets.assignment[b]
            && new.leader == old.leader
            && new.isr == old.isr;
        if epochs_rose && same_metadata {
            v.epoch_without_change = true;
        }
        // The other half of the invariant: a change is seen by its epochs. Servers order
        // requests by (leader_epoch, bucket_epoch), so a change whose epochs do not rise is a
        // request a server may take for one it already has. Several writes to one bucket in a
        // step raise the epochs by more than one, so only the direction is checked.
        let fell = new.bucket_epoch < old.bucket_epoch || new.leader_epoch < old.leader_epoch;
        let unseen_change = !same_metadata && new.bucket_epoch == old.bucket_epoch;
        let unseen_leader = new.leader != old.leader && new.leader_epoch == old.leader_epoch;
        if fell || unseen_change || unseen_leader {
            v.change_without_epoch = true;
        }
    }
    if matches!(action, Action::Cancel { .. })
        && !pc.cancel_requested
        && out.reply == Some(ClientReply::Cancel(CancelReply::Accepted))
        && !cancel_effects_hold(post)
    {
        v.cancel_effects_incomplete = true;
    }
    post.ghost.violations = v;
    seen
}

/// R2's immediate effects, right after a Cancel that took effect: the intent is stored and
/// set, no bucket is left pending, and no attempt is left active at its origin.
fn cancel_effects_hold(post: &SystemState) -> bool {
    let c = &post.coordinator;
    let stored = post
        .store
        .task
        .as_ref()
        .is_some_and(|t| Some(t.id) == c.rid && t.cancel_requested);
    let none_pending = c
        .status
        .iter()
        .all(|(_, st)| *st != BucketStatus::NotStarted);
    let none_active_at_origin = c.attempts.iter().all(|(b, _)| {
        let e = c.plan_entry(*b).expect("attempt of a plan bucket");
        !at_origin(post, e)
    });
    c.cancel_requested && stored && none_pending && none_active_at_origin
}

/// `at_origin(b)` of spec 4, on the cache.
fn at_origin(s: &SystemState, e: &PlanEntry) -> bool {
    let b = e.bucket as usize;
    let cache = &s.coordinator.cache;
    e.at_origin(&cache.assignment[b], cache.lai[b].leader)
}

/// The stored assignment left the origin for the union in this step. A move whose target lies
/// inside its origin (a plan made from a union a give-up left behind, F26) has a union equal to
/// its origin, so its assignment never leaves: it starts no Phase A, whatever its steps write.
fn phase_a_started(pre: &SystemState, post: &SystemState, e: &PlanEntry) -> bool {
    let b = e.bucket as usize;
    e.kind() == PlanKind::Move
        && e.rs() != e.ors
        && pre.store.buckets.assignment[b] == e.ors
        && post.store.buckets.assignment[b] == e.rs()
}

/// The coordinator elected another leader for a leader-only bucket of the plan in this step.
/// A server crash or restart re-elects for liveness (R19, R20), and so does a tick's repair of
/// a failed one (R23.5, the only write a tick makes); none of them is rebalance work.
fn leader_elected(
    pre: &SystemState,
    post: &SystemState,
    e: &PlanEntry,
    action: &Action,
    fresh_plan: bool,
) -> bool {
    let b = e.bucket as usize;
    let liveness = matches!(
        action,
        Action::CrashServer { .. } | Action::RestartServer { .. } | Action::Tick { .. }
    );
    !fresh_plan
        && !liveness
        && e.kind() == PlanKind::LeaderOnly
        && pre.store.buckets.lai[b].leader != post.store.buckets.lai[b].leader
}

/// The responses for bucket `b` this step delivered: its action's, and dead ones (spec 9).
fn responses_for(action: &Action, out: &StepOutput, b: BucketId) -> Vec<NliResponse> {
    let mut rs: Vec<NliResponse> = out
        .delivered_dead
        .iter()
        .copied()
        .filter(|r| r.bucket == b)
        .collect();
    if let Action::DeliverNliResponse { msg, .. } = action {
        if msg.bucket == b {
            rs.push(*msg);
        }
    }
    rs
}

/// R12's full fence on the state before the step: current context, matching key and the right
/// responder (leader for a move, `new_leader` for leader-only).
fn fenced(pre: &SystemState, e: &PlanEntry, r: &NliResponse) -> bool {
    let c = &pre.coordinator;
    let lai = c.cache.lai[r.bucket as usize];
    let responder_ok = match e.kind() {
        PlanKind::LeaderOnly => r.from == e.new_leader,
        _ => Some(r.from) == lai.leader,
    };
    r.ok && r.context.coordinator_epoch == c.ce
        && r.context.leader == lai.leader
        && r.context.leader_epoch == lai.leader_epoch
        && r.context.bucket_epoch == lai.bucket_epoch
        && r.context.exec_key == c.attempt(r.bucket).map(|a| a.key)
        && responder_ok
}

/// The acknowledgement INV-COMPLETED-ACKED asks for, on the stored metadata at completion (the
/// cache equals it unless `split-bucket-writes` let the context run ahead, D15).
fn acked(post: &SystemState, e: &PlanEntry, r: &NliResponse) -> bool {
    let b = e.bucket as usize;
    let stored = &post.store.buckets;
    let lai = stored.lai[b];
    match e.kind() {
        PlanKind::NoOp => true,
        PlanKind::LeaderOnly => lai.leader == Some(e.new_leader) && r.from == e.new_leader,
        PlanKind::Move => {
            let live = post.coordinator.live;
            e.final_state(&stored.assignment[b], &lai, live, stored.deleted[b])
                && Some(r.from) == lai.leader
        }
    }
}
