//! Out-of-process conformance (`spec/driver-protocol.md`): the implementation under
//! test we ship, `rebalance-manager-stdio`, gets the same verdicts as the manager in process on the
//! shipped traces and suites (their `expect` blocks included), on a CI preset's every edge and on the bug switches' counterexamples; a
//! malformed, crashing or hanging implementation is a clear error naming the step and the line.
//!
//! The stdio binary is found next to this test's target directory (`cargo test --workspace`
//! builds it, as `rebalance-manager-stdio` has tests of its own), or at
//! `$REBALANCE_MANAGER_STDIO`.

use crate::common;
use common::{assert_says, run};

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use rebalance_conformance::exhaustive::{walk_bounded, walk_sut, WalkError};
use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_conformance::sut::driver::{DriverError, SutCommand};
use rebalance_conformance::sut::replay::{replay as replay_sut, SutReplayError};
use rebalance_model::check::shortest::bug_counterexample;
use rebalance_model::{preset, Bug, BugSet, RebalanceModel, Trace};

pub fn stdio_binary() -> PathBuf {
    if let Some(p) = std::env::var_os("REBALANCE_MANAGER_STDIO") {
        return PathBuf::from(p);
    }
    // target/<profile>/deps/sut-<hash> -> target/<profile>/rebalance-manager-stdio
    let exe = std::env::current_exe().expect("test executable");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let bin = dir.join(format!(
        "rebalance-manager-stdio{}",
        std::env::consts::EXE_SUFFIX
    ));
    assert!(
        bin.exists(),
        "{} is missing: run `cargo test --workspace` or `cargo build -p rebalance-manager-stdio` \
         with the same profile, or set REBALANCE_MANAGER_STDIO",
        bin.display()
    );
    bin
}

fn stdio(timeout: Duration) -> SutCommand {
    SutCommand {
        text: "rebalance-manager-stdio".into(),
        argv: vec![stdio_binary().display().to_string()],
        step_timeout: timeout,
    }
}

fn shell(script: &str, timeout: Duration) -> SutCommand {
    SutCommand {
        text: format!("sh -c '{script}'"),
        argv: vec!["sh".into(), "-c".into(), script.into()],
        step_timeout: timeout,
    }
}

