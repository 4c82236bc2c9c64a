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
    // A design the manager does not implement is refused, not walked into a divergence.
    let design = here("../model/configs/design-planned-leader-crash.json");
    let (code, _, stderr) = cli(&["exhaustive", "--config", &design]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`planned_leader` is a design the manager does not implement"),
        "{stderr}"
    );
    // So is the model's abstract rest of a plan, whose buckets send nothing.
    let rest = here("../model/configs/rest-rf2-recovery.json");
    let (code, _, stderr) = cli(&["exhaustive", "--config", &rest]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("`abstract_buckets` models the rest of a plan"),
        "{stderr}"
    );
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
        &["validate", "log", "--max-hidden", "0"],
        &["validate", "log", "--max-hidden", "65"],
        // A step timeout of 0 ms killed every implementation at its handshake.
        &[
            "replay",
            "t.json",
            "--sut",
            "true",
            "--step-timeout-ms",
            "0",
        ],
        &[
            "replay",
            "t.json",
            "--sut",
            "true",
            "--step-timeout-ms",
            "86400001",
        ],
    ] {
        let (code, stdout, stderr) = cli(args);
        assert_eq!(code, Some(2), "{args:?}");
        assert!(stderr.contains("is not in 1..="), "{args:?}: {stderr}");
        let flag = args[args.len() - 2];
        assert!(
            stderr.contains(flag),
            "{args:?}: {flag} not named: {stderr}"
        );
        assert!(stdout.is_empty(), "{args:?}: did work before refusing");
    }
    // clap writes an open-ended u64 range as `1..18446744073709551615`.
    let (code, _, stderr) = cli(&["validate", "log", "--max-states", "0"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(&stderr, &["--max-states", "0 is not in 1.."]);
    // Flags that only mean something with --sut are refused without it, or against it, rather
    // than ignored: a step timeout with no implementation to time, and several threads for a
    // walk that drives one process.
    let (code, stdout, stderr) = cli(&["replay", "t.json", "--step-timeout-ms", "5"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(&stderr, &["--sut <COMMAND>"]);
    assert!(stdout.is_empty(), "{stdout}");
    let (code, stdout, stderr) = cli(&[
        "exhaustive",
        "--config",
        "tiny",
        "--sut",
        "true",
        "--threads",
        "2",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(&stderr, &["--threads 2", "single-threaded"]);
    assert!(stdout.is_empty(), "{stdout}");
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

/// `--version` answers after every subcommand too, where a user types it, and each
/// subcommand's help lists it.
#[test]
fn every_subcommand_answers_version() {
    let (_, help, _) = cli(&["--help"]);
    let listed = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no Commands section: {help}"));
    // A command's name starts its line; the validate command's description wraps onto
    // indented lines of its own.
    let subs: Vec<&str> = listed
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .collect();
    assert_eq!(
        subs,
        ["replay", "exhaustive", "random", "validate", "spoil"],
        "{help}"
    );
    for sub in subs {
        let (code, stdout, stderr) = cli(&[sub, "--version"]);
        assert_eq!(code, Some(0), "{sub}: {stderr}");
        assert_eq!(
            stdout.trim(),
            format!("rebalance-conformance-{sub} {}", env!("CARGO_PKG_VERSION"))
        );
        let (code, help, _) = cli(&[sub, "--help"]);
        assert_eq!(code, Some(0), "{sub}");
        assert!(help.contains("-V, --version"), "{sub}: {help}");
    }
}

/// A log of the manager along a kept trace, written to `dir`, and its text.
fn manager_log(dir: &Path, name: &str) -> (String, String) {
    let trace = rebalance_model::Trace::read(here("traces/timeout-then-late-completion.json"))
        .expect("kept trace");
    let mut c = trace.config.clone();
    c.collect_dead_messages = false;
    let model = rebalance_model::RebalanceModel::new(c, rebalance_model::BugSet::none());
    let text = rebalance_conformance::validate::record::log_of(&model, &trace.steps).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, &text).unwrap();
    (path.display().to_string(), text)
}

#[test]
fn validate_exits_0_1_2_and_3_as_its_help_says() {
    let (code, help, _) = cli(&["validate", "--help"]);
    assert_eq!(code, Some(0));
    assert_says(
        &help,
        &[
            "Exit 0",
            "1 a record no model path explains",
            "3 undecided",
            "--max-hidden",
        ],
    );

    let dir = tempfile::tempdir().expect("tempdir");
    let (good, text) = manager_log(dir.path(), "good.log");
    let (code, stdout, _) = cli(&["validate", &good]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_says(&stdout, &["valid: the model explains every record"]);

    // A leader epoch raised in the first record that sends an Nli: rejected there, with the
    // closest step's keyed diff.
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let at = lines
        .iter()
        .position(|l| l.contains("\"send_nli\""))
        .unwrap();
    lines[at] = lines[at].replacen("\"leader_epoch\":0", "\"leader_epoch\":9", 1);
    let bad = dir.path().join("bad.log");
    std::fs::write(&bad, lines.join("\n") + "\n").unwrap();
    let (code, stdout, _) = cli(&["validate", &bad.display().to_string()]);
    assert_eq!(code, Some(1), "{stdout}");
    assert_says(
        &stdout,
        &[
            &format!("not explained: line {}", at + 1),
            "closest candidate",
            "!",
        ],
    );

    // A malformed field: exit 2 with the line and the field path.
    let malformed = dir.path().join("malformed.log");
    let head = text.lines().next().unwrap();
    std::fs::write(
        &malformed,
        format!("{head}\n{{\"type\":\"start\",\"now_ms\":0,\"coordinator_epoch\":\"one\",\"live\":[],\"effects\":[]}}\n"),
    )
    .unwrap();
    let (code, _, stderr) = cli(&["validate", &malformed.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(&stderr, &["line 2", "coordinator_epoch"]);

    // A type error in the header's model configuration: one field path, under `model`.
    let bad_model = dir.path().join("bad-model.log");
    let mut header: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    header["model"]["buckets"][0]["leader"] = serde_json::json!("zero");
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(&bad_model, format!("{header}\n{}\n", rest.join("\n"))).unwrap();
    let (code, _, stderr) = cli(&["validate", &bad_model.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(
        &stderr,
        &["line 1: field `model.buckets[0].leader`: invalid type: string \"zero\""],
    );

    // No model in the header and no --config: exit 2, saying so.
    let bare = dir.path().join("bare.log");
    let rest: Vec<&str> = text.lines().skip(1).collect();
    std::fs::write(
        &bare,
        format!(
            "{{\"log\":\"rebalance-coordinator-log\",\"version\":2}}\n{}\n",
            rest.join("\n")
        ),
    )
    .unwrap();
    let (code, _, stderr) = cli(&["validate", &bare.display().to_string()]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(&stderr, &["--config"]);

    // A response needs a hidden step (its Nli delivered); with one state allowed per search,
    // none is found and the bound is to blame: undecided, exit 3.
    let (code, stdout, _) = cli(&["validate", &good, "--max-states", "1"]);
    assert_eq!(code, Some(3), "{stdout}");
    assert_says(&stdout, &["undecided", "--max-states"]);

    // A torn last line is reported and ignored.
    let torn = dir.path().join("torn.log");
    std::fs::write(&torn, format!("{text}{{\"type\":\"inp")).unwrap();
    let (code, stdout, stderr) = cli(&["validate", &torn.display().to_string()]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert_says(&stderr, &["is torn"]);
}

/// `--group-commit N`: the same replay and walk with the manager on the batching adapter, its
/// settings printed; refused with `--sut` and with more than one thread.
#[test]
fn group_commit_replays_and_walks_and_says_how_it_batches() {
    let (code, stdout, _) = cli(&[
        "replay",
        "--group-commit",
        "2",
        "--flush-seed",
        "9",
        &here("traces/move-completes.json"),
    ]);
    assert_eq!(code, Some(0), "{stdout}");
    assert_says(
        &stdout,
        &[
            "group commit: batches of at most 2 writes, a flush after a step with chance 300/1000, flush seed 9",
            "agree at all 7 steps",
        ],
    );
    let (code, stdout, stderr) = cli(&[
        "exhaustive",
        "--config",
        "ci-leader",
        "--group-commit",
        "1000",
        "--flush-per-mille",
        "0",
    ]);
    assert_eq!(code, Some(0), "{stderr}");
    assert_says(
        &stdout,
        &["ci-leader: model and manager agree on every edge: 10178 states, 33223 edges"],
    );
    let (code, _, stderr) = cli(&[
        "exhaustive",
        "--config",
        "ci-leader",
        "--group-commit",
        "3",
        "--threads",
        "2",
    ]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_says(
        &stderr,
        &["--threads 2: a walk with --group-commit is single-threaded"],
    );
    let (code, _, stderr) = cli(&["replay", "--group-commit", "2", "--sut", "true", "x.json"]);
    assert_eq!(code, Some(2), "{stderr}");
}
