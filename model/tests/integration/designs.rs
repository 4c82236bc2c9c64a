//! Fluss's proposed designs (spec/fluss-designs.md), checked as model extensions with their own
//! configuration. apache/fluss#3869, the planned leader (`planned_leader`): a move ends with the
//! plan's new leader, elected in Phase B and acknowledged by it, across its own crash and
//! restart between the election and the acknowledgement.

use rebalance_model::check::cycle::fair_cycles_for_goals;
use rebalance_model::check::por::reduced;
use rebalance_model::{BucketStatus, BugSet, Config, RebalanceModel, ServerId, SystemState};
use std::collections::BTreeSet;

use crate::common::each_edge;

const PLANNED_LEADER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/configs/design-planned-leader-crash.json"
);

/// The stored leader of bucket 0 at each step that completes it, over the whole graph.
fn leaders_at_completion(config: Config) -> BTreeSet<Option<ServerId>> {
    let (model, _) = reduced(config, BugSet::none());
    let mut leaders = BTreeSet::new();
    let done = |s: &SystemState| s.coordinator.status_of(0) == Some(BucketStatus::Completed);
    each_edge(&model, |s, _, next, _| {
        if done(next) && !done(s) {
            leaders.insert(next.store.buckets.lai[0].leader);
        }
    });
    leaders
}

#[test]
fn with_the_planned_leader_every_move_completes_with_it_and_without_it_the_old_leader_may_stay() {
    let design = Config::from_json_file(PLANNED_LEADER).unwrap();
    assert!(design.planned_leader);
    // The move [0,1] -> [2,0]: the old leader 0 stays in the target, the plan's leader is 2.
    assert_eq!(
        leaders_at_completion(design.clone()),
        BTreeSet::from([Some(2)])
    );
    // This spec's R10 keeps a current leader that is in the target (D3).
    let spec = Config {
        planned_leader: false,
        ..design
    };
    assert!(leaders_at_completion(spec).contains(&Some(0)));
}

/// The progress check (spec 7.3) holds under the design: once the planned leader is back, the
/// bucket completes with it, without a give-up; no fair cycle strands it.
#[test]
fn the_planned_leader_design_makes_progress_across_the_new_leaders_crash() {
    let mut config = Config::from_json_file(PLANNED_LEADER).unwrap();
    config.no_give_up = true;
    let search = fair_cycles_for_goals(&RebalanceModel::new(config, BugSet::none()));
    assert!(search.violations.is_empty(), "{:?}", search.violations);
    assert!(
        search.nontrivial_sccs > 0,
        "a graph without cycles checks nothing here"
    );
}
