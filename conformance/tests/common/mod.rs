//! Helpers shared by the conformance test files (each file uses some of them).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root: the repository the hygiene tests (document paths, import cycles, rule
/// labels) read.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Every file under `dir` (recursively) whose name ends in `.ext`, appended to `out`.
pub fn files_with_ext(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            files_with_ext(&p, ext, out);
        } else if p.extension().is_some_and(|x| x == ext) {
            out.push(p);
        }
    }
}

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

/// A small deterministic generator (splitmix64), for the tests that draw seeded points.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 for an empty range).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
