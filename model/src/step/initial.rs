//! The metadata a configuration starts from: each bucket's replicas and leader-and-ISR in the
//! store, and each replica's view of them. Read by the initial state and by the abstraction of
//! spec 9 ("One bucket against the rest of the plan"), which returns an abstract bucket's
//! replicas to their start, and the remote plan storage of a preloaded store; one place, so
//! that the two cannot disagree on where a run begins.

use crate::config::{BucketConfig, Config};
use crate::state::types::{BucketId, Epoch, LeaderAndIsr, Replicas, ServerId, ServerSet};
use crate::state::{PlanObject, PlanObjects, ReplicaView, TaskNode};

/// A bucket's metadata as the configuration gives it, written by the coordinator of epoch
/// `stored_ce`.
pub(crate) fn bucket_meta(b: &BucketConfig, stored_ce: Epoch) -> (Replicas, LeaderAndIsr) {
    let isr = ServerSet::from_servers(b.isr.as_ref().unwrap_or(&b.assignment));
    let lai = LeaderAndIsr {
        leader: Some(b.leader),
        leader_epoch: b.leader_epoch,
        isr,
        bucket_epoch: b.bucket_epoch,
        coordinator_epoch: stored_ce,
    };
    (Replicas::from_slice(&b.assignment), lai)
}

/// Bucket `b`'s initial metadata in the store (the configuration's, under the stored
/// coordinator epoch).
pub fn initial_meta(config: &Config, b: BucketId) -> (Replicas, LeaderAndIsr) {
    let stored_ce = config.store.as_ref().map_or(1, |s| s.coordinator_epoch);
    bucket_meta(&config.buckets[b as usize], stored_ce)
}

/// Server `server`'s view of bucket `b` at the start: the bucket's initial metadata, if the
/// server is assigned the bucket (every replica has adopted it).
pub fn initial_view(config: &Config, server: ServerId, b: BucketId) -> Option<ReplicaView> {
    let (replicas, lai) = initial_meta(config, b);
    replicas.contains(&server).then_some(ReplicaView {
        leader_epoch: lai.leader_epoch,
        bucket_epoch: lai.bucket_epoch,
        leader: lai.leader,
        replicas,
        isr: lai.isr,
        isr_rejected: false,
    })
}

/// The remote plan storage of a preloaded store (the `remote_plan` design): the stored task's
/// plan object, whole, since a task node that references a plan was written after it, and
/// stored where R1 would have stored it (`one_path`: `one-plan-path`'s fixed path).
pub fn initial_plans(config: &Config, one_path: bool, task: Option<&TaskNode>) -> PlanObjects {
    let mut plans = PlanObjects::new();
    if let Some(t) = task.filter(|_| config.remote_plan) {
        plans.push(PlanObject {
            key: crate::step::coordinator::remote_plan::key_of(one_path, t.id),
            content: t.id,
            whole: true,
        });
    }
    plans
}
