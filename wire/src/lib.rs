//! The protocol's values as JSON, in the spec's vocabulary: the lines of the driver protocol
//! (`spec/driver-protocol.md`): what the harness sends ([`Request`]) and what an implementation
//! under test answers ([`Response`]); and the inputs and effects of the coordinator log
//! (`spec/log-format.md`), which uses the same encodings. Encoded with serde; decoded with
//! [`decode`] so that every malformed line names the field (its module doc says why not with
//! serde).
//!
//! Each struct and tagged enum is defined once, by [`decode`]'s `wire_struct!` and
//! `wire_tagged!`: the one list of fields gives the type, its encoding and its decoder.
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

use crate::decode::{
    get, object, tag, wire_names, wire_struct, wire_tagged, Decode, Path, WireError,
};

/// The protocol's name, sent in the handshake.
pub const PROTOCOL: &str = "rebalance-driver";
/// The protocol version this crate speaks.
pub const VERSION: u64 = 2;

wire_struct! {
    /// An execution key (spec 3.2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Key {
        pub rid: u64,
        pub bucket: u32,
    }
}

wire_tagged! {
    /// A coordinator event (spec 3.2), tagged with `type` as in the trace format.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    #[tag = "type"]
    pub enum Event {
        "timeout" => Timeout { key: Key },
        "reconcile" => Reconcile { key: Key },
        "finalize" => Finalize { rid: u64 },
        "recover" => Recover,
    }
}

wire_struct! {
    /// The manager's configuration (spec 6), durations in milliseconds.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Config {
        pub task_timeout_ms: u64,
        pub check_interval_ms: u64,
        pub max_reconcile_backoff_ms: u64,
        pub target_unavailable_timeout_ms: u64,
        pub no_progress_timeout_ms: u64,
        pub max_tracked_timed_out: u64,
        pub max_inflight: u64,
    }
}

wire_struct! {
    /// One plan entry (spec 2).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct PlanEntry {
        pub bucket: u32,
        pub ors: Vec<u32>,
        pub trs: Vec<u32>,
        pub old_leader: Option<u32>,
        pub new_leader: u32,
    }
}

wire_names! {
    /// The stored task's status (spec 3.1).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum TaskStatus {
        "NOT_STARTED" => NotStarted,
        "REBALANCING" => Rebalancing,
        "COMPLETED" => Completed,
        "FAILED" => Failed,
        "CANCELED" => Canceled,
    }
}

wire_names! {
    /// The coordinator's overall status (spec 3.2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum OverallStatus {
        "REBALANCING" => Rebalancing,
        "COMPLETED" => Completed,
        "FAILED" => Failed,
        "CANCELED" => Canceled,
    }
}

wire_names! {
    /// A plan bucket's status (spec 3.2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum BucketStatus {
        "NOT_STARTED" => NotStarted,
        "REBALANCING" => Rebalancing,
        "TIMEOUT" => Timeout,
        "COMPLETED" => Completed,
        "FAILED" => Failed,
        "CANCELED" => Canceled,
    }
}

wire_struct! {
    /// The stored task (spec 3.1).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Task {
        pub id: u64,
        pub status: TaskStatus,
        pub cancel_requested: bool,
        pub plan: Vec<PlanEntry>,
    }
}

wire_struct! {
    /// A bucket's LeaderAndIsr (spec 3.1), its `lai`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct LeaderAndIsr {
        pub leader: Option<u32>,
        pub leader_epoch: u64,
        pub isr: Vec<u32>,
        pub bucket_epoch: u64,
        pub coordinator_epoch: u64,
    }
}

wire_struct! {
    /// One bucket of the store's cluster metadata (spec 3.1).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Bucket {
        pub bucket: u32,
        pub assignment: Vec<u32>,
        pub lai: LeaderAndIsr,
        pub deleted: bool,
    }
}

wire_struct! {
    /// The store (spec 3.1): the coordinator epoch, the task, the cluster metadata.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Store {
        pub coordinator_epoch: u64,
        pub task: Option<Task>,
        pub buckets: Vec<Bucket>,
    }
}

wire_struct! {
    /// A request context (spec 3.4).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Context {
        pub coordinator_epoch: u64,
        pub leader: Option<u32>,
        pub leader_epoch: u64,
        pub bucket_epoch: u64,
        pub exec_key: Option<Key>,
    }
}

wire_tagged! {
    /// An input to the manager (spec 3.4, 5), tagged with `type`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[tag = "type"]
    pub enum Input {
        "register" => Register { plan: Vec<PlanEntry> },
        "cancel" => Cancel,
        "tick" => Tick,
        "event" => Event { event: Event },
        "nli_response" => NliResponse {
            from: u32,
            bucket: u32,
            ok: bool,
            context: Context,
        },
        "adjust_isr" => AdjustIsr {
            from: u32,
            bucket: u32,
            leader_epoch: u64,
            bucket_epoch: u64,
            isr: Vec<u32>,
        },
        "server_crashed" => ServerCrashed { server: u32 },
        "server_restarted" => ServerRestarted { server: u32 },
        "bucket_deleted" => BucketDeleted { bucket: u32 },
    }
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
    Ok(LeaderAndIsr),
    Err(String),
}

