//! The protocol's values as JSON, in the spec's vocabulary: the lines of the driver protocol
//! (`spec/driver-protocol.md`): what the harness sends ([`Request`]) and what an implementation
//! under test answers ([`Response`]); and the inputs and effects of the coordinator log
//! (`spec/log-format.md`), which uses the same encodings. Encoded with serde; decoded with
//! [`decode`] so that every malformed line names the field.
//!
//! These types know nothing of the manager's internals or of the model: [`convert`] maps them to
//! the manager's types, and the conformance harness to its projection. They are their own crate so
//! that every host (the `cluster` example's log recorder, the stdio driver) encodes with the one
//! definition the harness decodes, and none of them needs a store adapter to do it.

#![forbid(unsafe_code)]

pub mod convert;
pub mod decode;
pub mod log;

use serde::Serialize;
use serde_json::Value;

use crate::decode::{get, name, object, tag, Decode, Path, WireError};

/// The protocol's name, sent in the handshake.
pub const PROTOCOL: &str = "rebalance-driver";
/// The protocol version this crate speaks.
pub const VERSION: u64 = 1;

/// An execution key (spec 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Key {
    pub rid: u64,
    pub bucket: u32,
}

/// A coordinator event (spec 3.2), tagged with `type` as in the trace format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    Timeout { key: Key },
    Reconcile { key: Key },
    Finalize { rid: u64 },
    Recover,
}

/// The manager's configuration (spec 6), durations in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Config {
    pub task_timeout_ms: u64,
    pub check_interval_ms: u64,
    pub max_reconcile_backoff_ms: u64,
    pub target_unavailable_timeout_ms: u64,
    pub no_progress_timeout_ms: u64,
    pub max_tracked_timed_out: u64,
    pub max_inflight: u64,
}

/// One plan entry (spec 2).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlanEntry {
    pub bucket: u32,
    pub ors: Vec<u32>,
    pub trs: Vec<u32>,
    pub old_leader: Option<u32>,
    pub new_leader: u32,
}

/// The stored task's status (spec 3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum TaskStatus {
    NotStarted,
    Rebalancing,
    Completed,
    Failed,
    Canceled,
}

/// The coordinator's overall status (spec 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum OverallStatus {
    Rebalancing,
    Completed,
    Failed,
    Canceled,
}

/// A plan bucket's status (spec 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BucketStatus {
    NotStarted,
    Rebalancing,
    Timeout,
    Completed,
    Failed,
    Canceled,
}

/// The stored task (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Task {
    pub id: u64,
    pub status: TaskStatus,
    pub cancel_requested: bool,
    pub plan: Vec<PlanEntry>,
}

/// A LeaderAndIsr (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Lai {
    pub leader: Option<u32>,
    pub leader_epoch: u64,
    pub isr: Vec<u32>,
    pub bucket_epoch: u64,
    pub coordinator_epoch: u64,
}

/// One bucket of the store's cluster metadata (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Bucket {
    pub bucket: u32,
    pub assignment: Vec<u32>,
    pub lai: Lai,
    pub deleted: bool,
}

/// The store (spec 3.1): the coordinator epoch, the task, the cluster metadata.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Store {
    pub coordinator_epoch: u64,
    pub task: Option<Task>,
    pub buckets: Vec<Bucket>,
}

/// A request context (spec 3.4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Context {
    pub coordinator_epoch: u64,
    pub leader: Option<u32>,
    pub leader_epoch: u64,
    pub bucket_epoch: u64,
    pub exec_key: Option<Key>,
}

/// An input to the manager (spec 3.4, 5), tagged with `type`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Input {
    Register {
        plan: Vec<PlanEntry>,
    },
    Cancel,
    Tick,
    Event {
        event: Event,
    },
    NliResponse {
        from: u32,
        bucket: u32,
        ok: bool,
        context: Context,
    },
    AdjustIsr {
        from: u32,
        bucket: u32,
        leader_epoch: u64,
        bucket_epoch: u64,
        isr: Vec<u32>,
    },
    ServerDown {
        server: u32,
    },
    ServerUp {
        server: u32,
    },
    BucketDeleted {
        bucket: u32,
    },
}

