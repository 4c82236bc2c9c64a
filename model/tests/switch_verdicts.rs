//! Every bug switch and Fluss variant of spec section 10 is caught: its property is violated on
//! its configuration. Verdicts only, no counterexample lengths (`bugs.rs` and `variants.rs` pin
//! those): with `ci_presets.rs`, the oracle of the model's mutation testing
//! (`scripts/model-mutants.sh`), where a weakened property shows as a switch it no longer catches.

use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::{preset, Bug, BugSet, Config, RebalanceModel};
use stateright::Model;

/// `(switches, configuration, the property they violate)`, as spec section 10 lists them. A
/// configuration is a preset name or a file under `model/configs/`.
const CAUGHT: &[(&[Bug], &str, &str)] = &[
    (&[Bug::TimeoutCompletes], "tiny", "INV-COMPLETED-AT-TARGET"),
    (&[Bug::TimeoutCompletes], "tiny", "LIVE-ADMITTED-FINISHES"),
    // What a status promises a client (spec 7.4), broken by behaviour and not only by hand:
    // a timed-out bucket reported COMPLETED off its target, a mid-migration bucket canceled.
    (
        &[Bug::TimeoutCompletes],
        "ci-two-buckets",
        "INV-STATUS-PROMISE",
    ),
    (
        &[Bug::CancelAfterRestart],
        "ci-two-buckets",
        "INV-STATUS-PROMISE",
    ),
    (&[Bug::FinalNotPersisted], "ci-store", "INV-FINAL-PERSISTED"),
    (
        &[Bug::UntouchedAfterCancel],
        "ci-store",
        "INV-CANCEL-EFFECTS",
    ),
    (&[Bug::FinalNotPersisted], "ci-store", "LIVE-FINAL-STORED"),
    (
        &[Bug::CancelBestEffort],
        "ci-store",
        "INV-CANCEL-PERSISTED-FIRST",
    ),
    (
        &[Bug::NoRequestFencing],
        "ci-messages",
        "INV-FENCE-RESPONSE",
    ),
    (&[Bug::EpochBumpOnRetry], "tiny", "INV-EPOCH-ONLY-ON-CHANGE"),
    (
        &[Bug::UnboundedTracked],
        "ci-two-buckets",
        "INV-TRACKED-BOUND",
    ),
    (
        &[Bug::CancelAfterRestart],
        "ci-two-buckets",
        "INV-CANCELED-AT-ORIGIN",
    ),
    (
        &[Bug::RecoveryOrder],
        "ci-two-buckets",
        "INV-PENDING-AT-ORIGIN",
    ),
    (
        &[Bug::FlussAtOrigin],
        "variant-fluss-at-origin.json",
        "INV-CANCEL-NO-NEW-WORK",
    ),
    (
        &[Bug::ReelectOnReconcile],
        "ci-leader",
        "INV-EPOCH-ONLY-ON-CHANGE",
    ),
    (
        &[Bug::StartupReadBlocks],
        "ci-recovery-store",
        "LIVE-RECOVERED",
    ),
    (
        &[Bug::StartupReadBlocks],
        "ci-recovery-store",
        "LIVE-REGISTER-ACCEPTED",
    ),
    (
        &[Bug::StartupReadSkips],
        "ci-recovery-store",
        "LIVE-RECOVERED",
    ),
    (
        &[Bug::UnfencedTaskWrites],
        "ci-zombie",
        "INV-CANCEL-PERSISTED-FIRST",
    ),
    (
        &[Bug::UnfencedTaskWrites],
        "ci-zombie",
        "INV-FINAL-PERSISTED",
    ),
    (&[Bug::UnfencedTaskWrites], "ci-zombie", "LIVE-FINAL-STORED"),
    (
        &[Bug::RecoveredShowsRebalancing],
        "ci-two-buckets",
        "INV-SLOT",
    ),
    (
        &[Bug::HashOrderRecovery, Bug::RecoveryOrder],
        "ci-two-buckets",
        "INV-NO-STRAY-UNION",
    ),
    (
        &[Bug::SplitBucketWrites],
        "ci-store",
        "INV-CANCEL-NO-NEW-WORK",
    ),
    (
        &[Bug::SplitBucketWrites],
        "ci-store",
        "INV-CONTEXT-COHERENT",
    ),
    (
        &[Bug::RepairsLostOnRestart],
        "ci-repair-after-crash",
        "LIVE-METADATA-REPAIRED",
    ),
];

