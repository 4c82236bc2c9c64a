//! The `tiny` preset: exhaustive, every property holds, the state count the catalogue pins
//! (`model/src/config/catalogue.rs`). The `ci-*` presets are checked in `ci_presets.rs`.

use rebalance_model::check::checker::{check, CheckOptions, Verdict};
use rebalance_model::{preset, BugSet, RebalanceModel};

fn exhaustive(name: &str) -> rebalance_model::check::checker::CheckReport {
    let model = RebalanceModel::new(preset(name).expect("preset"), BugSet::none());
    check(&model, &CheckOptions::dfs(2))
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
    // Without the reduction: the whole graph, whose count the catalogue pins.
    assert_passes("tiny", crate::common::pinned_whole("tiny"));
}