/// Why R18 refused an AdjustIsr, in the order R18 checks.
pub const ADJUST_ISR_ERRORS: &[&str] = &[
    "UNKNOWN_BUCKET",
    "NOT_LEADER",
    "FENCED_LEADER_EPOCH",
    "INVALID_BUCKET_EPOCH",
    "INELIGIBLE_REPLICA",
    "NO_CHANGE",
    "STORE_ERROR",
];

/// Why a production guard refused a plan.
pub const PLAN_ERRORS: &[&str] = &[
    "DUPLICATE_BUCKET",
    "EMPTY_TARGET",
    "NEW_LEADER_NOT_FIRST_TARGET",
    "DUPLICATE_REPLICA",
    "UNKNOWN_BUCKET",
    "DELETED_BUCKET",
    "NOT_AT_ORIGIN",
];

/// The answer to an AdjustIsr (R18): `{"ok": lai}` or `{"err": REASON}`, a reason of
/// [`ADJUST_ISR_ERRORS`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdjustResult {
    Ok(Lai),
    Err(String),
}

/// A client reply (R1, R2), tagged with `kind`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reply {
    Accepted {
        rid: u64,
    },
    RejectedInProgress,
    /// A production guard's refusal of a malformed plan (not in the spec's model): `reason`
    /// names the check (`DUPLICATE_BUCKET`, `EMPTY_TARGET`, `NEW_LEADER_NOT_FIRST_TARGET`,
    /// `DUPLICATE_REPLICA`, `UNKNOWN_BUCKET`, `DELETED_BUCKET`, `NOT_AT_ORIGIN`) for `bucket`.
    RejectedInvalidPlan {
        reason: String,
        bucket: u32,
    },
    NothingToCancel,
    StoreError,
}

/// An effect (spec 5), tagged with `type`; a step's effects are listed in emission order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Effect {
    SendNli {
        to: u32,
        bucket: u32,
        replicas: Vec<u32>,
        leader: Option<u32>,
        leader_epoch: u64,
        isr: Vec<u32>,
        bucket_epoch: u64,
        coordinator_epoch: u64,
        exec_key: Option<Key>,
    },
    SendAdjustIsrResponse {
        to: u32,
        bucket: u32,
        result: AdjustResult,
    },
    Enqueue {
        event: Event,
    },
    Reply {
        reply: Reply,
    },
}

/// What the coordinator last observed of a tracked bucket (R14).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Observed {
    pub assignment: Vec<u32>,
    pub leader: Option<u32>,
    pub isr: Vec<u32>,
}

/// Whether an attempt is running (REBALANCING) or tracked (TIMEOUT).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    Running,
    Tracked,
}

/// An attempt (spec 3.2), with the manager's timestamps in milliseconds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Attempt {
    pub bucket: u32,
    pub key: Key,
    pub mode: Mode,
    pub started_ms: u64,
    pub last_progress_ms: u64,
    pub blocked_since_ms: Option<u64>,
    pub reconciles: u64,
    pub next_reconcile_ms: u64,
    pub observed: Observed,
}

/// `status[b]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct StatusOf {
    pub bucket: u32,
    pub status: BucketStatus,
}

/// The coordinator's five flags (spec 3.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize)]
pub struct Flags {
    pub cancel_requested: bool,
    pub finalize_pending: bool,
    pub finalize_queued: bool,
    pub recovery_pending: bool,
    pub recovery_queued: bool,
}

