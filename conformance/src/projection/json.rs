//! Projection values as trace JSON (`spec/trace-format.md`): what an `expect` block is matched
//! against, and what a report prints so that its line can be pasted into one.

use rebalance_model::trace::expect::attempt_json;
use serde_json::{json, Value};

use super::{Attempt, Event, Key, LeaderAndIsr, Reply, Sent, ServerSet, Servers};

/// A reply as R1 and R2 name it (`Accepted(1)` for a registered rebalance).
pub fn reply(r: &Reply) -> String {
    match r {
        Reply::Accepted(Some(id)) => format!("Accepted({id})"),
        Reply::Accepted(None) => "Accepted".into(),
        Reply::RejectedInProgress => "Rejected(InProgress)".into(),
        Reply::RejectedInvalidPlan => "Rejected(InvalidPlan)".into(),
        Reply::StoreError => "StoreError".into(),
        Reply::NothingToCancel => "NothingToCancel".into(),
    }
}

pub fn set(s: ServerSet) -> Vec<u64> {
    (0..64).filter(|b| s.0 & (1u64 << b) != 0).collect()
}

pub fn servers(list: &Servers) -> Vec<u64> {
    list.to_vec()
}

/// An event as trace JSON, which encodes events as the driver protocol does.
pub fn event(e: &Event) -> Value {
    serde_json::to_value(e).expect("an event always encodes")
}

pub fn attempt(a: &Attempt) -> Value {
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
    serde_json::to_value(k).expect("a key always encodes")
}

fn lai(l: &LeaderAndIsr) -> Value {
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
