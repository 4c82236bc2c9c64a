//! Model actions and what a step emits.

use crate::config::PlanTarget;
use crate::state::message::{AdjustIsr, AdjustIsrResponse, Message, Nli, NliResponse};
use crate::state::types::{BucketId, RebalanceId, ServerId};
use crate::state::Event;
use crate::verdict::rule::RuleSet;
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

/// One step of the system. Actions that run coordinator code carry `fail_store_op`: the k-th
/// store operation of the step fails (spec 9); the action is not enabled if the step performs
/// fewer than k store operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// R1, with the plan [`crate::RebalanceModel::register_plan`] derives from `plan`'s
    /// targets, or from the configuration's when the step carries none (a later rebalance
    /// with another plan, such as a cleanup after a give-up, carries its own).
    Register {
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            deserialize_with = "interned_targets"
        )]
        plan: Option<&'static [PlanTarget]>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R2.
    Cancel {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// The front of the event queue (R13, R14, R15's Finalize, R16).
    ProcessEvent {
        event: Event,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R22.
    DeliverNli { msg: Nli },
    /// R12.
    DeliverNliResponse {
        msg: NliResponse,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R18.
    DeliverAdjustIsr {
        msg: AdjustIsr,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R24.
    DeliverAdjustIsrResponse { msg: AdjustIsrResponse },
    /// F-LOSS.
    DropMessage { msg: Message },
    /// F-DUP.
    DuplicateMessage { msg: Message },
    /// R21.
    ProposeIsr { server: ServerId, bucket: BucketId },
    /// R19.
    CrashServer {
        server: ServerId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R20.
    RestartServer {
        server: ServerId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R17 (crash and restart in one step).
    CrashCoordinator,
    /// Bucket deletion (spec 5, Environment).
    DeleteBucket {
        bucket: BucketId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// R23 (its store operations are R23.5's retries).
    Tick {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
    /// Zombie coordinator (spec 9): the deposed incarnation processes the front of its own
    /// event queue.
    ZombieProcessEvent { event: Event },
    /// Zombie coordinator: the deposed incarnation handles a response addressed to it (its
    /// coordinator epoch), R12.
    ZombieDeliverNliResponse { msg: NliResponse },
    /// Zombie coordinator: a client's cancel reaches the deposed incarnation, R2.
    ZombieCancel,
    /// A step of the rest of the plan: what the buckets a configuration models abstractly
    /// (`abstract_buckets`) may do to what buckets share (spec 9, "One bucket against the rest
    /// of the plan"). Only such configurations take it; it is not a step of the protocol.
    Rest {
        step: RestStep,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fail_store_op: Option<u8>,
    },
}

/// What an abstract bucket does in one [`Action::Rest`] step (spec 9, "One bucket against the
/// rest of the plan"). An abstract bucket keeps its status, its attempt, its events and its
/// deletion marker, all under the protocol's own rules; its metadata is one of two canonical
/// values (at its origin or away from it), and it sends and receives nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "rest", rename_all = "snake_case")]
pub enum RestStep {
    /// The bucket's stored metadata leaves its origin or comes back (a Phase A, an election, a
    /// failover), as far as its plan kind allows.
    Move { bucket: BucketId },
    /// The bucket's metadata changed since its attempt observed it, or changed back: the next
    /// reconcile sees progress, or no longer does (R14.2).
    Progress { bucket: BucketId },
    /// The bucket's leader acknowledged its final request: R12 finishes it COMPLETED (R6).
    Finish { bucket: BucketId },
    /// A fault spent on the bucket's own messages or store writes: a budget shrinks.
    Fault { fault: RestFault },
    /// A server took a request of the bucket carrying a newer coordinator epoch (R22 sets
    /// `last_ce`): the one thing of a server that buckets share, besides being up.
    RaiseEpoch {
        server: ServerId,
        epoch: crate::state::types::Epoch,
    },
}

/// The budgets an abstract bucket may spend on its own messages and writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RestFault {
    MessageLoss,
    MessageDuplication,
    StoreFailure,
}

impl Action {
    /// The delivery of `m` (R22, R12, R18 or R24), with no store failure.
    pub fn deliver(m: Message) -> Action {
        match m {
            Message::Nli(msg) => Action::DeliverNli { msg },
            Message::NliResponse(msg) => Action::DeliverNliResponse {
                msg,
                fail_store_op: None,
            },
            Message::AdjustIsr(msg) => Action::DeliverAdjustIsr {
                msg,
                fail_store_op: None,
            },
            Message::AdjustIsrResponse(msg) => Action::DeliverAdjustIsrResponse { msg },
        }
    }

    /// R23 with no store failure, the clock's step as every trace without faults takes it.
    pub const TICK: Action = Action::Tick {
        fail_store_op: None,
    };

    pub fn fail_store_op(&self) -> Option<u8> {
        match self {
            Action::Register { fail_store_op, .. }
            | Action::Cancel { fail_store_op }
            | Action::ProcessEvent { fail_store_op, .. }
            | Action::DeliverNliResponse { fail_store_op, .. }
            | Action::DeliverAdjustIsr { fail_store_op, .. }
            | Action::CrashServer { fail_store_op, .. }
            | Action::RestartServer { fail_store_op, .. }
            | Action::DeleteBucket { fail_store_op, .. }
            | Action::Rest { fail_store_op, .. }
            | Action::Tick { fail_store_op } => *fail_store_op,
            _ => None,
        }
    }

    /// The same action with another `fail_store_op` (unchanged for actions that cannot fail).
    pub fn with_fail_store_op(&self, k: Option<u8>) -> Action {
        let mut a = *self;
        match &mut a {
            Action::Register { fail_store_op, .. }
            | Action::Cancel { fail_store_op }
            | Action::ProcessEvent { fail_store_op, .. }
            | Action::DeliverNliResponse { fail_store_op, .. }
            | Action::DeliverAdjustIsr { fail_store_op, .. }
            | Action::CrashServer { fail_store_op, .. }
            | Action::RestartServer { fail_store_op, .. }
            | Action::DeleteBucket { fail_store_op, .. }
            | Action::Rest { fail_store_op, .. }
            | Action::Tick { fail_store_op } => *fail_store_op = k,
            _ => {}
        }
        a
    }

    /// Whether a fair run must eventually take this action while it stays enabled (spec 7.3):
    /// an obligatory kind with no injected store failure. A failing store operation is the
    /// fault F-STORE, and faults are optional.
    pub fn is_obligatory(&self) -> bool {
        self.kind().fairness() == Fairness::Obligatory && self.fail_store_op().is_none()
    }

    /// Whether this action runs coordinator code that performs store operations.
    pub fn can_fail_store(&self) -> bool {
        self.kind().can_fail_store()
    }

    /// The action's kind: its variant, without the message or server it names.
    pub fn kind(&self) -> ActionKind {
        match self {
            Action::Register { .. } => ActionKind::Register,
            Action::Cancel { .. } => ActionKind::Cancel,
            Action::ProcessEvent { .. } => ActionKind::ProcessEvent,
            Action::DeliverNli { .. } => ActionKind::DeliverNli,
            Action::DeliverNliResponse { .. } => ActionKind::DeliverNliResponse,
            Action::DeliverAdjustIsr { .. } => ActionKind::DeliverAdjustIsr,
            Action::DeliverAdjustIsrResponse { .. } => ActionKind::DeliverAdjustIsrResponse,
            Action::DropMessage { .. } => ActionKind::DropMessage,
            Action::DuplicateMessage { .. } => ActionKind::DuplicateMessage,
            Action::ProposeIsr { .. } => ActionKind::ProposeIsr,
            Action::CrashServer { .. } => ActionKind::CrashServer,
            Action::RestartServer { .. } => ActionKind::RestartServer,
            Action::CrashCoordinator => ActionKind::CrashCoordinator,
            Action::DeleteBucket { .. } => ActionKind::DeleteBucket,
            Action::Tick { .. } => ActionKind::Tick,
            Action::ZombieProcessEvent { .. } => ActionKind::ZombieProcessEvent,
            Action::ZombieDeliverNliResponse { .. } => ActionKind::ZombieDeliverNliResponse,
            Action::ZombieCancel => ActionKind::ZombieCancel,
            Action::Rest { .. } => ActionKind::Rest,
        }
    }
}

/// A register step's targets, kept once per distinct list for the life of the process, so that
/// an action stays `Copy` and two words wide: only loaded traces carry plans (the checker's
/// registers use the configuration's), so the lists kept are the few distinct ones read.
fn interned_targets<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<&'static [PlanTarget]>, D::Error> {
    use std::sync::Mutex;
    static KEPT: Mutex<Vec<&'static [PlanTarget]>> = Mutex::new(Vec::new());
    let Some(targets) = Option::<Vec<PlanTarget>>::deserialize(deserializer)? else {
        return Ok(None);
    };
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(k) = kept.iter().find(|k| **k == targets.as_slice()) {
        return Ok(Some(*k));
    }
    let leaked: &'static [PlanTarget] = Box::leak(targets.into_boxed_slice());
    kept.push(leaked);
    Ok(Some(leaked))
}

/// The kinds of [`Action`], in declaration order. Coverage counts and the trace format's `kind`
/// tag use these names; a test checks that they are the names serde writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionKind {
    Register,
    Cancel,
    ProcessEvent,
    DeliverNli,
    DeliverNliResponse,
    DeliverAdjustIsr,
    DeliverAdjustIsrResponse,
    DropMessage,
    DuplicateMessage,
    ProposeIsr,
    CrashServer,
    RestartServer,
    CrashCoordinator,
    DeleteBucket,
    Tick,
    ZombieProcessEvent,
    ZombieDeliverNliResponse,
    ZombieCancel,
    /// Not in [`ActionKind::ALL`], which lists the protocol's kinds (coverage, suites and the
    /// fairness table read it): only configurations with abstract buckets take it.
    Rest,
}

impl ActionKind {
    pub const ALL: [ActionKind; 18] = [
        ActionKind::Register,
        ActionKind::Cancel,
        ActionKind::ProcessEvent,
        ActionKind::DeliverNli,
        ActionKind::DeliverNliResponse,
        ActionKind::DeliverAdjustIsr,
        ActionKind::DeliverAdjustIsrResponse,
        ActionKind::DropMessage,
        ActionKind::DuplicateMessage,
        ActionKind::ProposeIsr,
        ActionKind::CrashServer,
        ActionKind::RestartServer,
        ActionKind::CrashCoordinator,
        ActionKind::DeleteBucket,
        ActionKind::Tick,
        ActionKind::ZombieProcessEvent,
        ActionKind::ZombieDeliverNliResponse,
        ActionKind::ZombieCancel,
    ];

    /// The trace format's `kind` tag (spec/trace-format.md, "Actions").
    pub fn name(self) -> &'static str {
        const NAMES: [&str; 19] = [
            "register",
            "cancel",
            "process_event",
            "deliver_nli",
            "deliver_nli_response",
            "deliver_adjust_isr",
            "deliver_adjust_isr_response",
            "drop_message",
            "duplicate_message",
            "propose_isr",
            "crash_server",
            "restart_server",
            "crash_coordinator",
            "delete_bucket",
            "tick",
            "zombie_process_event",
            "zombie_deliver_nli_response",
            "zombie_cancel",
            "rest",
        ];
        NAMES[self as usize]
    }

    /// The fairness class of this kind (spec 7.3): whether a correct run must eventually take
    /// an action of this kind while it stays enabled, or may never take one again. One table,
    /// read by the fair-end-state check and the fair-cycle search; the spec gives the reason
    /// for each row.
    pub fn fairness(self) -> Fairness {
        use ActionKind::*;
        match self {
            // The coordinator's event loop, the network's eventual delivery, a leader's ISR
            // catch-up and the clock while something is timed.
            ProcessEvent
            | DeliverNli
            | DeliverNliResponse
            | DeliverAdjustIsr
            | DeliverAdjustIsrResponse
            | ProposeIsr
            | Tick => Fairness::Obligatory,
            // The client's requests, every fault, a crashed server's restart (a server may be
            // lost for good), a table deletion and the deposed coordinator's steps.
            Register
            | Cancel
            | DropMessage
            | DuplicateMessage
            | CrashServer
            | RestartServer
            | CrashCoordinator
            | DeleteBucket
            | ZombieProcessEvent
            | ZombieDeliverNliResponse
            | ZombieCancel => Fairness::Optional,
            // The rest of the plan may stop at any point: the safety argument of spec 9 asks
            // nothing of it.
            Rest => Fairness::Optional,
        }
    }

    /// Whether actions of this kind are a tablet server's own steps (R21, R22, R24): they
    /// change only that server's state and the network, and run no coordinator rule.
    pub fn is_server_step(self) -> bool {
        matches!(
            self,
            ActionKind::DeliverNli | ActionKind::DeliverAdjustIsrResponse | ActionKind::ProposeIsr
        )
    }

    /// Whether actions of this kind run coordinator code that performs store operations, and so
    /// may carry `fail_store_op` (spec 9).
    pub fn can_fail_store(self) -> bool {
        matches!(
            self,
            ActionKind::Register
                | ActionKind::Cancel
                | ActionKind::ProcessEvent
                | ActionKind::DeliverNliResponse
                | ActionKind::DeliverAdjustIsr
                | ActionKind::CrashServer
                | ActionKind::RestartServer
                | ActionKind::DeleteBucket
                | ActionKind::Tick
                | ActionKind::Rest
        )
    }
}

/// Spec 7.3's fairness classes of [`ActionKind`] ([`ActionKind::fairness`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fairness {
    /// Weakly fair: a run neither stops nor loops forever while an action of this kind, without
    /// an injected store failure, stays enabled without being taken.
    Obligatory,
    /// A run may take it any number of times, or never again: client requests and faults.
    Optional,
}

/// R1's reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RegisterReply {
    Accepted(RebalanceId),
    RejectedInProgress,
    /// R1's validity check: a bucket named twice, or a target naming a server twice.
    RejectedInvalidPlan,
    StoreError,
}

/// R2's reply.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelReply {
    Accepted,
    NothingToCancel,
    StoreError,
}