/// The coordinator's state (spec 3.2), without the event queue (the host's, so the harness's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Coordinator {
    pub coordinator_epoch: u64,
    pub now_ms: u64,
    pub live: Vec<u32>,
    pub rid: Option<u64>,
    pub overall: Option<OverallStatus>,
    /// Ascending by bucket.
    pub status: Vec<StatusOf>,
    /// NOT_STARTED buckets in queue order.
    pub pending: Vec<u32>,
    /// Ascending by bucket.
    pub attempts: Vec<Attempt>,
    /// Ascending.
    pub queued_timeouts: Vec<Key>,
    /// Ascending.
    pub queued_reconciles: Vec<Key>,
    pub flags: Flags,
    /// INV-TRACKED-BOUND's `restored`.
    pub restored: u64,
}

/// The answer to `state`: the store, the coordinator, and the store's instrumentation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Observation {
    pub store: Store,
    pub coordinator: Coordinator,
    /// Store operations performed since the store was handed over (spec 9's counted operations).
    pub store_ops: u64,
    /// A failure armed by `fail_store_op` has not happened yet.
    pub fault_pending: bool,
    /// The implementation's own invariant check, if it has one and it failed.
    pub invariant_violation: Option<String>,
}

/// A line the harness sends, tagged with `op`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Request {
    /// The handshake; the first line.
    Hello { protocol: String, version: u64 },
    /// R17 on a store the harness hands over; the implementation owns it from now on.
    Start {
        config: Config,
        store: Store,
        live: Vec<u32>,
        now_ms: u64,
    },
    /// R17 again: the incarnation's memory is lost, its store is kept.
    Restart { live: Vec<u32>, now_ms: u64 },
    /// The `nth` store operation from now fails, once (spec 9).
    FailStoreOp { nth: u64 },
    /// One input at `now_ms`.
    Input { now_ms: u64, input: Input },
    /// The observation of the current state.
    State,
    /// Keep a copy of the whole current state (manager, store, armed fault) under `id`.
    Snapshot { id: u64 },
    /// Make the copy `id` the current state again (the copy stays).
    Restore { id: u64 },
    /// Forget the copy `id`.
    Release { id: u64 },
}

impl Request {
    /// The request's `op`, for messages.
    pub fn op(&self) -> &'static str {
        match self {
            Request::Hello { .. } => "hello",
            Request::Start { .. } => "start",
            Request::Restart { .. } => "restart",
            Request::FailStoreOp { .. } => "fail_store_op",
            Request::Input { .. } => "input",
            Request::State => "state",
            Request::Snapshot { .. } => "snapshot",
            Request::Restore { .. } => "restore",
            Request::Release { .. } => "release",
        }
    }

    /// The request as one line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a request always encodes")
    }
}

/// The handshake's answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hello {
    pub protocol: String,
    pub version: u64,
    /// Free text: the implementation's name and version.
    pub implementation: String,
}

/// Why a line was refused, sent before the implementation exits with status 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ErrorLine {
    /// The field path (`(line)` for the whole line, `op` for a request out of order).
    pub path: String,
    pub message: String,
}

/// A line an implementation answers with: an object with exactly one of these keys.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// To `hello`.
    Hello(Hello),
    /// To `start`, `restart` and `input`: the effects in emission order.
    Effects(Vec<Effect>),
    /// To `start` or `restart`: the implementation refused to start (the text says why).
    Refused(String),
    /// To `state`.
    State(Box<Observation>),
    /// To `fail_store_op`, `snapshot`, `restore` and `release`: the op's name.
    Done(String),
    /// The request was malformed or out of order; the implementation exits with status 2.
    Error(ErrorLine),
}

impl Response {
    /// The response as one line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a response always encodes")
    }
}

// ---- decoding ----

impl Decode for Key {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["rid", "bucket"])?;
        Ok(Key {
            rid: get(m, "rid", p)?,
            bucket: get(m, "bucket", p)?,
        })
    }
}

