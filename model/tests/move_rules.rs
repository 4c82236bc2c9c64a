//! R11's shrink, checked where it acts. Part of the model's mutation oracle: with R11's test
//! `!final_state` turned to `final_state` no verdict changed (spec/findings.md F18). Under the
//! spec a bucket at its target and caught up is at its final metadata as soon as Phase B wrote
//! it, so the test only matters where `final_state` asks more: under the planned-leader design
//! (`planned_leader`, spec/fluss-designs.md), where the old leader may lead at the target after
//! the planned one's crash. There the mutant left the bucket to wait for its timeout and R14's
//! reconcile (R7.2) instead of electing the planned leader when the ISR grew back (R18, R11).

mod common;
use common::each_edge;
use rebalance_model::check::por::reduced;
use rebalance_model::{BugSet, Config, ServerSet, SystemState};

/// A running or tracked move attempt whose bucket is at its target and caught up, but led by
/// another than the planned leader: R11 (from R18) and R7.2 never leave one behind a step.
fn waiting_at_the_target(s: &SystemState) -> bool {
    let c = &s.coordinator;
    c.plan.iter().any(|e| {
        let b = e.bucket as usize;
        let trs = ServerSet::from_servers(&e.trs);
        let lai = c.cache.lai[b];
        c.attempt(e.bucket).is_some()
            && ServerSet::from_servers(&e.ors) != trs
            && !s.store.buckets.deleted[b]
            && c.cache.assignment[b] == e.trs
            && trs.is_subset(c.live)
            && trs.is_subset(lai.isr)
            && lai.leader != Some(e.new_leader)
    })
}

#[test]
fn the_planned_leader_is_elected_as_soon_as_the_target_has_caught_up() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/configs/design-planned-leader-crash.json"
    );
    let (model, _) = reduced(Config::from_json_file(path).unwrap(), BugSet::none());
    let mut regrown = 0;
    each_edge(&model, |s, a, next, _| {
        assert!(
            !waiting_at_the_target(next),
            "{a:?} left a caught-up bucket at its target without the planned leader"
        );
        // The case that matters: the ISR grew back to the whole target under another leader.
        let c = &s.coordinator;
        if c.plan.iter().any(|e| {
            let b = e.bucket as usize;
            s.store.buckets.lai[b].leader != Some(e.new_leader)
                && next.store.buckets.lai[b].leader == Some(e.new_leader)
                && s.store.buckets.assignment[b] == e.trs
        }) {
            regrown += 1;
        }
    });
    assert!(
        regrown > 0,
        "the planned leader was never elected at the target"
    );
}
