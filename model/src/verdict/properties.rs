//! The properties of spec section 7: every invariant of 7.1 as `always`, every companion of
//! 7.2 as `sometimes`, and each liveness goal of 7.3 as an `always` that holds at every fair
//! end state ([`RebalanceModel::is_fair_end`]).

use crate::config::Config;
use crate::state::types::{BucketId, BucketStatus, OverallStatus, ServerSet, TaskStatus};
use crate::state::{Attempt, Event, SystemState};
use crate::step::action::{Action, GiveUp};
use crate::step::coordinator::remote_plan;
use crate::step::model::RebalanceModel;
use crate::verdict::bug::Bug;
use stateright::Property;

type M = RebalanceModel;

/// Every property, safety first, in the order of spec section 7.
pub fn all() -> Vec<Property<M>> {
    vec![
        Property::always("INV-STRUCTURE", inv_structure),
        Property::always("INV-SLOT", |m: &M, s: &SystemState| {
            s.coordinator.running_count() <= m.config.max_inflight as usize
        }),
        Property::always("INV-TRACKED-BOUND", inv_tracked_bound),
        Property::always("INV-ONE-ATTEMPT", inv_one_attempt),
        Property::always("INV-FENCE-TIMEOUT", |_: &M, s: &SystemState| {
            !s.ghost.violations.stale_timeout_acted
        }),
        Property::always("INV-FENCE-RECONCILE", |_: &M, s: &SystemState| {
            !s.ghost.violations.stale_reconcile_acted
        }),
        Property::always("INV-FENCE-RESPONSE", |_: &M, s: &SystemState| {
            !s.ghost.violations.unfenced_completion
        }),
        Property::always("INV-COMPLETED-ACKED", |_: &M, s: &SystemState| {
            !s.ghost.violations.completed_unacked
        }),
        Property::always("INV-CANCEL-PERSISTED-FIRST", inv_cancel_persisted_first),
        Property::always("INV-CANCEL-EFFECTS", |_: &M, s: &SystemState| {
            !s.ghost.violations.cancel_effects_incomplete
        }),
        Property::always("INV-FINAL-PERSISTED", inv_final_persisted),
        Property::always("INV-NO-ADMIT-AFTER-FINAL", |_: &M, s: &SystemState| {
            !s.ghost.violations.admitted_after_final
        }),
        Property::always("INV-CANCEL-NO-NEW-WORK", |_: &M, s: &SystemState| {
            !s.ghost.violations.new_work_after_cancel
        }),
        Property::always("INV-CANCELED-AT-ORIGIN", |_: &M, s: &SystemState| {
            !s.ghost.violations.canceled_off_origin
        }),
        Property::always("INV-PENDING-AT-ORIGIN", inv_pending_at_origin),
        Property::always("INV-EPOCH-ONLY-ON-CHANGE", |_: &M, s: &SystemState| {
            !s.ghost.violations.epoch_without_change && !s.ghost.violations.change_without_epoch
        }),
        Property::always("INV-ADJUST-ISR-FENCED", |_: &M, s: &SystemState| {
            !s.ghost.violations.unfenced_adjust_isr
        }),
        Property::always("INV-COMPLETED-AT-TARGET", inv_completed_at_target),
        Property::always("INV-STATUS-PROMISE", inv_status_promise),
        Property::always("INV-NO-STRAY-UNION", inv_no_stray_union),
        Property::always("INV-ELECTION-CLEAN", inv_election_clean),
        Property::always("INV-CONTEXT-COHERENT", |_: &M, s: &SystemState| {
            s.coordinator.cache == s.store.buckets && s.coordinator.live == s.live()
        }),
        // The `remote_plan` design (apache/fluss#3868): the stored task's reference resolves.
        Property::always("INV-PLAN-RESOLVES", |m: &M, s: &SystemState| {
            !m.config.remote_plan
                || s.store.task.as_ref().is_none_or(|t| {
                    remote_plan::resolves(&s.store.plans, m.bugs.has(Bug::OnePlanPath), t)
                })
        }),
        // The first LIVE-* property counts the fair end states; the checker evaluates every
        // `always` on every state it reaches, so the count is exact for an exhaustive check.
        Property::always("LIVE-RECOVERED", |m: &M, s: &SystemState| {
            !m.is_fair_end_counted(s) || live_recovered(m, s)
        }),
        Property::always("LIVE-TRACKED-FINISHES", |m: &M, s: &SystemState| {
            live_tracked_finishes(m, s) || !m.is_fair_end(s)
        }),
        Property::always("LIVE-ADMITTED-FINISHES", |m: &M, s: &SystemState| {
            live_admitted_finishes(m, s) || !m.is_fair_end(s)
        }),
        Property::always("LIVE-PENDING-RESOLVED", |m: &M, s: &SystemState| {
            live_pending_resolved(m, s) || !m.is_fair_end(s)
        }),
        Property::always("LIVE-FINAL-STORED", |m: &M, s: &SystemState| {
            live_final_stored(m, s) || !m.is_fair_end(s)
        }),
        Property::always("LIVE-REGISTER-ACCEPTED", |m: &M, s: &SystemState| {
            live_register_accepted(m, s) || !m.is_fair_end(s)
        }),
        Property::always("LIVE-METADATA-REPAIRED", |m: &M, s: &SystemState| {
            live_metadata_repaired(m, s) || !m.is_fair_end(s)
        }),
        // Decided only by the progress check (`no_give_up`), where R14.3 is off and the faults
        // stop; with give-ups on it is not applicable (`always_not_applicable`).
        Property::always("LIVE-PROGRESS", |m: &M, s: &SystemState| {
            !m.config.no_give_up || live_progress(m, s) || !m.is_fair_end(s)
        }),
        // A liveness write (R19, R20) failed and waits for R23.5's retry: the situation
        // LIVE-METADATA-REPAIRED is about.
        Property::sometimes("SOME-LIVENESS-REPAIR-PENDING", |_: &M, s: &SystemState| {
            !s.coordinator.liveness_repairs.is_empty()
        }),
        Property::sometimes("SOME-COMPLETED", |_: &M, s: &SystemState| {
            stored_status(s) == Some(TaskStatus::Completed)
        }),
        Property::sometimes("SOME-TIMEOUT-THEN-COMPLETED", |_: &M, s: &SystemState| {
            s.ghost.last.timed_out_bucket_completed
        }),
        Property::sometimes("SOME-CANCEL-DRAINS", |_: &M, s: &SystemState| {
            s.coordinator.overall == Some(OverallStatus::Canceled)
                && stored_status(s) == Some(TaskStatus::Canceled)
                && s.ghost.drained_after_cancel
        }),
        Property::sometimes("SOME-RECOVERED-COMPLETES", |_: &M, s: &SystemState| {
            s.ghost.last.recovered_bucket_completed
        }),
        Property::sometimes("SOME-STALE-RESPONSE-IGNORED", |_: &M, s: &SystemState| {
            s.ghost.last.stale_response_ignored
        }),
        Property::sometimes("SOME-STALE-TIMEOUT-IGNORED", |_: &M, s: &SystemState| {
            s.ghost.last.stale_timeout_ignored
        }),
        Property::sometimes("SOME-STALE-RECONCILE-IGNORED", |_: &M, s: &SystemState| {
            s.ghost.last.stale_reconcile_ignored
        }),
        Property::sometimes("SOME-GIVE-UP-FAILED", |_: &M, s: &SystemState| {
            s.coordinator.overall == Some(OverallStatus::Failed)
                && stored_status(s) == Some(TaskStatus::Failed)
                && !s.ghost.final_recovered
                && s.coordinator
                    .status
                    .iter()
                    .any(|(_, st)| *st == BucketStatus::Failed)
        }),
        Property::sometimes("SOME-GIVE-UP-UNAVAILABLE", |m: &M, s: &SystemState| {
            // R14.2 leaves `blocked_since` set only while a target is down.
            let target_down = |_: &M, s: &SystemState, b: BucketId, _: &Attempt| {
                s.coordinator
                    .plan_entry(b)
                    .is_some_and(|e| !e.trs_set().is_subset(s.coordinator.live))
            };
            next_give_up(m, s, target_down).is_some_and(|g| g.target_unavailable && !g.no_progress)
        }),
        Property::sometimes("SOME-GIVE-UP-NO-PROGRESS", |m: &M, s: &SystemState| {
            // R14.2 never raises `since_progress`; only a tick does.
            let stalled = |m: &M, _: &SystemState, _: BucketId, a: &Attempt| {
                a.since_progress > m.config.no_progress_timeout_ticks
            };
            next_give_up(m, s, stalled).is_some_and(|g| g.no_progress && !g.target_unavailable)
        }),
        Property::sometimes("SOME-BACKOFF-AT-CAP", some_backoff_at_cap),
        Property::sometimes("SOME-INFLIGHT-CAPPED", |m: &M, s: &SystemState| {
            let c = &s.coordinator;
            let slots = m.config.max_inflight as usize;
            slots > 0
                && c.running_count() == slots
                && c.tracked_count() < m.config.max_tracked_timed_out as usize
                && c.pending
                    .iter()
                    .any(|b| c.status_of(*b) == Some(BucketStatus::NotStarted))
        }),
        Property::sometimes("SOME-ADMISSION-CAPPED", |m: &M, s: &SystemState| {
            let c = &s.coordinator;
            c.pending
                .iter()
                .any(|b| c.status_of(*b) == Some(BucketStatus::NotStarted))
                && c.tracked_count() >= m.config.max_tracked_timed_out as usize
        }),
        Property::sometimes("SOME-FINALIZE-RETRIED", |_: &M, s: &SystemState| {
            s.ghost.last.finalize_retried
        }),
        Property::sometimes("SOME-DELETED-COMPLETES", |_: &M, s: &SystemState| {
            s.ghost.last.deleted_bucket_completed
        }),
        Property::sometimes("SOME-ADJUST-ISR-REJECTED", |_: &M, s: &SystemState| {
            s.ghost.last.adjust_isr_rejected
        }),
        Property::sometimes("SOME-CANCEL-STORE-FAILURE", |_: &M, s: &SystemState| {
            s.ghost.last.cancel_store_failure
        }),
        // A plan object that the stored task does not reference: a Register failed after its
        // object write, the situation INV-PLAN-RESOLVES is about.
        Property::sometimes("SOME-PLAN-UNREFERENCED", |_: &M, s: &SystemState| {
            let referenced = s.store.task.as_ref().map(|t| t.id);
            s.store.plans.iter().any(|o| Some(o.content) != referenced)
        }),
        // After a rebalance was registered: the initial state is a fair end state with the
        // register budget unspent in every configuration without a preloaded store.
        Property::sometimes("SOME-FAIR-END-UNSPENT", |m: &M, s: &SystemState| {
            s.coordinator.rid.is_some() && m.is_fair_end(s) && !m.is_terminal(s)
        }),
    ]
}