impl Decode for Event {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let names = ["timeout", "reconcile", "finalize", "recover"];
        let m = v
            .as_object()
            .ok_or_else(|| crate::decode::type_error(p, "an object", v))?;
        Ok(match tag(m, "type", p, &names)? {
            "timeout" => Event::Timeout {
                key: get(object(v, p, &["type", "key"])?, "key", p)?,
            },
            "reconcile" => Event::Reconcile {
                key: get(object(v, p, &["type", "key"])?, "key", p)?,
            },
            "finalize" => Event::Finalize {
                rid: get(object(v, p, &["type", "rid"])?, "rid", p)?,
            },
            _ => {
                object(v, p, &["type"])?;
                Event::Recover
            }
        })
    }
}

impl Decode for Config {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "task_timeout_ms",
                "check_interval_ms",
                "max_reconcile_backoff_ms",
                "target_unavailable_timeout_ms",
                "no_progress_timeout_ms",
                "max_tracked_timed_out",
                "max_inflight",
            ],
        )?;
        Ok(Config {
            task_timeout_ms: get(m, "task_timeout_ms", p)?,
            check_interval_ms: get(m, "check_interval_ms", p)?,
            max_reconcile_backoff_ms: get(m, "max_reconcile_backoff_ms", p)?,
            target_unavailable_timeout_ms: get(m, "target_unavailable_timeout_ms", p)?,
            no_progress_timeout_ms: get(m, "no_progress_timeout_ms", p)?,
            max_tracked_timed_out: get(m, "max_tracked_timed_out", p)?,
            max_inflight: get(m, "max_inflight", p)?,
        })
    }
}

impl Decode for PlanEntry {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["bucket", "ors", "trs", "old_leader", "new_leader"])?;
        Ok(PlanEntry {
            bucket: get(m, "bucket", p)?,
            ors: get(m, "ors", p)?,
            trs: get(m, "trs", p)?,
            old_leader: get(m, "old_leader", p)?,
            new_leader: get(m, "new_leader", p)?,
        })
    }
}

impl Decode for TaskStatus {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        use TaskStatus as S;
        name(
            v,
            p,
            &[
                ("NOT_STARTED", S::NotStarted),
                ("REBALANCING", S::Rebalancing),
                ("COMPLETED", S::Completed),
                ("FAILED", S::Failed),
                ("CANCELED", S::Canceled),
            ],
        )
    }
}

impl Decode for OverallStatus {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        use OverallStatus as S;
        name(
            v,
            p,
            &[
                ("REBALANCING", S::Rebalancing),
                ("COMPLETED", S::Completed),
                ("FAILED", S::Failed),
                ("CANCELED", S::Canceled),
            ],
        )
    }
}

impl Decode for BucketStatus {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        use BucketStatus as S;
        name(
            v,
            p,
            &[
                ("NOT_STARTED", S::NotStarted),
                ("REBALANCING", S::Rebalancing),
                ("TIMEOUT", S::Timeout),
                ("COMPLETED", S::Completed),
                ("FAILED", S::Failed),
                ("CANCELED", S::Canceled),
            ],
        )
    }
}

impl Decode for Task {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["id", "status", "cancel_requested", "plan"])?;
        Ok(Task {
            id: get(m, "id", p)?,
            status: get(m, "status", p)?,
            cancel_requested: get(m, "cancel_requested", p)?,
            plan: get(m, "plan", p)?,
        })
    }
}

impl Decode for Lai {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "leader",
                "leader_epoch",
                "isr",
                "bucket_epoch",
                "coordinator_epoch",
            ],
        )?;
        Ok(Lai {
            leader: get(m, "leader", p)?,
            leader_epoch: get(m, "leader_epoch", p)?,
            isr: get(m, "isr", p)?,
            bucket_epoch: get(m, "bucket_epoch", p)?,
            coordinator_epoch: get(m, "coordinator_epoch", p)?,
        })
    }
}

impl Decode for Bucket {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["bucket", "assignment", "lai", "deleted"])?;
        Ok(Bucket {
            bucket: get(m, "bucket", p)?,
            assignment: get(m, "assignment", p)?,
            lai: get(m, "lai", p)?,
            deleted: get(m, "deleted", p)?,
        })
    }
}

