//! The fair-cycle search (spec 7.3, "Fair cycles") on the planted livelock: `endless-reconcile`
//! (H7) reconciles a tracked attempt whose target is gone on every tick, forever. No state shows
//! it, so only the search finds it; the lasso is pinned, replayed with `RebalanceModel::step`,
//! checked to be a fair cycle on which the goal never holds, and kept as a trace.

use rebalance_model::check::cycle::fair_cycles_for_goals;
use rebalance_model::{preset, Action, BucketStatus, Bug, BugSet, Event, RebalanceModel, Trace};

const PRESET: &str = "ci-server-crash";
const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/traces/bug-endless-reconcile.json"
);

/// Pinned: the graph of `ci-server-crash` under the switch and its non-trivial components.
/// (The lasso's prefix and cycle lengths are the catalogue's, `model/src/config/catalogue.rs`.)
const STATES: usize = 12_861;
const NONTRIVIAL_SCCS: usize = 349;

fn endless() -> RebalanceModel {
    RebalanceModel::new(
        preset(PRESET).unwrap(),
        BugSet::of(&[Bug::EndlessReconcile]),
    )
}

use crate::common::{assert_fair_lasso, replay};

#[test]
fn endless_reconcile_is_a_fair_cycle_that_never_quiesces() {
    let model = endless();
    let search = fair_cycles_for_goals(&model);
    println!(
        "{PRESET} + endless-reconcile: {} states, {} edges, {} non-trivial SCCs ({} states), \
         {} unfair sub-components",
        search.states,
        search.edges,
        search.nontrivial_sccs,
        search.cyclic_states,
        search.unfair.len()
    );
    assert_eq!(search.states, STATES);
    assert_eq!(search.nontrivial_sccs, NONTRIVIAL_SCCS);
    // The goals a tracked attempt reconciled forever keeps false: it never finishes, its union
    // stays (a second component, where the crashed server is the origin), and the rebalance
    // stays in progress. The tracked-attempt goal's lasso is the kept one.
    let goals: Vec<&str> = search.violations.iter().map(|l| l.goal).collect();
    assert_eq!(
        goals,
        [
            "LIVE-TRACKED-FINISHES",
            "LIVE-ADMITTED-FINISHES",
            "LIVE-REGISTER-ACCEPTED"
        ],
        "{:?}",
        search.violations
    );
    for lasso in &search.violations {
        assert_fair_lasso(&model, lasso);
    }
    let lasso = &search.violations[0];
    assert_eq!(
        (lasso.prefix.len(), lasso.cycle.len()),
        crate::common::pinned_lasso(Bug::EndlessReconcile, PRESET),
        "{lasso:?}"
    );
    let states = assert_fair_lasso(&model, lasso);
    // The cycle is the old behaviour: a tracked attempt whose target server is down, a Reconcile
    // on every tick, and nothing else; only the optional restart of the server would end it.
    let entry = &states[0];
    assert_eq!(entry.coordinator.status_of(0), Some(BucketStatus::Timeout));
    assert!(entry.servers.iter().any(|s| !s.up), "a server is down");
    assert!(lasso.cycle.iter().any(|a| matches!(
        a,
        Action::ProcessEvent {
            event: Event::Reconcile { .. },
            ..
        }
    )));
    assert!(lasso.cycle.contains(&Action::TICK));
    for s in &states {
        let mut v = Vec::new();
        model.enabled_actions(s, &mut v);
        assert!(
            v.iter().any(|a| matches!(a, Action::RestartServer { .. })),
            "the restart stays enabled, and is optional"
        );
    }
    // The kept trace is this lasso, and it loads (loading checks that the cycle closes).
    let kept = Trace::read(TRACE).unwrap();
    assert_eq!(kept, lasso.trace(&model));
    assert_eq!(
        kept.cycle_start,
        Some(crate::common::pinned_lasso(Bug::EndlessReconcile, PRESET).0)
    );
}

/// Under the spec, R14.3 gives the same attempt up at the cycle's first Reconcile: the
/// bucket is FAILED there, and the rebalance then ends FAILED.
#[test]
fn under_r14_3_the_cycle_reconcile_gives_up() {
    let kept = Trace::read(TRACE).unwrap();
    let spec = RebalanceModel::new(kept.config.clone(), BugSet::none());
    let n = kept.cycle_start.unwrap();
    let states = replay(&spec, &spec.init_state(), &kept.steps[..=n]);
    assert_eq!(
        states[n].coordinator.status_of(0),
        Some(BucketStatus::Timeout),
        "tracked before the cycle's first step"
    );
    assert!(matches!(
        kept.steps[n],
        Action::ProcessEvent {
            event: Event::Reconcile { .. },
            ..
        }
    ));
    let after = &states[n + 1];
    assert_eq!(after.coordinator.status_of(0), Some(BucketStatus::Failed));
    assert!(after.coordinator.overall_is_final());
}

/// No state shows the switch: `check` finds every invariant and every LIVE-* goal holding (the
/// cycle never reaches a fair end state); what it does see is that R14.3 never fires, as
/// SOME-GIVE-UP-FAILED's missing example.
#[test]
fn endless_reconcile_violates_nothing_in_a_state() {
    use rebalance_model::check::checker::{check, CheckOptions, Verdict};
    let model = endless();
    let r = check(&model, &CheckOptions::dfs(2));
    assert_eq!(r.unique_states, STATES);
    for (p, v) in &r.verdicts {
        assert!(!matches!(v, Verdict::Violated(_)), "{p}: {v:?}");
    }
    let give_up = r.verdicts.iter().find(|(p, _)| *p == "SOME-GIVE-UP-FAILED");
    assert!(matches!(give_up, Some((_, Verdict::NoExample))));
}

/// Fairness matters: on `tiny` (no faults) the switch makes cycles too, each a non-trivial
/// component where quiescence never holds, but on every one a message in flight is never
/// delivered (or a leader's ISR proposal never made) while the reconcile resends: weakly fair
/// runs leave each, so none is a violation. A search without fairness would report them all.
#[test]
fn endless_reconcile_on_tiny_has_only_unfair_cycles() {
    use rebalance_model::ActionKind::*;
    let model = RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::of(&[Bug::EndlessReconcile]),
    );
    let search = fair_cycles_for_goals(&model);
    assert!(search.violations.is_empty(), "{:?}", search.violations);
    assert_eq!(search.nontrivial_sccs, 18);
    // One entry per component and goal that never holds on it: 42 over the 18 components.
    assert_eq!(search.unfair.len(), 42);
    for (goal, starved) in &search.unfair {
        assert!(goal.starts_with("LIVE-"), "{goal}");
        assert!(starved.is_obligatory());
        assert!(
            matches!(
                starved.kind(),
                DeliverNli | DeliverNliResponse | DeliverAdjustIsr | ProposeIsr
            ),
            "{starved:?}"
        );
    }
}
