//! The `rebalance-conformance` command: exit codes and what it prints.

use std::path::Path;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
}

/// Runs the command with `args`: its exit code, standard output and standard error.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin().args(args).output().expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn here(p: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(p)
        .display()
        .to_string()
}

#[test]
fn hand_written_traces_replay_and_print_final_statuses() {
    let (code, stdout, _) = run(&[
        "replay",
        &here("traces/move-completes.json"),
        &here("traces/timeout-then-late-completion.json"),
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("agree at all 7 steps"), "{stdout}");
    assert!(stdout.contains("agree at all 11 steps"), "{stdout}");
    assert_eq!(stdout.matches("bucket 0: COMPLETED").count(), 2, "{stdout}");
    assert_eq!(stdout.matches("overall: COMPLETED").count(), 2, "{stdout}");
}

#[test]
fn an_action_the_model_does_not_enable_is_an_invalid_trace() {
    let (code, _, stderr) = run(&["replay", &here("tests/data/invalid-step.json")]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("step 2 is not enabled"), "{stderr}");
}

#[test]
fn a_divergence_exits_1_with_a_report_a_trace_and_the_replay_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = bin()
        .arg("replay")
        .arg("--out-dir")
        .arg(dir.path())
        .arg(here("tests/data/diverges-timeout-completes.json"))
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("DIVERGENCE at step 5: coordinator: Timeout(r1,b0)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("! coord.status: [b0=TIMEOUT_FINAL]"),
        "{stdout}"
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
    let (code, _, stderr) = run(&["exhaustive", "--config", "no-such-preset"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("unknown configuration"), "{stderr}");
    let (code, _, stderr) = run(&["exhaustive", "--config", "tiny", "--bug", "no-such-bug"]);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, _, stderr) = run(&["replay", "/no/such/file.json"]);
    assert_eq!(code, Some(2), "{stderr}");
}

#[test]
fn exhaustive_reports_states_edges_and_rate() {
    let (code, stdout, _) = run(&["exhaustive", "--config", "tiny", "--coverage"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("agree on every edge"), "{stdout}");
    assert!(stdout.contains("edges/s"), "{stdout}");
    assert!(stdout.contains("rules exercised:"), "{stdout}");
}