impl Decode for Store {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["coordinator_epoch", "task", "buckets"])?;
        Ok(Store {
            coordinator_epoch: get(m, "coordinator_epoch", p)?,
            task: get(m, "task", p)?,
            buckets: get(m, "buckets", p)?,
        })
    }
}

impl Decode for Context {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "coordinator_epoch",
                "leader",
                "leader_epoch",
                "bucket_epoch",
                "exec_key",
            ],
        )?;
        Ok(Context {
            coordinator_epoch: get(m, "coordinator_epoch", p)?,
            leader: get(m, "leader", p)?,
            leader_epoch: get(m, "leader_epoch", p)?,
            bucket_epoch: get(m, "bucket_epoch", p)?,
            exec_key: get(m, "exec_key", p)?,
        })
    }
}

impl Decode for Input {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let names = [
            "register",
            "cancel",
            "tick",
            "event",
            "nli_response",
            "adjust_isr",
            "server_down",
            "server_up",
            "bucket_deleted",
        ];
        let m = v
            .as_object()
            .ok_or_else(|| crate::decode::type_error(p, "an object", v))?;
        let kind = tag(m, "type", p, &names)?;
        let fields: &[&str] = match kind {
            "register" => &["type", "plan"],
            "event" => &["type", "event"],
            "nli_response" => &["type", "from", "bucket", "ok", "context"],
            "adjust_isr" => &[
                "type",
                "from",
                "bucket",
                "leader_epoch",
                "bucket_epoch",
                "isr",
            ],
            "server_down" | "server_up" => &["type", "server"],
            "bucket_deleted" => &["type", "bucket"],
            _ => &["type"],
        };
        let m = object(v, p, fields)?;
        Ok(match kind {
            "register" => Input::Register {
                plan: get(m, "plan", p)?,
            },
            "cancel" => Input::Cancel,
            "tick" => Input::Tick,
            "event" => Input::Event {
                event: get(m, "event", p)?,
            },
            "nli_response" => Input::NliResponse {
                from: get(m, "from", p)?,
                bucket: get(m, "bucket", p)?,
                ok: get(m, "ok", p)?,
                context: get(m, "context", p)?,
            },
            "adjust_isr" => Input::AdjustIsr {
                from: get(m, "from", p)?,
                bucket: get(m, "bucket", p)?,
                leader_epoch: get(m, "leader_epoch", p)?,
                bucket_epoch: get(m, "bucket_epoch", p)?,
                isr: get(m, "isr", p)?,
            },
            "server_down" => Input::ServerDown {
                server: get(m, "server", p)?,
            },
            "server_up" => Input::ServerUp {
                server: get(m, "server", p)?,
            },
            _ => Input::BucketDeleted {
                bucket: get(m, "bucket", p)?,
            },
        })
    }
}

impl Decode for AdjustResult {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["ok", "err"])?;
        match (m.get("ok"), m.get("err")) {
            (Some(_), None) => Ok(AdjustResult::Ok(get(m, "ok", p)?)),
            (None, Some(_)) => Ok(AdjustResult::Err(
                tag(m, "err", p, ADJUST_ISR_ERRORS)?.to_string(),
            )),
            _ => Err(crate::decode::type_error(
                p,
                "an object with exactly one of `ok` and `err`",
                v,
            )),
        }
    }
}

impl Decode for Reply {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let names = [
            "accepted",
            "rejected_in_progress",
            "rejected_invalid_plan",
            "nothing_to_cancel",
            "store_error",
        ];
        let m = v
            .as_object()
            .ok_or_else(|| crate::decode::type_error(p, "an object", v))?;
        Ok(match tag(m, "kind", p, &names)? {
            "accepted" => Reply::Accepted {
                rid: get(object(v, p, &["kind", "rid"])?, "rid", p)?,
            },
            "rejected_invalid_plan" => {
                let m = object(v, p, &["kind", "reason", "bucket"])?;
                Reply::RejectedInvalidPlan {
                    reason: tag(m, "reason", p, PLAN_ERRORS)?.to_string(),
                    bucket: get(m, "bucket", p)?,
                }
            }
            other => {
                object(v, p, &["kind"])?;
                match other {
                    "rejected_in_progress" => Reply::RejectedInProgress,
                    "nothing_to_cancel" => Reply::NothingToCancel,
                    _ => Reply::StoreError,
                }
            }
        })
    }
}

