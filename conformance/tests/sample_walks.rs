//! A quick conformance gate: a depth-first sample of every CI preset's graph (the first
//! 50,000 states of each), the trace tests and the pinned bug divergences take seconds, so
//! mutation testing uses this file (with `teeth`, `cli` and `random_walks`) as its test
//! command. The full walk is `exhaustive_ci`.

use rebalance_conformance::exhaustive::walk_bounded;
use rebalance_conformance::report;
use rebalance_model::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, RebalanceModel};

#[test]
fn a_depth_first_sample_of_every_ci_preset_agrees() {
    for name in ci_preset_names() {
        let config = preset(name).expect("preset");
        let model = RebalanceModel::new(config.clone(), BugSet::none());
        let stats = walk_bounded(&model, 50_000, 0, |_| {}).unwrap_or_else(|d| {
            let path = report::trace_path(&std::env::temp_dir(), &format!("{name}-sample"));
            let text = report::walk_divergence(&config, &[], &d, &path);
            panic!("{name}: model and manager diverge\n{text}")
        });
        assert!(
            stats.states >= 50_000 || stats.complete,
            "{name}: stopped early"
        );
        println!("{name}: {} states, {} edges", stats.states, stats.edges);
    }
}
