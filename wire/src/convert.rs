//! The manager's types to the wire and back. Lossless both ways for inputs, effects, the
//! configuration and the store (the round-trip tests check it), so a host that speaks the
//! protocol sees exactly what the manager emitted.

use std::collections::BTreeSet;
use std::sync::Arc;

use rebalance_manager as mgr;

use crate as wire;

pub fn key(k: mgr::Key) -> wire::Key {
    wire::Key {
        rid: k.rid,
        bucket: k.bucket,
    }
}

pub fn key_from(k: wire::Key) -> mgr::Key {
    mgr::Key {
        rid: k.rid,
        bucket: k.bucket,
    }
}

fn set(s: &BTreeSet<mgr::ServerId>) -> Vec<u32> {
    s.iter().copied().collect()
}

fn set_from(v: &[u32]) -> BTreeSet<mgr::ServerId> {
    v.iter().copied().collect()
}

pub fn event(e: &mgr::Event) -> wire::Event {
    match e {
        mgr::Event::Timeout(k) => wire::Event::Timeout { key: key(*k) },
        mgr::Event::Reconcile(k) => wire::Event::Reconcile { key: key(*k) },
        mgr::Event::Finalize(rid) => wire::Event::Finalize { rid: *rid },
        mgr::Event::Recover => wire::Event::Recover,
    }
}

pub fn event_from(e: wire::Event) -> mgr::Event {
    match e {
        wire::Event::Timeout { key: k } => mgr::Event::Timeout(key_from(k)),
        wire::Event::Reconcile { key: k } => mgr::Event::Reconcile(key_from(k)),
        wire::Event::Finalize { rid } => mgr::Event::Finalize(rid),
        wire::Event::Recover => mgr::Event::Recover,
    }
}

/// Destructured on both sides, so that a flag added to either is a compile error here.
pub fn flags(f: &mgr::Flags) -> wire::Flags {
    let mgr::Flags {
        cancel_requested,
        finalize_pending,
        finalize_queued,
        recovery_pending,
        recovery_queued,
    } = *f;
    wire::Flags {
        cancel_requested,
        finalize_pending,
        finalize_queued,
        recovery_pending,
        recovery_queued,
    }
}

pub fn flags_from(f: &wire::Flags) -> mgr::Flags {
    let wire::Flags {
        cancel_requested,
        finalize_pending,
        finalize_queued,
        recovery_pending,
        recovery_queued,
    } = *f;
    mgr::Flags {
        cancel_requested,
        finalize_pending,
        finalize_queued,
        recovery_pending,
        recovery_queued,
    }
}

pub fn config(c: &mgr::Config) -> wire::Config {
    wire::Config {
        task_timeout_ms: c.task_timeout_ms,
        check_interval_ms: c.check_interval_ms,
        max_reconcile_backoff_ms: c.max_reconcile_backoff_ms,
        target_unavailable_timeout_ms: c.target_unavailable_timeout_ms,
        no_progress_timeout_ms: c.no_progress_timeout_ms,
        max_tracked_timed_out: c.max_tracked_timed_out as u64,
        max_inflight: c.max_inflight as u64,
    }
}

pub fn config_from(c: &wire::Config) -> mgr::Config {
    mgr::Config {
        task_timeout_ms: c.task_timeout_ms,
        check_interval_ms: c.check_interval_ms,
        max_reconcile_backoff_ms: c.max_reconcile_backoff_ms,
        target_unavailable_timeout_ms: c.target_unavailable_timeout_ms,
        no_progress_timeout_ms: c.no_progress_timeout_ms,
        max_tracked_timed_out: usize::try_from(c.max_tracked_timed_out).unwrap_or(usize::MAX),
        max_inflight: usize::try_from(c.max_inflight).unwrap_or(usize::MAX),
    }
}

