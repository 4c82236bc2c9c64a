//! Exhaustive checks of every `ci-*` preset, verdicts only: every `always` holds, every
//! applicable `SOME-*` has an example, the LIVE-* goals were checked at some fair end state, and
//! together the presets give every `SOME-*` an example, the bound companions at more than their
//! least setting. Run with `--release` (a few minutes).
//!
//! The progress check (spec 7.3, `no_give_up`) too: every goal, LIVE-PROGRESS first, on every
//! fair cycle of every CI preset, searched whole within its cycle bound.
//!
//! This file is also the oracle of the model's mutation testing (`scripts/model-mutants.sh`):
//! a mutant of the model is killed here only by a verdict, never by a state count. The counts
//! are compared too, last, unless `REBALANCE_VERDICTS_ONLY` is set, as the mutation script sets
//! it; `api.rs` (`no_fair_cycle_in_ci_presets`) pins the whole graphs' over the same presets.

use rebalance_model::check::checker::{check, CheckOptions, Verdict};
use rebalance_model::config::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, Config, RebalanceModel};

mod common;
use common::pinned;

#[test]
fn every_ci_preset_verdict_holds() {
    // Every pin names a preset, and every ci preset is pinned (`pinned` panics otherwise).
    for e in rebalance_model::config::catalogue::CATALOGUE {
        if e.states.is_some() {
            let name = e.name;
            assert!(
                preset(name).is_some(),
                "pinned preset {name} does not exist"
            );
        }
    }
    // Smallest first, and stop at the first preset with a failure: a mutant dies in seconds.
    let mut names = ci_preset_names();
    names.sort_by_key(|n| pinned(n));
    let mut results = Vec::new();
    let mut failures_count_changed = Vec::new();
    for name in names {
        let config = preset(name).unwrap();
        // As `check` searches by default: the partial-order reduction (spec 9), whose verdicts
        // are the whole graph's (`integration/por.rs` checks that on the smaller presets).
        let (model, _) = rebalance_model::check::por::reduced(config.clone(), BugSet::none());
        let r = check(&model, &CheckOptions::dfs(2));
        if r.unique_states != pinned(name) {
            failures_count_changed.push(format!(
                "{name}: {} states, pinned {}",
                r.unique_states,
                pinned(name)
            ));
        }
        let mut failures = Vec::new();
        for (p, v) in &r.verdicts {
            if matches!(v, Verdict::Violated(_) | Verdict::NoExample) {
                failures.push(format!("{name}: {p} {v:?}"));
            }
            // A companion the configuration calls n/a must have no example: one found means the
            // n/a reasoning of `properties::not_applicable` is wrong, and would hide a missing
            // example elsewhere (found by mutating `some_backoff_at_cap`, spec/findings.md F18).
            if let (Some(why), Verdict::ExampleFound(_)) = (
                rebalance_model::verdict::properties::not_applicable(p, &config),
                v,
            ) {
                failures.push(format!("{name}: {p} is n/a ({why}) but has an example"));
            }
        }
        // Every LIVE-* verdict is read at fair end states; none would make them vacuous.
        if r.fair_end_states == 0 {
            failures.push(format!("{name}: no fair end state, LIVE-* checked nowhere"));
        }
        assert!(failures.is_empty(), "{failures:#?}");
        results.push(PresetVerdicts {
            name,
            config,
            verdicts: r.verdicts,
        });
    }
    let missing = missing_examples(&results);
    assert!(missing.is_empty(), "{missing:#?}");
    assert!(
        verdicts_only() || failures_count_changed.is_empty(),
        "{failures_count_changed:#?}"
    );
}

/// The mutation runs judge by verdicts only (`scripts/model-mutants.sh` sets the variable).
fn verdicts_only() -> bool {
    std::env::var_os("REBALANCE_VERDICTS_ONLY").is_some()
}

/// One CI preset's check: its configuration and a verdict per property.
struct PresetVerdicts {
    name: &'static str,
    config: Config,
    verdicts: Vec<(&'static str, Verdict)>,
}

/// A companion, a condition on the configuration in words, and the condition.
type ExampleWhere = (&'static str, &'static str, fn(&Config) -> bool);

/// Companions that must have an example on a CI preset whose configuration meets a condition,
/// not only on some preset: the bound each exercises must be shown to bind above its least
/// setting (an example only at `max_tracked_timed_out` 1 says nothing of the cap at 2).
const EXAMPLE_WHERE: &[ExampleWhere] = &[
    ("SOME-ADMISSION-CAPPED", "max_tracked_timed_out >= 2", |c| {
        c.max_tracked_timed_out >= 2
    }),
    ("SOME-INFLIGHT-CAPPED", "max_inflight >= 2", |c| {
        c.max_inflight >= 2
    }),
];

/// What the CI presets leave without an example: a `SOME-*` of spec 7.2 that is n/a or has no
/// example on every CI preset, and a companion of [`EXAMPLE_WHERE`] with no example on a
/// preset that meets its condition.
/// Companions that only a proposed design's configuration can reach (spec/fluss-designs.md):
/// `SOME-PLAN-UNREFERENCED` under `remote_plan`, whose example
/// `integration/designs.rs::with_the_remote_plan_every_stored_reference_resolves` requires.
const DESIGN_COMPANIONS: &[&str] = &["SOME-PLAN-UNREFERENCED"];

fn missing_examples(results: &[PresetVerdicts]) -> Vec<String> {
    let has_example = |r: &PresetVerdicts, property: &str| {
        r.verdicts
            .iter()
            .any(|(p, v)| *p == property && matches!(v, Verdict::ExampleFound(_)))
    };
    let mut missing = Vec::new();
    let companions = stateright::Model::properties(&RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::none(),
    ));
    for p in companions.iter().filter(|p| p.name.starts_with("SOME-")) {
        // A companion of a proposed design's own property applies only where the design is on,
        // which no CI preset is: the design's test finds its example on the design's graph.
        if DESIGN_COMPANIONS.contains(&p.name) {
            continue;
        }
        if !results.iter().any(|r| has_example(r, p.name)) {
            let verdicts: Vec<String> = results
                .iter()
                .filter_map(|r| {
                    let (_, v) = r.verdicts.iter().find(|(n, _)| *n == p.name)?;
                    Some(format!("{}: {v:?}", r.name))
                })
                .collect();
            missing.push(format!(
                "{} has no example in any ci preset ({})",
                p.name,
                verdicts.join("; ")
            ));
        }
    }
    for (property, condition, holds) in EXAMPLE_WHERE {
        assert!(
            companions.iter().any(|p| p.name == *property),
            "{property} is not a property"
        );
        if !results
            .iter()
            .any(|r| holds(&r.config) && has_example(r, property))
        {
            missing.push(format!(
                "{property} has no example in a ci preset with {condition}"
            ));
        }
    }
    missing
}

