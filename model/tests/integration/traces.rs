//! Version 2 traces on the model: patterns, counted ticks, `expect` blocks, the errors a person
//! writing a trace by hand meets, and `rebalance-model replay`.

use std::path::{Path, PathBuf};
use std::process::Command;

use rebalance_model::trace::TraceError;
use rebalance_model::{Action, Trace};
use serde_json::{json, Value};

const HAND_WRITTEN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../conformance/traces/hand-written-timeout-then-late-completion.json"
);

fn hand_written() -> Value {
    serde_json::from_str(&std::fs::read_to_string(HAND_WRITTEN).expect("read")).expect("JSON")
}

fn load(v: &Value) -> Result<Trace, TraceError> {
    Trace::from_json(&v.to_string())
}

fn invalid_path(v: &Value) -> String {
    match load(v) {
        Err(TraceError::Invalid { path, .. }) => path,
        other => panic!("expected an invalid field, got {other:?}"),
    }
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .args(args)
        .output()
        .expect("run rebalance-model");
    (
        out.status.code().expect("exit code"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn write(dir: &Path, name: &str, v: &Value) -> String {
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).expect("write");
    p.display().to_string()
}

fn trace_files() -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["traces", "../conformance/traces"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for e in std::fs::read_dir(&dir).expect("trace directory") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_shipped_trace_loads_replays_and_meets_its_expectations() {
    let files = trace_files();
    assert!(files.len() >= 9, "{files:?}");
    for f in &files {
        let t = Trace::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let replay = t
            .replay()
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert_eq!(replay.states.len(), t.steps.len() + 1);
        assert_eq!(t.check(&replay), vec![], "{}", f.display());
    }
}

#[test]
fn a_version_1_trace_still_loads_as_it_was_written() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/traces/move-completes.json");
    let t = Trace::read(&path).expect("version 1 loads");
    assert_eq!(t.version, 1);
    assert_eq!(t.steps.len(), 7);
    assert!(t.expectations.is_empty());
    assert!(matches!(
        t.steps[0],
        Action::Register {
            plan: None,
            fail_store_op: None
        }
    ));
    t.replay().expect("every step enabled");
    // Version 2 features are refused in a version 1 trace, with the field named.
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v["steps"][0]["expect"] = json!({ "overall": "REBALANCING" });
    assert_eq!(invalid_path(&v), "steps[0].expect");
    v["steps"][0] = json!({ "kind": "deliver_nli", "to": 1 });
    assert_eq!(invalid_path(&v), "steps[0]");
}

#[test]
fn the_hand_written_trace_resolves_its_patterns_and_meets_its_expectations() {
    let t = Trace::read(HAND_WRITTEN).expect("loads");
    assert_eq!(t.version, 2);
    // 9 steps as written; the counted tick is three.
    assert_eq!(t.steps.len(), 11);
    assert_eq!(t.steps[1..4], [Action::TICK, Action::TICK, Action::TICK]);
    assert_eq!(t.expectations.len(), 7);
    let tick = &t.expectations[1];
    assert_eq!(
        (tick.path.as_str(), tick.from, tick.after),
        ("steps[1].expect", 1, 4)
    );
    let end = t.expectations.last().unwrap();
    assert_eq!((end.path.as_str(), end.after), ("expect", 11));
    match &t.steps[10] {
        Action::DeliverNliResponse { msg, .. } => {
            assert_eq!((msg.from, msg.context.bucket_epoch), (1, 3))
        }
        other => panic!("step 11 resolved to {other:?}"),
    }
    let replay = t.replay().expect("enabled");
    assert_eq!(t.check(&replay), vec![]);
}

#[test]
fn write_resolved_gives_an_explicit_trace_that_replays_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("resolved.json");
    let (code, stdout, stderr) = cli(&[
        "replay",
        HAND_WRITTEN,
        "--write-resolved",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("11 steps, 7 expectations hold"), "{stdout}");
    let text = std::fs::read_to_string(&out).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    // Every delivery names its whole message.
    for s in v["steps"].as_array().unwrap() {
        if s["kind"].as_str().unwrap().starts_with("deliver_") {
            assert!(s["msg"].is_object(), "{s}");
        }
    }
    let original = Trace::read(HAND_WRITTEN).unwrap();
    let resolved = Trace::from_json(&text).unwrap();
    assert_eq!(resolved.steps, original.steps);
    assert_eq!(resolved.expectations.len(), original.expectations.len());
    for (a, b) in resolved.expectations.iter().zip(&original.expectations) {
        assert_eq!((a.from, a.after, &a.expect), (b.from, b.after, &b.expect));
    }
}

#[test]
fn a_failing_expectation_exits_1_with_a_keyed_diff() {
    let mut v = hand_written();
    v["steps"][8]["expect"]["buckets"]["0"]["status"] = json!("FAILED");
    v["expect"]["task"]["cancel_requested"] = json!(true);
    let t = load(&v).unwrap();
    let failures = t.check(&t.replay().unwrap());
    assert_eq!(failures.len(), 2);
    assert_eq!(
        failures[0].diffs[0].path,
        "steps[8].expect.buckets.0.status"
    );
    assert_eq!(failures[0].diffs[0].expected, json!("FAILED"));
    assert_eq!(failures[0].diffs[0].actual, json!("COMPLETED"));
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "fails.json", &v);
    let (code, stdout, _) = cli(&["replay", &file]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("EXPECTATION FAILED (model): `steps[8].expect`"),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"steps[8].expect.buckets.0.status  "FAILED"  "COMPLETED""#),
        "{stdout}"
    );
    assert!(stdout.contains("expect.task.cancel_requested"), "{stdout}");
    assert!(stdout.contains("2 of 7 expectations failed"), "{stdout}");
}

/// Every line of an error's candidate list is a step that can be pasted into the trace.
fn pasted_steps(message: &str) -> Vec<Action> {
    message
        .lines()
        .filter(|l| l.starts_with("    {"))
        .map(|l| serde_json::from_str::<Action>(l.trim()).expect("pasteable step"))
        .collect()
}

#[test]
fn an_ambiguous_pattern_lists_the_messages_it_matches() {
    let mut v = hand_written();
    v["steps"][7] = json!({ "kind": "deliver_nli", "to": 1 });
    let e = load(&v).unwrap_err();
    let TraceError::Unresolved { path, matching, .. } = &e else {
        panic!("{e:?}");
    };
    assert_eq!(path, "steps[7]");
    assert_eq!(matching.len(), 2);
    let listed = pasted_steps(&e.to_string());
    assert_eq!(&listed, matching);
    let epochs: Vec<u8> = listed
        .iter()
        .map(|a| match a {
            Action::DeliverNli { msg } => msg.bucket_epoch,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(epochs, [3, 1]);
    // Pasting either resolves the step.
    v["steps"][7] = serde_json::to_value(listed[0]).unwrap();
    load(&v).expect("the pasted candidate resolves");
    let dir = tempfile::tempdir().unwrap();
    v["steps"][7] = json!({ "kind": "deliver_nli", "to": 1 });
    let (code, _, stderr) = cli(&["replay", &write(dir.path(), "amb.json", &v)]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("is ambiguous: it matches 2"), "{stderr}");
}

#[test]
fn a_pattern_that_matches_nothing_lists_the_candidates() {
    let mut v = hand_written();
    v["steps"][4] = json!({ "kind": "deliver_nli", "to": 0, "bucket_epoch": 9 });
    let e = load(&v).unwrap_err();
    let TraceError::Unresolved {
        matching,
        candidates,
        ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert!(matching.is_empty());
    assert_eq!(candidates.len(), 2, "both Nli in flight");
    assert_eq!(&pasted_steps(&e.to_string()), candidates);
    // An event pattern is matched against the front of the queue.
    let mut v = hand_written();
    v["steps"][2] = json!({ "kind": "process_event", "event": { "type": "reconcile" } });
    assert!(matches!(load(&v), Err(TraceError::Unresolved { .. })));
}

#[test]
fn not_enabled_names_the_exhausted_budget_and_lists_every_enabled_action() {
    let mut v = hand_written();
    v["steps"][4] = json!({ "kind": "drop_message", "type": "nli", "to": 0 });
    let e = load(&v).unwrap_err();
    let TraceError::NotEnabled {
        at,
        exhausted,
        enabled,
        ..
    } = &e
    else {
        panic!("{e:?}");
    };
    assert_eq!(at, "step 5");
    assert_eq!(exhausted, &["message_loss"]);
    assert_eq!(enabled.len(), 3, "two deliveries and a tick: {enabled:?}");
    let text = e.to_string();
    assert!(
        text.contains("budget `message_loss` is exhausted"),
        "{text}"
    );
    assert_eq!(&pasted_steps(&text), enabled);
    // A counted tick says which tick was refused.
    let mut v = hand_written();
    v["steps"][1]["count"] = json!(40);
    match load(&v) {
        Err(TraceError::NotEnabled { at, .. }) => assert!(at.starts_with("step 2 (tick "), "{at}"),
        other => panic!("{other:?}"),
    }
}

/// A change to the hand-written trace that makes it malformed.
type Mutation = Box<dyn Fn(&mut Value)>;

#[test]
fn every_malformed_field_is_a_typed_error_with_its_path_and_exit_2() {
    let cases: Vec<(&str, Mutation)> = vec![
        ("version", Box::new(|v| v["version"] = json!("two"))),
        ("bogus", Box::new(|v| v["bogus"] = json!(1))),
        (
            "config.servers",
            Box::new(|v| v["config"]["servers"] = json!(0)),
        ),
        ("bugs[0]", Box::new(|v| v["bugs"] = json!(["no-such-bug"]))),
        ("steps", Box::new(|v| v["steps"] = json!({}))),
        ("steps[0]", Box::new(|v| v["steps"][0] = json!(7))),
        (
            "steps[0].kind",
            Box::new(|v| v["steps"][0]["kind"] = json!("fly")),
        ),
        (
            "steps[0].bogus",
            Box::new(|v| v["steps"][0]["bogus"] = json!(1)),
        ),
        ("steps[4].to", Box::new(|v| v["steps"][4]["to"] = json!(9))),
        (
            "steps[4].to",
            Box::new(|v| v["steps"][4]["to"] = json!("s0")),
        ),
        (
            "steps[4].isr[1]",
            Box::new(|v| v["steps"][4]["isr"] = json!([0, 0])),
        ),
        (
            "steps[4].msg",
            Box::new(|v| v["steps"][4] = json!({"kind": "deliver_nli", "msg": 3})),
        ),
        (
            "steps[4].to",
            Box::new(|v| v["steps"][4]["msg"] = json!({})),
        ),
        (
            "steps[5].count",
            Box::new(|v| v["steps"][5]["count"] = json!(2)),
        ),
        (
            "steps[1].count",
            Box::new(|v| v["steps"][1]["count"] = json!(0)),
        ),
        (
            "steps[1].count",
            Box::new(|v| v["steps"][1]["count"] = json!(-1)),
        ),
        (
            "steps[0].fail_store_op",
            Box::new(|v| v["steps"][0]["fail_store_op"] = json!(0)),
        ),
        (
            "steps[2].event.type",
            Box::new(|v| v["steps"][2]["event"] = json!({"type": "nap"})),
        ),
        (
            "steps[0].expect.overall",
            Box::new(|v| v["steps"][0]["expect"]["overall"] = json!("DONE")),
        ),
        (
            "steps[0].expect.colour",
            Box::new(|v| v["steps"][0]["expect"]["colour"] = json!(1)),
        ),
        (
            "steps[0].expect.buckets.x",
            Box::new(|v| v["steps"][0]["expect"]["buckets"] = json!({"x": {}})),
        ),
        (
            "steps[0].expect.buckets.3",
            Box::new(|v| v["steps"][0]["expect"]["buckets"] = json!({"3": {}})),
        ),
        (
            "steps[0].expect.buckets.0.isr[0]",
            Box::new(|v| v["steps"][0]["expect"]["buckets"]["0"]["isr"] = json!([5])),
        ),
        (
            "steps[0].expect.sent[0].type",
            Box::new(|v| v["steps"][0]["expect"]["sent"][0]["type"] = json!("ping")),
        ),
        (
            "steps[0].expect.reply",
            Box::new(|v| v["steps"][0]["expect"]["reply"] = json!("Yes")),
        ),
        (
            "steps[0].expect",
            Box::new(|v| v["steps"][0]["expect"] = json!([])),
        ),
        (
            "expect.task.status",
            Box::new(|v| v["expect"]["task"]["status"] = json!(1)),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    for (want, mutate) in &cases {
        let mut v = hand_written();
        mutate(&mut v);
        assert_eq!(&invalid_path(&v), want, "{v}");
        let (code, _, stderr) = cli(&["replay", &write(dir.path(), "bad.json", &v)]);
        assert_eq!(code, 2, "{want}: {stderr}");
        assert!(stderr.contains(&format!("`{want}`")), "{want}: {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
    // Not JSON at all, and an unsupported version.
    assert!(matches!(
        Trace::from_json("{ not json"),
        Err(TraceError::Invalid { .. })
    ));
    let mut v = hand_written();
    v["version"] = json!(3);
    assert!(matches!(load(&v), Err(TraceError::Version(3))));
}

#[test]
fn the_cli_renders_steps_as_trace_json_and_spec_vocabulary() {
    let (code, stdout, _) = cli(&["replay", HAND_WRITTEN]);
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains(r#"   sent {"type":"nli","to":1,"bucket":0,"replicas":[1],"leader":1,"#),
        "{stdout}"
    );
    assert!(stdout.contains("b0 TIMEOUT, tracked"), "{stdout}");
    assert!(stdout.contains("reply Accepted(1)"), "{stdout}");
    // Every line with a message carries JSON a trace can take back.
    for line in stdout.lines().filter(|l| l.starts_with("   sent ")) {
        serde_json::from_str::<rebalance_model::Message>(&line[8..]).expect(line);
    }
    let (code, stdout, _) = cli(&["check", "--config", "tiny", "--bug", "timeout-completes"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.contains("VIOLATED, shortest counterexample"),
        "{stdout}"
    );
    for debug_form in ["Some(", "None", "{0", "Rebalancing", "TimeoutFinal"] {
        assert!(!stdout.contains(debug_form), "`{debug_form}` in {stdout}");
    }
    assert!(stdout.contains("TIMEOUT_FINAL"), "{stdout}");
}

/// The JSON block of `doc` that follows `after`.
fn json_block_after(doc: &str, after: &str) -> Value {
    let from = doc.find(after).expect("marker") + after.len();
    let start = from + doc[from..].find("```json\n").expect("json block") + 8;
    let end = start + doc[start..].find("```").expect("end of block");
    serde_json::from_str(&doc[start..end]).expect("the block is JSON")
}

#[test]
fn the_docs_and_the_spec_show_the_shipped_hand_written_trace() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let guide = std::fs::read_to_string(root.join("docs/conformance.md")).unwrap();
    let spec = std::fs::read_to_string(root.join("spec/trace-format.md")).unwrap();
    let shipped = hand_written();
    assert_eq!(
        json_block_after(&guide, "## Writing a trace by hand"),
        shipped
    );
    assert_eq!(
        json_block_after(&spec, "The same kind of move written by hand"),
        shipped
    );
    assert!(guide.contains(
        "rebalance-conformance replay conformance/traces/hand-written-timeout-then-late-completion.json"
    ));
}

/// Every leaf and object of `v`, by a path of keys and indices.
fn paths(v: &Value, at: Vec<Value>, out: &mut Vec<Vec<Value>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let mut p = at.clone();
                p.push(json!(k));
                paths(x, p, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let mut p = at.clone();
                p.push(json!(i));
                paths(x, p, out);
            }
        }
        _ => {}
    }
}

/// The JSON pointer of a path from [`paths`].
fn pointer(path: &[Value]) -> String {
    path.iter()
        .map(|k| match k {
            Value::String(k) => format!("/{k}"),
            k => format!("/{k}"),
        })
        .collect()
}

#[test]
fn no_mutation_of_a_trace_makes_loading_panic() {
    let original = hand_written();
    let mut all = Vec::new();
    paths(&original, Vec::new(), &mut all);
    let values = [
        json!(null),
        json!(-1),
        json!(0),
        json!(1),
        json!(3),
        json!(255),
        json!(256),
        json!(1e9),
        json!("x"),
        json!("REBALANCING"),
        json!(true),
        json!([]),
        json!([1, 0]),
        json!([9, 9, 9, 9, 9, 9, 9, 9, 9]),
        json!({}),
        json!({"type": "nli"}),
    ];
    // A fixed linear congruential sequence: the same mutations on every run.
    let mut seed: u64 = 0x5eed;
    let mut next = |n: usize| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    };
    let mut refused = 0;
    for _ in 0..3000 {
        let mut v = original.clone();
        for _ in 0..1 + next(2) {
            let path = pointer(&all[next(all.len())]);
            let value = values[next(values.len())].clone();
            // A path under a value the first mutation replaced is gone.
            if let Some(slot) = v.pointer_mut(&path) {
                *slot = value;
            }
        }
        let text = v.to_string();
        let loaded = std::panic::catch_unwind(|| Trace::from_json(&text));
        match loaded {
            Err(_) => panic!("loading panicked on {text}"),
            Ok(Err(e)) => {
                refused += 1;
                assert!(!e.to_string().is_empty());
            }
            Ok(Ok(t)) => {
                let replay = t.replay().expect("a loaded trace replays");
                let _ = t.check(&replay);
            }
        }
    }
    assert!(refused > 1000, "most mutations are refused: {refused}");
}

// Scenarios that real tests need (spec/trace-format.md, "Configuration" and "Starting from a store"): a register with its own plan, a preloaded
// store, durations in ms, and clusters past 8 buckets and servers.

const CLEANUP: &str = "../conformance/traces/hand-written-cleanup-plan-after-give-up.json";
const PRELOADED: &str = "../conformance/traces/hand-written-recovery-from-preloaded-store.json";
const FLUSS_MS: &str = "../conformance/traces/hand-written-fluss-defaults-in-ms.json";

fn shipped(name: &str) -> (String, Value) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(name);
    let text = std::fs::read_to_string(&path).expect("read");
    (
        path.display().to_string(),
        serde_json::from_str(&text).expect("JSON"),
    )
}

#[test]
fn the_scenario_traces_replay_with_every_expectation_holding() {
    for name in [CLEANUP, PRELOADED, FLUSS_MS] {
        let (path, _) = shipped(name);
        let (code, stdout, stderr) = cli(&["replay", &path]);
        assert_eq!(code, 0, "{path}: {stdout}{stderr}");
        assert!(stdout.contains("5 expectations hold"), "{path}: {stdout}");
    }
}

#[test]
fn a_second_register_carries_its_cleanup_plan_into_the_stored_task() {
    let (path, _) = shipped(CLEANUP);
    let t = Trace::read(&path).expect("trace");
    let Action::Register {
        plan: Some(targets),
        ..
    } = t.steps[11]
    else {
        panic!("step 12 is the second register: {:?}", t.steps[11]);
    };
    assert_eq!(targets.len(), 1);
    assert_eq!((targets[0].bucket, targets[0].target.clone()), (0, vec![0]));
    let replay = t.replay().expect("replays");
    let task = replay.states[12].store.task.clone().expect("task 2 stored");
    assert_eq!(task.id, 2);
    // The cleanup plan starts from the union the give-up left.
    assert_eq!(
        (task.plan[0].ors.to_vec(), task.plan[0].trs.to_vec()),
        (vec![1, 0], vec![0])
    );
    // Written back out, the step still carries its plan and loads to the same trace.
    let again = Trace::from_json(&t.to_json()).expect("round trip");
    assert_eq!(again.steps, t.steps);
}

#[test]
fn a_preloaded_store_starts_the_coordinator_with_recovery() {
    let (path, _) = shipped(PRELOADED);
    let t = Trace::read(&path).expect("trace");
    let init = t.model().init_state();
    assert_eq!(
        init.store.coordinator_epoch, 2,
        "one above the stored epoch"
    );
    assert_eq!(init.coordinator.ce, 2);
    assert!(init.coordinator.recovery_pending);
    assert_eq!(init.coordinator.events.len(), 1, "Recover is queued");
    let task = init.store.task.as_ref().expect("the persisted task");
    assert_eq!((task.id, task.plan[0].new_leader), (1, 1));
    assert_eq!(init.store.buckets.assignment[0].to_vec(), vec![1, 2, 0]);
    assert_eq!(init.view(2, 0).map(|v| v.bucket_epoch), Some(1));
    assert_eq!(
        init.servers[2].last_ce, 1,
        "servers saw the last incarnation"
    );
}

#[test]
fn durations_in_ms_are_whole_ticks_or_a_typed_error() {
    let (path, v) = shipped(FLUSS_MS);
    let t = Trace::read(&path).expect("trace");
    let c = &t.config;
    assert_eq!(
        (
            c.task_timeout_ticks,
            c.max_reconcile_backoff_ticks,
            c.target_unavailable_timeout_ticks,
            c.no_progress_timeout_ticks
        ),
        (4, 10, 60, 2880)
    );
    let bad = |field: &str, value: Value| {
        let mut w = v.clone();
        w["config"][field] = value;
        w
    };
    let dir = tempfile::tempdir().unwrap();
    for (w, path, says) in [
        (
            bad("task_timeout_ms", json!(120_001)),
            "config.task_timeout_ms",
            "not a whole number of ticks",
        ),
        (
            bad("task_timeout_ticks", json!(5)),
            "config.task_timeout_ms",
            "says 5",
        ),
        (
            bad("no_progress_timeout_ms", json!(30_000u64 * 10_001)),
            "config.no_progress_timeout_ms",
            "must be 1..=10000 ticks",
        ),
        (
            bad("check_interval_ms", json!(0)),
            "config.check_interval_ms",
            "at least 1",
        ),
    ] {
        assert_eq!(invalid_path(&w), path);
        let file = write(dir.path(), "bad.json", &w);
        let (code, _, stderr) = cli(&["replay", &file]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stderr.contains(&format!("field `{path}`")), "{stderr}");
        assert!(stderr.contains(says), "{stderr}");
    }
    let mut missing = v.clone();
    missing["config"]
        .as_object_mut()
        .unwrap()
        .remove("task_timeout_ms");
    assert_eq!(invalid_path(&missing), "config.task_timeout_ticks");
}

#[test]
fn a_bad_register_plan_or_store_is_a_typed_error_with_its_path() {
    let (_, cleanup) = shipped(CLEANUP);
    let (_, preloaded) = shipped(PRELOADED);
    let with = |v: &Value, pointer: &str, value: Value| {
        let mut w = v.clone();
        *w.pointer_mut(pointer).expect(pointer) = value;
        w
    };
    for (w, path) in [
        (
            with(&cleanup, "/steps/10/plan/0/bucket", json!(3)),
            "steps[10].plan[0].bucket",
        ),
        (
            with(&cleanup, "/steps/10/plan/0/target", json!([0, 0])),
            "steps[10].plan[0].target",
        ),
        // Type errors and a missing field name the target and its field, as the
        // configuration's do (serde alone named only the plan).
        (
            with(&cleanup, "/steps/10/plan/0/bucket", json!("zero")),
            "steps[10].plan[0].bucket",
        ),
        (
            with(&cleanup, "/steps/10/plan/0/target", json!([0, "x"])),
            "steps[10].plan[0].target[1]",
        ),
        (
            with(&cleanup, "/steps/10/plan", json!([{"bucket": 0}])),
            "steps[10].plan[0]",
        ),
        (
            with(&preloaded, "/config/store/task/plan/0/ors", json!([0])),
            "config.store.task.plan[0].ors",
        ),
        (
            with(&preloaded, "/config/store/task/plan/0/old_leader", json!(2)),
            "config.store.task.plan[0].old_leader",
        ),
        (
            with(&preloaded, "/config/store/coordinator_epoch", json!(0)),
            "config.store.coordinator_epoch",
        ),
        (
            with(&preloaded, "/config/buckets/0/isr", json!([0, 3])),
            "config.buckets[0].isr[1]",
        ),
        (
            with(&preloaded, "/config/buckets/0/leader", json!(2)),
            "config.buckets[0].leader",
        ),
        (
            // A union needs a persisted task that can have left it.
            with(&preloaded, "/config/store/task", Value::Null),
            "config.buckets[0].assignment",
        ),
    ] {
        assert_eq!(invalid_path(&w), path, "{w}");
    }
    // A plan on a register needs version 2, like every other addition.
    let mut v1 = cleanup.clone();
    v1["version"] = json!(1);
    v1.as_object_mut().unwrap().remove("expect");
    v1["steps"] = json!([{"kind": "register", "plan": [{"bucket": 0, "target": [2]}]}]);
    assert_eq!(invalid_path(&v1), "steps[0].plan");
}

#[test]
fn sixteen_buckets_on_sixteen_servers_replay_past_the_inline_capacity() {
    let config = rebalance_model::Config::from_json_file(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/wide-16x16.json"),
    )
    .expect("wide config");
    assert_eq!((config.buckets.len(), config.servers), (16, 16));
    let mut too_many = serde_json::to_value(&config).unwrap();
    too_many["buckets"]
        .as_array_mut()
        .unwrap()
        .push(json!({"assignment": [0, 1, 2], "leader": 0}));
    assert_eq!(
        rebalance_model::Config::from_value(too_many)
            .unwrap_err()
            .field(),
        Some("buckets")
    );
    // Register, then always the first enabled action that is not a fault: every plan bucket
    // moves through the per-bucket lists, which hold more than they keep inline.
    let model =
        rebalance_model::RebalanceModel::new(config.clone(), rebalance_model::BugSet::none());
    let mut state = model.init_state();
    let mut steps = Vec::new();
    for _ in 0..400 {
        let mut enabled = Vec::new();
        model.enabled_actions(&state, &mut enabled);
        let Some(a) = enabled.into_iter().find(|a| {
            a.fail_store_op().is_none()
                && !matches!(
                    a,
                    Action::Cancel { .. }
                        | Action::CrashServer { .. }
                        | Action::CrashCoordinator
                        | Action::DeleteBucket { .. }
                        | Action::DropMessage { .. }
                        | Action::DuplicateMessage { .. }
                )
        }) else {
            break;
        };
        state = model.step(&state, &a).expect("enabled").0;
        steps.push(a);
    }
    let task = state.store.task.as_ref().expect("registered");
    assert_eq!(task.plan.len(), 12);
    assert_eq!(
        task.status,
        rebalance_model::TaskStatus::Completed,
        "{steps:?}"
    );
    for e in task.plan.iter() {
        let b = e.bucket as usize;
        let mut at = state.store.buckets.assignment[b].to_vec();
        let mut trs = e.trs.to_vec();
        at.sort();
        trs.sort();
        // A leader-only entry keeps its assignment's order; every entry ends led by trs[0].
        assert_eq!(at, trs, "bucket {b}");
        assert_eq!(
            state.store.buckets.lai[b].leader,
            Some(e.new_leader),
            "bucket {b}"
        );
    }
    // The same path is a trace that writes out and replays to the same final state.
    let trace = Trace::new(config, rebalance_model::BugSet::none(), steps);
    let again = Trace::from_json(&trace.to_json()).expect("reloads");
    let replay = again.replay().expect("replays");
    assert_eq!(replay.states.last(), Some(&state));
}

/// What a person writing a trace needs from its errors (issue 21): every valid field of the
/// step's kind, why a step is not enabled, the failed expectation before the step it made
/// impossible, and message lists one per line.
#[test]
fn trace_errors_say_what_a_person_writing_one_needs() {
    // A misspelt field of a register step lists the fields a register takes.
    let mut v = hand_written();
    v["steps"][0]["planx"] = json!(1);
    let e = load(&v).unwrap_err().to_string();
    assert!(
        e.contains(
            "unknown field of a `register` step; expected one of kind, fail_store_op, plan, expect"
        ),
        "{e}"
    );
    // A tick past the last one that changes anything says so.
    let mut v = hand_written();
    v["steps"][1]["count"] = json!(40);
    let e = load(&v).unwrap_err().to_string();
    assert!(e.contains("a tick here would change nothing"), "{e}");
    // A store failure beyond the step's operations says how many it makes.
    let mut v = hand_written();
    v["steps"][0]["fail_store_op"] = json!(200);
    let e = load(&v).unwrap_err().to_string();
    assert!(e.contains("so its operation 200 cannot fail"), "{e}");
}

/// A preset's name as a trace's `config` says which presets exist, and the one meant when the
/// name is a near miss; serde alone said `expected struct Config`.
#[test]
fn a_preset_name_as_the_config_lists_the_presets() {
    let mut v = hand_written();
    v["config"] = json!("ci-stor");
    assert_eq!(invalid_path(&v), "config");
    let e = load(&v).unwrap_err().to_string();
    assert!(e.contains("did you mean `ci-store`?"), "{e}");
    for name in rebalance_model::preset_names() {
        assert!(e.contains(name), "{name} not listed: {e}");
    }
    v["config"] = json!("tiny");
    let e = load(&v).unwrap_err().to_string();
    assert!(e.contains("`tiny` is a preset"), "{e}");
    assert!(e.contains("--config tiny --json"), "{e}");
    // The CLI: a usage error (exit 2) with the file and the field.
    let dir = tempfile::tempdir().unwrap();
    v["config"] = json!("ci-stor");
    let path = write(dir.path(), "named.json", &v);
    let (code, _, stderr) = cli(&["replay", &path]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("invalid trace {path}: field `config`: ")),
        "{stderr}"
    );
    assert!(stderr.contains("did you mean `ci-store`?"), "{stderr}");
}

#[test]
fn a_failed_expectation_comes_before_the_step_it_made_impossible() {
    let mut v = hand_written();
    let first_reply = v["steps"][0]["expect"]["reply"].clone();
    assert!(
        first_reply.is_string(),
        "the trace expects the register's reply"
    );
    v["steps"][0]["expect"]["reply"] = json!("Accepted(9)");
    // A step no state after the first allows: the first step again.
    let again = v["steps"][0].clone();
    v["steps"].as_array_mut().unwrap().insert(1, again);
    let e = load(&v).unwrap_err();
    let TraceError::ExpectationFailed { failure, then } = &e else {
        panic!("{e:?}");
    };
    assert!(failure.contains("steps[0].expect.reply"), "{failure}");
    assert!(matches!(
        **then,
        TraceError::NotEnabled { .. } | TraceError::Unresolved { .. }
    ));
    let text = e.to_string();
    assert!(text.find("EXPECTATION FAILED") < text.find("is not enabled").or(text.find("matches")));
    // The CLI reports it as a failed expectation (exit 1), not an invalid trace (exit 2).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, v.to_string()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .arg("replay")
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn sent_lists_that_differ_in_length_are_shown_one_message_per_line() {
    let mut v = hand_written();
    v["steps"][0]["expect"] = json!({ "sent": [{ "to": 0 }, { "to": 1 }, { "to": 1 }] });
    // The expectation fails, but no later step depends on it: the trace loads and replays.
    let t = load(&v).unwrap();
    let failures = t.check(&t.replay().unwrap());
    let text = failures[0].render("model");
    assert!(text.contains("3 messages"), "{text}");
    assert!(
        text.contains("sent expected:\n    {\"to\":0}\n    {\"to\":1}\n    {\"to\":1}\n"),
        "{text}"
    );
    assert!(text.contains("sent actual:\n    {"), "{text}");
}
