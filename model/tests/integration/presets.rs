//! The `tiny` preset: exhaustive, every property holds, pinned state count. The `ci-*` presets
//! are pinned in `ci_presets.rs`.

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
    assert_passes("tiny", 915);
}
