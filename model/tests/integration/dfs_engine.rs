//! Our DFS (`check::dfs`, the default strategy of `check`) against Stateright's own DFS checker:
//! on the same model, the same unique and total states, the same transitions cut off by a
//! bound, the same fair end states, and the same verdict for every property (an example's
//! length aside: each checker keeps a different one). Every CI preset is checked this way by
//! `ci_presets.rs`, whose pinned counts were Stateright's; here the two run side by side, on
//! one thread and on two, under bug switches that violate properties, and with a bound that cuts
//! transitions off.

use rebalance_model::check::checker::{check, CheckOptions, CheckReport, Strategy, Verdict};
use rebalance_model::{preset, Bug, BugSet, RebalanceModel};

fn run(model: &RebalanceModel, strategy: Strategy, threads: usize) -> CheckReport {
    let opts = CheckOptions {
        strategy,
        ..CheckOptions::dfs(threads)
    };
    check(model, &opts)
}

/// A verdict without an example's length, which depends on the search order.
fn kind(v: &Verdict) -> String {
    match v {
        Verdict::ExampleFound(_) => "example found".to_string(),
        other => format!("{other:?}"),
    }
}

/// The figures and verdicts both checkers must agree on.
fn summary(r: &CheckReport) -> (usize, usize, u64, u64, Vec<(&'static str, String)>) {
    (
        r.unique_states,
        r.total_states,
        r.truncated,
        r.fair_end_states,
        r.verdicts.iter().map(|(p, v)| (*p, kind(v))).collect(),
    )
}

fn agree(label: &str, model: &RebalanceModel) -> CheckReport {
    let theirs = run(model, Strategy::StaterightDfs, 2);
    for threads in [1, 2] {
        let ours = run(model, Strategy::Dfs, threads);
        assert_eq!(
            summary(&ours),
            summary(&theirs),
            "{label}: our DFS on {threads} thread(s) against Stateright's"
        );
        assert!(ours.exhaustive);
    }
    theirs
}

#[test]
fn our_dfs_finds_stateright_s_graph_and_verdicts_on_the_small_presets() {
    for name in [
        "tiny",
        "ci-messages",
        "ci-store",
        "ci-server-crash",
        "ci-coordinator-crash",
        "ci-leader",
        "ci-rf3-loss",
        "ci-repair-after-crash",
    ] {
        let (reduced, _) =
            rebalance_model::check::por::reduced(preset(name).unwrap(), BugSet::none());
        let r = agree(name, &reduced);
        assert!(r.passed(), "{name}: {:?}", r.violations());
        agree(
            &format!("{name}, whole graph"),
            &RebalanceModel::new(preset(name).unwrap(), BugSet::none()),
        );
    }
}

/// Violations are discovered by both, each switch on a preset where it is caught.
#[test]
fn our_dfs_finds_the_violations_stateright_s_finds() {
    for (bug, name) in [
        (Bug::TimeoutCompletes, "tiny"),
        (Bug::FinalNotPersisted, "ci-store"),
        (Bug::ReelectOnReconcile, "ci-leader"),
        (Bug::NoRequestFencing, "ci-messages"),
        (Bug::UntouchedAfterCancel, "ci-store"),
    ] {
        let model = RebalanceModel::new(preset(name).unwrap(), BugSet::of(&[bug]));
        let r = agree(&format!("{name} --bug {}", bug.name()), &model);
        assert!(
            !r.violations().is_empty(),
            "{name} --bug {}: no violation",
            bug.name()
        );
    }
}

/// A network bound that cuts transitions off, on a graph of some size: both count the same cut.
#[test]
fn our_dfs_counts_the_transitions_a_bound_cuts_off_as_stateright_s() {
    let mut config = preset("ci-messages").unwrap();
    config.max_network = Some(2);
    let r = agree(
        "ci-messages, network bound 2",
        &RebalanceModel::new(config, BugSet::none()),
    );
    assert!(r.truncated > 0, "the bound cut nothing off");
    assert!(
        r.unique_states > 1000,
        "a graph of {} states says little",
        r.unique_states
    );
}