fn plan(p: &mgr::Plan) -> Vec<wire::PlanEntry> {
    p.buckets
        .iter()
        .map(|(b, e)| wire::PlanEntry {
            bucket: *b,
            ors: e.ors.clone(),
            trs: e.trs.clone(),
            old_leader: e.old_leader,
            new_leader: e.new_leader,
        })
        .collect()
}

fn plan_from(p: &[wire::PlanEntry]) -> mgr::Plan {
    mgr::Plan::new(
        p.iter()
            .map(|e| {
                (
                    e.bucket,
                    mgr::PlanEntry {
                        ors: e.ors.clone(),
                        trs: e.trs.clone(),
                        old_leader: e.old_leader,
                        new_leader: e.new_leader,
                    },
                )
            })
            .collect(),
    )
}

fn task_status(s: mgr::TaskStatus) -> wire::TaskStatus {
    use mgr::TaskStatus as S;
    match s {
        S::NotStarted => wire::TaskStatus::NotStarted,
        S::Rebalancing => wire::TaskStatus::Rebalancing,
        S::Completed => wire::TaskStatus::Completed,
        S::Failed => wire::TaskStatus::Failed,
        S::Canceled => wire::TaskStatus::Canceled,
    }
}

fn task_status_from(s: wire::TaskStatus) -> mgr::TaskStatus {
    use wire::TaskStatus as S;
    match s {
        S::NotStarted => mgr::TaskStatus::NotStarted,
        S::Rebalancing => mgr::TaskStatus::Rebalancing,
        S::Completed => mgr::TaskStatus::Completed,
        S::Failed => mgr::TaskStatus::Failed,
        S::Canceled => mgr::TaskStatus::Canceled,
    }
}

pub fn overall(s: mgr::OverallStatus) -> wire::OverallStatus {
    use mgr::OverallStatus as S;
    match s {
        S::Rebalancing => wire::OverallStatus::Rebalancing,
        S::Completed => wire::OverallStatus::Completed,
        S::Failed => wire::OverallStatus::Failed,
        S::Canceled => wire::OverallStatus::Canceled,
    }
}

pub fn bucket_status(s: mgr::BucketStatus) -> wire::BucketStatus {
    use mgr::BucketStatus as S;
    match s {
        S::NotStarted => wire::BucketStatus::NotStarted,
        S::Rebalancing => wire::BucketStatus::Rebalancing,
        S::Timeout => wire::BucketStatus::Timeout,
        S::Completed => wire::BucketStatus::Completed,
        S::Failed => wire::BucketStatus::Failed,
        S::Canceled => wire::BucketStatus::Canceled,
    }
}

pub fn overall_from(s: wire::OverallStatus) -> mgr::OverallStatus {
    use wire::OverallStatus as S;
    match s {
        S::Rebalancing => mgr::OverallStatus::Rebalancing,
        S::Completed => mgr::OverallStatus::Completed,
        S::Failed => mgr::OverallStatus::Failed,
        S::Canceled => mgr::OverallStatus::Canceled,
    }
}

pub fn bucket_status_from(s: wire::BucketStatus) -> mgr::BucketStatus {
    use wire::BucketStatus as S;
    match s {
        S::NotStarted => mgr::BucketStatus::NotStarted,
        S::Rebalancing => mgr::BucketStatus::Rebalancing,
        S::Timeout => mgr::BucketStatus::Timeout,
        S::Completed => mgr::BucketStatus::Completed,
        S::Failed => mgr::BucketStatus::Failed,
        S::Canceled => mgr::BucketStatus::Canceled,
    }
}

pub fn lai(l: &mgr::LeaderAndIsr) -> wire::LeaderAndIsr {
    wire::LeaderAndIsr {
        leader: l.leader,
        leader_epoch: l.leader_epoch,
        isr: set(&l.isr),
        bucket_epoch: l.bucket_epoch,
        coordinator_epoch: l.coordinator_epoch,
    }
}