fn config(name: &str) -> Config {
    preset(name).unwrap_or_else(|| {
        let path = format!("{}/configs/{name}", env!("CARGO_MANIFEST_DIR"));
        Config::from_json_file(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    })
}

#[test]
fn every_switch_is_caught_by_its_property() {
    for (bugs, name, property) in CAUGHT {
        let model = RebalanceModel::new(config(name), BugSet::of(bugs));
        assert!(
            model.properties().iter().any(|p| p.name == *property),
            "{property} is not a property of the model"
        );
        // Breadth-first, so the search stops at the depth of the shortest counterexample (a
        // depth-first search can wander through millions of states before it finds one).
        let found = first_discoveries(&model, &[property]);
        assert!(
            found.iter().any(|c| c.property == *property),
            "{bugs:?} no longer violate {property} on {name}"
        );
    }
}

/// `(switch, preset, goal)` that only the fair-cycle search finds (spec 7.3): no state shows
/// them, a fair cycle on which the goal never holds does. A switch that strands a bucket
/// ([`Bug::needs_progress_check`]) is searched in the progress check (`no_give_up`), within
/// the preset's cycle bound.
const CAUGHT_ON_A_CYCLE: &[(Bug, &str, &str)] = &[
    (
        Bug::EndlessReconcile,
        "ci-server-crash",
        "LIVE-TRACKED-FINISHES",
    ),
    (
        Bug::NoResendOnKeptLeader,
        "ci-leader-crash",
        "LIVE-PROGRESS",
    ),
    (
        Bug::NoResendOnKeptLeader,
        "ci-refused-leader",
        "LIVE-PROGRESS",
    ),
];

/// The bound of `tests/common`'s `cycle_bound` on the one preset here whose whole graph needs it.
fn cycle_bound(name: &str) -> Option<u8> {
    (name == "ci-refused-leader").then_some(3)
}

#[test]
fn every_livelock_switch_is_caught_on_a_fair_cycle() {
    for (bug, name, goal) in CAUGHT_ON_A_CYCLE {
        let mut c = config(name);
        c.no_give_up = bug.needs_progress_check();
        c.max_network = cycle_bound(name);
        let model = RebalanceModel::new(c, BugSet::of(&[*bug]));
        let search = rebalance_model::check::cycle::fair_cycles_for_goals(&model);
        assert!(
            search.violations.iter().any(|l| l.goal == *goal),
            "{bug} no longer violates {goal} on a fair cycle of {name}"
        );
    }
}

/// Every switch has a row, so a new switch cannot escape the gate.
#[test]
fn every_switch_has_a_row() {
    for bug in Bug::ALL {
        assert!(
            CAUGHT.iter().any(|(bugs, _, _)| bugs.contains(&bug))
                || CAUGHT_ON_A_CYCLE.iter().any(|(b, _, _)| *b == bug),
            "{bug} has no row in CAUGHT or CAUGHT_ON_A_CYCLE"
        );
    }
}

/// `max_inflight = 0` pauses admission (R3): the protocol itself then leaves a registered
/// bucket pending for good, and LIVE-PENDING-RESOLVED, which no bug switch breaks, must say so.
#[test]
fn paused_admission_leaves_a_pending_bucket_unresolved() {
    let mut c = config("tiny");
    c.max_inflight = 0;
    let model = RebalanceModel::new(c, BugSet::none());
    for property in ["LIVE-PENDING-RESOLVED", "LIVE-REGISTER-ACCEPTED"] {
        let found = first_discoveries(&model, &[property]);
        assert!(
            found.iter().any(|c| c.property == property),
            "max_inflight 0 does not violate {property}"
        );
    }
}

/// A companion that a switch makes impossible is reported as having no example, not as n/a:
/// `endless-reconcile` removes R14.3 and R14.4's backoff, so nothing gives up on `tiny` (where
/// the clean protocol gives up on no progress) and on `ci-backoff` (a server crash, a backoff
/// cap of 4 ticks) neither give-up clause fires and no backoff reaches the cap. An oracle that
/// called every companion n/a would pass every preset; this is where it fails.
#[test]
fn a_switch_that_removes_a_companion_leaves_it_without_an_example() {
    use rebalance_model::check::checker::{check, CheckOptions, Verdict};
    let rows: [(&str, &[&str]); 2] = [
        ("tiny", &["SOME-GIVE-UP-FAILED", "SOME-GIVE-UP-NO-PROGRESS"]),
        (
            "ci-backoff",
            &[
                "SOME-GIVE-UP-FAILED",
                "SOME-GIVE-UP-NO-PROGRESS",
                "SOME-GIVE-UP-UNAVAILABLE",
                "SOME-BACKOFF-AT-CAP",
            ],
        ),
    ];
    for (preset_name, companions) in rows {
        let model = RebalanceModel::new(config(preset_name), BugSet::of(&[Bug::EndlessReconcile]));
        let report = check(&model, &CheckOptions::dfs(2));
        for name in companions {
            let verdict = report.verdicts.iter().find(|(p, _)| p == name);
            assert!(
                matches!(verdict, Some((_, Verdict::NoExample))),
                "{preset_name}: {name}: {verdict:?}"
            );
        }
    }
}
