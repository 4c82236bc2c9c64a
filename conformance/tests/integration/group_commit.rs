//! Conformance with group commit in the loop (spec/protocol.md, "Group commit"): the manager on
//! the batching adapter, its effects held until its writes are durable, agrees with the model on
//! every edge of CI presets and on every shipped trace and suite, with every released effect
//! backed by the durable store (`conformance/src/sut/group_commit.rs`). The larger presets are
//! walked by `scripts/scheduled-checks.sh`.

use rebalance_conformance::exhaustive::{walk_side, WalkError};
use rebalance_conformance::replay::{replay_on, SideReplayError};
use rebalance_conformance::sut::group_commit::{Batching, GroupCommitted};
use rebalance_model::{preset, BugSet, Trace};

use super::sut::shipped_traces;

fn walk(config: &str, batching: Batching) -> u64 {
    // The graph `check` searches and CI's walk walks, the partial-order reduction's (spec 9).
    let (model, _) =
        rebalance_model::check::por::reduced(preset(config).expect("a preset"), BugSet::default());
    match walk_side::<GroupCommitted>(&model, &batching, u64::MAX, 0, |_| {}) {
        Ok(stats) => {
            assert!(stats.complete);
            stats.edges
        }
        Err(WalkError::Diverged(d)) => panic!(
            "{config} with {batching:?} diverged after {:?}: {}\nmodel:\n{}\nmanager:\n{}",
            d.steps, d.mismatch.summary, d.mismatch.model, d.mismatch.manager
        ),
        Err(WalkError::Sut { error, .. }) => match *error {},
    }
}

/// Batches of three writes with a flush after about a third of the steps, on the presets with
/// coordinator crashes (the restart reads the durable store), store failures and recovery.
#[test]
fn every_edge_agrees_with_batches_of_three() {
    let batching = Batching {
        limit: 3,
        flush_per_mille: 300,
        seed: 1,
    };
    for (config, edges) in [
        ("ci-coordinator-crash", 40_472),
        ("ci-recovery-store", 418_279),
        ("ci-rf2-recovery", 854_668),
    ] {
        assert_eq!(walk(config, batching), edges, "{config}: the reduced graph");
    }
}

/// Batches as large as the host lets them grow: flushed only where a step needs a held effect;
/// `ci-store` fails store operations through the adapter.
#[test]
fn every_edge_agrees_with_flushes_only_when_needed() {
    let batching = Batching {
        limit: 1000,
        flush_per_mille: 0,
        seed: 7,
    };
    for (config, edges) in [
        ("ci-leader", 33_223),
        ("ci-store", 20_632),
        ("ci-liveness-store", 1_374_660),
    ] {
        assert_eq!(walk(config, batching), edges, "{config}: the reduced graph");
    }
}

#[test]
fn shipped_traces_and_suites_agree_with_group_commit() {
    let files = shipped_traces();
    assert!(files.len() >= 13 + 89, "{} traces", files.len());
    for (i, file) in files.iter().enumerate() {
        let trace = Trace::read(file).expect("a shipped trace");
        let batching = Batching {
            limit: 2,
            flush_per_mille: 500,
            seed: i as u64,
        };
        match replay_on::<GroupCommitted>(&trace, &batching) {
            Ok(ok) => assert!(
                ok.failures.is_empty(),
                "{}: expectations fail: {:?}",
                file.display(),
                ok.failures
            ),
            Err(SideReplayError::Replay(e)) => panic!("{}: {e:?}", file.display()),
            Err(SideReplayError::Sut { error, .. }) => match *error {},
        }
    }
}