/// The check above can fail: with the verdicts of a preset whose tracked cap is 1 alone, it
/// reports SOME-ADMISSION-CAPPED as missing at cap 2, and every companion that preset has no
/// example of as missing altogether.
#[test]
fn missing_examples_reports_a_bound_shown_only_at_its_least_setting() {
    let config = preset("ci-two-buckets").unwrap();
    assert_eq!(config.max_tracked_timed_out, 1);
    let model = RebalanceModel::new(config.clone(), BugSet::none());
    let verdicts: Vec<(&'static str, Verdict)> = stateright::Model::properties(&model)
        .iter()
        .map(|p| {
            let v = match p.name {
                "SOME-ADMISSION-CAPPED" | "SOME-INFLIGHT-CAPPED" => Verdict::ExampleFound(4),
                n if n.starts_with("SOME-") => Verdict::NotApplicable("(test)"),
                _ => Verdict::Holds,
            };
            (p.name, v)
        })
        .collect();
    let missing = missing_examples(&[PresetVerdicts {
        name: "ci-two-buckets",
        config,
        verdicts,
    }]);
    let companions = stateright::Model::properties(&model)
        .iter()
        .filter(|p| p.name.starts_with("SOME-"))
        .count();
    // Every companion but the two with an example (and the designs' own, which only their
    // designs' tests ask for) is missing anywhere, and those two are missing at the setting
    // their condition asks for.
    assert_eq!(
        missing.len(),
        (companions - 2 - DESIGN_COMPANIONS.len()) + 2,
        "{missing:#?}"
    );
    assert!(missing.contains(
        &"SOME-ADMISSION-CAPPED has no example in a ci preset with max_tracked_timed_out >= 2"
            .to_string()
    ));
    assert!(missing.contains(
        &"SOME-INFLIGHT-CAPPED has no example in a ci preset with max_inflight >= 2".to_string()
    ));
    assert!(missing
        .iter()
        .any(|m| m.starts_with("SOME-COMPLETED has no example in any ci preset")));
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

/// Every CI preset (and `tiny`) holds every goal on every fair cycle of the progress check.
/// Unlike the default check (spec 7.3's acyclicity, `api::no_fair_cycle_in_ci_presets`), the
/// graphs have cycles: a tracked attempt reconciled while a server is down, until its
/// obligatory restart, which no fair run postpones forever. Shared out over the cores, largest
/// first.
#[test]
fn every_ci_preset_makes_progress() {
    let mut names: Vec<&str> = std::iter::once("tiny")
        .chain(rebalance_model::config::presets::ci_preset_names())
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(common::pinned_progress(n)));
    let failures = common::on_every_core(names, progress_with_pinned_count);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn progress_with_pinned_count(name: &str) -> Result<(), String> {
    let mut config = preset(name).unwrap();
    config.no_give_up = true;
    config.max_network = common::cycle_bound(name);
    let model = RebalanceModel::new(config, BugSet::none());
    let started = std::time::Instant::now();
    let search = rebalance_model::check::cycle::fair_cycles_for_goals(&model);
    println!(
        "{name} (progress): {} states, {} edges, {} non-trivial SCCs, {:.1} s",
        search.states,
        search.edges,
        search.nontrivial_sccs,
        started.elapsed().as_secs_f64()
    );
    if let Some(lasso) = search.violations.first() {
        let steps = |actions: &[rebalance_model::Action]| -> Vec<String> {
            actions
                .iter()
                .map(rebalance_model::view::describe::action)
                .collect()
        };
        return Err(format!(
            "{name}: {} violated on a fair cycle of the progress check: prefix {:#?}, cycle {:#?}",
            lasso.goal,
            steps(&lasso.prefix),
            steps(&lasso.cycle)
        ));
    }
    let pinned = common::pinned_progress(name);
    if !verdicts_only() && search.states != pinned {
        return Err(format!(
            "{name}: {} states in the progress check, pinned {pinned}",
            search.states
        ));
    }
    Ok(())
}
