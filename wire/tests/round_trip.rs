//! Every line of the driver protocol (`spec/driver-protocol.md`) encodes to the text pinned here
//! and decodes back to itself, and the decoder keeps the spec's promises on every field of every
//! message: an unknown field is refused and named, a missing required field is named, an absent
//! optional field is `null`, a server or bucket id above 32 bits is refused, and a value of the
//! wrong type is named by its path.
//!
//! The examples hold every request, response, input, effect, event and reply, and every nested
//! type, with each list non-empty and each optional field both set and `null` somewhere; the
//! mutation tests below walk the encoded examples, so a field the decoder forgets (or reads
//! under another name than the encoder writes) fails here whichever message it is in. The
//! pinned texts keep the encoding itself from changing unnoticed: a round trip alone passes when
//! encoder and decoder change together.

use std::collections::BTreeSet;
use std::fmt::Debug;

use rebalance_wire::decode::{line, Decode, WireError};
use rebalance_wire::{
    AdjustResult, Attempt, Bucket, BucketStatus, Config, Context, Coordinator, Effect, ErrorLine,
    Event, Flags, Hello, Input, Key, LeaderAndIsr, Mode, Observation, Observed, OverallStatus,
    PlanEntry, Reply, Request, Response, StatusOf, Store, Task, TaskStatus, PROTOCOL, VERSION,
};
use serde::Serialize;
use serde_json::Value;

// ---- the examples ----

const KEY: Key = Key { rid: 1, bucket: 0 };

fn config() -> Config {
    Config {
        task_timeout_ms: 300_000,
        check_interval_ms: 30_000,
        max_reconcile_backoff_ms: 120_000,
        target_unavailable_timeout_ms: 300_001,
        no_progress_timeout_ms: 300_002,
        max_tracked_timed_out: 1,
        max_inflight: 2,
    }
}

fn plan() -> Vec<PlanEntry> {
    vec![
        PlanEntry {
            bucket: 0,
            ors: vec![0, 1],
            trs: vec![1, 2],
            old_leader: Some(0),
            new_leader: 1,
        },
        PlanEntry {
            bucket: 1,
            ors: vec![3],
            trs: vec![4],
            old_leader: None,
            new_leader: 4,
        },
    ]
}

fn lai() -> LeaderAndIsr {
    LeaderAndIsr {
        leader: Some(0),
        leader_epoch: 2,
        isr: vec![0, 1],
        bucket_epoch: 3,
        coordinator_epoch: 1,
    }
}

fn store() -> Store {
    Store {
        coordinator_epoch: 1,
        task: Some(Task {
            id: 1,
            status: TaskStatus::Rebalancing,
            cancel_requested: false,
            plan: plan(),
        }),
        buckets: vec![
            Bucket {
                bucket: 0,
                assignment: vec![0, 1],
                lai: lai(),
                deleted: false,
            },
            Bucket {
                bucket: 1,
                assignment: vec![3],
                lai: LeaderAndIsr {
                    leader: None,
                    leader_epoch: 0,
                    isr: vec![],
                    bucket_epoch: 0,
                    coordinator_epoch: 0,
                },
                deleted: true,
            },
        ],
    }
}

fn observation() -> Observation {
    Observation {
        store: store(),
        coordinator: Coordinator {
            coordinator_epoch: 1,
            now_ms: 60_000,
            live: vec![0, 1, 2],
            rid: Some(1),
            overall: Some(OverallStatus::Rebalancing),
            status: vec![
                StatusOf {
                    bucket: 0,
                    status: BucketStatus::Timeout,
                },
                StatusOf {
                    bucket: 1,
                    status: BucketStatus::Rebalancing,
                },
            ],
            pending: vec![2],
            attempts: vec![
                Attempt {
                    bucket: 0,
                    key: KEY,
                    mode: Mode::Tracked,
                    started_ms: 0,
                    last_progress_ms: 30_000,
                    blocked_since_ms: None,
                    reconciles: 1,
                    next_reconcile_ms: 90_000,
                    observed: Observed {
                        assignment: vec![1, 0],
                        leader: Some(0),
                        isr: vec![0, 1],
                    },
                },
                Attempt {
                    bucket: 1,
                    key: Key { rid: 1, bucket: 1 },
                    mode: Mode::Running,
                    started_ms: 5,
                    last_progress_ms: 6,
                    blocked_since_ms: Some(7),
                    reconciles: 0,
                    next_reconcile_ms: 8,
                    observed: Observed {
                        assignment: vec![3],
                        leader: None,
                        isr: vec![],
                    },
                },
            ],
            queued_timeouts: vec![Key { rid: 1, bucket: 1 }],
            queued_reconciles: vec![KEY],
            flags: Flags {
                cancel_requested: true,
                finalize_pending: false,
                finalize_queued: true,
                recovery_pending: false,
                recovery_queued: true,
            },
            restored: 3,
        },
        store_ops: 7,
        fault_pending: true,
        invariant_violation: Some("INV-X".into()),
    }
}

