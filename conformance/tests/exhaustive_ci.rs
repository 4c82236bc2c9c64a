//! Every edge of every CI preset's reachable graph agrees between model and manager, and
//! together the CI presets exercise every model action kind and every spec rule.
//!
//! This is the conformance gate of CI (`cargo test --workspace --release`).

use rebalance_conformance::coverage::Coverage;
use rebalance_conformance::exhaustive::walk;
use rebalance_conformance::report;
use rebalance_model::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, RebalanceModel};

#[test]
fn every_edge_of_every_ci_preset_agrees_and_covers_every_action_and_rule() {
    let mut total = Coverage::default();
    let names = ci_preset_names();
    assert!(!names.is_empty(), "no CI presets");
    for name in names {
        let config = preset(name).expect("listed preset exists");
        let model = RebalanceModel::new(config.clone(), BugSet::none());
        match walk(&model, 0, |_| {}) {
            Ok(stats) => {
                println!(
                    "{name}: {} states, {} edges, max depth {}, {:.1} s, {:.0} edges/s",
                    stats.states,
                    stats.edges,
                    stats.max_depth,
                    stats.seconds,
                    stats.edges_per_second()
                );
                assert!(
                    stats.edges > stats.states,
                    "{name}: a walk with too few edges"
                );
                total.merge(&stats.coverage);
            }
            Err(d) => {
                let dir = std::env::temp_dir();
                let text =
                    report::walk_divergence(&config, &[], &d, &report::trace_path(&dir, name));
                panic!("{name}: model and manager diverge\n{text}");
            }
        }
    }
    println!("{}", total.render());
    assert_eq!(
        total.missing_actions(),
        Vec::<&str>::new(),
        "action kinds no CI preset exercised"
    );
    assert_eq!(
        total.missing_rules(),
        Vec::<&str>::new(),
        "spec rules no CI preset exercised"
    );
}
