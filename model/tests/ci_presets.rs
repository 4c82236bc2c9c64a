//! Exhaustive checks of every `ci-*` preset, verdicts only: every `always` holds, every
//! applicable `SOME-*` has an example, and the LIVE-* goals were checked at some fair end state.
//! Run with `--release` (about a minute).
//!
//! This file is also the oracle of the model's mutation testing (`scripts/model-mutants.sh`):
//! a mutant of the model is killed here only by a verdict, never by a state count. The counts
//! are pinned by `api.rs` (`no_cycle_in_ci_presets`) over the same presets.

use rebalance_model::checker::{check, CheckOptions, Strategy, Verdict};
use rebalance_model::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, RebalanceModel};

mod common;
use common::{pinned, PINNED};

#[test]
fn every_ci_preset_verdict_holds() {
    // Every pin names a preset, and every ci preset is pinned (`pinned` panics otherwise).
    for (name, _) in PINNED {
        assert!(
            preset(name).is_some(),
            "pinned preset {name} does not exist"
        );
    }
    // Smallest first, and stop at the first preset with a failure: a mutant dies in seconds.
    let mut names = ci_preset_names();
    names.sort_by_key(|n| pinned(n));
    let mut examples = std::collections::BTreeSet::new();
    for name in names {
        let model = RebalanceModel::new(preset(name).unwrap(), BugSet::none());
        let r = check(
            &model,
            &CheckOptions {
                strategy: Strategy::Dfs,
                threads: 2,
                shortest: false,
                progress: None,
            },
        );
        let mut failures = Vec::new();
        for (p, v) in &r.verdicts {
            if matches!(v, Verdict::ExampleFound(_)) {
                examples.insert(*p);
            }
            if matches!(v, Verdict::Violated(_) | Verdict::NoExample) {
                failures.push(format!("{name}: {p} {v:?}"));
            }
        }
        // Every LIVE-* verdict is read at fair end states; none would make them vacuous.
        if r.fair_end_states == 0 {
            failures.push(format!("{name}: no fair end state, LIVE-* checked nowhere"));
        }
        assert!(failures.is_empty(), "{failures:#?}");
    }
    // Together the CI presets give every SOME-* of spec 7.2 an example.
    let missing: Vec<&str> = stateright::Model::properties(&RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::none(),
    ))
    .into_iter()
    .map(|p| p.name)
    .filter(|p| p.starts_with("SOME-") && !examples.contains(p))
    .collect();
    assert!(
        missing.is_empty(),
        "no example in any ci preset: {missing:?}"
    );
}

#[test]
fn every_fault_kind_has_a_budget_in_some_ci_preset() {
    let mut total = rebalance_model::Budgets::default();
    for name in ci_preset_names() {
        let b = preset(name).unwrap().budgets;
        total.cancel += b.cancel;
        total.coordinator_crash += b.coordinator_crash;
        total.server_crash += b.server_crash;
        total.store_failure += b.store_failure;
        total.message_loss += b.message_loss;
        total.message_duplication += b.message_duplication;
        total.bucket_deletion += b.bucket_deletion;
        total.zombie_steps += b.zombie_steps;
        total.register = total.register.max(b.register);
    }
    for (kind, n) in [
        ("cancel", total.cancel),
        ("coordinator_crash", total.coordinator_crash),
        ("server_crash", total.server_crash),
        ("store_failure", total.store_failure),
        ("message_loss", total.message_loss),
        ("message_duplication", total.message_duplication),
        ("bucket_deletion", total.bucket_deletion),
        ("zombie_steps", total.zombie_steps),
    ] {
        assert!(n >= 1, "no ci preset has a {kind} budget");
    }
    assert!(total.register >= 2, "some ci preset registers twice");
}
