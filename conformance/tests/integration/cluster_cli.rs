//! What the `cluster` example does with a store it did not just create (issue 21): a finished
//! rebalance is reported and left alone, a `--buckets` that is not the store's is a usage
//! error, and a store path that is a regular file is named as such.

use std::process::Command;

use crate::common;
use common::{assert_says, cluster_binary, run};

fn cluster(args: &[&str]) -> (Option<i32>, String, String) {
    run(Command::new(cluster_binary()).args(args))
}

#[test]
fn a_finished_store_is_reported_and_not_registered_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let (code, out, err) = cluster(&["--buckets", "6", "--store", &store]);
    assert_eq!(code, Some(0), "{err}");
    assert_says(&out, &["status            COMPLETED"]);
    let (code, out, err) = cluster(&["--buckets", "6", "--store", &store]);
    assert_eq!(code, Some(0), "{err}");
    assert_says(
        &err,
        &["the store's rebalance has finished (Completed); nothing to do"],
    );
    assert_says(
        &out,
        &["status            COMPLETED", "inputs            0 "],
    );
}

#[test]
fn buckets_that_are_not_the_stores_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let (code, _, err) = cluster(&["--buckets", "6", "--store", &store]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = cluster(&["--buckets", "30", "--store", &store]);
    assert_eq!(code, Some(2), "{err}");
    assert_says(&err, &["--buckets 30: the store holds 6 buckets"]);
}

#[test]
fn a_store_path_that_is_a_file_is_named_so() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    std::fs::write(&file, b"x").unwrap();
    let store = format!("file:{}", file.display());
    let (code, _, err) = cluster(&["--buckets", "6", "--store", &store]);
    assert_eq!(code, Some(3), "{err}");
    assert_says(&err, &["is not a directory"]);
}

#[test]
fn a_log_of_a_finished_run_or_of_another_store_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let log = dir.path().join("run.log");
    let log = log.to_str().unwrap();
    let (code, _, err) = cluster(&["--buckets", "6", "--store", &store, "--log", log]);
    assert_eq!(code, Some(0), "{err}");
    let (code, _, err) = cluster(&["--buckets", "6", "--store", &store, "--log", log]);
    assert_eq!(code, Some(2), "{err}");
    assert_says(&err, &["ends with an end record"]);
    // A log with no end, from a store that is not this one.
    let text = std::fs::read_to_string(log).unwrap();
    let cut: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    std::fs::write(log, cut).unwrap();
    let other = format!("file:{}", dir.path().join("other").display());
    let (code, _, err) = cluster(&["--buckets", "6", "--store", &other, "--log", log]);
    assert_eq!(code, Some(2), "{err}");
    assert_says(&err, &["the log is of another store"]);
}

#[test]
fn version_and_help_exit_zero() {
    // The example's crate and version, the whole line: the crates share the workspace version.
    let (code, out, _) = cluster(&["--version"]);
    assert_eq!(code, Some(0));
    assert_eq!(
        out.trim(),
        format!("cluster (rebalance-stores {})", env!("CARGO_PKG_VERSION"))
    );
    let (code, out, _) = cluster(&["--help"]);
    assert_eq!(code, Some(0));
    assert_says(&out, &["--kill-at-store-op", "--log", "--version"]);
}

/// Every option of the example's `--help` says what it does: clap lists every flag the parser
/// takes, and a flag declared without a doc comment would stand there with nothing after it.
/// The exit codes are in the help too, since scripts depend on them.
#[test]
fn every_option_in_the_help_says_what_it_does() {
    let (code, help, _) = cluster(&["--help"]);
    assert_eq!(code, Some(0));
    let (_, options) = help.split_once("Options:").expect("an Options section");
    let options = options.split("\n\n").next().unwrap_or("");
    let mut flags = Vec::new();
    for line in options
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('-'))
    {
        // `--flag <VALUE>   what it does`: the flag and its value, then two spaces or more.
        let (flag, what) = line.split_once("  ").unwrap_or((line, ""));
        assert!(!what.trim().is_empty(), "`{flag}` says nothing: {help}");
        flags.push(flag.split_whitespace().next().unwrap_or("").to_string());
    }
    for flag in [
        "--buckets",
        "--store",
        "--log",
        "--kill-at-store-op",
        "--group-commit",
    ] {
        assert!(flags.iter().any(|f| f == flag), "{flag} not listed: {help}");
    }
    assert_says(
        &help,
        &[
            "Exit codes:",
            "0  the rebalance completed",
            "3  the store failed",
        ],
    );
}

/// A bucket count beyond the example's limit is refused at once (it would fill memory for
/// hours), naming the flag and the range.
#[test]
fn too_many_buckets_are_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    for n in ["0", "1000001"] {
        let (code, out, err) = cluster(&["--buckets", n, "--store", &store]);
        assert_eq!(code, Some(2), "{n}: {err}");
        assert_says(
            &err,
            &[&format!(
                "invalid value '{n}' for '--buckets <N>': expected 1 to 1000000"
            )],
        );
        assert!(out.is_empty(), "{out}");
    }
    assert!(!dir.path().join("store").exists(), "a store was created");
}

/// An unknown bug to plant is refused before anything runs, naming the one there is.
#[test]
fn an_unknown_planted_bug_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let (code, out, err) = cluster(&["--buckets", "4", "--store", &store, "--plant", "typo"]);
    assert_eq!(code, Some(2), "{err}");
    assert_says(
        &err,
        &["invalid value 'typo' for '--plant <BUG>': expected leader-only-any-ack"],
    );
    assert!(out.is_empty(), "{out}");
    assert!(!dir.path().join("store").exists(), "a store was created");
}

/// A crash asked for after more inputs than the run takes injects nothing, and the summary
/// says so instead of "no crash injected", which reads as none asked for.
#[test]
fn a_crash_beyond_the_run_is_reported_as_not_injected() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let (code, out, err) = cluster(&[
        "--buckets",
        "2",
        "--store",
        &store,
        "--crash-coordinator-at",
        "1000000",
    ]);
    assert_eq!(code, Some(0), "{err}");
    assert_says(
        &out,
        &[
            "recovery          no crash: the run ended after ",
            " inputs, before --crash-coordinator-at 1000000",
        ],
    );
}

/// `cluster | head` ends quietly when the reader goes: exit 141, as SIGPIPE would, and no
/// panic on stderr (it was exit 101 with a backtrace), for `cluster` and for the harness.
#[test]
fn a_closed_output_pipe_ends_the_run_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!("file:{}", dir.path().join("store").display());
    let harness = std::path::PathBuf::from(env!("CARGO_BIN_EXE_rebalance-conformance"));
    let runs: [(std::path::PathBuf, Vec<&str>); 2] = [
        (
            cluster_binary(),
            vec!["--buckets", "200", "--store", &store],
        ),
        (harness, vec!["exhaustive", "--config", "tiny"]),
    ];
    for (bin, args) in runs {
        let mut child = Command::new(&bin)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The read end closes before the run has anything to print.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(141), "{}: {stderr}", bin.display());
        assert!(!stderr.contains("panicked"), "{}: {stderr}", bin.display());
    }
}