/// Every input, each with its own request.
fn inputs() -> Vec<Input> {
    vec![
        Input::Register { plan: plan() },
        Input::Cancel,
        Input::Tick,
        Input::Event {
            event: Event::Timeout { key: KEY },
        },
        Input::NliResponse {
            from: 1,
            bucket: 0,
            ok: true,
            context: Context {
                coordinator_epoch: 1,
                leader: None,
                leader_epoch: 0,
                bucket_epoch: 3,
                exec_key: Some(KEY),
            },
        },
        Input::NliResponse {
            from: 2,
            bucket: 1,
            ok: false,
            context: Context {
                coordinator_epoch: 2,
                leader: Some(2),
                leader_epoch: 4,
                bucket_epoch: 5,
                exec_key: None,
            },
        },
        Input::AdjustIsr {
            from: 0,
            bucket: 0,
            leader_epoch: 0,
            bucket_epoch: 1,
            isr: vec![0, 1, 2],
        },
        Input::ServerCrashed { server: 2 },
        Input::ServerRestarted { server: 3 },
        Input::BucketDeleted { bucket: 4 },
    ]
}

fn events() -> Vec<Event> {
    vec![
        Event::Timeout { key: KEY },
        Event::Reconcile { key: KEY },
        Event::Finalize { rid: 9 },
        Event::Recover,
    ]
}

fn replies() -> Vec<Reply> {
    vec![
        Reply::Accepted { rid: 1 },
        Reply::RejectedInProgress,
        Reply::RejectedInvalidPlan {
            reason: "NOT_AT_ORIGIN".into(),
            bucket: 3,
        },
        Reply::NothingToCancel,
        Reply::StoreError,
    ]
}

/// Every effect: each kind, each event enqueued, each reply, both results.
fn effects() -> Vec<Effect> {
    let mut effects = vec![
        Effect::SendNli {
            to: 1,
            bucket: 0,
            replicas: vec![1, 2, 0],
            leader: Some(0),
            leader_epoch: 0,
            isr: vec![0, 1],
            bucket_epoch: 1,
            coordinator_epoch: 1,
            exec_key: Some(KEY),
        },
        Effect::SendNli {
            to: 2,
            bucket: 1,
            replicas: vec![2],
            leader: None,
            leader_epoch: 3,
            isr: vec![],
            bucket_epoch: 4,
            coordinator_epoch: 5,
            exec_key: None,
        },
        Effect::SendAdjustIsrResponse {
            to: 0,
            bucket: 0,
            result: AdjustResult::Ok(lai()),
        },
        Effect::SendAdjustIsrResponse {
            to: 0,
            bucket: 0,
            result: AdjustResult::Err("FENCED_LEADER_EPOCH".into()),
        },
    ];
    effects.extend(events().into_iter().map(|event| Effect::Enqueue { event }));
    effects.extend(replies().into_iter().map(|reply| Effect::Reply { reply }));
    effects
}

