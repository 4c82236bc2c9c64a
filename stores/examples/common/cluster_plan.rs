//! The cluster both examples start from and the plan they register, shared by `#[path]`: the
//! `cluster` host and the `simulate` simulation run the same rebalance.

use rebalance_manager::sim::Rng;
use rebalance_manager::{
    BucketId, BucketRecord, LeaderAndIsr, PersistedState, Plan, PlanEntry, ServerId,
};

/// The cluster before any rebalance: bucket `b` on servers `b, b+1, b+2` (mod `servers`), led
/// by `b`, every replica in sync. Its metadata is stamped with coordinator epoch 1, the epoch the
/// first incarnation elects, as the model's initial state has it (written by the first
/// coordinator); the `cluster` log's `read` field compares the store with the model's, stamp
/// included.
pub(crate) fn initial(n: u32, servers: u32) -> PersistedState {
    let mut s = PersistedState::default();
    for b in 0..n {
        let a: Vec<ServerId> = (0..3).map(|i| (b + i) % servers).collect();
        s.cluster.buckets.insert(
            b,
            BucketRecord {
                lai: LeaderAndIsr {
                    leader: Some(a[0]),
                    isr: a.iter().copied().collect(),
                    coordinator_epoch: 1,
                    ..LeaderAndIsr::default()
                },
                assignment: a,
            },
        );
    }
    s
}

/// A plan from the current assignments, in bucket order: 70% moves, 20% leader-only, 10% no-op.
pub(crate) fn plan_for(records: &[(BucketId, BucketRecord)], servers: u32, rng: &mut Rng) -> Plan {
    Plan::new(
        records
            .iter()
            .filter(|(_, r)| !r.assignment.is_empty())
            .map(|(b, r)| {
                let ors = r.assignment.clone();
                let trs = match rng.below(10) {
                    0..=6 => {
                        let mut t: Vec<ServerId> = ors.iter().skip(1).copied().collect();
                        let spare = (0..servers)
                            .map(|i| (b + i) % servers)
                            .find(|s| !ors.contains(s));
                        t.extend(spare);
                        t
                    }
                    7..=8 if ors.len() > 1 => {
                        let mut t = ors.clone();
                        t.swap(0, 1);
                        t
                    }
                    _ => ors.clone(),
                };
                let entry = PlanEntry::new(ors, trs, r.lai.leader).expect("non-empty target");
                (*b, entry)
            })
            .collect(),
    )
}
