//! The Python example driver as a relay (`conformance/examples/driver.py --relay`, standard
//! library only): the harness's `--sut` runs it in front of `rebalance-manager-stdio`, so that
//! every line of a run is decoded and re-encoded by a second implementation of
//! `spec/driver-protocol.md`'s messages, written from that document alone. Every shipped trace
//! and suite passes through it, and a walk of `tiny` (the only traffic with snapshots); the
//! relay's `--stats` prove it decoded every request, input and effect kind the spec lists. A
//! line the spec does not describe exactly stops the relay with exit 1 and the line.
//!
//! CI installs python3 (`.ci/run`); without it these tests fail, they are not skipped.

use crate::common::{self, assert_says, run};
use crate::sut::{shipped_traces, stdio_binary};

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

fn driver() -> PathBuf {
    common::repo_root().join("conformance/examples/driver.py")
}

/// The interpreter `python3` runs, resolved once: a version manager's shim in front of it
/// (pyenv's is a shell script) costs a tenth of a second per start, and the replay starts one
/// relay per trace.
fn python() -> String {
    let (code, out, err) = run(Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(Stdio::null()));
    assert_eq!(
        code,
        Some(0),
        "python3 runs (install it: apt-get install python3): {err}"
    );
    let exe = out.trim().to_string();
    assert!(!exe.is_empty(), "python3 names no executable");
    exe
}

/// `word` quoted for the harness's `--sut` split and for the relay's (both POSIX words).
fn quoted(word: &Path) -> String {
    let w = word.display().to_string();
    assert!(!w.contains('\''), "a path with a single quote: {w}");
    format!("'{w}'")
}

/// The `--sut` command: the relay in front of the stdio manager, counting into `stats`.
fn relay_command(stats: &Path) -> String {
    format!(
        "{} {} --relay \"{}\" --stats {}",
        quoted(Path::new(&python())),
        quoted(&driver()),
        quoted(&stdio_binary()),
        quoted(stats)
    )
}

type Counts = BTreeMap<String, BTreeMap<String, u64>>;

/// The relay runs' counts in `stats`, summed, and how many runs wrote them.
fn totals(stats: &Path) -> (Counts, usize) {
    let text = std::fs::read_to_string(stats).expect("the relay wrote its stats");
    let mut sum = Counts::new();
    let mut runs = 0;
    for line in text.lines() {
        runs += 1;
        let run: Counts = serde_json::from_str(line).expect("a stats line");
        for (group, counts) in run {
            for (kind, n) in counts {
                *sum.entry(group.clone())
                    .or_default()
                    .entry(kind)
                    .or_default() += n;
            }
        }
    }
    (sum, runs)
}