fn lai_from(l: &wire::LeaderAndIsr) -> mgr::LeaderAndIsr {
    mgr::LeaderAndIsr {
        leader: l.leader,
        leader_epoch: l.leader_epoch,
        isr: set_from(&l.isr),
        bucket_epoch: l.bucket_epoch,
        coordinator_epoch: l.coordinator_epoch,
    }
}

pub fn store(s: &mgr::PersistedState) -> wire::Store {
    wire::Store {
        coordinator_epoch: s.coordinator_epoch,
        task: s.task.as_ref().map(|t| wire::Task {
            id: t.id,
            status: task_status(t.status),
            cancel_requested: t.cancel_requested,
            plan: plan(&t.plan),
        }),
        buckets: s
            .cluster
            .buckets
            .iter()
            .map(|(b, r)| wire::Bucket {
                bucket: *b,
                assignment: r.assignment.clone(),
                lai: lai(&r.lai),
                deleted: s.cluster.deleted.contains(b),
            })
            .collect(),
    }
}

pub fn store_from(s: &wire::Store) -> mgr::PersistedState {
    let mut cluster = mgr::ClusterState::default();
    for b in &s.buckets {
        cluster.buckets.insert(
            b.bucket,
            mgr::BucketRecord {
                assignment: b.assignment.clone(),
                lai: lai_from(&b.lai),
            },
        );
        if b.deleted {
            cluster.deleted.insert(b.bucket);
        }
    }
    mgr::PersistedState {
        coordinator_epoch: s.coordinator_epoch,
        task: s.task.as_ref().map(|t| mgr::TaskNode {
            id: t.id,
            status: task_status_from(t.status),
            cancel_requested: t.cancel_requested,
            plan: Arc::new(plan_from(&t.plan)),
        }),
        cluster,
    }
}

fn context(c: &mgr::RequestContext) -> wire::Context {
    wire::Context {
        coordinator_epoch: c.coordinator_epoch,
        leader: c.leader,
        leader_epoch: c.leader_epoch,
        bucket_epoch: c.bucket_epoch,
        exec_key: c.exec_key.map(key),
    }
}

fn context_from(c: &wire::Context) -> mgr::RequestContext {
    mgr::RequestContext {
        coordinator_epoch: c.coordinator_epoch,
        leader: c.leader,
        leader_epoch: c.leader_epoch,
        bucket_epoch: c.bucket_epoch,
        exec_key: c.exec_key.map(key_from),
    }
}

pub fn input(i: &mgr::Input) -> wire::Input {
    match i {
        mgr::Input::Register { plan: p } => wire::Input::Register { plan: plan(p) },
        mgr::Input::Cancel => wire::Input::Cancel,
        mgr::Input::Tick => wire::Input::Tick,
        mgr::Input::Event(e) => wire::Input::Event { event: event(e) },
        mgr::Input::NliResponse {
            from,
            bucket,
            ok,
            context: c,
        } => wire::Input::NliResponse {
            from: *from,
            bucket: *bucket,
            ok: *ok,
            context: context(c),
        },
        mgr::Input::AdjustIsr {
            from,
            bucket,
            leader_epoch,
            bucket_epoch,
            isr,
        } => wire::Input::AdjustIsr {
            from: *from,
            bucket: *bucket,
            leader_epoch: *leader_epoch,
            bucket_epoch: *bucket_epoch,
            isr: set(isr),
        },
        mgr::Input::ServerCrashed(s) => wire::Input::ServerCrashed { server: *s },
        mgr::Input::ServerRestarted(s) => wire::Input::ServerRestarted { server: *s },
        mgr::Input::BucketDeleted(b) => wire::Input::BucketDeleted { bucket: *b },
    }
}