impl Decode for Effect {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let names = ["send_nli", "send_adjust_isr_response", "enqueue", "reply"];
        let m = v
            .as_object()
            .ok_or_else(|| crate::decode::type_error(p, "an object", v))?;
        let kind = tag(m, "type", p, &names)?;
        let fields: &[&str] = match kind {
            "send_nli" => &[
                "type",
                "to",
                "bucket",
                "replicas",
                "leader",
                "leader_epoch",
                "isr",
                "bucket_epoch",
                "coordinator_epoch",
                "exec_key",
            ],
            "send_adjust_isr_response" => &["type", "to", "bucket", "result"],
            "enqueue" => &["type", "event"],
            _ => &["type", "reply"],
        };
        let m = object(v, p, fields)?;
        Ok(match kind {
            "send_nli" => Effect::SendNli {
                to: get(m, "to", p)?,
                bucket: get(m, "bucket", p)?,
                replicas: get(m, "replicas", p)?,
                leader: get(m, "leader", p)?,
                leader_epoch: get(m, "leader_epoch", p)?,
                isr: get(m, "isr", p)?,
                bucket_epoch: get(m, "bucket_epoch", p)?,
                coordinator_epoch: get(m, "coordinator_epoch", p)?,
                exec_key: get(m, "exec_key", p)?,
            },
            "send_adjust_isr_response" => Effect::SendAdjustIsrResponse {
                to: get(m, "to", p)?,
                bucket: get(m, "bucket", p)?,
                result: get(m, "result", p)?,
            },
            "enqueue" => Effect::Enqueue {
                event: get(m, "event", p)?,
            },
            _ => Effect::Reply {
                reply: get(m, "reply", p)?,
            },
        })
    }
}

impl Decode for Observed {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["assignment", "leader", "isr"])?;
        Ok(Observed {
            assignment: get(m, "assignment", p)?,
            leader: get(m, "leader", p)?,
            isr: get(m, "isr", p)?,
        })
    }
}

impl Decode for Mode {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        name(
            v,
            p,
            &[("running", Mode::Running), ("tracked", Mode::Tracked)],
        )
    }
}

impl Decode for Attempt {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "bucket",
                "key",
                "mode",
                "started_ms",
                "last_progress_ms",
                "blocked_since_ms",
                "reconciles",
                "next_reconcile_ms",
                "observed",
            ],
        )?;
        Ok(Attempt {
            bucket: get(m, "bucket", p)?,
            key: get(m, "key", p)?,
            mode: get(m, "mode", p)?,
            started_ms: get(m, "started_ms", p)?,
            last_progress_ms: get(m, "last_progress_ms", p)?,
            blocked_since_ms: get(m, "blocked_since_ms", p)?,
            reconciles: get(m, "reconciles", p)?,
            next_reconcile_ms: get(m, "next_reconcile_ms", p)?,
            observed: get(m, "observed", p)?,
        })
    }
}

impl Decode for StatusOf {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["bucket", "status"])?;
        Ok(StatusOf {
            bucket: get(m, "bucket", p)?,
            status: get(m, "status", p)?,
        })
    }
}

impl Decode for Flags {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "cancel_requested",
                "finalize_pending",
                "finalize_queued",
                "recovery_pending",
                "recovery_queued",
            ],
        )?;
        Ok(Flags {
            cancel_requested: get(m, "cancel_requested", p)?,
            finalize_pending: get(m, "finalize_pending", p)?,
            finalize_queued: get(m, "finalize_queued", p)?,
            recovery_pending: get(m, "recovery_pending", p)?,
            recovery_queued: get(m, "recovery_queued", p)?,
        })
    }
}