/// A reply to the client.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClientReply {
    Register(RegisterReply),
    Cancel(CancelReply),
}

/// What one step emitted, in order. `sent` and `enqueued` are the coordinator's effects;
/// `server_sent` holds what tablet servers sent (R21, R22).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StepOutput {
    /// Messages the coordinator sent (Nli, AdjustIsrResponse), in send order.
    pub sent: SmallVec<[Message; 6]>,
    /// Messages servers sent (NliResponse, AdjustIsr).
    pub server_sent: SmallVec<[Message; 1]>,
    /// Events the coordinator enqueued, in order.
    pub enqueued: SmallVec<[Event; 4]>,
    pub reply: Option<ClientReply>,
    /// Store operations attempted (the failable ones of spec 9: writes of R1, R2, R5, R7.2, R9,
    /// R10, R15, R18, R19, R20, R23.5 and the bucket deletion, and the read of R16; R17's
    /// epoch write is assumed to succeed).
    pub store_ops: u8,
    /// Whether the step's store operation number `fail_store_op` failed.
    pub store_failed: bool,
    /// Rules that fired, for coverage.
    pub rules: RuleSet,
    /// Dead responses the step delivered after its action, in order (spec 9, "dead
    /// messages"); R12 ignored each.
    pub delivered_dead: SmallVec<[NliResponse; 2]>,
    /// R14.3 gave a bucket up in this step, and which of its clauses held. A fact of the
    /// step, not of the state: the companions that tell the clauses apart (spec 7.2) read it
    /// from the step out of a state, so it splits no state and is not part of any trace.
    #[serde(skip)]
    pub gave_up: Option<GiveUp>,
}

/// The clauses of R14.3 that held when a reconcile gave its bucket up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GiveUp {
    /// `now_ms - blocked_since_ms > target_unavailable_timeout_ms`.
    pub target_unavailable: bool,
    /// `now_ms - last_progress_ms > no_progress_timeout_ms`.
    pub no_progress: bool,
}
