//! The exhaustive walk on two workers checks exactly the graph the single-threaded walk checks,
//! and reports a divergence the same way on every run.

use rebalance_conformance::exhaustive::walk_with_threads;
use rebalance_model::{preset, Bug, BugSet, RebalanceModel};

/// Three whole graphs of 16k to 133k states: a store failure at every site, a deposed
/// coordinator beside the new one, and an RF-3 move with a loss. (`ci-two-buckets`' whole graph,
/// 3.5 million states walked twice, made this the slowest test of CI, 793 s on a loaded machine,
/// for nothing a smaller graph does not show.)
#[test]
fn two_workers_walk_the_same_states_edges_and_coverage_as_one() {
    for name in ["ci-store", "ci-zombie", "ci-rf3-loss"] {
        let model = RebalanceModel::new(preset(name).unwrap(), BugSet::none());
        let one = walk_with_threads(&model, 1, 0, |_| {}).expect("agrees");
        let two = walk_with_threads(&model, 2, 0, |_| {}).expect("agrees");
        assert!(one.complete && two.complete, "{name}");
        assert_eq!(one.states, two.states, "{name}: states");
        assert_eq!(one.edges, two.edges, "{name}: edges");
        assert_eq!(
            one.coverage.actions, two.coverage.actions,
            "{name}: actions"
        );
        assert_eq!(one.coverage.rules, two.coverage.rules, "{name}: rules");
    }
}

#[test]
fn a_divergence_found_by_two_workers_is_reported_deterministically() {
    let model = RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::of(&[Bug::TimeoutCompletes]),
    );
    let sequential = walk_with_threads(&model, 1, 0, |_| {}).expect_err("the bug diverges");
    for _ in 0..3 {
        let parallel = walk_with_threads(&model, 2, 0, |_| {}).expect_err("the bug diverges");
        assert_eq!(parallel.steps, sequential.steps);
        assert_eq!(parallel.mismatch.summary, sequential.mismatch.summary);
    }
}