impl Decode for Coordinator {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "coordinator_epoch",
                "now_ms",
                "live",
                "rid",
                "overall",
                "status",
                "pending",
                "attempts",
                "queued_timeouts",
                "queued_reconciles",
                "flags",
                "restored",
            ],
        )?;
        Ok(Coordinator {
            coordinator_epoch: get(m, "coordinator_epoch", p)?,
            now_ms: get(m, "now_ms", p)?,
            live: get(m, "live", p)?,
            rid: get(m, "rid", p)?,
            overall: get(m, "overall", p)?,
            status: get(m, "status", p)?,
            pending: get(m, "pending", p)?,
            attempts: get(m, "attempts", p)?,
            queued_timeouts: get(m, "queued_timeouts", p)?,
            queued_reconciles: get(m, "queued_reconciles", p)?,
            flags: get(m, "flags", p)?,
            restored: get(m, "restored", p)?,
        })
    }
}

impl Decode for Observation {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(
            v,
            p,
            &[
                "store",
                "coordinator",
                "store_ops",
                "fault_pending",
                "invariant_violation",
            ],
        )?;
        Ok(Observation {
            store: get(m, "store", p)?,
            coordinator: get(m, "coordinator", p)?,
            store_ops: get(m, "store_ops", p)?,
            fault_pending: get(m, "fault_pending", p)?,
            invariant_violation: get(m, "invariant_violation", p)?,
        })
    }
}

impl Decode for Request {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let names = [
            "hello",
            "start",
            "restart",
            "fail_store_op",
            "input",
            "state",
            "snapshot",
            "restore",
            "release",
        ];
        let m = v
            .as_object()
            .ok_or_else(|| crate::decode::type_error(p, "an object", v))?;
        let op = tag(m, "op", p, &names)?;
        let fields: &[&str] = match op {
            "hello" => &["op", "protocol", "version"],
            "start" => &["op", "config", "store", "live", "now_ms"],
            "restart" => &["op", "live", "now_ms"],
            "fail_store_op" => &["op", "nth"],
            "input" => &["op", "now_ms", "input"],
            "snapshot" | "restore" | "release" => &["op", "id"],
            _ => &["op"],
        };
        let m = object(v, p, fields)?;
        Ok(match op {
            "hello" => Request::Hello {
                protocol: get(m, "protocol", p)?,
                version: get(m, "version", p)?,
            },
            "start" => Request::Start {
                config: get(m, "config", p)?,
                store: get(m, "store", p)?,
                live: get(m, "live", p)?,
                now_ms: get(m, "now_ms", p)?,
            },
            "restart" => Request::Restart {
                live: get(m, "live", p)?,
                now_ms: get(m, "now_ms", p)?,
            },
            "fail_store_op" => Request::FailStoreOp {
                nth: get(m, "nth", p)?,
            },
            "input" => Request::Input {
                now_ms: get(m, "now_ms", p)?,
                input: get(m, "input", p)?,
            },
            "state" => Request::State,
            "snapshot" => Request::Snapshot {
                id: get(m, "id", p)?,
            },
            "restore" => Request::Restore {
                id: get(m, "id", p)?,
            },
            _ => Request::Release {
                id: get(m, "id", p)?,
            },
        })
    }
}

impl Decode for Hello {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["protocol", "version", "implementation"])?;
        Ok(Hello {
            protocol: get(m, "protocol", p)?,
            version: get(m, "version", p)?,
            implementation: get(m, "implementation", p)?,
        })
    }
}

impl Decode for ErrorLine {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["path", "message"])?;
        Ok(ErrorLine {
            path: get(m, "path", p)?,
            message: get(m, "message", p)?,
        })
    }
}