/// Why property `p` is not applicable under this configuration, whatever its kind: for a
/// `SOME-*` companion [`not_applicable`], for an `always` property [`always_not_applicable`].
/// The check, its report and both Explorers read this one function.
pub fn property_not_applicable(p: &Property<M>, config: &Config) -> Option<&'static str> {
    match p.expectation {
        stateright::Expectation::Sometimes => not_applicable(p.name, config),
        _ => always_not_applicable(p.name, config),
    }
}

/// Why an `always` property decides nothing under this configuration, or `None` when it is
/// checked: LIVE-PROGRESS is the progress check's (spec 7.3), and with R14.3 on a bucket may
/// give up with cause, which a fair end state cannot tell from a stranded one; and no LIVE-*
/// goal applies against an abstract rest of the plan (spec 9).
pub fn always_not_applicable(name: &str, config: &Config) -> Option<&'static str> {
    match name {
        "INV-PLAN-RESOLVES" if !config.remote_plan => {
            Some("the remote_plan design is off: the task node holds the plan")
        }
        // Spec 9: a Rest step is optional, so the rest of the plan may keep a slot forever.
        _ if name.starts_with("LIVE-") && !config.abstract_buckets.is_empty() => Some(
            "abstract_buckets: the rest of the plan may stop anywhere, so no liveness goal applies (spec 9)",
        ),
        "LIVE-PROGRESS" if !config.no_give_up => {
            Some("give-ups on: the progress check, check --no-give-up, decides it")
        }
        _ => None,
    }
}

