//! Seeded random walks over the larger `full` preset and over 16 buckets on 16 servers agree;
//! with a historical bug restored in the model they find a divergence and shrink it to a short
//! walk that replays to the same divergence.

use rebalance_conformance::random::{self, RandomStats};
use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_model::{preset, Bug, BugSet, RebalanceModel, Trace};

/// Seeded walks that must agree; the seed is printed, and named again on a divergence.
fn agreeing_walks(model: &RebalanceModel, seed: u64, cases: u32, steps: usize) -> RandomStats {
    println!("seed {seed}");
    let stats = random::run(model, seed, cases, steps).unwrap_or_else(|d| {
        panic!(
            "seed {seed}: divergence after {} steps: {}\n{}",
            d.steps.len(),
            d.mismatch.summary,
            d.mismatch.manager
        )
    });
    assert_eq!(stats.cases, u64::from(cases));
    stats
}

#[test]
fn random_walks_over_full_agree() {
    let model = RebalanceModel::new(preset("full").expect("full preset"), BugSet::none());
    let stats = agreeing_walks(&model, 20_261_130, 64, 120);
    assert!(
        stats.steps > 64 * 20,
        "walks too short: {} steps",
        stats.steps
    );
}

/// Past the model's inline capacity of 8: 16 buckets on 16 servers, every fault budgeted.
#[test]
fn random_walks_over_sixteen_buckets_and_sixteen_servers_agree() {
    let seed = 16_016;
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../model/configs/wide-16x16.json"
    );
    let config = rebalance_model::Config::from_json_file(path).expect("wide config");
    assert_eq!((config.buckets.len(), config.servers), (16, 16));
    let model = RebalanceModel::new(config, BugSet::none());
    let stats = agreeing_walks(&model, seed, 48, 400);
    // The walks reach completions, give-ups, recovery and a server's crash and restart.
    for rule in ["R12", "R14.3", "R16", "R19", "R20"] {
        assert!(
            stats.coverage.rules.get(rule).is_some_and(|n| *n > 0),
            "seed {seed}: {rule} never fired:\n{}",
            stats.coverage.render()
        );
    }
}

#[test]
fn random_walks_find_and_shrink_a_restored_bug() {
    let seed = 7;
    println!("seed {seed}");
    let config = preset("full").expect("full preset");
    let bugs = [Bug::TimeoutCompletes];
    let model = RebalanceModel::new(config.clone(), BugSet::of(&bugs));
    let d = random::run(&model, seed, 64, 120).expect_err("the bug must be found");
    println!("shrunk to {} steps", d.steps.len());
    // The shortest way to the old behaviour is register, enough ticks to time out, and the
    // Timeout event; shrinking must get close to that.
    assert!(
        d.steps.len() <= 8,
        "not shrunk: {} steps: {:?}",
        d.steps.len(),
        d.steps
    );
    let trace = Trace::new(config, BugSet::of(&bugs), d.steps.clone());
    match replay(&trace) {
        Err(ReplayError::Divergence { step, .. }) => assert_eq!(step, d.steps.len()),
        Err(ReplayError::Invalid(e)) => panic!("shrunk walk is not a valid trace: {e}"),
        Ok(_) => panic!("shrunk walk no longer diverges"),
    }
}