impl Decode for Response {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let keys = ["hello", "effects", "refused", "state", "done", "error"];
        let m = object(v, p, &keys)?;
        let mut present = m.keys();
        let (Some(key), None) = (present.next(), present.next()) else {
            return Err(crate::decode::type_error(
                p,
                "an object with exactly one of hello, effects, refused, state, done, error",
                v,
            ));
        };
        Ok(match key.as_str() {
            "hello" => Response::Hello(get(m, "hello", p)?),
            "effects" => Response::Effects(get(m, "effects", p)?),
            "refused" => Response::Refused(get(m, "refused", p)?),
            "state" => Response::State(Box::new(get(m, "state", p)?)),
            "done" => Response::Done(get(m, "done", p)?),
            _ => Response::Error(get(m, "error", p)?),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::line;

    #[test]
    fn every_request_decodes_back_to_itself() {
        let key = Key { rid: 1, bucket: 0 };
        let requests = vec![
            Request::Hello {
                protocol: PROTOCOL.into(),
                version: VERSION,
            },
            Request::Restart {
                live: vec![0, 1],
                now_ms: 30_000,
            },
            Request::FailStoreOp { nth: 2 },
            Request::Input {
                now_ms: 0,
                input: Input::NliResponse {
                    from: 1,
                    bucket: 0,
                    ok: true,
                    context: Context {
                        coordinator_epoch: 1,
                        leader: None,
                        leader_epoch: 0,
                        bucket_epoch: 3,
                        exec_key: Some(key),
                    },
                },
            },
            Request::Input {
                now_ms: 0,
                input: Input::Event {
                    event: Event::Reconcile { key },
                },
            },
            Request::State,
            Request::Snapshot { id: 7 },
            Request::Release { id: 7 },
        ];
        for r in requests {
            let text = r.to_line();
            assert_eq!(line::<Request>(&text), Ok(r), "{text}");
        }
    }

    #[test]
    fn a_malformed_field_is_named_by_its_path() {
        let text = r#"{"op":"input","now_ms":0,"input":{"type":"nli_response","from":1,"bucket":0,"ok":true,"context":{"coordinator_epoch":1,"leader":null,"leader_epoch":0,"bucket_epoch":3,"exec_key":{"rid":"1","bucket":0}}}}"#;
        let e = line::<Request>(text).unwrap_err();
        assert_eq!(e.path(), "input.context.exec_key.rid");
        assert!(
            e.to_string().contains("expected an unsigned integer"),
            "{e}"
        );
    }

    #[test]
    fn unknown_and_missing_fields_and_tags_are_named() {
        let e = line::<Request>(r#"{"op":"fail_store_op","nth":1,"extra":2}"#).unwrap_err();
        assert_eq!(
            e,
            WireError::Unknown {
                path: "extra".into()
            }
        );
        let e = line::<Request>(r#"{"op":"restart","live":[0]}"#).unwrap_err();
        assert_eq!(
            e,
            WireError::Missing {
                path: "now_ms".into()
            }
        );
        let e = line::<Request>(r#"{"op":"jump"}"#).unwrap_err();
        assert_eq!(e.path(), "op");
        assert!(e.to_string().contains("unknown value \"jump\""), "{e}");
        let e = line::<Response>(r#"{"effects":[{"type":"enqueue","event":{"type":"later"}}]}"#)
            .unwrap_err();
        assert_eq!(e.path(), "effects[0].event.type");
        let e = line::<Response>("hello").unwrap_err();
        assert!(matches!(e, WireError::NotJson(_)), "{e:?}");
        let e = line::<Response>(r#"{"done":"state","effects":[]}"#).unwrap_err();
        assert_eq!(e.path(), "(line)");
    }

    #[test]
    fn a_server_id_above_32_bits_is_out_of_range() {
        let e = line::<Request>(r#"{"op":"restart","live":[4294967296],"now_ms":0}"#).unwrap_err();
        assert_eq!(e.path(), "live[0]");
    }
}