pub fn input_from(i: &wire::Input) -> mgr::Input {
    match i {
        wire::Input::Register { plan: p } => mgr::Input::Register { plan: plan_from(p) },
        wire::Input::Cancel => mgr::Input::Cancel,
        wire::Input::Tick => mgr::Input::Tick,
        wire::Input::Event { event: e } => mgr::Input::Event(event_from(*e)),
        wire::Input::NliResponse {
            from,
            bucket,
            ok,
            context: c,
        } => mgr::Input::NliResponse {
            from: *from,
            bucket: *bucket,
            ok: *ok,
            context: context_from(c),
        },
        wire::Input::AdjustIsr {
            from,
            bucket,
            leader_epoch,
            bucket_epoch,
            isr,
        } => mgr::Input::AdjustIsr {
            from: *from,
            bucket: *bucket,
            leader_epoch: *leader_epoch,
            bucket_epoch: *bucket_epoch,
            isr: set_from(isr),
        },
        wire::Input::ServerCrashed { server } => mgr::Input::ServerCrashed(*server),
        wire::Input::ServerRestarted { server } => mgr::Input::ServerRestarted(*server),
        wire::Input::BucketDeleted { bucket } => mgr::Input::BucketDeleted(*bucket),
    }
}

const ADJUST_ISR_ERRORS: [(&str, mgr::AdjustIsrError); 7] = [
    ("UNKNOWN_BUCKET", mgr::AdjustIsrError::UnknownBucket),
    ("NOT_LEADER", mgr::AdjustIsrError::NotLeader),
    (
        "FENCED_LEADER_EPOCH",
        mgr::AdjustIsrError::FencedLeaderEpoch,
    ),
    (
        "INVALID_BUCKET_EPOCH",
        mgr::AdjustIsrError::InvalidBucketEpoch,
    ),
    ("INELIGIBLE_REPLICA", mgr::AdjustIsrError::IneligibleReplica),
    ("NO_CHANGE", mgr::AdjustIsrError::NoChange),
    ("STORE_ERROR", mgr::AdjustIsrError::StoreError),
];

fn plan_error(e: &mgr::PlanError) -> (&'static str, u32) {
    use mgr::PlanError as E;
    match e {
        E::DuplicateBucket(b) => ("DUPLICATE_BUCKET", *b),
        E::EmptyTarget(b) => ("EMPTY_TARGET", *b),
        E::NewLeaderNotFirstTarget(b) => ("NEW_LEADER_NOT_FIRST_TARGET", *b),
        E::DuplicateReplica(b) => ("DUPLICATE_REPLICA", *b),
        E::UnknownBucket(b) => ("UNKNOWN_BUCKET", *b),
        E::DeletedBucket(b) => ("DELETED_BUCKET", *b),
        E::NotAtOrigin(b) => ("NOT_AT_ORIGIN", *b),
    }
}

fn plan_error_from(reason: &str, b: u32) -> Option<mgr::PlanError> {
    use mgr::PlanError as E;
    Some(match reason {
        "DUPLICATE_BUCKET" => E::DuplicateBucket(b),
        "EMPTY_TARGET" => E::EmptyTarget(b),
        "NEW_LEADER_NOT_FIRST_TARGET" => E::NewLeaderNotFirstTarget(b),
        "DUPLICATE_REPLICA" => E::DuplicateReplica(b),
        "UNKNOWN_BUCKET" => E::UnknownBucket(b),
        "DELETED_BUCKET" => E::DeletedBucket(b),
        "NOT_AT_ORIGIN" => E::NotAtOrigin(b),
        _ => return None,
    })
}