fn here(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// `conformance/traces/*.json` and every trace of the shipped suites,
/// `conformance/suite/<preset>/*.json` (not the manifests, `suite.json`).
pub fn shipped_traces() -> Vec<PathBuf> {
    let mut files = json_files(&here("traces"));
    let mut presets: Vec<PathBuf> = std::fs::read_dir(here("suite"))
        .expect("conformance/suite")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    presets.sort();
    for preset in presets {
        files.extend(
            json_files(&preset)
                .into_iter()
                .filter(|p| p.file_name().is_some_and(|n| n != "suite.json")),
        );
    }
    files
}

/// A shell pipeline that passes the first `n` request lines to the stdio manager, one at a
/// time (`head` would hold them back until it had all `n`), then ends its input.
fn first_lines(n: usize) -> String {
    format!(
        r#"i=0; while [ $i -lt {n} ] && IFS= read -r l; do printf "%s\n" "$l"; i=$((i+1)); done | '{}'"#,
        stdio_binary().display()
    )
}

const LONG: Duration = Duration::from_secs(30);

#[test]
fn shipped_traces_and_suites_agree_through_the_stdio_manager_as_in_process() {
    let files = shipped_traces();
    assert!(files.len() >= 13 + 89, "{} traces", files.len());
    for file in files {
        let trace = Trace::read(&file).expect("a valid trace");
        let here = replay(&trace).expect("in process, the shipped traces agree");
        let there = replay_sut(&trace, &stdio(LONG))
            .unwrap_or_else(|e| panic!("{}: {e:?}", file.display()));
        assert_eq!(there.steps, here.steps, "{}", file.display());
        assert_eq!(there.progress, here.progress, "{}", file.display());
        // The traces' `expect` blocks are checked on the implementation's projection too.
        assert!(here.failures.is_empty(), "{}", file.display());
        assert!(there.failures.is_empty(), "{}", file.display());
        assert_eq!(
            there.coverage.render(),
            here.coverage.render(),
            "{}",
            file.display()
        );
    }
}

#[test]
fn every_edge_of_ci_leader_agrees_through_the_stdio_manager_as_in_process() {
    let model = RebalanceModel::new(preset("ci-leader").expect("preset"), BugSet::default());
    let here = walk_bounded(&model, u64::MAX, 0, |_| {}).expect("in process, ci-leader agrees");
    let there = walk_sut(&model, &stdio(LONG), 0, |_| {}).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(there.complete);
    assert_eq!(there.states, 11_940);
    assert_eq!(
        (there.states, there.edges, there.max_depth),
        (here.states, here.edges, here.max_depth)
    );
    assert_eq!(there.coverage.render(), here.coverage.render());
    println!(
        "ci-leader: {} edges; in process {:.0} edges/s, through rebalance-manager-stdio {:.0} edges/s",
        there.edges,
        here.edges_per_second(),
        there.edges_per_second()
    );
}

/// The bug switches of `tests/teeth.rs`: the manager diverges from each buggy model's shortest
/// counterexample at the same step, with the same summary, through the stdio manager.
#[test]
fn bug_switch_counterexamples_diverge_through_the_stdio_manager_where_in_process_does() {
    let rows: &[(Bug, &str)] = &[
        (Bug::TimeoutCompletes, "tiny"),
        (Bug::FinalNotPersisted, "ci-store"),
        (Bug::CancelBestEffort, "ci-store"),
        (Bug::EpochBumpOnRetry, "tiny"),
        (Bug::NoRequestFencing, "ci-messages"),
    ];
    for &(bug, preset_name) in rows {
        let trace = bug_counterexample(preset(preset_name).expect("preset"), bug)
            .unwrap_or_else(|| panic!("{bug}: no counterexample"));
        let Err(ReplayError::Divergence { step, mismatch }) = replay(&trace) else {
            panic!("{bug}: in process, the counterexample does not diverge");
        };
        match replay_sut(&trace, &stdio(LONG)) {
            Err(SutReplayError::Replay(ReplayError::Divergence {
                step: there,
                mismatch: m,
            })) => {
                assert_eq!(there, step, "{bug}");
                assert_eq!(m.summary, mismatch.summary, "{bug}");
                assert_eq!(m.manager, mismatch.manager, "{bug}");
            }
            other => panic!("{bug}: through the stdio manager: {other:?}"),
        }
    }
}

/// The implementation's failure in a replay of `move-completes.json`: the step and the error.
fn replay_move_completes(sut: &SutCommand) -> Failed {
    let trace = Trace::read(here("traces/move-completes.json")).expect("trace");
    match replay_sut(&trace, sut) {
        Ok(_) => panic!("the replay agreed"),
        Err(SutReplayError::Replay(e)) => panic!("not a failure of the implementation: {e:?}"),
        Err(SutReplayError::Sut { step, error }) => Failed { step, error },
    }
}

#[derive(Debug)]
struct Failed {
    step: usize,
    error: Box<DriverError>,
}

#[test]
fn garbage_instead_of_hello_is_a_malformed_line_naming_the_request_and_the_line() {
    let e = replay_move_completes(&shell("read l; echo garbage; sleep 5", LONG));
    assert_eq!(e.step, 0, "{e:?}");
    let DriverError::Malformed { request, line, .. } = e.error.as_ref() else {
        panic!("{e:?}")
    };
    assert!(request.contains(r#""op":"hello""#), "{request}");
    assert_eq!(line, "garbage");
}

const HELLO: &str =
    r#"{"hello":{"protocol":"rebalance-driver","version":2,"implementation":"fake"}}"#;

#[test]
fn a_malformed_effect_is_named_by_its_field_path() {
    let script = format!(
        r#"read l; echo '{HELLO}'; read l; echo '{{"effects":[{{"type":"enqueue","event":{{"type":"later"}}}}]}}'; sleep 5"#
    );
    let e = replay_move_completes(&shell(&script, LONG));
    assert_eq!(e.step, 0, "{e:?}");
    assert!(matches!(*e.error, DriverError::Malformed { .. }), "{e:?}");
    let error = &e.error;
    let text = error.to_string();
    assert_says(&text, &["`effects[0].event.type`", r#""op":"start""#]);
}

#[test]
fn another_protocol_version_is_refused_at_the_handshake() {
    let script = r#"read l; echo '{"hello":{"protocol":"rebalance-driver","version":9,"implementation":"fake"}}'; sleep 5"#;
    let e = replay_move_completes(&shell(script, LONG));
    assert!(
        e.step == 0 && matches!(*e.error, DriverError::Unexpected { .. }),
        "{e:?}"
    );
}

#[test]
fn an_implementation_that_exits_midway_is_named_at_its_step() {
    // hello (1), start and state (2, 3), the Recover input and state (4, 5), then step 1's
    // register (6): the manager answers it and exits at the end of its input.
    let e = replay_move_completes(&shell(&first_lines(6), LONG));
    assert_eq!(e.step, 1, "{e:?}");
    let DriverError::Exited { request, .. } = e.error.as_ref() else {
        panic!("{e:?}")
    };
    assert_eq!(request, r#"{"op":"state"}"#);
}

#[test]
fn an_implementation_that_exits_at_once_reports_its_status_and_stderr() {
    let e = replay_move_completes(&shell("echo broken >&2; exit 3", LONG));
    assert_eq!(e.step, 0, "{e:?}");
    assert!(matches!(*e.error, DriverError::Exited { .. }), "{e:?}");
    let error = &e.error;
    let text = error.to_string();
    assert_says(&text, &["exit status: 3", "broken"]);
}

#[test]
fn a_hanging_implementation_times_out_at_its_step_and_is_killed_by_its_id() {
    // Serves up to step 1's register, then hangs (exec: the child itself sleeps).
    let script = format!("{}; exec sleep 60", first_lines(6));
    let sut = shell(&script, Duration::from_millis(500));
    let started = Instant::now();
    let e = replay_move_completes(&sut);
    assert!(started.elapsed() < Duration::from_secs(10), "{e:?}");
    assert_eq!(e.step, 1, "{e:?}");
    let DriverError::Timeout { pid, request, .. } = e.error.as_ref() else {
        panic!("{e:?}")
    };
    assert_eq!(request, r#"{"op":"state"}"#);
    #[cfg(target_os = "linux")]
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "process {pid} still exists"
    );
    let _ = pid;
}

#[test]
fn a_walk_against_a_failing_implementation_names_the_path_to_the_step() {
    let model = RebalanceModel::new(preset("tiny").expect("preset"), BugSet::default());
    // Enough lines for the start and a few edges, then the implementation exits.
    match walk_sut(&model, &shell(&first_lines(12), LONG), 0, |_| {}) {
        Err(WalkError::Sut { steps, error }) => {
            assert!(matches!(*error, DriverError::Exited { .. }), "{error:?}");
            assert!(!steps.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

fn conformance() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
}

/// The scenario traces (spec/trace-format.md, "Configuration" and "Starting from a store") through the stdio manager: a register carrying its
/// own plan is a `register` input with that plan, a preloaded store (a persisted task
/// mid-migration) is the store handed over by `start`, and a tick of 30 s in ms; and R1's
/// refusal of invalid plans, which the stdio manager must refuse too.
#[test]
fn cli_replays_the_scenario_traces_through_the_stdio_manager() {
    let good = format!("'{}'", stdio_binary().display());
    for (name, steps, expectations) in [
        ("traces/hand-written-cleanup-plan-after-give-up.json", 14, 5),
        (
            "traces/hand-written-recovery-from-preloaded-store.json",
            7,
            5,
        ),
        ("traces/hand-written-fluss-defaults-in-ms.json", 73, 5),
        ("traces/hand-written-invalid-plan-refused.json", 3, 3),
    ] {
        let out = conformance()
            .args(["replay", "--sut", &good])
            .arg(here(name))
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{name}: {stdout}");
        assert!(
            stdout.contains(&format!("agree at all {steps} steps")),
            "{name}: {stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "the manager meets all {expectations} expectations"
            )),
            "{name}: {stdout}"
        );
    }
}

#[test]
fn cli_replays_through_the_stdio_manager_and_exits_2_on_a_bad_implementation() {
    let good = format!("'{}'", stdio_binary().display());
    let out = conformance()
        .args(["replay", "--sut", &good])
        .arg(here("traces/move-completes.json"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("agree at all 7 steps"), "{stdout}");

    let hangs = format!(
        "sh -c '{}; exec sleep 60'",
        first_lines(6).replace('\'', "")
    );
    let (code, _, stderr) = run(conformance()
        .args(["replay", "--step-timeout-ms", "300", "--sut", &hangs])
        .arg(here("traces/move-completes.json")));
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(
        &stderr,
        &[
            "failed at step 1 (client: Register)",
            r#"no answer to `{"op":"state"}` within 300 ms"#,
        ],
    );

    let out = conformance()
        .args(["exhaustive", "--config", "tiny", "--sut", "sh -c 'unclosed"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("unclosed single quote"), "{stderr}");
}
