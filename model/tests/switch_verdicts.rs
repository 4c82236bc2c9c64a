//! Every bug switch and Fluss variant of spec section 10 is caught: its property is violated on
//! its configuration. Verdicts only, no counterexample lengths (`bugs.rs` and `variants.rs` pin
//! those): with `ci_presets.rs`, the oracle of the model's mutation testing
//! (`scripts/model-mutants.sh`), where a weakened property shows as a switch it no longer catches.

use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::config::catalogue::{self, How, CATALOGUE};
use rebalance_model::{preset, Bug, BugSet, Config, RebalanceModel};
use stateright::Model;

/// `(switches, configuration, the property they violate)` for every row of the catalogue
/// (`model/src/config/catalogue.rs`) whose violation shows in a state, as spec section 10 lists
/// them. A configuration is a preset name or a file under `model/configs/`.
fn caught() -> Vec<(&'static [Bug], &'static str, &'static str)> {
    CATALOGUE
        .iter()
        .flat_map(|e| e.caught.iter().map(move |c| (e.name, c)))
        .filter(|(_, c)| matches!(c.how, How::InAState { .. }))
        .map(|(name, c)| (c.switches, name, c.property))
        .collect()
}

fn config(name: &str) -> Config {
    preset(name).unwrap_or_else(|| {
        let path = format!("{}/configs/{name}", env!("CARGO_MANIFEST_DIR"));
        Config::from_json_file(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    })
}

#[test]
fn every_switch_is_caught_by_its_property() {
    for (bugs, name, property) in caught() {
        let model = RebalanceModel::new(config(name), BugSet::of(bugs));
        assert!(
            model.properties().iter().any(|p| p.name == property),
            "{property} is not a property of the model"
        );
        // Breadth-first, so the search stops at the depth of the shortest counterexample (a
        // depth-first search can wander through millions of states before it finds one).
        let found = first_discoveries(&model, &[property]);
        assert!(
            found.iter().any(|c| c.property == property),
            "{bugs:?} no longer violate {property} on {name}"
        );
    }
}

/// `(switch, preset, goal)` that only the fair-cycle search finds (spec 7.3): no state shows
/// them, a fair cycle on which the goal never holds does. A switch that strands a bucket
/// ([`Bug::needs_progress_check`]) is searched in the progress check (`no_give_up`), within
/// the preset's cycle bound.
fn caught_on_a_cycle() -> Vec<(Bug, &'static str, &'static str)> {
    CATALOGUE
        .iter()
        .flat_map(|e| e.caught.iter().map(move |c| (e.name, c)))
        .filter(|(_, c)| matches!(c.how, How::OnAFairCycle { .. }))
        .map(|(name, c)| {
            let [bug] = c.switches else {
                panic!("{name}: a livelock row names one switch")
            };
            (*bug, name, c.property)
        })
        .collect()
}

/// The bound the catalogue keeps for the fair-cycle search on a preset.
fn cycle_bound(name: &str) -> Option<u8> {
    catalogue::entry(name).and_then(|e| e.cycle_bound)
}

#[test]
fn every_livelock_switch_is_caught_on_a_fair_cycle() {
    for (bug, name, goal) in caught_on_a_cycle() {
        let mut c = config(name);
        c.no_give_up = bug.needs_progress_check();
        c.max_network = cycle_bound(name);
        let model = RebalanceModel::new(c, BugSet::of(&[bug]));
        let search = rebalance_model::check::cycle::fair_cycles_for_goals(&model);
        assert!(
            search.violations.iter().any(|l| l.goal == goal),
            "{bug} no longer violates {goal} on a fair cycle of {name}"
        );
    }
}

/// Every switch has a row, so a new switch cannot escape the gate.
#[test]
fn every_switch_has_a_row() {
    for bug in Bug::ALL {
        assert!(
            caught().iter().any(|(bugs, _, _)| bugs.contains(&bug))
                || caught_on_a_cycle().iter().any(|(b, _, _)| *b == bug),
            "{bug} has no row in the catalogue (model/src/config/catalogue.rs)"
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