pub fn effect(e: &mgr::Effect) -> wire::Effect {
    match e {
        mgr::Effect::SendNli(n) => wire::Effect::SendNli {
            to: n.to,
            bucket: n.bucket,
            replicas: n.replicas.clone(),
            leader: n.leader,
            leader_epoch: n.leader_epoch,
            isr: set(&n.isr),
            bucket_epoch: n.bucket_epoch,
            coordinator_epoch: n.coordinator_epoch,
            exec_key: n.exec_key.map(key),
        },
        mgr::Effect::SendAdjustIsrResponse { to, bucket, result } => {
            wire::Effect::SendAdjustIsrResponse {
                to: *to,
                bucket: *bucket,
                result: match result {
                    Ok(l) => wire::AdjustResult::Ok(lai(l)),
                    Err(e) => wire::AdjustResult::Err(
                        ADJUST_ISR_ERRORS
                            .iter()
                            .find(|(_, x)| x == e)
                            .map_or("STORE_ERROR", |(n, _)| n)
                            .to_string(),
                    ),
                },
            }
        }
        mgr::Effect::Enqueue(ev) => wire::Effect::Enqueue { event: event(ev) },
        mgr::Effect::Reply(r) => wire::Effect::Reply {
            reply: match r {
                mgr::Reply::Accepted(rid) => wire::Reply::Accepted { rid: *rid },
                mgr::Reply::Rejected(mgr::RejectReason::InProgress) => {
                    wire::Reply::RejectedInProgress
                }
                mgr::Reply::Rejected(mgr::RejectReason::InvalidPlan(e)) => {
                    let (reason, bucket) = plan_error(e);
                    wire::Reply::RejectedInvalidPlan {
                        reason: reason.to_string(),
                        bucket,
                    }
                }
                mgr::Reply::NothingToCancel => wire::Reply::NothingToCancel,
                mgr::Reply::StoreError => wire::Reply::StoreError,
            },
        },
    }
}

/// The manager's effect for a wire effect. The reason names were checked when the line was
/// decoded ([`wire::ADJUST_ISR_ERRORS`], [`wire::PLAN_ERRORS`]), so `None` means a decoder and
/// this table disagree.
pub fn effect_from(e: &wire::Effect) -> Option<mgr::Effect> {
    Some(match e {
        wire::Effect::SendNli {
            to,
            bucket,
            replicas,
            leader,
            leader_epoch,
            isr,
            bucket_epoch,
            coordinator_epoch,
            exec_key,
        } => mgr::Effect::SendNli(mgr::Nli {
            to: *to,
            bucket: *bucket,
            replicas: replicas.clone(),
            leader: *leader,
            leader_epoch: *leader_epoch,
            isr: set_from(isr),
            bucket_epoch: *bucket_epoch,
            coordinator_epoch: *coordinator_epoch,
            exec_key: exec_key.map(key_from),
        }),
        wire::Effect::SendAdjustIsrResponse { to, bucket, result } => {
            mgr::Effect::SendAdjustIsrResponse {
                to: *to,
                bucket: *bucket,
                result: match result {
                    wire::AdjustResult::Ok(l) => Ok(lai_from(l)),
                    wire::AdjustResult::Err(reason) => Err(ADJUST_ISR_ERRORS
                        .iter()
                        .find(|(n, _)| n == reason)
                        .map(|(_, e)| *e)?),
                },
            }
        }
        wire::Effect::Enqueue { event: ev } => mgr::Effect::Enqueue(event_from(*ev)),
        wire::Effect::Reply { reply } => mgr::Effect::Reply(match reply {
            wire::Reply::Accepted { rid } => mgr::Reply::Accepted(*rid),
            wire::Reply::RejectedInProgress => mgr::Reply::Rejected(mgr::RejectReason::InProgress),
            wire::Reply::RejectedInvalidPlan { reason, bucket } => mgr::Reply::Rejected(
                mgr::RejectReason::InvalidPlan(plan_error_from(reason, *bucket)?),
            ),
            wire::Reply::NothingToCancel => mgr::Reply::NothingToCancel,
            wire::Reply::StoreError => mgr::Reply::StoreError,
        }),
    })
}

/// The observation `state` answers with: the store (`durable`, the in-memory store under the
/// manager's), the manager's snapshot, the store's instrumentation and the manager's own
/// invariant check.
pub fn observation<S: mgr::Store>(
    m: &mgr::Manager<S>,
    durable: &mgr::MemStore,
) -> wire::Observation {
    wire::Observation {
        store: store(durable.state()),
        coordinator: coordinator(&m.snapshot()),
        store_ops: durable.op_count(),
        fault_pending: durable.fault_pending(),
        invariant_violation: m.check_invariants().err().map(|v| v.to_string()),
    }
}

