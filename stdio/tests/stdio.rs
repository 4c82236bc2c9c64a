//! The `rebalance-manager-stdio` binary: a session over its stdin and stdout, and every
//! malformed or out-of-order line answered with an error line naming the field, then exit 2.

use std::io::Write;
use std::process::{Command, Stdio};

use rebalance_manager_stdio::decode;
use rebalance_manager_stdio::wire::{Response, PROTOCOL, VERSION};

/// Runs the binary on `input`; its exit code and its answers, one per line.
fn session(input: &str) -> (Option<i32>, Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance-manager-stdio"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stdin = child.stdin.take().expect("stdin");
    // Ignore a broken pipe: the binary stops reading after an error line.
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let out = child.wait_with_output().expect("exits");
    let lines = String::from_utf8(out.stdout)
        .expect("UTF-8")
        .lines()
        .map(str::to_string)
        .collect();
    (
        out.status.code(),
        lines,
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

const HELLO: &str = r#"{"op":"hello","protocol":"rebalance-driver","version":2}"#;
const START: &str = r#"{"op":"start","config":{"task_timeout_ms":30000,"check_interval_ms":30000,"max_reconcile_backoff_ms":30000,"target_unavailable_timeout_ms":30000,"no_progress_timeout_ms":60000,"max_tracked_timed_out":1,"max_inflight":1},"store":{"coordinator_epoch":0,"task":null,"buckets":[{"bucket":0,"assignment":[0],"lai":{"leader":0,"leader_epoch":0,"isr":[0],"bucket_epoch":0,"coordinator_epoch":0},"deleted":false}]},"live":[0,1],"now_ms":0}"#;

#[test]
fn a_session_starts_registers_snapshots_and_restores() {
    let input = [
        HELLO,
        START,
        r#"{"op":"input","now_ms":0,"input":{"type":"event","event":{"type":"recover"}}}"#,
        r#"{"op":"state"}"#,
        r#"{"op":"snapshot","id":1}"#,
        r#"{"op":"input","now_ms":0,"input":{"type":"register","plan":[{"bucket":0,"ors":[0],"trs":[1],"old_leader":0,"new_leader":1}]}}"#,
        r#"{"op":"restore","id":1}"#,
        r#"{"op":"state"}"#,
        r#"{"op":"release","id":1}"#,
    ]
    .join("\n");
    let (code, lines, stderr) = session(&input);
    assert_eq!(code, Some(0), "{stderr}");
    assert_eq!(lines.len(), 9, "{lines:?}");
    let answers: Vec<Response> = lines
        .iter()
        .map(|l| decode::line(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let Response::Hello(h) = &answers[0] else {
        panic!("{}", lines[0])
    };
    assert_eq!((h.protocol.as_str(), h.version), (PROTOCOL, VERSION));
    assert_eq!(
        lines[1],
        r#"{"effects":[{"type":"enqueue","event":{"type":"recover"}}]}"#
    );
    assert_eq!(lines[2], r#"{"effects":[]}"#);
    assert_eq!(lines[4], r#"{"done":"snapshot"}"#);
    // R1 then R9: the reply first, then one Nli per live member of the union [1, 0].
    assert!(
        lines[5].starts_with(r#"{"effects":[{"type":"reply","reply":{"kind":"accepted","rid":1}},{"type":"send_nli","#),
        "{}",
        lines[5]
    );
    // Restored to before the register: the same observation, with no task in the store.
    let (Response::State(before), Response::State(after)) = (&answers[3], &answers[7]) else {
        panic!("{} / {}", lines[3], lines[7])
    };
    assert_eq!(after, before);
    assert_eq!(after.store.task, None);
    assert_eq!(after.store.coordinator_epoch, 1);
    assert_eq!(after.invariant_violation, None);
    assert_eq!(lines[8], r#"{"done":"release"}"#);
}

/// Each malformed or out-of-order request, after a valid prefix, and the path its error names.
#[test]
fn a_malformed_or_out_of_order_line_is_an_error_line_with_its_path_and_exit_2() {
    let cases: &[(&[&str], &str, &str)] = &[
        (&["not json"], "(line)", "not JSON"),
        (
            &[r#"{"op":"state"}"#],
            "op",
            "the first line must be `hello`",
        ),
        (
            &[r#"{"op":"hello","protocol":"rebalance-driver","version":3}"#],
            "version",
            "version 2",
        ),
        (
            &[HELLO, r#"{"op":"state"}"#],
            "op",
            "before a successful `start`",
        ),
        (&[HELLO, HELLO], "op", "already sent"),
        (&[HELLO, r#"{"op":"fly"}"#], "op", "unknown value \"fly\""),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":0,"input":{"type":"adjust_isr","from":0,"bucket":0,"leader_epoch":0,"bucket_epoch":0,"isr":[0,-1]}}"#,
            ],
            "input.isr[1]",
            "expected an unsigned 32-bit integer, found -1",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":0,"input":{"type":"cancel","why":1}}"#,
            ],
            "input.why",
            "unknown field",
        ),
        (
            &[HELLO, START, r#"{"op":"fail_store_op","nth":0}"#],
            "nth",
            "not in 1..=",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":18446744073709551615,"input":{"type":"tick"}}"#,
            ],
            "now_ms",
            "above the limit",
        ),
        (
            &[HELLO, START, r#"{"op":"restore","id":4}"#],
            "id",
            "no snapshot 4",
        ),
        (
            &[
                HELLO,
                r#"{"op":"start","config":{},"store":{},"live":[],"now_ms":0}"#,
            ],
            "config.task_timeout_ms",
            "missing",
        ),
        // Inputs that make no sense are refused with a typed error, not handled.
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":60000,"input":{"type":"tick"}}"#,
                r#"{"op":"input","now_ms":30000,"input":{"type":"tick"}}"#,
            ],
            "now_ms",
            "the clock never goes back",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":60000,"input":{"type":"tick"}}"#,
                r#"{"op":"restart","live":[0,1],"now_ms":0}"#,
            ],
            "now_ms",
            "the clock never goes back",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":0,"input":{"type":"server_crashed","server":7}}"#,
            ],
            "input.server",
            "server 7 is not live",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"input","now_ms":0,"input":{"type":"server_restarted","server":1}}"#,
            ],
            "input.server",
            "server 1 is already live",
        ),
        (
            &[HELLO, &START.replace(r#""isr":[0]"#, r#""isr":[0,5]"#)],
            "store.buckets[0].lai.isr",
            "server 5 is in bucket 0's ISR but not in its assignment",
        ),
        (
            &[HELLO, &START.replace(r#""leader":0,"#, r#""leader":3,"#)],
            "store.buckets[0].lai.leader",
            "server 3 leads bucket 0",
        ),
        (
            &[
                HELLO,
                START,
                r#"{"op":"snapshot","id":1}"#,
                r#"{"op":"snapshot","id":1}"#,
            ],
            "id",
            "snapshot 1 exists",
        ),
    ];
    for (lines, path, message) in cases {
        let (code, answers, stderr) = session(&lines.join("\n"));
        assert_eq!(code, Some(2), "{lines:?}: {answers:?} {stderr}");
        assert_eq!(answers.len(), lines.len(), "{lines:?}: {answers:?}");
        let last = answers.last().expect("an answer");
        let Ok(Response::Error(e)) = decode::line::<Response>(last) else {
            panic!("{lines:?}: {last}")
        };
        assert_eq!(e.path, *path, "{lines:?}: {last}");
        assert!(e.message.contains(message), "{lines:?}: {last}");
        assert!(
            stderr.contains(&format!("line {}", lines.len())),
            "{stderr}"
        );
    }
}

/// The clock may go back to the time of a restored snapshot, and no further.
#[test]
fn after_a_restore_the_restored_time_counts() {
    let input = [
        HELLO,
        START,
        r#"{"op":"snapshot","id":1}"#,
        r#"{"op":"input","now_ms":60000,"input":{"type":"tick"}}"#,
        r#"{"op":"restore","id":1}"#,
        r#"{"op":"input","now_ms":30000,"input":{"type":"tick"}}"#,
    ]
    .join("\n");
    let (code, lines, stderr) = session(&input);
    assert_eq!(code, Some(0), "{lines:?} {stderr}");
    assert_eq!(lines.len(), 6);
}

/// A line that is not UTF-8 is answered like any malformed line: an error line, exit 2.
#[test]
fn a_line_that_is_not_utf8_is_an_error_line_and_exit_2() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rebalance-manager-stdio"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let _ = stdin.write_all(format!("{HELLO}\n").as_bytes());
    let _ = stdin.write_all(b"{\"op\":\"st\xffte\"}\n");
    drop(stdin);
    let out = child.wait_with_output().expect("exits");
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stdout).expect("the answers are UTF-8");
    let last = text.lines().last().expect("an error line");
    let Ok(Response::Error(e)) = decode::line::<Response>(last) else {
        panic!("{last}")
    };
    assert_eq!(e.path, "(line)");
    assert!(e.message.contains("not UTF-8"), "{}", e.message);
}

#[test]
fn a_refused_start_is_an_answer_not_an_error() {
    let zero = START.replace(r#""check_interval_ms":30000"#, r#""check_interval_ms":0"#);
    let (code, answers, _) = session(&[HELLO, &zero].join("\n"));
    assert_eq!(code, Some(0));
    assert!(answers[1].starts_with(r#"{"refused":"#), "{}", answers[1]);
}

#[test]
fn help_and_version_exit_0_and_other_arguments_are_a_usage_error() {
    let run = |arg: &str| {
        Command::new(env!("CARGO_BIN_EXE_rebalance-manager-stdio"))
            .arg(arg)
            .output()
            .expect("runs")
    };
    let help = run("--help");
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("spec/driver-protocol.md"));
    // The usage line names every spelling the binary accepts, and each one answers.
    assert!(
        String::from_utf8_lossy(&help.stdout)
            .contains("usage: rebalance-manager-stdio [-h | --help | -V | --version]"),
        "{}",
        String::from_utf8_lossy(&help.stdout)
    );
    assert_eq!(run("-h").stdout, help.stdout);
    let version = run("--version");
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&version.stdout).trim(),
        format!("rebalance-manager-stdio {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(run("-V").stdout, version.stdout);
    let bad = run("--serve");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unexpected arguments"));
}

/// The reference implementation under test is the manager and nothing else: no dependency on
/// the model or the model checker (the manager itself has none; `.ci/run` checks that).
#[test]
fn the_binary_depends_on_the_manager_not_on_the_model() {
    let manifest = include_str!("../Cargo.toml");
    let deps = manifest
        .split("[dependencies]")
        .nth(1)
        .expect("a [dependencies] table")
        .split("\n[")
        .next()
        .unwrap_or_default();
    assert!(deps.contains("rebalance-manager"), "{deps}");
    for banned in ["rebalance-model", "stateright", "rebalance-conformance"] {
        assert!(!deps.contains(banned), "{banned} in {deps}");
    }
}

/// The example driver in another language (conformance/examples/driver.py, Python with the
/// standard library) drives this binary through a complete move, checking every answer. CI
/// installs python3 (.ci/run); without it this test fails, it is not skipped.
#[test]
fn the_python_example_driver_completes_a_move() {
    let driver = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../conformance/examples/driver.py"
    );
    let out = Command::new("python3")
        .arg(driver)
        .arg("--sut")
        .arg(env!("CARGO_BIN_EXE_rebalance-manager-stdio"))
        .output()
        .expect("python3 runs (install it: apt-get install python3)");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}{stderr}");
    assert!(
        stdout.contains("bucket 0 moved to [1, 2], led by 1"),
        "{stdout}"
    );
}
