//! The `rebalance-conformance` command: exit codes and what it prints.

mod common;
use common::{assert_says, run};

use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
}

/// Runs the command with `args`: its exit code, standard output and standard error.
fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    run(bin().args(args))
}

fn here(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

#[test]
fn hand_written_traces_replay_and_print_final_statuses() {
    let (code, stdout, _) = cli(&[
        "replay",
        &here("traces/move-completes.json"),
        &here("traces/timeout-then-late-completion.json"),
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_says(&stdout, &["agree at all 7 steps", "agree at all 11 steps"]);
    assert_eq!(stdout.matches("bucket 0: COMPLETED").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("overall: COMPLETED").count(), 2, "{stdout}");
}

#[test]
fn an_action_the_model_does_not_enable_is_an_invalid_trace() {
    let (code, _, stderr) = cli(&["replay", &here("tests/data/invalid-step.json")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("step 2 is not enabled"), "{stderr}");
}

#[test]
fn a_divergence_exits_1_with_a_report_a_trace_and_the_replay_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, stdout, _) = run(bin()
        .arg("replay")
        .arg("--out-dir")
        .arg(dir.path())
        .arg(here("tests/data/diverges-timeout-completes.json")));
    assert_eq!(code, Some(1), "{stdout}");
    assert_says(
        &stdout,
        &[
            "DIVERGENCE at step 5: coordinator: Timeout(r1,b0)",
            "! coord.status: [b0=TIMEOUT_FINAL]",
        ],
    );
    let written = dir
        .path()
        .join("divergence-diverges-timeout-completes-replay.json");
    assert!(written.exists(), "no trace at {}", written.display());
    assert!(
        stdout.contains(&format!("replay {}", written.display())),
        "{stdout}"
    );
    // The written trace is itself a valid trace that reproduces the divergence.
    let again = bin()
        .arg("replay")
        .arg("--out-dir")
        .arg(dir.path())
        .arg(&written)
        .output()
        .expect("runs");
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn bad_usage_exits_2() {
    let (code, _, stderr) = cli(&["exhaustive", "--config", "no-such-preset"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown configuration"), "{stderr}");
    let (code, _, stderr) = cli(&["exhaustive", "--config", "tiny", "--bug", "no-such-bug"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = cli(&["replay", "/no/such/file.json"]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn exhaustive_reports_states_edges_and_rate() {
    let (code, stdout, _) = cli(&["exhaustive", "--config", "tiny", "--coverage"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_says(
        &stdout,
        &["agree on every edge", "edges/s", "rules exercised:"],
    );
}

/// Numeric flags out of range are usage errors (exit 2) naming the range, and `--version`
/// answers; `--threads` is listed in `exhaustive --help`.
#[test]
fn numeric_flags_out_of_range_are_usage_errors_and_version_answers() {
    for args in [
        &["exhaustive", "--config", "tiny", "--threads", "0"][..],
        &["exhaustive", "--config", "tiny", "--threads", "100000"],
        &["random", "--cases", "0"],
        &["random", "--steps", "0"],
    ] {
        let (code, stdout, stderr) = cli(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stderr.contains("is not in 1..="), "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}: did work before refusing");
    }
    let (code, stdout, _) = cli(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        stdout.trim(),
        format!("rebalance-conformance {}", env!("CARGO_PKG_VERSION"))
    );
    let (code, stdout, _) = cli(&["exhaustive", "--help"]);
    assert_eq!(code, Some(0));
    assert!(stdout.contains("--threads"), "{stdout}");
}
