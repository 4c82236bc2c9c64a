//! The caps and limits of spec 6 bind on the CI presets: `ci-backoff` schedules every reconcile
//! backoff of spec 4's doubling sequence up to its cap, and nothing else; and every `SOME-*`
//! companion is paired with the safety property whose rule it exercises.

use std::collections::{BTreeSet, HashSet};

use rebalance_model::check::walk::{edges, fingerprint};
use rebalance_model::verdict::properties::COMPANIONS;
use rebalance_model::{preset, Action, BugSet, Config, Event, RebalanceModel, SystemState};

use crate::common;

/// Spec 4: `backoff(n) = min(check_interval_ms * 2^min(n, 8), max_reconcile_backoff_ms)`, in
/// ticks of `check_interval_ms`.
fn spec_backoff(c: &Config, n: u32) -> u32 {
    (u32::from(c.check_interval_ticks) << n.min(8)).min(u32::from(c.max_reconcile_backoff_ticks))
}

/// Calls `visit(from, action, to)` for every edge of the graph the checker explores (the same
/// edges, `walk::edges`), depth first; returns the number of states.
fn for_each_edge(
    model: &RebalanceModel,
    mut visit: impl FnMut(&SystemState, &Action, &SystemState),
) -> usize {
    let expand = |s: &SystemState| {
        let mut out = Vec::new();
        edges(model, s, |_, a, next, _| out.push((a, next)));
        out.reverse();
        out
    };
    let init = model.init_state();
    let mut seen = HashSet::from([fingerprint(&init)]);
    let first = expand(&init);
    let mut stack = vec![(init, first)];
    while let Some(top) = stack.last_mut() {
        let Some((action, next)) = top.1.pop() else {
            stack.pop();
            continue;
        };
        visit(&top.0, &action, &next);
        if seen.insert(fingerprint(&next)) {
            let out = expand(&next);
            stack.push((next, out));
        }
    }
    seen.len()
}

/// Every reconcile of `ci-backoff` that schedules the next one (R14.4) schedules spec 4's
/// `backoff(n)` for its `n`, and together they schedule every value of the doubling sequence up
/// to the cap: the 1, 2 and 4 tick steps the preset claims are all reached, and nothing else.
#[test]
fn ci_backoff_schedules_every_doubling_up_to_the_cap() {
    let name = "ci-backoff";
    let config = preset(name).unwrap();
    let model = RebalanceModel::new(config.clone(), BugSet::none());
    let expected: BTreeSet<u32> = (0..=8).map(|n| spec_backoff(&config, n)).collect();
    assert!(
        expected.len() >= 3,
        "{name}: a cap of {} ticks leaves fewer than two doublings: {expected:?}",
        config.max_reconcile_backoff_ticks
    );
    let mut scheduled = BTreeSet::new();
    let mut wrong = Vec::new();
    let states = for_each_edge(&model, |from, action, to| {
        let Action::ProcessEvent {
            event: Event::Reconcile { key },
            ..
        } = action
        else {
            return;
        };
        let b = key.bucket;
        let tracked = |s: &SystemState| {
            s.coordinator.is_tracked(b) && s.coordinator.attempt(b).is_some_and(|a| a.key == *key)
        };
        // R14 acted (not a stale event) and did not finish the bucket (R14.1, R14.3): R14.4
        // scheduled the next reconcile.
        if !(tracked(from) && tracked(to)) {
            return;
        }
        let a = to.coordinator.attempt(b).unwrap();
        let n = u32::from(a.reconciles) - 1;
        let got = u32::from(a.reconcile_in);
        if got != spec_backoff(&config, n) {
            wrong.push(format!(
                "{action:?}: reconcile_in {got} after reconcile n = {n}, spec 4 says {}",
                spec_backoff(&config, n)
            ));
        }
        scheduled.insert(got);
    });
    assert_eq!(wrong, Vec::<String>::new());
    assert_eq!(scheduled, expected, "{name}: the backoffs scheduled");
    // The walk saw the whole graph the checker checks.
    assert_eq!(
        states,
        common::pinned_whole(name),
        "{name}: the walk's states"
    );
}

/// Spec 7.2: each `SOME-*` companion is paired with a safety property whose rule it exercises,
/// and every pair names properties that exist.
#[test]
fn every_companion_is_paired_with_a_safety_property() {
    let model = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let properties = stateright::Model::properties(&model);
    let kind = |name: &str| {
        properties
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.expectation.clone())
    };
    for (safety, companion) in COMPANIONS {
        assert_eq!(
            kind(safety),
            Some(stateright::Expectation::Always),
            "{safety} (paired with {companion}) is not an always property"
        );
        assert_eq!(
            kind(companion),
            Some(stateright::Expectation::Sometimes),
            "{companion} (paired with {safety}) is not a sometimes property"
        );
    }
    for p in properties.iter().filter(|p| p.name.starts_with("SOME-")) {
        assert!(
            COMPANIONS.iter().any(|(_, c)| *c == p.name),
            "{} is paired with no safety property in COMPANIONS",
            p.name
        );
    }
}