/// The coordinator part of an observation: the manager's snapshot in the wire's vocabulary.
pub fn coordinator(snap: &mgr::Snapshot) -> wire::Coordinator {
    wire::Coordinator {
        coordinator_epoch: snap.coordinator_epoch,
        now_ms: snap.now_ms,
        live: set(&snap.live),
        rid: snap.rid,
        overall: snap.overall.map(overall),
        status: snap
            .status
            .iter()
            .map(|(b, s)| wire::StatusOf {
                bucket: *b,
                status: bucket_status(*s),
            })
            .collect(),
        pending: snap.pending.clone(),
        attempts: snap
            .attempts
            .iter()
            .map(|(b, v)| {
                let a = &v.attempt;
                wire::Attempt {
                    bucket: *b,
                    key: key(a.key),
                    mode: if v.tracked {
                        wire::Mode::Tracked
                    } else {
                        wire::Mode::Running
                    },
                    started_ms: a.started_ms,
                    last_progress_ms: a.last_progress_ms,
                    blocked_since_ms: a.blocked_since_ms,
                    reconciles: a.reconciles.into(),
                    next_reconcile_ms: a.next_reconcile_ms,
                    observed: wire::Observed {
                        assignment: a.observed.assignment.clone(),
                        leader: a.observed.leader,
                        isr: set(&a.observed.isr),
                    },
                }
            })
            .collect(),
        queued_timeouts: snap.queued_timeouts.iter().map(|k| key(*k)).collect(),
        queued_reconciles: snap.queued_reconciles.iter().map(|k| key(*k)).collect(),
        flags: flags(&snap.flags),
        restored: snap.restored as u64,
    }
}

