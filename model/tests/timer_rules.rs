//! The coordinator's timers and queue flags (spec 3.2, R6, R14.4, R23), checked where they act.
//! Part of the model's mutation oracle (`.cargo/mutants-model.toml`): three mutants of this
//! code changed no verdict on any CI preset (spec/findings.md F18, whole-set shard 7/8), since
//! each only moves when an event happens, not whether it can:
//! - R6 keeping the finished key's queued-reconcile flag and dropping every other bucket's
//!   (`*k != key` -> `*k == key`): a stale flag is fenced by its key, a lost one lets R23.2
//!   queue the same reconcile twice, which R14 fences too;
//! - R23's age counting down (`a.age + 1` -> `a.age - 1`, which wraps to the cap): every
//!   attempt then times out at its first tick, a behaviour the model also has with a shorter
//!   task timeout;
//! - the progress check's cap on the reconcile count (`1 << n` -> `1 >> n`): counts then run on
//!   to 8, states that differ from each other in nothing R14.4 computes (and, in shard 4/8,
//!   the cap computed as 0, which stops them at the floor of 2 instead).

mod common;
use common::{cycle_bound, each_edge};
use rebalance_model::state::types::{Replicas, ServerId, ServerSet};
use rebalance_model::{
    preset, Action, BucketStatus, BugSet, Event, Key, RebalanceModel, SystemState,
};
use std::collections::BTreeSet;

/// The keys of `kind`'s events in the queue whose attempt is still the bucket's.
fn live_queued(s: &SystemState, kind: fn(&Event) -> Option<Key>) -> BTreeSet<Key> {
    let c = &s.coordinator;
    c.events
        .iter()
        .filter_map(kind)
        .filter(|k| c.attempt(k.bucket).is_some_and(|a| a.key == *k))
        .collect()
}

fn reconcile_key(e: &Event) -> Option<Key> {
    match e {
        Event::Reconcile { key } => Some(*key),
        _ => None,
    }
}

fn timeout_key(e: &Event) -> Option<Key> {
    match e {
        Event::Timeout { key } => Some(*key),
        _ => None,
    }
}

/// Spec 3.2's flags say which events are queued for a live attempt: R23 queues an event only
/// when its key is not flagged, R13 and R14 clear the flag of the event they process, and R6
/// clears the flags of the attempt it ends (its events stay queued, fenced by their key when
/// processed). So in every reachable state each flag set is exactly the keys of the live
/// attempts' queued events of its kind.
#[test]
fn the_queue_flags_name_exactly_the_live_attempts_queued_events() {
    // Two buckets in two slots with one tracked attempt allowed, and ci-tracked2's two tracked
    // attempts: one bucket finishes while the other's reconcile is queued.
    let mut two_slots = preset("ci-inflight2").expect("preset");
    two_slots.buckets.truncate(2);
    two_slots.plan.truncate(2);
    let mut tracked2 = preset("ci-tracked2").expect("preset");
    tracked2.max_network = cycle_bound("ci-tracked2");
    let mut finished_beside_a_flag = 0;
    // And ci-two-buckets under `recovered-shows-rebalancing`, whose recovery takes back the
    // reconciles it queued for the buckets it runs again (its `!=` turned to `==` kept that
    // flag and dropped the others: F18, whole-set shard 4/8).
    let mut two_buckets = preset("ci-two-buckets").expect("preset");
    two_buckets.max_network = Some(2);
    let shows = BugSet::of(&[rebalance_model::Bug::RecoveredShowsRebalancing]);
    for (name, config, bugs) in [
        ("ci-inflight2, two buckets", two_slots, BugSet::none()),
        ("ci-tracked2", tracked2, BugSet::none()),
        (
            "ci-two-buckets, recovered-shows-rebalancing",
            two_buckets,
            shows,
        ),
    ] {
        let model = RebalanceModel::new(config, bugs);
        each_edge(&model, |s, a, next, _| {
            for (kind, flags, what) in [
                (
                    reconcile_key as fn(&Event) -> Option<Key>,
                    &next.coordinator.queued_reconciles,
                    "queued_reconciles",
                ),
                (
                    timeout_key,
                    &next.coordinator.queued_timeouts,
                    "queued_timeouts",
                ),
            ] {
                let flags: BTreeSet<Key> = flags.iter().copied().collect();
                let live = live_queued(next, kind);
                assert_eq!(flags, live, "{name}: {what} after {a:?}\nfrom {s:?}");
            }
            // Where R6 could get it wrong: a bucket finished while another's flag was set.
            let finished = s.coordinator.status.iter().any(|(b, st)| {
                st.in_progress()
                    && next
                        .coordinator
                        .status_of(*b)
                        .is_some_and(|n| !n.in_progress())
            });
            if finished && !s.coordinator.queued_reconciles.is_empty() {
                finished_beside_a_flag += 1;
            }
        });
    }
    assert!(
        finished_beside_a_flag > 0,
        "no bucket finished while a reconcile was flagged, so R6's clearing was never tested"
    );
}

