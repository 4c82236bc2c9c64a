//! Every edge of every CI preset's reachable graph agrees between model and manager, and
//! together the CI presets exercise every model action kind and every spec rule.
//!
//! The graph walked is the one `rebalance-model check` searches, the partial-order reduction's
//! (spec 9): it takes every kind of coordinator step the whole graph has from a state with the
//! same coordinator side (`model/tests/integration/por.rs` checks that), so agreement on it is
//! agreement on the whole graph. The three presets whose reduced graphs have over 25 million
//! edges (`LARGE`) are walked whole within the bound they had before the reduction, a sample that
//! keeps this gate near two minutes; `scripts/scheduled-checks.sh` walks their reduced graphs.
//!
//! This is the conformance gate of CI (`cargo test --workspace --release`).

use rebalance_conformance::coverage::Coverage;
use rebalance_conformance::exhaustive::walk;
use rebalance_conformance::report;
use rebalance_model::config::presets::ci_preset_names;
use rebalance_model::{preset, BugSet, RebalanceModel};

/// The presets walked whole within a bound (their `max_network` before the reduction):
/// reduced, `ci-rf2-isr-cancel-crash` has 111 million edges, `ci-rf3-crash-loss` 66 million and
/// `ci-tracked2` 30 million.
const LARGE: &[(&str, u8)] = &[
    ("ci-rf2-isr-cancel-crash", 3),
    ("ci-rf3-crash-loss", 4),
    ("ci-tracked2", 2),
];

#[test]
fn every_edge_of_every_ci_preset_agrees_and_covers_every_action_and_rule() {
    let mut total = Coverage::default();
    let names = ci_preset_names();
    assert!(!names.is_empty(), "no CI presets");
    for name in names {
        let mut config = preset(name).expect("listed preset exists");
        let model = match LARGE.iter().find(|(n, _)| *n == name) {
            Some((_, bound)) => {
                config.max_network = Some(*bound);
                RebalanceModel::new(config.clone(), BugSet::none())
            }
            None => rebalance_model::check::por::reduced(config.clone(), BugSet::none()).0,
        };
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
