//! `rebalance-model suite`: the traces a suite is made of, what it says it covers, its
//! determinism, and the CLI's bad-usage exits.

use crate::common;

use rebalance_model::trace::suite::{self, Goal, MANIFEST};
use rebalance_model::{preset, Trace};
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn a_suite_covers_what_it_says_with_expectations_that_hold_and_can_fail() {
    let config = preset("ci-leader").unwrap();
    let s = suite::build("ci-leader", &config);
    assert_eq!(s, suite::build("ci-leader", &config), "deterministic");
    assert_eq!(
        s.states,
        common::pinned("ci-leader"),
        "the suite is built on the reduced graph"
    );
    let all: BTreeSet<String> = Goal::all().iter().map(Goal::label).collect();
    let covered: BTreeSet<String> = s.covered.iter().cloned().collect();
    let unreachable: BTreeSet<String> = s.unreachable.iter().cloned().collect();
    assert!(covered.is_disjoint(&unreachable));
    assert_eq!(&covered | &unreachable, all);
    // ci-leader has no move: no ISR expansion, and no crash budget.
    for g in [
        "R21",
        "propose_isr",
        "crash_server",
        "SOME-RECOVERED-COMPLETES",
    ] {
        assert!(unreachable.contains(g), "{g}");
    }
    for g in ["R5", "R8", "register+store_fault", "SOME-FINALIZE-RETRIED"] {
        assert!(covered.contains(g), "{g}");
    }
    let mut union = BTreeSet::new();
    for t in &s.traces {
        assert!(!t.adds.is_empty(), "{}: a trace that adds nothing", t.file);
        assert_eq!(t.covers, suite::covers(&t.trace.model(), &t.trace.steps));
        union.extend(t.covers.iter().cloned());
        // Written and read back, the same trace; every expectation holds on the model.
        let back = Trace::from_json(&t.trace.to_json()).unwrap();
        assert_eq!(back, t.trace, "{}", t.file);
        let replay = t.trace.replay().unwrap();
        assert_eq!(t.trace.check(&replay), vec![], "{}", t.file);
        assert!(t.trace.expectations.iter().any(|e| e.is_end()));
        assert!(t.trace.expectations.iter().any(|e| !e.is_end()));
    }
    assert_eq!(union, covered);
    // An expectation with a wrong value fails.
    let mut wrong = s.traces[0].trace.clone();
    let end = wrong.expectations.iter_mut().find(|e| e.is_end()).unwrap();
    let overall = end.expect["overall"].clone();
    end.expect["overall"] = serde_json::json!(if overall == "FAILED" {
        "COMPLETED"
    } else {
        "FAILED"
    });
    let replay = wrong.replay().unwrap();
    let failures = wrong.check(&replay);
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0].diffs[0].path, "expect.overall");
}

fn cli(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn the_suite_command_writes_reports_and_refuses_bad_usage() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("leader");
    let o = out.to_str().unwrap();
    let (code, stdout, stderr) = cli(&["suite", "--config", "ci-leader", "--out", o]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.starts_with("suite ci-leader: "), "{stdout}");
    assert!(
        stdout.contains("unreachable on this configuration: "),
        "{stdout}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join(MANIFEST)).unwrap()).unwrap();
    let n = manifest["traces"].as_array().unwrap().len();
    assert!(stdout.contains(&format!(": {n} traces, ")), "{stdout}");
    // Again into the same directory: the old suite is replaced, same files.
    let before: BTreeSet<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        cli(&["suite", "--config", "ci-leader", "--out", o]).0,
        Some(0)
    );
    let after: BTreeSet<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
    // A stray file: refused, nothing written.
    std::fs::write(out.join("mine.txt"), "keep").unwrap();
    let (code, _, stderr) = cli(&["suite", "--config", "ci-leader", "--out", o]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("mine.txt"), "{stderr}");
    // A directory that is not a suite.
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("notes.md"), "").unwrap();
    let (code, _, stderr) = cli(&[
        "suite",
        "--config",
        "ci-leader",
        "--out",
        other.to_str().unwrap(),
    ]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("holds no suite"), "{stderr}");
    // Bad flags and configurations.
    for (args, says) in [
        (vec!["suite", "--config", "ci-leader"], "--out"),
        (vec!["suite", "--out", o], "--config"),
        (
            vec!["suite", "--config", "no-such", "--out", o],
            "unknown configuration",
        ),
        (
            vec!["suite", "--config", "ci-leader", "--out", o, "--bogus"],
            "--bogus",
        ),
        (vec!["explore", "--addr", "not an address"], "--addr"),
    ] {
        let (code, _, stderr) = cli(&args);
        assert_eq!(code, Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
}
