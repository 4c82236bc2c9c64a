//! Network messages (spec 3.4). Messages are values: a trace names a message by its content.

use crate::state::types::{BucketId, Epoch, Key, LeaderAndIsr, Replicas, ServerId, ServerSet};
use serde::{Deserialize, Serialize};

/// NotifyLeaderAndIsr, coordinator -> server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Nli {
    pub to: ServerId,
    pub bucket: BucketId,
    pub replicas: Replicas,
    pub leader: Option<ServerId>,
    pub leader_epoch: Epoch,
    pub isr: ServerSet,
    pub bucket_epoch: Epoch,
    pub coordinator_epoch: Epoch,
    pub exec_key: Option<Key>,
}

/// The request context an Nli carries and its response echoes (spec 3.4, R12).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct RequestContext {
    pub coordinator_epoch: Epoch,
    pub leader: Option<ServerId>,
    pub leader_epoch: Epoch,
    pub bucket_epoch: Epoch,
    pub exec_key: Option<Key>,
}

impl Nli {
    pub fn context(&self) -> RequestContext {
        RequestContext {
            coordinator_epoch: self.coordinator_epoch,
            leader: self.leader,
            leader_epoch: self.leader_epoch,
            bucket_epoch: self.bucket_epoch,
            exec_key: self.exec_key,
        }
    }
}

/// Server -> coordinator answer to an Nli (R22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct NliResponse {
    pub from: ServerId,
    pub bucket: BucketId,
    pub ok: bool,
    pub context: RequestContext,
}

/// Leader -> coordinator ISR proposal (R21).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AdjustIsr {
    pub from: ServerId,
    pub bucket: BucketId,
    pub leader_epoch: Epoch,
    pub bucket_epoch: Epoch,
    pub isr: ServerSet,
}

/// The coordinator's verdict on an AdjustIsr (R18).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AdjustIsrResult {
    Ok(LeaderAndIsr),
    Err,
}

/// Coordinator -> leader answer to an AdjustIsr (R18, R24).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct AdjustIsrResponse {
    pub to: ServerId,
    pub bucket: BucketId,
    pub result: AdjustIsrResult,
}

/// Any in-flight message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Message {
    Nli(Nli),
    NliResponse(NliResponse),
    AdjustIsr(AdjustIsr),
    AdjustIsrResponse(AdjustIsrResponse),
}

impl Message {
    pub fn bucket(&self) -> BucketId {
        match self {
            Message::Nli(m) => m.bucket,
            Message::NliResponse(m) => m.bucket,
            Message::AdjustIsr(m) => m.bucket,
            Message::AdjustIsrResponse(m) => m.bucket,
        }
    }
}