/// Why a `SOME-*` property cannot have an example under this configuration (its fault budget
/// is zero), or `None` when an example is required.
pub fn not_applicable(name: &str, config: &Config) -> Option<&'static str> {
    let b = &config.budgets;
    let moves = config.plan.len();
    match name {
        // A liveness write fails with or without a rebalance (ci-repair-after-crash has none).
        "SOME-LIVENESS-REPAIR-PENDING" if b.server_crash == 0 || b.store_failure == 0 => {
            Some("needs server_crash and store_failure budgets")
        }
        "SOME-LIVENESS-REPAIR-PENDING" => None,
        _ if b.register == 0 => Some("no register budget"),
        "SOME-GIVE-UP-FAILED" | "SOME-GIVE-UP-UNAVAILABLE" | "SOME-GIVE-UP-NO-PROGRESS"
            if config.no_give_up =>
        {
            Some("the progress check has no give-up (no_give_up)")
        }
        "SOME-CANCEL-DRAINS" if b.cancel == 0 => Some("no cancel budget"),
        "SOME-RECOVERED-COMPLETES" if b.coordinator_crash == 0 => {
            Some("no coordinator_crash budget")
        }
        // A coordinator crash counts too, with a deposed coordinator: a response to the old
        // incarnation's request is stale for the new one (`ci-zombie` has an example with a
        // leader-only bucket; found when an example for a companion called n/a became a CI
        // failure). Without a zombie such a response is dead from the crash on and is ignored
        // in the crash's own step, when recovery has not yet restored the bucket, so nothing is
        // ignored "for an active bucket" (found on `design-remote-plan.json`, a leader-only
        // bucket with a coordinator crash and no example).
        "SOME-STALE-RESPONSE-IGNORED"
            if !has_move(config)
                && b.server_crash == 0
                && (b.coordinator_crash == 0 || b.zombie_steps == 0) =>
        {
            Some("needs a move bucket, a server crash, or a coordinator crash with a deposed coordinator (zombie_steps)")
        }
        // Capped admission needs M tracked attempts and a pending bucket. Without a recovery
        // (which may restore many at once), tracked reaches M only by the M-th timeout of a
        // running attempt, and before it every slot was filled from `pending`, unless a failed
        // write aborted the admission loop: so without a store failure k - 1 are still running,
        // and `pending` is non-empty only with at least M + k plan buckets. With a recovery, or
        // a store failure, fewer may do (`capped_admission_needs`).
        "SOME-ADMISSION-CAPPED"
            if moves < capped_admission_needs(config, b.coordinator_crash > 0) =>
        {
            Some("needs max_tracked_timed_out + max_inflight plan buckets (max_tracked_timed_out + 1 with a store failure, or with a coordinator crash and a leader-only election that can leave an admitted bucket at its origin; max(max_tracked_timed_out, max_inflight) + 1 with a coordinator crash otherwise)")
        }
        // A target is unavailable only while a server is down, and servers go down only by a
        // crash. The clause can hold alone only if `target_unavailable_timeout` is shorter
        // than `no_progress_timeout`: `blocked_since` is set at a reconcile that saw no
        // progress and cleared whenever progress is seen, so `blocked_for <= since_progress`
        // always, and `blocked_for > T_u` with `since_progress <= T_np` needs `T_u < T_np`.
        "SOME-GIVE-UP-UNAVAILABLE" if b.server_crash == 0 => Some("no server_crash budget"),
        "SOME-GIVE-UP-UNAVAILABLE"
            if config.target_unavailable_timeout_ticks >= config.no_progress_timeout_ticks =>
        {
            Some("target_unavailable_timeout is not shorter than no_progress_timeout")
        }
        // At the cap after a doubling needs a cap above one check interval (`backoff(0)`), and
        // the reconcile that schedules it must come before the no-progress give-up: see
        // `backoff_cap_reachable`.
        "SOME-BACKOFF-AT-CAP" if config.max_reconcile_backoff_ticks <= 1 => {
            Some("max_reconcile_backoff is one check interval: no doubling reaches it")
        }
        "SOME-BACKOFF-AT-CAP" if !backoff_cap_reachable(config) => {
            Some("the no-progress give-up comes before the backoff reaches its cap")
        }
        // `max_inflight` blocks an admission only with every slot taken and a bucket still
        // pending: `max_inflight >= 1` running attempts and one more plan bucket.
        "SOME-INFLIGHT-CAPPED" if config.max_inflight == 0 => {
            Some("max_inflight 0 pauses admission: no slot to take")
        }
        "SOME-INFLIGHT-CAPPED" if moves <= config.max_inflight as usize => {
            Some("needs more plan buckets than max_inflight")
        }
        "SOME-FINALIZE-RETRIED" if b.store_failure == 0 => Some("no store_failure budget"),
        "SOME-DELETED-COMPLETES" if b.bucket_deletion == 0 => Some("no bucket_deletion budget"),
        // A loss on a move counts too: `ci-rf3-loss` refuses an AdjustIsr with one message loss
        // and nothing else (found when an example for a companion called n/a became a CI
        // failure). On a plan without a move a loss gave no refusal on `ci-leader`, checked
        // exhaustively there but not argued in general.
        "SOME-ADJUST-ISR-REJECTED"
            if b.server_crash == 0
                && b.bucket_deletion == 0
                && b.message_duplication == 0
                && (b.message_loss == 0 || !has_move(config)) =>
        {
            Some("needs a server crash, a deletion, a duplication, or a loss on a move")
        }
        "SOME-CANCEL-STORE-FAILURE" if b.cancel == 0 || b.store_failure == 0 => {
            Some("needs cancel and store_failure budgets")
        }
        "SOME-FINALIZE-RETRIED" if config.session_lost_on_store_failure => Some(
            "session_lost_on_store_failure: a failed finalize write costs the incarnation, and the next one finalizes after R16, not by R23's retry",
        ),
        "SOME-PLAN-UNREFERENCED" if !config.remote_plan || b.store_failure == 0 => {
            Some("needs remote_plan and a store_failure budget")
        }
        // A fair end state differs from a terminal one only where an optional action is still
        // enabled there: a client request or a fault that can happen with nothing in flight.
        "SOME-FAIR-END-UNSPENT"
            if b.cancel == 0
                && b.coordinator_crash == 0
                && b.server_crash == 0
                && b.bucket_deletion == 0
                && b.register <= 1 =>
        {
            Some("no optional budget that outlives the first rebalance")
        }
        _ => None,
    }
}

