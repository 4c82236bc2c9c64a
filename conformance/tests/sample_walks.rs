//! A quick conformance gate for mutation testing (with `teeth`, `cli`, `findings` and
//! `random_walks`): every CI preset is walked up to 100,000 states, which covers the three small
//! presets whole and the three large ones as a depth-first sample. The full walk of every preset
//! is `exhaustive_ci`.

use rebalance_conformance::exhaustive::walk_bounded;
use rebalance_conformance::report;
use rebalance_model::config::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, RebalanceModel};

/// Walks stop here: above the small presets (ci-store, ci-leader, ci-two-buckets: at most 98,352
/// states), so those are walked whole and the three large ones sampled.
const BOUND: u64 = 100_000;

#[test]
fn the_small_ci_presets_whole_and_a_sample_of_the_large_ones_agree() {
    for name in ci_preset_names() {
        let config = preset(name).expect("preset");
        let model = RebalanceModel::new(config.clone(), BugSet::none());
        let stats = walk_bounded(&model, BOUND, 0, |_| {}).unwrap_or_else(|d| {
            let path = report::trace_path(&std::env::temp_dir(), &format!("{name}-sample"));
            let text = report::walk_divergence(&config, &[], &d, &path);
            panic!("{name}: model and manager diverge\n{text}")
        });
        assert!(
            stats.complete || stats.states >= BOUND,
            "{name}: stopped early"
        );
        println!(
            "{name}: {} states, {} edges{}",
            stats.states,
            stats.edges,
            if stats.complete {
                " (whole graph)"
            } else {
                " (sample)"
            }
        );
    }
}
