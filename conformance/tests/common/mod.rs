//! Helpers shared by the conformance test files (each file uses some of them).
#![allow(dead_code)]

use std::process::Command;

/// Runs `cmd` to its end: its exit code, stdout and stderr.
pub fn run(cmd: &mut Command) -> (Option<i32>, String, String) {
    let out = cmd.output().expect("the command runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Fails unless `text` contains every one of `needles`, naming all that are missing at once.
#[track_caller]
pub fn assert_says(text: &str, needles: &[&str]) {
    let missing: Vec<&str> = needles
        .iter()
        .copied()
        .filter(|n| !text.contains(n))
        .collect();
    assert!(missing.is_empty(), "missing {missing:?} in:\n{text}");
}

/// The `cluster` example, built beside the tests (cargo and nextest build a workspace's
/// examples with its tests).
pub fn cluster_binary() -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("test binary");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let bin = dir.join("examples").join("cluster");
    assert!(
        bin.exists(),
        "{} not built: run the tests with `cargo test --workspace` or nextest, which build examples",
        bin.display()
    );
    bin
}