/// Whether a reconcile can schedule the backoff cap before the no-progress give-up. Every
/// run of reconciles without progress starts with `reconciles = 0` (R13, R16, or R14.2 on
/// progress, where `since_progress` is 0), and the reconcile with `reconciles = n` comes at
/// least `backoff(0) + ... + backoff(n - 1)` ticks later, which is then at most its
/// `since_progress`. The first `n` with `backoff(n)` at the cap is reached without a give-up
/// only if that sum is at most `no_progress_timeout`.
fn backoff_cap_reachable(config: &Config) -> bool {
    let cap = u32::from(config.max_reconcile_backoff_ticks);
    let mut waited = 0u32;
    for n in 0..=8 {
        let backoff = backoff_ticks(config, n);
        if backoff >= cap {
            return waited <= u32::from(config.no_progress_timeout_ticks);
        }
        waited += backoff;
    }
    false
}

/// Spec 4's `backoff(n) = min(check_interval * 2^min(n, 8), max_reconcile_backoff)`, in ticks.
fn backoff_ticks(config: &Config, n: u8) -> u32 {
    (u32::from(config.check_interval_ticks) << n.min(8))
        .min(u32::from(config.max_reconcile_backoff_ticks))
}

/// SOME-BACKOFF-AT-CAP: a reconcile scheduled the next one at `max_reconcile_backoff`, and it
/// got there by doubling. State-derived: only R14.4 sets `reconcile_in` above 0 (R13 and R16 set
/// it to 0) and a tick lowers it, so `reconcile_in` at the cap means the attempt's last reconcile
/// scheduled the cap and no tick has passed since; `reconciles >= 2` means that reconcile used
/// `backoff(n)` with `n >= 1`, and a cap above `backoff(0)` (one tick) means the step doubled.
fn some_backoff_at_cap(m: &M, s: &SystemState) -> bool {
    let cap = m.config.max_reconcile_backoff_ticks;
    let c = &s.coordinator;
    u32::from(cap) > backoff_ticks(&m.config, 0)
        && c.attempts
            .iter()
            .any(|(b, a)| c.is_tracked(*b) && a.reconciles >= 2 && a.reconcile_in == cap)
}