wire_tagged! {
    /// A client reply (R1, R2), tagged with `kind`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[tag = "kind"]
    pub enum Reply {
        "accepted" => Accepted { rid: u64 },
        "rejected_in_progress" => RejectedInProgress,
        /// A production guard's refusal of a malformed plan (not in the spec's model): `reason`
        /// names the check (`DUPLICATE_BUCKET`, `EMPTY_TARGET`, `NEW_LEADER_NOT_FIRST_TARGET`,
        /// `DUPLICATE_REPLICA`, `UNKNOWN_BUCKET`, `DELETED_BUCKET`, `NOT_AT_ORIGIN`) for `bucket`.
        "rejected_invalid_plan" => RejectedInvalidPlan {
            reason: String as one_of(PLAN_ERRORS),
            bucket: u32,
        },
        "nothing_to_cancel" => NothingToCancel,
        "store_error" => StoreError,
    }
}

wire_tagged! {
    /// An effect (spec 5), tagged with `type`; a step's effects are listed in emission order.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[tag = "type"]
    pub enum Effect {
        "send_nli" => SendNli {
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
        "send_adjust_isr_response" => SendAdjustIsrResponse {
            to: u32,
            bucket: u32,
            result: AdjustResult,
        },
        "enqueue" => Enqueue { event: Event },
        "reply" => Reply { reply: Reply },
    }
}

wire_struct! {
    /// What the coordinator last observed of a tracked bucket (R14).
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Observed {
        pub assignment: Vec<u32>,
        pub leader: Option<u32>,
        pub isr: Vec<u32>,
    }
}

wire_names! {
    /// Whether an attempt is running (REBALANCING) or tracked (TIMEOUT).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum Mode {
        "running" => Running,
        "tracked" => Tracked,
    }
}

wire_struct! {
    /// An attempt (spec 3.2), with the manager's timestamps in milliseconds.
    #[derive(Clone, Debug, PartialEq, Eq)]
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
}

wire_struct! {
    /// `status[b]`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct StatusOf {
        pub bucket: u32,
        pub status: BucketStatus,
    }
}

wire_struct! {
    /// The coordinator's five flags (spec 3.2).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct Flags {
        pub cancel_requested: bool,
        pub finalize_pending: bool,
        pub finalize_queued: bool,
        pub recovery_pending: bool,
        pub recovery_queued: bool,
    }
}

wire_struct! {
    /// The coordinator's state (spec 3.2), without the event queue (the host's, so the harness's).
    #[derive(Clone, Debug, PartialEq, Eq)]
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
}

wire_struct! {
    /// The answer to `state`: the store, the coordinator, and the store's instrumentation.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Observation {
        pub store: Store,
        pub coordinator: Coordinator,
        /// Store operations performed since the store was handed over (spec 9's counted
        /// operations).
        pub store_ops: u64,
        /// A failure armed by `fail_store_op` has not happened yet.
        pub fault_pending: bool,
        /// The implementation's own invariant check, if it has one and it failed.
        pub invariant_violation: Option<String>,
    }
}

wire_tagged! {
    /// A line the harness sends, tagged with `op`.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[tag = "op"]
    pub enum Request {
        /// The handshake; the first line.
        "hello" => Hello { protocol: String, version: u64 },
        /// R17 on a store the harness hands over; the implementation owns it from now on.
        "start" => Start {
            config: Config,
            store: Store,
            live: Vec<u32>,
            now_ms: u64,
        },
        /// R17 again: the incarnation's memory is lost, its store is kept.
        "restart" => Restart { live: Vec<u32>, now_ms: u64 },
        /// The `nth` store operation from now fails, once (spec 9).
        "fail_store_op" => FailStoreOp { nth: u64 },
        /// One input at `now_ms`.
        "input" => Input { now_ms: u64, input: Input },
        /// The observation of the current state.
        "state" => State,
        /// Keep a copy of the whole current state (manager, store, armed fault) under `id`.
        "snapshot" => Snapshot { id: u64 },
        /// Make the copy `id` the current state again (the copy stays).
        "restore" => Restore { id: u64 },
        /// Forget the copy `id`.
        "release" => Release { id: u64 },
    }
}

impl Request {
    /// The request's `op`, for messages.
    pub fn op(&self) -> &'static str {
        self.tag()
    }

    /// The request as one line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("a request always encodes")
    }
}

wire_struct! {
    /// The handshake's answer.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct Hello {
        pub protocol: String,
        pub version: u64,
        /// Free text: the implementation's name and version.
        pub implementation: String,
    }
}

wire_struct! {
    /// Why a line was refused, sent before the implementation exits with status 2.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ErrorLine {
        /// The field path (`(line)` for the whole line, `op` for a request out of order).
        pub path: String,
        pub message: String,
    }
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

// ---- decoding what the macros do not define ----

// The two objects whose one key is what they are (`{"ok": lai}`, `{"effects": [...]}`) are not
// field lists: each is read by hand, and an object with none or two of the keys is refused as
// a whole.

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