/// R23: each tick ages every running attempt by one, up to `task_timeout + 1`, so R23.1 times
/// an attempt out only after `task_timeout` ticks of running (spec 3.2's `age`).
#[test]
fn a_tick_ages_every_running_attempt_by_one_up_to_the_cap() {
    let mut config = preset("ci-inflight2").expect("preset");
    config.max_network = cycle_bound("ci-inflight2");
    let cap = config.task_timeout_ticks + 1;
    let model = RebalanceModel::new(config, BugSet::none());
    let mut aged = 0;
    each_edge(&model, |s, a, next, _| {
        if !matches!(a, Action::Tick { .. }) {
            return;
        }
        for (b, before) in s.coordinator.attempts.iter() {
            if s.coordinator.status_of(*b) != Some(BucketStatus::Rebalancing) {
                continue;
            }
            let Some(after) = next.coordinator.attempt(*b).filter(|x| x.key == before.key) else {
                continue;
            };
            assert_eq!(
                after.age,
                (before.age + 1).min(cap),
                "bucket {b} after {a:?}\nfrom {s:?}"
            );
            aged += 1;
        }
    });
    assert!(aged > 0, "no tick aged a running attempt");
}

/// The progress check (`no_give_up`, spec 7.3) caps each attempt's reconcile count at the first
/// count whose backoff is the cap (at least 2, for SOME-BACKOFF-AT-CAP), since R14.4 computes
/// nothing else from it there: so no two states differ only in counts past it. Restated from
/// the spec: backoff(n) = min(2^n, max_reconcile_backoff).
#[test]
fn without_give_ups_the_reconcile_count_stops_where_the_backoff_reaches_its_cap() {
    // ci-backoff with its cap doubled to 8: backoffs 1, 2, 4, 8, so the count stops at 3,
    // above the floor of 2 (at the preset's cap of 4 the two coincide, and a cap computed as 0
    // survived: F18, whole-set shard 4/8).
    let mut config = preset("ci-backoff").expect("preset");
    config.no_give_up = true;
    config.max_reconcile_backoff_ticks = 8;
    let cap = u32::from(config.max_reconcile_backoff_ticks);
    let first_at_cap = (0u8..)
        .find(|n| 2u32.pow(u32::from(*n)) >= cap)
        .expect("a count");
    let bound = first_at_cap.max(2);
    let model = RebalanceModel::new(config, BugSet::none());
    let mut most = 0;
    each_edge(&model, |_, a, next, _| {
        for (b, at) in next.coordinator.attempts.iter() {
            assert!(
                at.reconciles <= bound,
                "bucket {b}: {} reconciles after {a:?}, past {bound}",
                at.reconciles
            );
            most = most.max(at.reconciles);
        }
    });
    assert_eq!(
        most, bound,
        "the count never reached the cap, so the cap was not tested"
    );
}

/// Spec 3.2's `observe(b)`, restated: the coordinator's view of the bucket's assignment, leader
/// and ISR (its cache), epochs left out.
fn observe(
    s: &SystemState,
    b: rebalance_model::BucketId,
) -> (Replicas, Option<ServerId>, ServerSet) {
    let c = &s.coordinator.cache;
    let lai = &c.lai[b as usize];
    (c.assignment[b as usize], lai.leader, lai.isr)
}

/// R13 and R16 start the progress accounting of R14.2 from what the coordinator sees: an
/// attempt that becomes tracked (timed out, or restored by a recovery) holds `observe(b)` as its
/// `observed`. (`observe` -> `Observed::default()` made every tracked attempt look as if it
/// never progressed; it gives up at R14.3, which every LIVE-* goal allows, and under the progress
/// check, without R14.3, nothing else reads `observed`: no verdict could see it, and the gate
/// timed out on it. F18, whole-set shards 1/8 and 7/8.)
#[test]
fn an_attempt_that_becomes_tracked_observes_the_buckets_current_metadata() {
    let mut two_slots = preset("ci-inflight2").expect("preset");
    two_slots.buckets.truncate(2);
    two_slots.plan.truncate(2);
    let (mut timed_out, mut restored) = (0, 0);
    for (name, config) in [
        ("ci-inflight2, two buckets", two_slots),
        (
            "ci-rf2-recovery",
            preset("ci-rf2-recovery").expect("preset"),
        ),
    ] {
        let model = RebalanceModel::new(config, BugSet::none());
        each_edge(&model, |s, a, next, _| {
            for (b, at) in next.coordinator.attempts.iter() {
                if next.coordinator.status_of(*b) != Some(BucketStatus::Timeout) {
                    continue;
                }
                let before = s.coordinator.attempt(*b).filter(|x| x.key == at.key);
                let became_tracked = match before {
                    Some(_) => s.coordinator.status_of(*b) == Some(BucketStatus::Rebalancing),
                    None => true,
                };
                if !became_tracked {
                    continue;
                }
                let o = &at.observed;
                assert_eq!(
                    (o.assignment, o.leader, o.isr),
                    observe(next, *b),
                    "{name}: bucket {b} became tracked after {a:?}"
                );
                if before.is_some() {
                    timed_out += 1;
                } else {
                    restored += 1;
                }
            }
        });
    }
    assert!(timed_out > 0, "no attempt timed out");
    assert!(restored > 0, "no attempt was restored by a recovery");
}