/// What processing the event at the front of the coordinator's queue would give up, when it is
/// a Reconcile whose R14.3 gives its bucket up: the model's own step says which clauses held
/// (`StepOutput::gave_up`), so the companions need no ghost field (a ghost would split every
/// state right after a give-up). The step is one the checker follows: the queue's front is
/// always processable, and its successor must be within the search bound. `may_hold` is a
/// necessary condition of the clause the caller asks about, read from the state before the
/// step; where it fails the step is not taken (a companion with no example is evaluated in
/// every state).
fn next_give_up(
    m: &M,
    s: &SystemState,
    may_hold: fn(&M, &SystemState, BucketId, &Attempt) -> bool,
) -> Option<GiveUp> {
    let event = *s.coordinator.events.first()?;
    let Event::Reconcile { key } = event else {
        return None;
    };
    let b = key.bucket;
    let attempt = s.coordinator.attempt(b)?;
    if !s.coordinator.is_tracked(b) || attempt.key != key || !may_hold(m, s, b, attempt) {
        return None;
    }
    let action = Action::ProcessEvent {
        event,
        fail_store_op: None,
    };
    let (next, out) = m.step(s, &action)?;
    out.gave_up.filter(|_| m.within_bound(&next))
}

fn has_move(config: &Config) -> bool {
    config.plan.iter().any(|t| moves_replicas(config, t))
}

/// Whether every plan entry moves replicas (none is leader-only or a no-op).
fn all_moves(config: &Config) -> bool {
    config.plan.iter().all(|t| moves_replicas(config, t))
}

fn moves_replicas(config: &Config, t: &crate::config::PlanTarget) -> bool {
    let from = ServerSet::from_servers(&config.buckets[t.bucket as usize].assignment);
    from != ServerSet::from_servers(&t.target)
}

