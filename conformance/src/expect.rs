//! A trace's `expect` blocks checked on the manager: the manager's projection (state after the
//! step, effects of the step) turned into the model crate's [`Observation`], the JSON an
//! expectation is matched against (spec/trace-format.md, "Expectations").

use std::fmt::Debug;

use rebalance_model::expect::{attempt_json, Observation, ObservedBucket, ObservedTask};
use serde_json::{json, Value};

use crate::projection::{
    Attempt, Effects, Event, Key, Lai, Reply, Sent, ServerSet, Servers, State,
};

/// A projection status in spec vocabulary: `TimeoutFinal` is `TIMEOUT_FINAL`, `NotStarted` is
/// `NOT_STARTED` (the variants are the spec's statuses in Rust case).
pub fn spec_name<T: Debug>(status: &T) -> String {
    let mut out = String::new();
    for (i, c) in format!("{status:?}").chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

/// A reply as R1 and R2 name it (`Accepted(1)` for a registered rebalance).
pub fn reply(r: &Reply) -> String {
    match r {
        Reply::Registered(id) => format!("Accepted({id})"),
        Reply::CancelAccepted => "Accepted".into(),
        Reply::RejectedInProgress => "Rejected(InProgress)".into(),
        Reply::RejectedInvalidPlan => "Rejected(InvalidPlan)".into(),
        Reply::StoreError => "StoreError".into(),
        Reply::NothingToCancel => "NothingToCancel".into(),
    }
}

fn set(s: ServerSet) -> Vec<u64> {
    (0..64).filter(|b| s.0 & (1u64 << b) != 0).collect()
}

fn servers(list: &Servers) -> Vec<u64> {
    list.to_vec()
}

/// An event of the projection as trace JSON (the model's serialization of its events).
fn event(e: &Event) -> Value {
    let k = |k: &Key| json!({ "rid": k.rid, "bucket": k.bucket });
    match e {
        Event::Timeout(key) => json!({"type": "timeout", "key": k(key)}),
        Event::Reconcile(key) => json!({"type": "reconcile", "key": k(key)}),
        Event::Finalize(rid) => json!({"type": "finalize", "rid": rid}),
        Event::Recover => json!({"type": "recover"}),
    }
}

fn attempt(a: &Attempt) -> Value {
    match a {
        Attempt::Running { age, .. } => attempt_json(false, *age, 0, None, 0, 0),
        Attempt::Tracked {
            since_progress,
            blocked_for,
            reconciles,
            reconcile_in,
            ..
        } => attempt_json(
            true,
            0,
            *since_progress,
            *blocked_for,
            *reconciles,
            *reconcile_in,
        ),
    }
}

fn key(k: &Option<Key>) -> Value {
    k.map_or(Value::Null, |k| json!({ "rid": k.rid, "bucket": k.bucket }))
}

fn lai(l: &Lai) -> Value {
    json!({
        "leader": l.leader,
        "leader_epoch": l.leader_epoch,
        "isr": set(l.isr),
        "bucket_epoch": l.bucket_epoch,
        "coordinator_epoch": l.coordinator_epoch,
    })
}

/// A message the manager sent, as trace JSON.
pub fn sent(m: &Sent) -> Value {
    match m {
        Sent::Nli {
            to,
            bucket,
            replicas,
            lai,
            exec_key,
        } => json!({
            "type": "nli",
            "to": to,
            "bucket": bucket,
            "replicas": servers(replicas),
            "leader": lai.leader,
            "leader_epoch": lai.leader_epoch,
            "isr": set(lai.isr),
            "bucket_epoch": lai.bucket_epoch,
            "coordinator_epoch": lai.coordinator_epoch,
            "exec_key": key(exec_key),
        }),
        Sent::AdjustIsrResponse { to, bucket, result } => json!({
            "type": "adjust_isr_response",
            "to": to,
            "bucket": bucket,
            "result": result.as_ref().map_or(json!("err"), |l| json!({ "ok": lai(l) })),
        }),
        Sent::ServerMessage => json!({ "type": "server_message" }),
    }
}

/// What an expectation sees of the manager: its projected state after a step and the effects
/// of the step's actions.
pub fn observe(state: &State, effects: &[Effects]) -> Observation {
    Observation {
        overall: state.overall.as_ref().map(spec_name),
        task: state.task.as_ref().map(|t| ObservedTask {
            id: t.id,
            status: spec_name(&t.status),
            cancel_requested: t.cancel_requested,
        }),
        buckets: state
            .buckets
            .iter()
            .map(|b| ObservedBucket {
                bucket: b.bucket,
                status: state
                    .status
                    .iter()
                    .find(|(x, _)| *x == b.bucket)
                    .map(|(_, st)| spec_name(st)),
                assignment: servers(&b.assignment),
                leader: b.lai.leader,
                isr: set(b.lai.isr),
                leader_epoch: b.lai.leader_epoch,
                bucket_epoch: b.lai.bucket_epoch,
                deleted: b.deleted,
                attempt: state
                    .attempts
                    .iter()
                    .find(|(x, _)| *x == b.bucket)
                    .map(|(_, a)| attempt(a)),
            })
            .collect(),
        sent: effects
            .iter()
            .flat_map(|e| e.sent.iter())
            .map(sent)
            .collect(),
        replies: effects
            .iter()
            .flat_map(|e| e.replies.iter())
            .map(reply)
            .collect(),
        events: state.events.iter().map(event).collect(),
        live: set(state.live),
        plan: state
            .plan
            .iter()
            .map(|e| json!({"bucket": e.bucket, "ors": servers(&e.ors), "trs": servers(&e.trs)}))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::{BucketStatus, Servers};

    #[test]
    fn statuses_and_lists_read_as_the_spec_writes_them() {
        assert_eq!(spec_name(&BucketStatus::TimeoutFinal), "TIMEOUT_FINAL");
        assert_eq!(spec_name(&BucketStatus::NotStarted), "NOT_STARTED");
        assert_eq!(servers(&Servers::of([3, 0, 1])), vec![3, 0, 1]);
        assert_eq!(set(ServerSet::of([2, 0])), vec![0, 2]);
    }
}