/// Every request, with its pinned line.
fn requests() -> Vec<(Request, &'static str)> {
    let mut cases = vec![
        (
            Request::Hello {
                protocol: PROTOCOL.into(),
                version: VERSION,
            },
            r#"{"op":"hello","protocol":"rebalance-driver","version":2}"#,
        ),
        (
            Request::Start {
                config: config(),
                store: store(),
                live: vec![0, 1, 2],
                now_ms: 0,
            },
            GOLDEN_START,
        ),
        (
            Request::Start {
                config: config(),
                store: Store {
                    coordinator_epoch: 0,
                    task: None,
                    buckets: vec![],
                },
                live: vec![],
                now_ms: 9_007_199_254_740_992,
            },
            r#"{"op":"start","config":{"task_timeout_ms":300000,"check_interval_ms":30000,"max_reconcile_backoff_ms":120000,"target_unavailable_timeout_ms":300001,"no_progress_timeout_ms":300002,"max_tracked_timed_out":1,"max_inflight":2},"store":{"coordinator_epoch":0,"task":null,"buckets":[]},"live":[],"now_ms":9007199254740992}"#,
        ),
        (
            Request::Restart {
                live: vec![0, 1],
                now_ms: 30_000,
            },
            r#"{"op":"restart","live":[0,1],"now_ms":30000}"#,
        ),
        (
            Request::FailStoreOp { nth: 4_294_967_295 },
            r#"{"op":"fail_store_op","nth":4294967295}"#,
        ),
        (Request::State, r#"{"op":"state"}"#),
        (Request::Snapshot { id: 7 }, r#"{"op":"snapshot","id":7}"#),
        (Request::Restore { id: 7 }, r#"{"op":"restore","id":7}"#),
        (Request::Release { id: 7 }, r#"{"op":"release","id":7}"#),
    ];
    for (input, text) in inputs().into_iter().zip(GOLDEN_INPUTS) {
        cases.push((
            Request::Input {
                now_ms: 60_000,
                input,
            },
            text,
        ));
    }
    cases
}

/// Every response, with its pinned line.
fn responses() -> Vec<(Response, &'static str)> {
    vec![
        (
            Response::Hello(Hello {
                protocol: PROTOCOL.into(),
                version: VERSION,
                implementation: "test 0.1".into(),
            }),
            r#"{"hello":{"protocol":"rebalance-driver","version":2,"implementation":"test 0.1"}}"#,
        ),
        (Response::Effects(effects()), GOLDEN_EFFECTS),
        (Response::Effects(vec![]), r#"{"effects":[]}"#),
        (
            Response::Refused("no live server".into()),
            r#"{"refused":"no live server"}"#,
        ),
        (Response::State(Box::new(observation())), GOLDEN_STATE),
        (
            Response::State(Box::new(Observation {
                store: Store {
                    coordinator_epoch: 0,
                    task: None,
                    buckets: vec![],
                },
                coordinator: Coordinator {
                    coordinator_epoch: 0,
                    now_ms: 0,
                    live: vec![],
                    rid: None,
                    overall: None,
                    status: vec![],
                    pending: vec![],
                    attempts: vec![],
                    queued_timeouts: vec![],
                    queued_reconciles: vec![],
                    flags: Flags::default(),
                    restored: 0,
                },
                store_ops: 0,
                fault_pending: false,
                invariant_violation: None,
            })),
            r#"{"state":{"store":{"coordinator_epoch":0,"task":null,"buckets":[]},"coordinator":{"coordinator_epoch":0,"now_ms":0,"live":[],"rid":null,"overall":null,"status":[],"pending":[],"attempts":[],"queued_timeouts":[],"queued_reconciles":[],"flags":{"cancel_requested":false,"finalize_pending":false,"finalize_queued":false,"recovery_pending":false,"recovery_queued":false},"restored":0},"store_ops":0,"fault_pending":false,"invariant_violation":null}}"#,
        ),
        (Response::Done("snapshot".into()), r#"{"done":"snapshot"}"#),
        (
            Response::Error(ErrorLine {
                path: "input.context.exec_key.rid".into(),
                message: "expected an unsigned integer, found \"1\"".into(),
            }),
            r#"{"error":{"path":"input.context.exec_key.rid","message":"expected an unsigned integer, found \"1\""}}"#,
        ),
    ]
}

// ---- the pinned lines too long to sit with their values ----

const GOLDEN_START: &str = r#"{"op":"start","config":{"task_timeout_ms":300000,"check_interval_ms":30000,"max_reconcile_backoff_ms":120000,"target_unavailable_timeout_ms":300001,"no_progress_timeout_ms":300002,"max_tracked_timed_out":1,"max_inflight":2},"store":{"coordinator_epoch":1,"task":{"id":1,"status":"REBALANCING","cancel_requested":false,"plan":[{"bucket":0,"ors":[0,1],"trs":[1,2],"old_leader":0,"new_leader":1},{"bucket":1,"ors":[3],"trs":[4],"old_leader":null,"new_leader":4}]},"buckets":[{"bucket":0,"assignment":[0,1],"lai":{"leader":0,"leader_epoch":2,"isr":[0,1],"bucket_epoch":3,"coordinator_epoch":1},"deleted":false},{"bucket":1,"assignment":[3],"lai":{"leader":null,"leader_epoch":0,"isr":[],"bucket_epoch":0,"coordinator_epoch":0},"deleted":true}]},"live":[0,1,2],"now_ms":0}"#;
/// The requests of [`inputs`], in order, each at `now_ms` 60000.
const GOLDEN_INPUTS: [&str; 10] = [
    r#"{"op":"input","now_ms":60000,"input":{"type":"register","plan":[{"bucket":0,"ors":[0,1],"trs":[1,2],"old_leader":0,"new_leader":1},{"bucket":1,"ors":[3],"trs":[4],"old_leader":null,"new_leader":4}]}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"cancel"}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"tick"}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"event","event":{"type":"timeout","key":{"rid":1,"bucket":0}}}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"nli_response","from":1,"bucket":0,"ok":true,"context":{"coordinator_epoch":1,"leader":null,"leader_epoch":0,"bucket_epoch":3,"exec_key":{"rid":1,"bucket":0}}}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"nli_response","from":2,"bucket":1,"ok":false,"context":{"coordinator_epoch":2,"leader":2,"leader_epoch":4,"bucket_epoch":5,"exec_key":null}}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"adjust_isr","from":0,"bucket":0,"leader_epoch":0,"bucket_epoch":1,"isr":[0,1,2]}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"server_crashed","server":2}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"server_restarted","server":3}}"#,
    r#"{"op":"input","now_ms":60000,"input":{"type":"bucket_deleted","bucket":4}}"#,
];
const GOLDEN_EFFECTS: &str = r#"{"effects":[{"type":"send_nli","to":1,"bucket":0,"replicas":[1,2,0],"leader":0,"leader_epoch":0,"isr":[0,1],"bucket_epoch":1,"coordinator_epoch":1,"exec_key":{"rid":1,"bucket":0}},{"type":"send_nli","to":2,"bucket":1,"replicas":[2],"leader":null,"leader_epoch":3,"isr":[],"bucket_epoch":4,"coordinator_epoch":5,"exec_key":null},{"type":"send_adjust_isr_response","to":0,"bucket":0,"result":{"ok":{"leader":0,"leader_epoch":2,"isr":[0,1],"bucket_epoch":3,"coordinator_epoch":1}}},{"type":"send_adjust_isr_response","to":0,"bucket":0,"result":{"err":"FENCED_LEADER_EPOCH"}},{"type":"enqueue","event":{"type":"timeout","key":{"rid":1,"bucket":0}}},{"type":"enqueue","event":{"type":"reconcile","key":{"rid":1,"bucket":0}}},{"type":"enqueue","event":{"type":"finalize","rid":9}},{"type":"enqueue","event":{"type":"recover"}},{"type":"reply","reply":{"kind":"accepted","rid":1}},{"type":"reply","reply":{"kind":"rejected_in_progress"}},{"type":"reply","reply":{"kind":"rejected_invalid_plan","reason":"NOT_AT_ORIGIN","bucket":3}},{"type":"reply","reply":{"kind":"nothing_to_cancel"}},{"type":"reply","reply":{"kind":"store_error"}}]}"#;
const GOLDEN_STATE: &str = r#"{"state":{"store":{"coordinator_epoch":1,"task":{"id":1,"status":"REBALANCING","cancel_requested":false,"plan":[{"bucket":0,"ors":[0,1],"trs":[1,2],"old_leader":0,"new_leader":1},{"bucket":1,"ors":[3],"trs":[4],"old_leader":null,"new_leader":4}]},"buckets":[{"bucket":0,"assignment":[0,1],"lai":{"leader":0,"leader_epoch":2,"isr":[0,1],"bucket_epoch":3,"coordinator_epoch":1},"deleted":false},{"bucket":1,"assignment":[3],"lai":{"leader":null,"leader_epoch":0,"isr":[],"bucket_epoch":0,"coordinator_epoch":0},"deleted":true}]},"coordinator":{"coordinator_epoch":1,"now_ms":60000,"live":[0,1,2],"rid":1,"overall":"REBALANCING","status":[{"bucket":0,"status":"TIMEOUT"},{"bucket":1,"status":"REBALANCING"}],"pending":[2],"attempts":[{"bucket":0,"key":{"rid":1,"bucket":0},"mode":"tracked","started_ms":0,"last_progress_ms":30000,"blocked_since_ms":null,"reconciles":1,"next_reconcile_ms":90000,"observed":{"assignment":[1,0],"leader":0,"isr":[0,1]}},{"bucket":1,"key":{"rid":1,"bucket":1},"mode":"running","started_ms":5,"last_progress_ms":6,"blocked_since_ms":7,"reconciles":0,"next_reconcile_ms":8,"observed":{"assignment":[3],"leader":null,"isr":[]}}],"queued_timeouts":[{"rid":1,"bucket":1}],"queued_reconciles":[{"rid":1,"bucket":0}],"flags":{"cancel_requested":true,"finalize_pending":false,"finalize_queued":true,"recovery_pending":false,"recovery_queued":true},"restored":3},"store_ops":7,"fault_pending":true,"invariant_violation":"INV-X"}}"#;

// ---- round trips ----

/// `value` encodes to `text` and `text` decodes to `value`.
fn round_trip<T: Serialize + Decode + PartialEq + Debug>(value: &T, text: &str) {
    let encoded = serde_json::to_string(value).expect("encodes");
    assert_eq!(encoded, text, "the encoding of {value:?}");
    assert_eq!(line::<T>(&encoded).as_ref(), Ok(value), "{encoded}");
}

/// `value` decodes back to itself (for the nested types, whose texts the lines above pin).
fn decodes_back<T: Serialize + Decode + PartialEq + Debug>(value: &T) {
    let encoded = serde_json::to_string(value).expect("encodes");
    assert_eq!(line::<T>(&encoded).as_ref(), Ok(value), "{encoded}");
}

#[test]
fn every_request_encodes_to_its_line_and_decodes_back() {
    for (r, text) in requests() {
        round_trip(&r, text);
    }
}

#[test]
fn every_response_encodes_to_its_line_and_decodes_back() {
    for (r, text) in responses() {
        round_trip(&r, text);
    }
}

#[test]
fn every_nested_type_decodes_back_on_its_own() {
    decodes_back(&KEY);
    decodes_back(&config());
    decodes_back(&store());
    decodes_back(&lai());
    for e in plan() {
        decodes_back(&e);
    }
    let obs = observation();
    decodes_back(&obs);
    decodes_back(&obs.coordinator);
    decodes_back(&obs.coordinator.flags);
    for a in &obs.coordinator.attempts {
        decodes_back(a);
        decodes_back(&a.observed);
        decodes_back(&a.mode);
    }
    for s in &obs.coordinator.status {
        decodes_back(s);
    }
    for b in &obs.store.buckets {
        decodes_back(b);
    }
    decodes_back(obs.store.task.as_ref().unwrap());
    for i in inputs() {
        decodes_back(&i);
    }
    for e in effects() {
        decodes_back(&e);
    }
    for e in events() {
        decodes_back(&e);
    }
    for r in replies() {
        decodes_back(&r);
    }
    for r in [
        AdjustResult::Ok(lai()),
        AdjustResult::Err("STORE_ERROR".into()),
    ] {
        decodes_back(&r);
    }
    decodes_back(&Context {
        coordinator_epoch: 1,
        leader: Some(1),
        leader_epoch: 2,
        bucket_epoch: 3,
        exec_key: Some(KEY),
    });
    decodes_back(&Hello {
        protocol: "p".into(),
        version: 2,
        implementation: "i".into(),
    });
    decodes_back(&ErrorLine {
        path: "(line)".into(),
        message: "m".into(),
    });
}

#[test]
fn every_status_name_decodes_back() {
    use BucketStatus as B;
    use OverallStatus as O;
    use TaskStatus as T;
    for (s, text) in [
        (T::NotStarted, "NOT_STARTED"),
        (T::Rebalancing, "REBALANCING"),
        (T::Completed, "COMPLETED"),
        (T::Failed, "FAILED"),
        (T::Canceled, "CANCELED"),
    ] {
        round_trip(&s, &format!("\"{text}\""));
    }
    for (s, text) in [
        (O::Rebalancing, "REBALANCING"),
        (O::Completed, "COMPLETED"),
        (O::Failed, "FAILED"),
        (O::Canceled, "CANCELED"),
    ] {
        round_trip(&s, &format!("\"{text}\""));
    }
    for (s, text) in [
        (B::NotStarted, "NOT_STARTED"),
        (B::Rebalancing, "REBALANCING"),
        (B::Timeout, "TIMEOUT"),
        (B::Completed, "COMPLETED"),
        (B::Failed, "FAILED"),
        (B::Canceled, "CANCELED"),
    ] {
        round_trip(&s, &format!("\"{text}\""));
    }
    round_trip(&Mode::Running, "\"running\"");
    round_trip(&Mode::Tracked, "\"tracked\"");
}

/// Each reason of each list the protocol names decodes, in every place it may stand.
#[test]
fn every_refusal_reason_decodes_back() {
    for reason in rebalance_wire::ADJUST_ISR_ERRORS {
        decodes_back(&AdjustResult::Err(reason.to_string()));
    }
    for reason in rebalance_wire::PLAN_ERRORS {
        decodes_back(&Reply::RejectedInvalidPlan {
            reason: reason.to_string(),
            bucket: 0,
        });
    }
}

/// The examples hold every variant: a variant added to an enum breaks the build here (the
/// matches have no wildcard), and one added without an example fails the test.
#[test]
fn the_examples_hold_every_variant() {
    fn request(r: &Request) -> &'static str {
        match r {
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
    fn response(r: &Response) -> &'static str {
        match r {
            Response::Hello(_) => "hello",
            Response::Effects(_) => "effects",
            Response::Refused(_) => "refused",
            Response::State(_) => "state",
            Response::Done(_) => "done",
            Response::Error(_) => "error",
        }
    }
    fn input(i: &Input) -> &'static str {
        match i {
            Input::Register { .. } => "register",
            Input::Cancel => "cancel",
            Input::Tick => "tick",
            Input::Event { .. } => "event",
            Input::NliResponse { .. } => "nli_response",
            Input::AdjustIsr { .. } => "adjust_isr",
            Input::ServerCrashed { .. } => "server_crashed",
            Input::ServerRestarted { .. } => "server_restarted",
            Input::BucketDeleted { .. } => "bucket_deleted",
        }
    }
    fn effect(e: &Effect) -> &'static str {
        match e {
            Effect::SendNli { .. } => "send_nli",
            Effect::SendAdjustIsrResponse {
                result: AdjustResult::Ok(_),
                ..
            } => "send_adjust_isr_response ok",
            Effect::SendAdjustIsrResponse {
                result: AdjustResult::Err(_),
                ..
            } => "send_adjust_isr_response err",
            Effect::Enqueue { event } => match event {
                Event::Timeout { .. } => "enqueue timeout",
                Event::Reconcile { .. } => "enqueue reconcile",
                Event::Finalize { .. } => "enqueue finalize",
                Event::Recover => "enqueue recover",
            },
            Effect::Reply { reply } => match reply {
                Reply::Accepted { .. } => "reply accepted",
                Reply::RejectedInProgress => "reply rejected_in_progress",
                Reply::RejectedInvalidPlan { .. } => "reply rejected_invalid_plan",
                Reply::NothingToCancel => "reply nothing_to_cancel",
                Reply::StoreError => "reply store_error",
            },
        }
    }
    let names = |v: Vec<&'static str>| v.into_iter().collect::<BTreeSet<_>>();
    assert_eq!(
        names(requests().iter().map(|(r, _)| request(r)).collect()).len(),
        9
    );
    assert_eq!(
        names(responses().iter().map(|(r, _)| response(r)).collect()).len(),
        6
    );
    assert_eq!(names(inputs().iter().map(input).collect()).len(), 9);
    assert_eq!(
        names(effects().iter().map(effect).collect()).len(),
        1 + 2 + 4 + 5
    );
    assert_eq!(events().len(), 4);
    assert_eq!(replies().len(), 5);
}

/// The example session of `spec/driver-protocol.md` decodes, and encodes back to the very text
/// the spec shows: the spec and the types agree on every line of it.
#[test]
fn the_spec_example_session_decodes_and_encodes_back() {
    let spec = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec/driver-protocol.md"
    ))
    .expect("spec/driver-protocol.md");
    let (mut sent, mut answered) = (0, 0);
    for l in spec.lines() {
        if let Some(text) = l.strip_prefix("> {") {
            let text = format!("{{{text}");
            let r: Request = line(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(r.to_line(), text);
            sent += 1;
        } else if let Some(text) = l.strip_prefix("< {") {
            let text = format!("{{{text}");
            let r: Response = line(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            assert_eq!(r.to_line(), text);
            answered += 1;
        }
    }
    assert!(
        sent >= 10 && sent == answered,
        "{sent} requests, {answered} answers"
    );
}

// ---- every field of every message, mutated ----

/// Decodes a line as a request or a response, answering with the value's debug text.
type Decoder = fn(&str) -> Result<String, WireError>;

/// What [`each_node`] calls on each node: its path, the field that holds it, the node, and how
/// to make a copy of the line with the node replaced.
type Visit<'a> = dyn FnMut(&At, &str, &Value, &dyn Fn(Option<Value>) -> Value) + 'a;

/// Every top-level example line, as a value, with a decoder that reports only whether it
/// decoded and how it failed.
fn lines() -> Vec<(Value, Decoder)> {
    fn req(t: &str) -> Result<String, WireError> {
        line::<Request>(t).map(|r| format!("{r:?}"))
    }
    fn resp(t: &str) -> Result<String, WireError> {
        line::<Response>(t).map(|r| format!("{r:?}"))
    }
    let mut out: Vec<(Value, Decoder)> = Vec::new();
    for (_, text) in requests() {
        out.push((serde_json::from_str(text).unwrap(), req));
    }
    for (_, text) in responses() {
        out.push((serde_json::from_str(text).unwrap(), resp));
    }
    out
}

/// A path as the decoder renders it: `a.b[2].c`, a top-level field bare.
#[derive(Clone, Default)]
struct At(String);

impl At {
    fn field(&self, k: &str) -> At {
        if self.0.is_empty() {
            At(k.to_string())
        } else {
            At(format!("{}.{k}", self.0))
        }
    }
    fn index(&self, i: usize) -> At {
        At(format!("{}[{i}]", self.0))
    }
    fn shown(&self) -> String {
        if self.0.is_empty() {
            "(line)".into()
        } else {
            self.0.clone()
        }
    }
}

/// Every node of `v`: its path, the name of the field that holds it (a list's elements are
/// held by the list's field), and a copy of the whole line with that node replaced by `f`'s
/// answer (`None` removes a field; the root and list elements are not removed).
fn each_node(root: &Value, f: &mut Visit) {
    fn walk(root: &Value, v: &Value, at: &At, held_by: &str, ptr: &[Step], f: &mut Visit) {
        let replace = |with: Option<Value>| {
            let mut copy = root.clone();
            set(&mut copy, ptr, with);
            copy
        };
        f(at, held_by, v, &replace);
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    let mut p = ptr.to_vec();
                    p.push(Step::Key(k.clone()));
                    walk(root, x, &at.field(k), k, &p, f);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    let mut p = ptr.to_vec();
                    p.push(Step::Index(i));
                    walk(root, x, &at.index(i), held_by, &p, f);
                }
            }
            _ => {}
        }
    }
    walk(root, root, &At::default(), "", &[], f);
}

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn set(v: &mut Value, ptr: &[Step], with: Option<Value>) {
    match ptr {
        [] => *v = with.expect("the root is replaced, not removed"),
        [Step::Key(k)] if with.is_none() => {
            v.as_object_mut().unwrap().remove(k);
        }
        [Step::Index(_)] if with.is_none() => panic!("list elements are replaced, not removed"),
        [first, rest @ ..] => {
            let next = match first {
                Step::Key(k) => v.get_mut(k.as_str()).unwrap(),
                Step::Index(i) => v.get_mut(*i).unwrap(),
            };
            set(next, rest, with)
        }
    }
}

/// Objects whose only key is what they are (`{"effects": [...]}`, `{"ok": lai}`): removing it
/// leaves an object with none of the keys, which is a type error of the object, not a missing
/// field.
fn one_of(e: &WireError, at: &At) -> bool {
    matches!(e, WireError::Type { path, expected, .. }
        if *path == at.shown() && expected.starts_with("an object with exactly one of"))
}

/// Every object of every message refuses a field it does not define, whether a name no message
/// has or the name of a field of another object (a name copied into the wrong list of known
/// fields would accept it).
#[test]
fn an_unknown_field_is_refused_in_every_object_of_every_message() {
    let mut names = BTreeSet::new();
    for (line_value, _) in lines() {
        each_node(&line_value, &mut |_, _, v, _| {
            if let Value::Object(m) = v {
                names.extend(m.keys().cloned());
            }
        });
    }
    names.insert("zz_extra".into());
    let mut objects = 0;
    for (line_value, decode) in lines() {
        each_node(&line_value, &mut |at, _, v, replace| {
            let Value::Object(m) = v else { return };
            objects += 1;
            for name in names.iter().filter(|n| !m.contains_key(*n)) {
                let mut with = m.clone();
                with.insert(name.clone(), Value::from(0));
                let text = replace(Some(Value::Object(with))).to_string();
                match decode(&text) {
                    Err(WireError::Unknown { path }) => {
                        assert_eq!(path, at.field(name).0, "{text}")
                    }
                    // A second key of `{"effects": ...}` or `{"ok": ...}` that is one of the
                    // alternatives is refused as such.
                    Err(e) if m.len() == 1 && one_of(&e, at) => {}
                    other => panic!("{text}: {other:?}"),
                }
            }
        });
    }
    assert!(objects > 100, "{objects} objects");
}

/// A required field removed is named as missing; an optional one removed reads as `null`
/// (the spec: "Absent optional fields ... are `null`"), and the optional ones are the spec's.
#[test]
fn a_missing_field_is_named_and_an_absent_optional_one_is_null() {
    let mut optional = BTreeSet::new();
    for (line_value, decode) in lines() {
        each_node(&line_value, &mut |at, held_by, _, replace| {
            let parent_is_object = !at.0.ends_with(']') && !at.0.is_empty();
            if !parent_is_object {
                return;
            }
            let removed = replace(None).to_string();
            match decode(&removed) {
                Ok(got) => {
                    let nulled = replace(Some(Value::Null)).to_string();
                    assert_eq!(decode(&nulled), Ok(got), "{removed}");
                    optional.insert(held_by.to_string());
                }
                Err(WireError::Missing { path }) => assert_eq!(path, at.0, "{removed}"),
                Err(e) => {
                    let parent = At(at.0[..at.0.len() - held_by.len()]
                        .trim_end_matches('.')
                        .to_string());
                    assert!(one_of(&e, &parent), "{removed}: {e:?}");
                }
            }
        });
    }
    let spec: BTreeSet<String> = [
        "leader",
        "exec_key",
        "old_leader",
        "task",
        "overall",
        "rid",
        "blocked_since_ms",
        "invariant_violation",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(optional, spec);
}

/// Every number of every message: a server or bucket id (and nothing else) is refused above 32
/// bits, every number is refused above 64 bits, negative or as a string, each error at the
/// number's path.
#[test]
fn every_number_is_range_checked_at_its_path() {
    let mut narrow = BTreeSet::new();
    let mut numbers = 0;
    for (line_value, decode) in lines() {
        each_node(&line_value, &mut |at, held_by, v, replace| {
            if !v.is_number() {
                return;
            }
            numbers += 1;
            let fits = replace(Some(Value::from(u32::MAX))).to_string();
            assert!(decode(&fits).is_ok(), "{fits}");
            let wide = replace(Some(Value::from(1u64 << 32))).to_string();
            let expected = match decode(&wide) {
                Ok(_) => "an unsigned integer",
                Err(e) => {
                    assert_eq!(
                        e,
                        WireError::Type {
                            path: at.0.clone(),
                            expected: "an unsigned 32-bit integer",
                            found: "4294967296".into()
                        },
                        "{wide}"
                    );
                    narrow.insert(held_by.to_string());
                    "an unsigned 32-bit integer"
                }
            };
            for (bad, found) in [
                ("18446744073709551616", "1.8446744073709552e+19"),
                ("-1", "-1"),
                ("\"1\"", "\"1\""),
                ("1.5", "1.5"),
            ] {
                let text = replace(Some(serde_json::from_str(bad).unwrap())).to_string();
                assert_eq!(
                    decode(&text),
                    Err(WireError::Type {
                        path: at.0.clone(),
                        expected,
                        found: found.into()
                    }),
                    "{text}"
                );
            }
        });
    }
    assert!(numbers > 100, "{numbers} numbers");
    let ids: BTreeSet<String> = [
        "assignment",
        "bucket",
        "from",
        "isr",
        "leader",
        "live",
        "new_leader",
        "old_leader",
        "ors",
        "pending",
        "replicas",
        "server",
        "to",
        "trs",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(narrow, ids);
}

/// Every flag and every name (a tag, a status, a reason) of every message is checked at its
/// path; free text (`protocol`, `implementation`, a refusal, an error line) is any string.
#[test]
fn every_flag_and_name_is_checked_at_its_path() {
    let mut free = BTreeSet::new();
    for (line_value, decode) in lines() {
        each_node(&line_value, &mut |at, held_by, v, replace| match v {
            Value::Bool(_) => {
                let text = replace(Some(Value::from(0))).to_string();
                assert_eq!(
                    decode(&text),
                    Err(WireError::Type {
                        path: at.0.clone(),
                        expected: "true or false",
                        found: "0".into()
                    }),
                    "{text}"
                );
            }
            Value::String(_) => {
                let text = replace(Some(Value::from("zz"))).to_string();
                match decode(&text) {
                    Ok(_) => {
                        free.insert(held_by.to_string());
                    }
                    Err(WireError::Variant { path, found, .. }) => {
                        assert_eq!((path, found), (at.0.clone(), "\"zz\"".into()), "{text}")
                    }
                    Err(e) => panic!("{text}: {e:?}"),
                }
                let text = replace(Some(Value::from(1))).to_string();
                assert_eq!(
                    decode(&text),
                    Err(WireError::Type {
                        path: at.0.clone(),
                        expected: "a string",
                        found: "1".into()
                    }),
                    "{text}"
                );
            }
            _ => {}
        });
    }
    let text: BTreeSet<String> = [
        "done",
        "implementation",
        "invariant_violation",
        "message",
        "path",
        "protocol",
        "refused",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(free, text);
}

/// Each message's errors as the spec and the stdio server print them: the example of
/// `spec/driver-protocol.md` and the texts of each kind of error.
#[test]
fn errors_read_as_the_spec_shows_them() {
    let text = r#"{"op":"input","now_ms":0,"input":{"type":"nli_response","from":1,"bucket":0,"ok":true,"context":{"coordinator_epoch":1,"leader":null,"leader_epoch":0,"bucket_epoch":3,"exec_key":{"rid":"1","bucket":0}}}}"#;
    assert_eq!(
        line::<Request>(text).unwrap_err().to_string(),
        r#"field `input.context.exec_key.rid`: expected an unsigned integer, found "1""#
    );
    let text = r#"{"effects":[{"type":"enqueue","event":{"type":"later"}}]}"#;
    assert_eq!(
        line::<Response>(text).unwrap_err().to_string(),
        r#"field `effects[0].event.type`: unknown value "later"; expected one of timeout, reconcile, finalize, recover"#
    );
    assert_eq!(
        line::<Request>(r#"{"op":"snapshot"}"#)
            .unwrap_err()
            .to_string(),
        "field `id`: missing"
    );
    assert_eq!(
        line::<Request>(r#"{"op":"state","id":1}"#)
            .unwrap_err()
            .to_string(),
        "field `id`: unknown field"
    );
    assert_eq!(
        line::<Request>(r#"{"op":"restart","live":[-1],"now_ms":0}"#)
            .unwrap_err()
            .to_string(),
        "field `live[0]`: expected an unsigned 32-bit integer, found -1"
    );
    assert_eq!(
        line::<Request>(r#"{"now_ms":0}"#).unwrap_err().to_string(),
        "field `op`: missing"
    );
    assert_eq!(
        line::<Request>(r#"[]"#).unwrap_err().to_string(),
        "field `(line)`: expected an object, found []"
    );
    assert_eq!(
        line::<Response>(r#"{"effects":[{"type":"reply","reply":{"kind":"rejected_invalid_plan","reason":"BAD","bucket":0}}]}"#)
            .unwrap_err()
            .to_string(),
        "field `effects[0].reply.reason`: unknown value \"BAD\"; expected one of DUPLICATE_BUCKET, EMPTY_TARGET, NEW_LEADER_NOT_FIRST_TARGET, DUPLICATE_REPLICA, UNKNOWN_BUCKET, DELETED_BUCKET, NOT_AT_ORIGIN"
    );
    assert_eq!(
        line::<Response>(r#"{"effects":[{"type":"send_adjust_isr_response","to":0,"bucket":0,"result":{}}]}"#)
            .unwrap_err()
            .to_string(),
        "field `effects[0].result`: expected an object with exactly one of `ok` and `err`, found {}"
    );
    assert_eq!(
        line::<Response>(r#"{"state":{"store":{"coordinator_epoch":0,"task":{"id":1,"status":"DONE","cancel_requested":false,"plan":[]},"buckets":[]}}}"#)
            .unwrap_err()
            .to_string(),
        "field `state.store.task.status`: unknown value \"DONE\"; expected one of NOT_STARTED, REBALANCING, COMPLETED, FAILED, CANCELED"
    );
    assert_eq!(
        line::<Response>(r#"{}"#).unwrap_err().to_string(),
        "field `(line)`: expected an object with exactly one of hello, effects, refused, state, done, error, found {}"
    );
}

/// Where two things are wrong, the decoder names the first it checks: the tag before the
/// fields, unknown fields before the known ones' values, fields in the order of their
/// definition. The order is part of what a harness prints, so it is pinned.
#[test]
fn the_first_error_is_the_first_checked() {
    let first = |t: &str| line::<Request>(t).unwrap_err().to_string();
    assert_eq!(
        first(r#"{"op":"jump","zz":1}"#),
        "field `op`: unknown value \"jump\"; expected one of hello, start, restart, fail_store_op, input, state, snapshot, restore, release"
    );
    assert_eq!(
        first(r#"{"op":"restart","zz":1,"live":"x"}"#),
        "field `zz`: unknown field"
    );
    assert_eq!(
        first(r#"{"op":"restart","now_ms":"x","live":"x"}"#),
        "field `live`: expected a list, found \"x\""
    );
    assert_eq!(
        first(r#"{"op":"input","now_ms":0,"input":{"type":"adjust_isr","isr":[],"bucket":"x"}}"#),
        "field `input.from`: missing"
    );
    assert_eq!(
        first(r#"{"op":"start","now_ms":0,"live":[],"store":{},"config":{"task_timeout_ms":0}}"#),
        "field `config.check_interval_ms`: missing"
    );
}