/// The pairs "safety property -> the companion that exercises its rule" (spec 7.2).
pub const COMPANIONS: &[(&str, &str)] = &[
    ("INV-STRUCTURE", "SOME-COMPLETED"),
    ("INV-SLOT", "SOME-INFLIGHT-CAPPED"),
    ("INV-TRACKED-BOUND", "SOME-ADMISSION-CAPPED"),
    ("INV-ONE-ATTEMPT", "SOME-RECOVERED-COMPLETES"),
    ("INV-FENCE-TIMEOUT", "SOME-STALE-TIMEOUT-IGNORED"),
    ("INV-FENCE-RECONCILE", "SOME-STALE-RECONCILE-IGNORED"),
    ("INV-FENCE-RECONCILE", "SOME-BACKOFF-AT-CAP"),
    ("INV-FENCE-RESPONSE", "SOME-STALE-RESPONSE-IGNORED"),
    ("INV-COMPLETED-ACKED", "SOME-TIMEOUT-THEN-COMPLETED"),
    ("INV-CANCEL-PERSISTED-FIRST", "SOME-CANCEL-STORE-FAILURE"),
    ("INV-CANCEL-EFFECTS", "SOME-CANCEL-DRAINS"),
    ("INV-FINAL-PERSISTED", "SOME-FINALIZE-RETRIED"),
    ("INV-NO-ADMIT-AFTER-FINAL", "SOME-COMPLETED"),
    ("INV-CANCEL-NO-NEW-WORK", "SOME-CANCEL-DRAINS"),
    ("INV-CANCELED-AT-ORIGIN", "SOME-CANCEL-DRAINS"),
    ("INV-PENDING-AT-ORIGIN", "SOME-RECOVERED-COMPLETES"),
    ("INV-EPOCH-ONLY-ON-CHANGE", "SOME-ADJUST-ISR-REJECTED"),
    ("INV-ADJUST-ISR-FENCED", "SOME-ADJUST-ISR-REJECTED"),
    ("INV-COMPLETED-AT-TARGET", "SOME-COMPLETED"),
    ("INV-NO-STRAY-UNION", "SOME-GIVE-UP-FAILED"),
    ("INV-NO-STRAY-UNION", "SOME-GIVE-UP-UNAVAILABLE"),
    ("INV-NO-STRAY-UNION", "SOME-GIVE-UP-NO-PROGRESS"),
    ("INV-ELECTION-CLEAN", "SOME-ADJUST-ISR-REJECTED"),
    ("INV-CONTEXT-COHERENT", "SOME-DELETED-COMPLETES"),
    ("INV-PLAN-RESOLVES", "SOME-PLAN-UNREFERENCED"),
    ("LIVE-RECOVERED", "SOME-RECOVERED-COMPLETES"),
    ("LIVE-TRACKED-FINISHES", "SOME-TIMEOUT-THEN-COMPLETED"),
    ("LIVE-ADMITTED-FINISHES", "SOME-FAIR-END-UNSPENT"),
    ("LIVE-PENDING-RESOLVED", "SOME-CANCEL-DRAINS"),
    ("LIVE-FINAL-STORED", "SOME-FINALIZE-RETRIED"),
    ("LIVE-REGISTER-ACCEPTED", "SOME-GIVE-UP-FAILED"),
    ("LIVE-METADATA-REPAIRED", "SOME-LIVENESS-REPAIR-PENDING"),
    ("LIVE-PROGRESS", "SOME-TIMEOUT-THEN-COMPLETED"),
];

fn stored_status(s: &SystemState) -> Option<TaskStatus> {
    let task = s.store.task.as_ref()?;
    (Some(task.id) == s.coordinator.rid).then_some(task.status)
}

/// INV-STRUCTURE (spec 7.1).
fn inv_structure(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    for (b, st) in &c.status {
        let pending = c.pending.iter().filter(|x| *x == b).count();
        if (*st == BucketStatus::NotStarted) != (pending == 1) || pending > 1 {
            return false;
        }
        let active = c.attempt(*b).is_some();
        let wants_attempt = matches!(
            st,
            BucketStatus::Rebalancing | BucketStatus::Timeout | BucketStatus::TimeoutFinal
        );
        if active != wants_attempt {
            return false;
        }
    }
    if c.pending.iter().any(|b| c.status_of(*b).is_none())
        || c.attempts.iter().any(|(b, _)| c.status_of(*b).is_none())
    {
        return false;
    }
    if c.overall_is_final()
        && (c.any_in_progress()
            || c.finalize_pending
            || !c.pending.is_empty()
            || !c.attempts.is_empty())
    {
        return false;
    }
    let rebalancing = c.overall == Some(OverallStatus::Rebalancing);
    rebalancing == (c.rid.is_some() && (c.any_in_progress() || c.finalize_pending))
}

/// The fewest plan buckets with which SOME-ADMISSION-CAPPED is reachable (see its n/a rule).
fn capped_admission_needs(config: &Config, recovery: bool) -> usize {
    let m = config.max_tracked_timed_out as usize;
    let k = config.max_inflight as usize;
    let b = &config.budgets;
    // A store failure aborts R3's admission loop at a failed write (R8), leaving slots free and
    // buckets pending: then M timeouts and one pending bucket suffice, with or without a
    // recovery (found when a test of the guard's crash clause gave a no-crash configuration a
    // store failure: two moves, two slots, M = 1 has an example in 4 steps, F18 shard 7/8).
    // After a recovery (R16) every mid-migration bucket is tracked and every bucket at its
    // origin pending, so M mid-migration buckets and one at origin suffice. A bucket admitted
    // but still at its origin (its Phase A write failed, or a leader-only bucket with no live
    // candidate to elect) is pending after the recovery: then M + 1 buckets too.
    let leader_only_wait = b.server_crash > 0 && !all_moves(config);
    if b.store_failure > 0 || recovery && leader_only_wait {
        m + 1
    } else if recovery {
        // Otherwise a bucket is at its origin at the crash only if it was never admitted, so
        // the k slots were full; and while one waits, admission keeps the k slots full as long
        // as fewer than M are tracked: max(M, k) + 1 (found by a mutant of this guard, F18,
        // which showed M + 1 too few: two moves, two slots, M = 1 has no example).
        m.max(k) + 1
    } else {
        m + k
    }
}

