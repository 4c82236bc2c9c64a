//! Every bug switch of spec section 10 violates its named property on a CI preset, with the
//! shortest counterexample length the catalogue pins (our own BFS,
//! `shortest::first_discoveries`; `model/src/config/catalogue.rs`). The
//! livelock switches (`Bug::found_by_cycle_search`) violate nothing in a state; their lassos,
//! found by the fair-cycle search, are pinned in the catalogue too and checked by
//! `tests/integration/cycles.rs` (`endless-reconcile`) and `tests/integration/progress.rs`
//! (`no-resend-on-kept-leader`).

use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::config::catalogue::{self, How};
use rebalance_model::{preset, Bug, BugSet, RebalanceModel};

fn shortest(bug: Bug, preset_name: &str) -> usize {
    let model = RebalanceModel::new(preset(preset_name).unwrap(), BugSet::of(&[bug]));
    let property = bug.violated_property();
    let found = first_discoveries(&model, &[property]);
    let cx = found
        .iter()
        .find(|c| c.property == property)
        .unwrap_or_else(|| panic!("{bug} does not violate {property} on {preset_name}"));
    // The path replays and its last state violates the property.
    let mut state = model.init_state();
    for a in &cx.actions {
        state = model
            .step(&state, a)
            .expect("counterexample step enabled")
            .0;
    }
    let p = stateright::Model::property(&model, property);
    assert!(
        !(p.condition)(&model, &state),
        "last state must violate {property}"
    );
    cx.actions.len()
}

#[test]
fn timeout_completes() {
    assert_eq!(
        shortest(Bug::TimeoutCompletes, "tiny"),
        pinned(Bug::TimeoutCompletes, "tiny")
    );
}
#[test]
fn final_not_persisted() {
    assert_eq!(
        shortest(Bug::FinalNotPersisted, "ci-store"),
        pinned(Bug::FinalNotPersisted, "ci-store")
    );
}
#[test]
fn cancel_best_effort() {
    assert_eq!(
        shortest(Bug::CancelBestEffort, "ci-store"),
        pinned(Bug::CancelBestEffort, "ci-store")
    );
}
#[test]
fn no_request_fencing() {
    assert_eq!(
        shortest(Bug::NoRequestFencing, "ci-messages"),
        pinned(Bug::NoRequestFencing, "ci-messages")
    );
}
#[test]
fn epoch_bump_on_retry() {
    assert_eq!(
        shortest(Bug::EpochBumpOnRetry, "tiny"),
        pinned(Bug::EpochBumpOnRetry, "tiny")
    );
}
#[test]
fn unbounded_tracked() {
    assert_eq!(
        shortest(Bug::UnboundedTracked, "ci-two-buckets"),
        pinned(Bug::UnboundedTracked, "ci-two-buckets")
    );
}
#[test]
fn cancel_after_restart() {
    assert_eq!(
        shortest(Bug::CancelAfterRestart, "ci-two-buckets"),
        pinned(Bug::CancelAfterRestart, "ci-two-buckets")
    );
}
#[test]
fn recovery_order() {
    assert_eq!(
        shortest(Bug::RecoveryOrder, "ci-two-buckets"),
        pinned(Bug::RecoveryOrder, "ci-two-buckets")
    );
}

#[test]
fn untouched_after_cancel() {
    assert_eq!(
        shortest(Bug::UntouchedAfterCancel, "ci-store"),
        pinned(Bug::UntouchedAfterCancel, "ci-store")
    );
}

/// The tracked cap binds at `max_tracked_timed_out` 2 too: on `ci-tracked2` (M + k plan
/// buckets, one slot) the switch admits the third bucket while two attempts are tracked.
#[test]
fn unbounded_tracked_at_two_tracked() {
    assert_eq!(
        shortest(Bug::UnboundedTracked, "ci-tracked2"),
        pinned(Bug::UnboundedTracked, "ci-tracked2")
    );
}

/// And with two slots: on `ci-inflight2` (one tracked attempt, two slots, three buckets) the
/// bound `M - 1 + k` is 2, and the switch admits a third attempt while one is tracked.
#[test]
fn unbounded_tracked_at_two_slots() {
    assert_eq!(
        shortest(Bug::UnboundedTracked, "ci-inflight2"),
        pinned(Bug::UnboundedTracked, "ci-inflight2")
    );
}

/// A coordinator crash before R23.5 retried a failed restart election: with the retry set
/// lost and not read back (F23), the sole replica is up and the bucket has no leader.
#[test]
fn repairs_lost_on_restart() {
    assert_eq!(
        shortest(Bug::RepairsLostOnRestart, "ci-repair-after-crash"),
        pinned(Bug::RepairsLostOnRestart, "ci-repair-after-crash")
    );
}

/// A switch this file does not pin is one that only the fair-cycle search finds.
#[test]
fn the_switch_without_a_state_counterexample_is_the_livelock() {
    let pinned_here = [
        Bug::TimeoutCompletes,
        Bug::FinalNotPersisted,
        Bug::CancelBestEffort,
        Bug::NoRequestFencing,
        Bug::EpochBumpOnRetry,
        Bug::UnboundedTracked,
        Bug::CancelAfterRestart,
        Bug::RecoveryOrder,
        Bug::UntouchedAfterCancel,
        Bug::RepairsLostOnRestart,
        // apache/fluss#3868's misreadings, pinned by designs.rs on the design's configuration.
        Bug::ReferenceBeforePlan,
        Bug::CleanupBeforeReference,
        Bug::OnePlanPath,
    ];
    for bug in Bug::ALL.into_iter().filter(|b| !b.is_variant()) {
        assert_ne!(
            pinned_here.contains(&bug),
            bug.found_by_cycle_search(),
            "{bug}: pinned here or found by the cycle search, not both or neither"
        );
    }
}

/// The shortest counterexample's length the catalogue pins for `bug` on `preset_name`
/// (`model/src/config/catalogue.rs`).
fn pinned(bug: Bug, preset_name: &str) -> usize {
    crate::common::pinned_shortest(&[bug], preset_name, bug.violated_property())
}

/// Every length the catalogue pins, the "also" properties of the switch tables in
/// docs/model.md included, is the shortest counterexample's (our own BFS).
#[test]
fn every_length_the_catalogue_pins_is_the_shortest_counterexample() {
    let mut checked = 0;
    for e in catalogue::CATALOGUE {
        for c in e.caught {
            let How::InAState { shortest: Some(n) } = c.how else {
                continue;
            };
            let config = preset(e.name).unwrap_or_else(|| {
                let path = format!("{}/configs/{}", env!("CARGO_MANIFEST_DIR"), e.name);
                rebalance_model::Config::from_json_file(&path).unwrap()
            });
            let model = RebalanceModel::new(config, BugSet::of(c.switches));
            let found = first_discoveries(&model, &[c.property]);
            let cx = found
                .iter()
                .find(|x| x.property == c.property)
                .unwrap_or_else(|| {
                    panic!(
                        "{:?} do not violate {} on {}",
                        c.switches, c.property, e.name
                    )
                });
            assert_eq!(
                cx.actions.len(),
                n,
                "{:?} violating {} on {}: the catalogue pins {n} steps",
                c.switches,
                c.property,
                e.name
            );
            checked += 1;
        }
    }
    assert!(checked >= 25, "only {checked} pinned lengths");
}
