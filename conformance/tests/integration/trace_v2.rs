//! Version 2 traces against the manager: every shipped trace still replays, the hand-written one
//! meets its expectations on the manager, a failing expectation exits 1 with a keyed diff, and a
//! pattern that names several messages is refused with the candidates.

use crate::common;
use common::{assert_says, run};

use std::path::{Path, PathBuf};
use std::process::Command;

use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_model::Trace;
use serde_json::{json, Value};

fn here(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

const HAND_WRITTEN: &str = "traces/hand-written-timeout-then-late-completion.json";

fn hand_written() -> Value {
    serde_json::from_str(&std::fs::read_to_string(here(HAND_WRITTEN)).unwrap()).unwrap()
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let (code, stdout, stderr) =
        run(Command::new(env!("CARGO_BIN_EXE_rebalance-conformance")).args(args));
    (code.expect("exit code"), stdout, stderr)
}

fn json_files(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(here(dir))
        .expect("trace directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_shipped_trace_still_replays() {
    // The conformance traces follow the spec: the manager agrees and meets every expectation.
    let ours = json_files("traces");
    assert!(ours.len() >= 5, "{ours:?}");
    for f in &ours {
        let t = Trace::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        match replay(&t) {
            Ok(ok) => assert!(ok.failures.is_empty(), "{}: {:?}", f.display(), ok.failures),
            Err(e) => panic!("{}: {e:?}", f.display()),
        }
    }
    // The model's traces restore Fluss's own choices (bug switches): they are valid traces, and
    // the manager, which follows the spec, may part from them.
    let variants = json_files("../model/traces");
    assert!(variants.len() >= 4, "{variants:?}");
    for f in &variants {
        let t = Trace::read(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        assert!(!t.bugs.is_empty(), "{}", f.display());
        if let Err(ReplayError::Invalid(e)) = replay(&t) {
            panic!("{}: {e}", f.display());
        }
    }
}

#[test]
fn the_hand_written_trace_meets_its_expectations_on_the_manager() {
    let t = Trace::read(here(HAND_WRITTEN)).unwrap();
    let ok = replay(&t).expect("agrees");
    assert_eq!(ok.steps, 11);
    assert!(ok.failures.is_empty(), "{:?}", ok.failures);
    let (code, stdout, stderr) = cli(&["replay", here(HAND_WRITTEN).to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert_says(
        &stdout,
        &[
            "agree at all 11 steps",
            "the manager meets all 7 expectations",
        ],
    );
}

#[test]
fn a_failing_expectation_exits_1_with_a_keyed_diff_of_the_manager() {
    let mut v = hand_written();
    // The Nli of Phase B as the manager sent it, with a wrong leader, and a reply where there is
    // none.
    v["steps"][6]["expect"]["sent"][1]["leader"] = json!(0);
    v["steps"][8]["expect"]["reply"] = json!("Accepted");
    let t = Trace::from_json(&v.to_string()).unwrap();
    let ok = replay(&t).expect("model and manager still agree");
    assert_eq!(ok.failures.len(), 2, "{:?}", ok.failures);
    let d = &ok.failures[0].diffs;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].path, "steps[6].expect.sent[1].leader");
    assert_eq!(
        (d[0].expected.clone(), d[0].actual.clone()),
        (json!(0), json!(1))
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("fails.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let (code, stdout, _) = cli(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 1, "{stdout}");
    assert_says(
        &stdout,
        &[
            "EXPECTATION FAILED (manager): `steps[6].expect`",
            "steps[6].expect.sent[1].leader  0",
            r#"steps[8].expect.reply  "Accepted"  null"#,
            "the manager fails 2 of 7 expectations",
        ],
    );
}

#[test]
fn an_ambiguous_pattern_is_an_invalid_trace_that_lists_the_candidates() {
    let mut v = hand_written();
    v["steps"][8] = json!({ "kind": "deliver_nli_response", "from": 1 });
    // Server 1 answered both the Phase A and the Phase B Nli only if both were delivered.
    v["steps"].as_array_mut().unwrap().insert(
        7,
        json!({ "kind": "deliver_nli", "to": 1, "bucket_epoch": 1 }),
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ambiguous.json");
    std::fs::write(&file, v.to_string()).unwrap();
    let (code, _, stderr) = cli(&["replay", file.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
    assert_says(&stderr, &["field `steps[9]`", "is ambiguous: it matches 2"]);
    let listed: Vec<rebalance_model::Action> = stderr
        .lines()
        .filter(|l| l.starts_with("    {"))
        .map(|l| serde_json::from_str(l.trim()).expect("pasteable"))
        .collect();
    assert_eq!(listed.len(), 2, "{stderr}");
}

/// The scenario traces (spec/trace-format.md, "Configuration" and "Starting from a store"): a second register with a cleanup plan, a start on
/// a preloaded store with a persisted task mid-migration, and Fluss's durations in ms.
const SCENARIOS: [&str; 3] = [
    "traces/hand-written-cleanup-plan-after-give-up.json",
    "traces/hand-written-recovery-from-preloaded-store.json",
    "traces/hand-written-fluss-defaults-in-ms.json",
];

#[test]
fn the_scenario_traces_meet_their_expectations_on_the_manager() {
    for name in SCENARIOS {
        let path = here(name);
        let (code, stdout, stderr) = cli(&["replay", path.to_str().unwrap()]);
        assert_eq!(code, 0, "{name}: {stdout}{stderr}");
        assert!(
            stdout.contains("the manager meets all 5 expectations"),
            "{name}: {stdout}"
        );
    }
    // The manager is started on the preloaded store and recovers its task: a wrong
    // expectation about what recovery restored fails on the manager's side.
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(here(SCENARIOS[1])).unwrap()).unwrap();
    v["steps"][0]["expect"]["buckets"]["0"]["status"] = json!("REBALANCING");
    let t = Trace::from_json(&v.to_string()).unwrap();
    let ok = replay(&t).expect("model and manager still agree");
    assert_eq!(ok.failures.len(), 1, "{:?}", ok.failures);
    assert_eq!(
        ok.failures[0].diffs[0].path,
        "steps[0].expect.buckets.0.status"
    );
    assert_eq!(ok.failures[0].diffs[0].actual, json!("TIMEOUT"));
}

#[test]
fn durations_in_ms_reach_the_manager_as_ms() {
    let t = Trace::read(here(SCENARIOS[2])).unwrap();
    let c = rebalance_conformance::translate::config(&t.config);
    assert_eq!(
        (
            c.check_interval_ms,
            c.task_timeout_ms,
            c.max_reconcile_backoff_ms,
            c.target_unavailable_timeout_ms,
            c.no_progress_timeout_ms
        ),
        (30_000, 120_000, 300_000, 1_800_000, 86_400_000)
    );
}