/// Spec 7.1: `|running| + |tracked| <= max(M - 1 + max_inflight, restored)`. Admission needs
/// `|tracked| < M` and adds one running attempt; a timeout moves one from running to tracked; so
/// with `k` slots the tracked set can reach `M - 1 + k`. (With one slot this is
/// `|tracked| <= max(M, restored)`, strengthened by the running one; until a preset had two
/// slots, that one-slot form was all this checked, and it is wrong for more: finding F12.)
fn inv_tracked_bound(m: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    let slots = m.config.max_inflight as usize;
    let bound = (m.config.max_tracked_timed_out as usize + slots)
        .saturating_sub(1)
        .max(s.ghost.restored.len() as usize);
    c.running_count() + c.tracked_count() <= bound && !s.ghost.violations.admitted_while_capped
}

fn inv_one_attempt(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    let mut seen = ServerSet::EMPTY;
    for (b, a) in &c.attempts {
        if seen.contains(*b) || Some(a.key.rid) != c.rid || a.key.bucket != *b {
            return false;
        }
        seen.insert(*b);
    }
    true
}

fn inv_cancel_persisted_first(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    let persisted = s
        .store
        .task
        .as_ref()
        .is_some_and(|t| Some(t.id) == c.rid && t.cancel_requested);
    (!c.cancel_requested || persisted) && !s.ghost.violations.canceled_before_persist
}

fn inv_final_persisted(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    !c.overall_is_final()
        || s.store.task.as_ref().is_some_and(|t| {
            Some(t.id) == c.rid && Some(t.status) == c.overall.map(OverallStatus::task_status)
        })
}

fn inv_pending_at_origin(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.plan.iter().all(|e| {
        c.status_of(e.bucket) != Some(BucketStatus::NotStarted)
            || s.store.buckets.assignment[e.bucket as usize] == e.ors
    })
}

fn inv_completed_at_target(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    if c.overall != Some(OverallStatus::Completed) {
        return true;
    }
    c.plan.iter().all(|e| {
        let b = e.bucket as usize;
        c.status_of(e.bucket) == Some(BucketStatus::Completed)
            && (s.store.buckets.deleted[b]
                || ServerSet::from_servers(&s.store.buckets.assignment[b]) == e.trs_set())
    })
}

/// INV-STATUS-PROMISE (spec 7.1, and 7.4 for what a client may conclude): what the progress
/// reply's statuses promise. A COMPLETED bucket is deleted or assigned its target set; a CANCELED
/// one is assigned its origin (it never moved); FAILED promises no placement (D5). An overall
/// FAILED means no cancel was accepted and some bucket FAILED; an overall CANCELED, that a cancel
/// was. A CANCELED that R16 copied from a final CANCELED task is exempt: per-bucket results are
/// not stored (D8), and the copy also covers a drained bucket that reached its target (F24).
fn inv_status_promise(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    let buckets = &s.store.buckets;
    let per_bucket = c.plan.iter().all(|e| {
        let b = e.bucket as usize;
        match c.status_of(e.bucket) {
            Some(BucketStatus::Completed) => {
                buckets.deleted[b] || ServerSet::from_servers(&buckets.assignment[b]) == e.trs_set()
            }
            Some(BucketStatus::Canceled) => {
                s.ghost.final_recovered || buckets.assignment[b] == e.ors
            }
            _ => true,
        }
    });
    let overall = match c.overall {
        Some(OverallStatus::Failed) => {
            !c.cancel_requested && c.status.iter().any(|(_, st)| *st == BucketStatus::Failed)
        }
        Some(OverallStatus::Canceled) => c.cancel_requested,
        _ => true,
    };
    per_bucket && overall
}

/// INV-ELECTION-CLEAN (spec 7.1): every stored leader is an assigned replica in the stored
/// ISR (R5, R10, R19, R20 and R23.5 elect only from the ISR; R19 replaces a crashed leader).
fn inv_election_clean(_: &M, s: &SystemState) -> bool {
    let b = &s.store.buckets;
    b.lai
        .iter()
        .zip(b.assignment.iter())
        .all(|(lai, assignment)| {
            lai.leader
                .is_none_or(|l| lai.isr.contains(l) && assignment.contains(&l))
        })
}

/// A union is only allowed where spec 7.1 allows it. A recovered final task gives every bucket
/// the task's status, which hides a FAILED bucket under CANCELED (D5, D8); see findings.md.
fn inv_no_stray_union(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.plan.iter().all(|e| {
        let b = e.bucket as usize;
        s.store.buckets.assignment[b].len() <= e.ors.len()
            || c.attempt(e.bucket).is_some()
            || c.status_of(e.bucket) == Some(BucketStatus::Failed)
            || s.store.buckets.deleted[b]
            || c.recovery_pending
            || s.ghost.final_recovered
    })
}

/// The liveness goals of spec 7.3, by name, each a predicate that must hold at every fair end
/// state (and, for the fair-cycle search, infinitely often on every fair run).
pub type Goal = fn(&M, &SystemState) -> bool;