fn render(counts: &Counts) -> String {
    counts
        .iter()
        .map(|(group, c)| {
            let kinds: Vec<String> = c.iter().map(|(k, n)| format!("{k} {n}")).collect();
            format!("{group}: {}", kinds.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn spec() -> String {
    std::fs::read_to_string(common::repo_root().join("spec/driver-protocol.md")).expect("spec")
}

/// The request kinds the spec lists: every `{"op": "NAME"` of its "Lines" table.
fn spec_ops() -> BTreeSet<String> {
    let spec = spec();
    let ops: BTreeSet<String> = spec
        .split(r#"| `{"op": ""#)
        .skip(1)
        .map(|rest| rest.split('"').next().expect("a name").to_string())
        .collect();
    assert!(ops.len() >= 9, "{ops:?}");
    ops
}

/// The names in the first column of the table under `heading` (`| `a`, `b` | ...`).
fn spec_table(heading: &str) -> BTreeSet<String> {
    let spec = spec();
    let start = spec.find(heading).unwrap_or_else(|| panic!("{heading}"));
    let mut names = BTreeSet::new();
    for line in spec[start + heading.len()..].lines().skip(1) {
        if line.starts_with('#') {
            break;
        }
        let Some(row) = line.strip_prefix("| `") else {
            continue;
        };
        let first = row.split(" |").next().expect("a cell");
        names.extend(
            format!("`{first}")
                .split(", ")
                .map(|n| n.trim_matches('`').to_string()),
        );
    }
    assert!(!names.is_empty(), "{heading}");
    names
}

fn kinds(counts: &Counts, group: &str) -> BTreeSet<String> {
    counts
        .get(group)
        .map(|c| c.keys().cloned().collect())
        .unwrap_or_default()
}

/// The requests only a walk sends: its branch points (spec, "Walks: branch points are
/// snapshots"); `replay --sut` needs none.
const WALK_ONLY: [&str; 3] = ["snapshot", "restore", "release"];

#[test]
fn every_shipped_trace_and_suite_agrees_through_the_python_relay() {
    let files = shipped_traces();
    let suites = files
        .iter()
        .filter(|f| {
            f.parent()
                .and_then(Path::parent)
                .is_some_and(|p| p.ends_with("suite"))
        })
        .count();
    assert!(suites >= 110, "{suites} suite traces");
    let dir = tempfile::tempdir().expect("tempdir");
    let stats = dir.path().join("stats.jsonl");
    let started = Instant::now();
    let (code, stdout, stderr) = run(Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
        .args(["replay", "--sut", &relay_command(&stats)])
        .args(&files));
    let took = started.elapsed();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.matches("model and manager agree at all").count(),
        files.len(),
        "{stdout}"
    );
    let (counts, runs) = totals(&stats);
    // One relay per trace, each of which decoded its whole session.
    assert_eq!(runs, files.len());
    println!(
        "{} traces ({suites} of the suites) through the relay in {:.1} s:\n{}",
        files.len(),
        took.as_secs_f64(),
        render(&counts)
    );
    let replayed: BTreeSet<String> = spec_ops()
        .into_iter()
        .filter(|op| !WALK_ONLY.contains(&op.as_str()))
        .collect();
    assert_eq!(kinds(&counts, "requests"), replayed, "{}", render(&counts));
    assert_eq!(kinds(&counts, "inputs"), spec_table("### Inputs"));
    assert_eq!(kinds(&counts, "effects"), spec_table("### Effects"));
    // `refused` answers a start on a store the implementation cannot start from, which no
    // shipped trace has; `error` would have ended the run.
    assert_eq!(
        kinds(&counts, "responses"),
        ["done", "effects", "hello", "state"]
            .map(String::from)
            .into()
    );
    for event in ["timeout", "reconcile", "finalize", "recover"] {
        assert!(
            counts["events"].contains_key(event),
            "{event}: {}",
            render(&counts)
        );
    }
    for reply in ["accepted", "store_error", "rejected_invalid_plan"] {
        assert!(
            counts["replies"].contains_key(reply),
            "{reply}: {}",
            render(&counts)
        );
    }
}

#[test]
fn a_walk_of_tiny_agrees_through_the_python_relay_with_its_snapshots() {
    let dir = tempfile::tempdir().expect("tempdir");
    let stats = dir.path().join("stats.jsonl");
    let started = Instant::now();
    let (code, stdout, stderr) = run(Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
        .args([
            "exhaustive",
            "--config",
            "tiny",
            "--sut",
            &relay_command(&stats),
        ]));
    let took = started.elapsed();
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    assert_says(&stdout, &["agree on every edge: 366 states, 930 edges"]);
    let (counts, runs) = totals(&stats);
    assert_eq!(runs, 1);
    println!(
        "tiny through the relay in {:.1} s:\n{}",
        took.as_secs_f64(),
        render(&counts)
    );
    for op in WALK_ONLY {
        assert!(
            counts["requests"].get(op) > Some(&0),
            "{op}: {}",
            render(&counts)
        );
    }
}

/// The relay on `input` in front of `child` (a command for the relay to split): its exit code,
/// stdout and stderr.
fn relay_session(child: &str, input: &[&str]) -> (Option<i32>, String, String) {
    let mut relay = Command::new(python())
        .arg(driver())
        .args(["--relay", child])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the relay starts");
    let mut stdin = relay.stdin.take().expect("stdin");
    // Ignore a broken pipe: the relay stops reading at an error.
    let _ = stdin.write_all((input.join("\n") + "\n").as_bytes());
    drop(stdin);
    let out = relay.wait_with_output().expect("the relay exits");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const HELLO: &str = r#"{"op":"hello","protocol":"rebalance-driver","version":2}"#;

#[test]
fn the_relay_stops_at_a_line_the_spec_does_not_describe() {
    let stdio = quoted(&stdio_binary());
    // A request with a field the spec does not list: never forwarded.
    let (code, stdout, stderr) = relay_session(
        &stdio,
        &[HELLO, r#"{"op":"state","why":1}"#, r#"{"op":"state"}"#],
    );
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.lines().count(),
        1,
        "only the hello was answered: {stdout}"
    );
    assert_says(
        &stderr,
        &[
            "request line 2 is not a request of spec/driver-protocol.md: field `why`: unknown field",
            r#"the line: {"op":"state","why":1}"#,
        ],
    );

    // A response of the wrong kind, from an implementation that answers `done` to everything.
    let done = r#"sh -c 'while read -r l; do echo "{\"done\":\"snapshot\"}"; done'"#;
    let (code, stdout, stderr) = relay_session(done, &[HELLO]);
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_eq!(stdout, "", "nothing relayed");
    assert_says(
        &stderr,
        &[
            "the implementation's answer to request line 1 is not the response \
             spec/driver-protocol.md calls for: field `done`: a `done` response to `hello`; \
             expected `hello` or `error`",
            r#"the answer: {"done":"snapshot"}"#,
        ],
    );

    // A response of the right kind with a value the spec does not have, named by its path.
    let later = r#"sh -c 'read -r l; echo "{\"hello\":{\"protocol\":\"rebalance-driver\",\"version\":2,\"implementation\":\"x\"}}"; read -r l; echo "{\"effects\":[{\"type\":\"enqueue\",\"event\":{\"type\":\"later\"}}]}"'"#;
    let (code, stdout, stderr) = relay_session(
        later,
        &[
            HELLO,
            r#"{"op":"input","now_ms":0,"input":{"type":"tick"}}"#,
        ],
    );
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert_says(
        &stderr,
        &[
            "field `effects[0].event.type`: unknown value \"later\"; expected one of timeout, \
           reconcile, finalize, recover",
        ],
    );

    // An `error` line is a response of the protocol: relayed, then the relay ends with exit 2,
    // as the implementation did.
    let (code, stdout, stderr) = relay_session(&stdio, &[HELLO, r#"{"op":"state"}"#]);
    assert_eq!(code, Some(2), "{stdout}\n{stderr}");
    assert_says(
        &stdout,
        &[r#"{"error":{"path":"op","message":"`state` before a successful `start`"}}"#],
    );
}
