//! Exhaustive checks of the small presets with pinned state counts. The larger CI presets are
//! checked by `.ci`'s call of `rebalance-model check --config ci-*` (see the report in
//! spec/findings.md); their counts are pinned in `ci_presets.rs`.

use rebalance_model::checker::{check, CheckOptions, Strategy, Verdict};
use rebalance_model::{preset, BugSet, RebalanceModel};

pub fn exhaustive(name: &str) -> rebalance_model::checker::CheckReport {
    let model = RebalanceModel::new(preset(name).expect("preset"), BugSet::none());
    check(
        &model,
        &CheckOptions {
            strategy: Strategy::Dfs,
            threads: 2,
            shortest: false,
            progress: None,
        },
    )
}

fn assert_passes(name: &str, unique: usize) {
    let r = exhaustive(name);
    for (property, v) in &r.verdicts {
        assert!(
            !matches!(v, Verdict::Violated(_) | Verdict::NoExample),
            "{name}: {property} {v:?}"
        );
    }
    assert_eq!(
        r.unique_states, unique,
        "{name}: unique state count changed"
    );
}

#[test]
fn tiny_holds_with_pinned_count() {
    assert_passes("tiny", 5185);
}

#[test]
fn ci_leader_holds_with_pinned_count() {
    assert_passes("ci-leader", 20104);
}

#[test]
fn ci_store_holds_with_pinned_count() {
    assert_passes("ci-store", 78731);
}

#[test]
fn every_some_property_has_an_example_in_some_ci_preset() {
    use std::collections::BTreeSet;
    let mut found = BTreeSet::new();
    for name in ["tiny", "ci-leader", "ci-store"] {
        for (p, v) in exhaustive(name).verdicts {
            if matches!(v, Verdict::ExampleFound(_)) {
                found.insert(p);
            }
        }
    }
    // The rest need the larger presets (crashes, deletion, duplication, two buckets).
    for p in [
        "SOME-COMPLETED",
        "SOME-TIMEOUT-THEN-COMPLETED",
        "SOME-CANCEL-DRAINS",
        "SOME-STALE-RESPONSE-IGNORED",
        "SOME-STALE-TIMEOUT-IGNORED",
        "SOME-STALE-RECONCILE-IGNORED",
        "SOME-GIVE-UP-FAILED",
        "SOME-FINALIZE-RETRIED",
        "SOME-CANCEL-STORE-FAILURE",
    ] {
        assert!(found.contains(p), "{p} has no example in the small presets");
    }
}