pub fn live_goals() -> &'static [(&'static str, Goal)] {
    &[
        ("LIVE-RECOVERED", live_recovered),
        ("LIVE-TRACKED-FINISHES", live_tracked_finishes),
        ("LIVE-ADMITTED-FINISHES", live_admitted_finishes),
        ("LIVE-PENDING-RESOLVED", live_pending_resolved),
        ("LIVE-FINAL-STORED", live_final_stored),
        ("LIVE-REGISTER-ACCEPTED", live_register_accepted),
        ("LIVE-METADATA-REPAIRED", live_metadata_repaired),
        ("LIVE-PROGRESS", live_progress_goal),
    ]
}

/// LIVE-PROGRESS as a goal of the fair-cycle search: vacuous with give-ups on, as its property
/// is not applicable there.
fn live_progress_goal(m: &M, s: &SystemState) -> bool {
    !m.config.no_give_up || live_progress(m, s)
}

/// Goal 8, progress (spec 7.3): every plan bucket of the current rebalance is COMPLETED, or
/// CANCELED (which only a cancel makes), and none is in progress or FAILED; statuses copied from
/// a recovered final task are exempt, as in INV-NO-STRAY-UNION (no rule of this run set them).
fn live_progress(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    s.ghost.final_recovered
        || c.status
            .iter()
            .all(|(_, st)| matches!(st, BucketStatus::Completed | BucketStatus::Canceled))
}

/// Goal 7: the stored metadata of every bucket has caught up with the servers' liveness (R19,
/// R20, and R23.5 after a failed write): a stored leader that is down or missing has been
/// replaced unless no live ISR member can take its place, and no assigned server that is down
/// is left in the ISR while a member is live (R23.5's ISR keeps one member only when every
/// member is down). Found by mutating R23.5's early return, which then dropped a pending
/// repair silently (spec/findings.md F18); the missing leader by the seeded simulation (F23).
fn live_metadata_repaired(_: &M, s: &SystemState) -> bool {
    let live = s.coordinator.live;
    let meta = &s.store.buckets;
    (0..meta.assignment.len()).all(|b| {
        if meta.deleted[b] {
            return true;
        }
        let lai = &meta.lai[b];
        let assigned = ServerSet::from_servers(&meta.assignment[b]);
        let some_live = lai.isr.iter().any(|x| live.contains(x));
        let down_in_isr = lai
            .isr
            .iter()
            .any(|x| assigned.contains(x) && !live.contains(x));
        let could_lead = lai
            .isr
            .iter()
            .any(|x| live.contains(x) && assigned.contains(x));
        // A missing leader counts as a down one (finding F23: the seeded simulation found a
        // leaderless bucket with every server up, which a check of stored leaders alone missed).
        let no_live_leader = lai.leader.is_none_or(|l| !live.contains(l));
        !(some_live && down_in_isr || no_live_leader && could_lead)
    })
}

/// Goal 5: a stored task has been recovered: recovery is not pending, and a stored task is the
/// current rebalance's (an incarnation that never read it would leave `rid` unset).
fn live_recovered(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    !c.recovery_pending && s.store.task.as_ref().is_none_or(|t| c.rid == Some(t.id))
}

/// Goal 1: every tracked attempt has finished.
fn live_tracked_finishes(_: &M, s: &SystemState) -> bool {
    s.coordinator.tracked_count() == 0
}

/// Goal 2, weak form: no running attempt is left, and every plan bucket is assigned exactly its
/// origin or its target replica set, unless it is deleted or FAILED (a give-up may keep its
/// union, D5) or its status came from a recovered final task (as in INV-NO-STRAY-UNION).
fn live_admitted_finishes(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.running_count() == 0
        && c.plan.iter().all(|e| {
            let b = e.bucket as usize;
            let assigned = ServerSet::from_servers(&s.store.buckets.assignment[b]);
            s.store.buckets.deleted[b]
                || c.status_of(e.bucket) == Some(BucketStatus::Failed)
                || s.ghost.final_recovered
                || assigned == ServerSet::from_servers(&e.ors)
                || assigned == e.trs_set()
        })
}

/// Goal 3: every pending bucket has been admitted or canceled.
fn live_pending_resolved(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.pending.is_empty()
        && c.status
            .iter()
            .all(|(_, st)| *st != BucketStatus::NotStarted)
}

/// Goal 4: once no bucket of the current rebalance is in progress, its final status is stored
/// and reported: `overall` is final, nothing is left to finalize, and the stored task is this
/// rebalance's with that status.
fn live_final_stored(_: &M, s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.rid.is_none()
        || c.recovery_pending
        || c.any_in_progress()
        || (c.overall_is_final()
            && !c.finalize_pending
            && stored_status(s) == c.overall.map(OverallStatus::task_status))
}

/// Goal 6: nothing is in progress, so a new register would be accepted (R1).
fn live_register_accepted(_: &M, s: &SystemState) -> bool {
    !s.coordinator.has_in_progress()
}