/// The manager's snapshot from a coordinator part, for a harness that projects every
/// implementation through the manager's types. The wire carries no implementation-only retry
/// sets (`liveness_repairs`, `deletion_retries`): they come back empty. A `reconciles` count
/// beyond `u32` saturates, which no comparison can mistake for a real count.
pub fn coordinator_from(c: &wire::Coordinator) -> mgr::Snapshot {
    mgr::Snapshot {
        coordinator_epoch: c.coordinator_epoch,
        now_ms: c.now_ms,
        rid: c.rid,
        overall: c.overall.map(overall_from),
        status: c
            .status
            .iter()
            .map(|s| (s.bucket, bucket_status_from(s.status)))
            .collect(),
        pending: c.pending.clone(),
        attempts: c
            .attempts
            .iter()
            .map(|a| {
                let attempt = mgr::Attempt {
                    key: key_from(a.key),
                    started_ms: a.started_ms,
                    last_progress_ms: a.last_progress_ms,
                    observed: mgr::Observed {
                        assignment: a.observed.assignment.clone(),
                        leader: a.observed.leader,
                        isr: set_from(&a.observed.isr),
                    },
                    blocked_since_ms: a.blocked_since_ms,
                    reconciles: u32::try_from(a.reconciles).unwrap_or(u32::MAX),
                    next_reconcile_ms: a.next_reconcile_ms,
                };
                let tracked = matches!(a.mode, wire::Mode::Tracked);
                (a.bucket, mgr::AttemptView { attempt, tracked })
            })
            .collect(),
        queued_timeouts: c.queued_timeouts.iter().map(|k| key_from(*k)).collect(),
        queued_reconciles: c.queued_reconciles.iter().map(|k| key_from(*k)).collect(),
        flags: flags_from(&c.flags),
        live: set_from(&c.live),
        restored: usize::try_from(c.restored).unwrap_or(usize::MAX),
        liveness_repairs: Default::default(),
        deletion_retries: Default::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_adjust_isr_error_and_plan_error_has_a_wire_name() {
        for (name, e) in ADJUST_ISR_ERRORS {
            assert!(wire::ADJUST_ISR_ERRORS.contains(&name));
            let eff = mgr::Effect::SendAdjustIsrResponse {
                to: 0,
                bucket: 0,
                result: Err(e),
            };
            assert_eq!(effect_from(&effect(&eff)), Some(eff));
        }
        assert_eq!(ADJUST_ISR_ERRORS.len(), wire::ADJUST_ISR_ERRORS.len());
        for name in wire::PLAN_ERRORS {
            let e = plan_error_from(name, 3).expect("a known reason");
            assert_eq!(plan_error(&e), (*name, 3));
        }
    }

    #[test]
    fn inputs_and_stores_round_trip() {
        let plan = mgr::Plan::new(vec![(
            1,
            mgr::PlanEntry::new(vec![0, 1], vec![1, 2], Some(0)).expect("a valid entry"),
        )]);
        let inputs = [
            mgr::Input::Register { plan: plan.clone() },
            mgr::Input::AdjustIsr {
                from: 1,
                bucket: 1,
                leader_epoch: 2,
                bucket_epoch: 3,
                isr: [1, 2].into(),
            },
            mgr::Input::Event(mgr::Event::Finalize(4)),
            mgr::Input::BucketDeleted(1),
        ];
        for i in inputs {
            assert_eq!(input_from(&input(&i)), i);
        }
        let mut s = mgr::PersistedState {
            coordinator_epoch: 3,
            task: Some(mgr::TaskNode {
                id: 2,
                status: mgr::TaskStatus::Rebalancing,
                cancel_requested: true,
                plan: Arc::new(plan),
            }),
            cluster: mgr::ClusterState::default(),
        };
        s.cluster.buckets.insert(
            1,
            mgr::BucketRecord {
                assignment: vec![0, 1],
                lai: mgr::LeaderAndIsr {
                    leader: Some(0),
                    isr: [0, 1].into(),
                    ..mgr::LeaderAndIsr::default()
                },
            },
        );
        s.cluster.deleted.insert(1);
        assert_eq!(store_from(&store(&s)), s);
    }

    #[test]
    fn a_snapshot_round_trips_except_the_implementation_only_retry_sets() {
        let key = mgr::Key { rid: 2, bucket: 1 };
        let snap = mgr::Snapshot {
            coordinator_epoch: 3,
            now_ms: 5_000,
            rid: Some(2),
            overall: Some(mgr::OverallStatus::Rebalancing),
            status: [
                (1, mgr::BucketStatus::Timeout),
                (4, mgr::BucketStatus::NotStarted),
            ]
            .into(),
            pending: vec![4],
            attempts: [(
                1,
                mgr::AttemptView {
                    attempt: mgr::Attempt {
                        key,
                        started_ms: 1_000,
                        last_progress_ms: 2_000,
                        observed: mgr::Observed {
                            assignment: vec![0, 1],
                            leader: Some(0),
                            isr: [0].into(),
                        },
                        blocked_since_ms: Some(3_000),
                        reconciles: 2,
                        next_reconcile_ms: 7_000,
                    },
                    tracked: true,
                },
            )]
            .into(),
            queued_timeouts: [key].into(),
            queued_reconciles: [key].into(),
            flags: mgr::Flags {
                cancel_requested: true,
                finalize_queued: true,
                ..mgr::Flags::default()
            },
            live: [0, 1, 2].into(),
            restored: 1,
            liveness_repairs: Default::default(),
            deletion_retries: Default::default(),
        };
        assert_eq!(coordinator_from(&coordinator(&snap)), snap);
        let mut with_retries = snap.clone();
        with_retries.liveness_repairs.insert(1);
        with_retries.deletion_retries.insert(4);
        assert_eq!(coordinator_from(&coordinator(&with_retries)), snap);
    }
}
