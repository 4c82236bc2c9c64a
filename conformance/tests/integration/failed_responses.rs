//! The model leaves failed NliResponses out of the network by default (spec/findings.md, "Model
//! abstractions"): R12 ignores them, so they would only add states. This checks that reading:
//! with `failed_responses_in_flight` on, every edge of a small CI preset still agrees, so the
//! manager ignores every failed response the model can produce.

use rebalance_conformance::exhaustive::walk;
use rebalance_conformance::report;
use rebalance_model::{preset, BugSet, RebalanceModel};

#[test]
fn with_failed_responses_in_flight_every_edge_of_ci_store_still_agrees() {
    let plain = preset("ci-store").expect("preset");
    let mut config = plain.clone();
    config.failed_responses_in_flight = true;
    let with_failed = RebalanceModel::new(config.clone(), BugSet::none());
    let stats = walk(&with_failed, 0, |_| {}).unwrap_or_else(|d| {
        let path = report::trace_path(&std::env::temp_dir(), "ci-store-failed-responses");
        panic!(
            "model and manager diverge\n{}",
            report::walk_divergence(&config, &[], &d, &path)
        )
    });
    let without = walk(&RebalanceModel::new(plain, BugSet::none()), 0, |_| {})
        .expect("ci-store agrees (exhaustive_ci)");
    println!(
        "ci-store with failed responses in flight: {} states, {} edges ({} states without)",
        stats.states, stats.edges, without.states
    );
    // The switch must put failed responses in flight, or this test checks nothing new.
    assert!(
        stats.states > without.states,
        "no failed response was put in flight"
    );
}
