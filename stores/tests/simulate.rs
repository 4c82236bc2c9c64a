//! The seeded simulation (`stores/examples/simulate/`): a small swarm passes, a run is the same
//! every time from its seed, and the checks catch a planted host bug, each failure printed with
//! the line that reproduces it. The large swarm and the million-bucket run are in
//! `scripts/scheduled-checks.sh`.

use std::path::PathBuf;
use std::process::Command;

/// The `simulate` example, built beside the tests (cargo and nextest build a package's examples
/// with its tests).
fn simulate() -> Command {
    let exe = std::env::current_exe().expect("test binary");
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target/<profile>");
    let bin: PathBuf = dir.join("examples").join("simulate");
    assert!(
        bin.exists(),
        "{} not built: run the tests with `cargo test` or nextest, which build examples",
        bin.display()
    );
    let mut cmd = Command::new(bin);
    cmd.env_remove("SIMULATE_PLANT");
    cmd
}

fn run(cmd: &mut Command) -> (Option<i32>, String) {
    let out = cmd.output().expect("simulate runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn a_small_swarm_passes() {
    let (code, out) = run(simulate().args(["--swarm", "200", "--buckets", "500", "--quiet"]));
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("swarm: 200 of 200 runs passed"), "{out}");
    // Non-vacuous: the swarm lost batches, left writes in doubt (each stops its incarnation,
    // G3), crashed servers and coordinators, failed store operations, and ended runs COMPLETED. Since finding F22 no run of this swarm ends FAILED:
    // a give-up with cause needs a target down for R14.3's 30-minute window, longer than a fault
    // phase of this size lasts, and none may come after the faults stopped (LIVE-PROGRESS; the
    // plant `short-give-up` shows the check catching one).
    for seen in ["Some(Completed)", "Prefix(", "All", "Nothing"] {
        assert!(out.contains(seen), "no run shows {seen}: {out}");
    }
    for line in out.lines().filter(|l| l.starts_with("passed")) {
        assert!(line.contains("(0 after the faults stopped)"), "{line}");
    }
    // Some run shows a positive count right before `what`.
    let some = |what: &str| {
        out.lines().any(|l| {
            l.split_once(what)
                .and_then(|(head, _)| head.rsplit(' ').next())
                .and_then(|n| n.parse::<u64>().ok())
                .is_some_and(|n| n > 0)
        })
    };
    assert!(some(" server crashes"), "{out}");
    assert!(some(" writes in doubt"), "{out}");
    assert!(some(" store failures"), "{out}");
}

#[test]
fn a_seed_reproduces_its_run() {
    let args = ["--seed", "0x2a", "--buckets", "400", "--quiet"];
    let (code, first) = run(simulate().args(args));
    let (_, second) = run(simulate().args(args));
    assert_eq!(code, Some(0), "{first}");
    // Everything but the wall time, after the last `;`.
    let stable = |s: &str| s.rsplit_once(';').map(|(a, _)| a.to_string());
    assert_eq!(stable(&first), stable(&second));
    assert!(first.starts_with("passed seed 0x2a: "), "{first}");
}

/// A planted bug fails runs that it touches, each with its reproducer line.
fn plant_is_caught(plant: &str, check: &str) {
    let (code, out) = run(simulate().env("SIMULATE_PLANT", plant).args([
        "--swarm",
        "12",
        "--buckets",
        "200",
        "--quiet",
    ]));
    assert_eq!(code, Some(1), "{out}");
    let failed: Vec<&str> = out.lines().filter(|l| l.starts_with("FAILED")).collect();
    assert!(!failed.is_empty(), "{out}");
    for line in failed {
        assert!(line.contains(check), "{line}");
        let seed = line
            .strip_prefix("FAILED seed ")
            .and_then(|r| r.split(':').next())
            .expect("the seed");
        assert!(
            line.ends_with(&format!(
                "(reproduce: cargo run --release -p rebalance-stores --example simulate -- \
                 --seed {seed} --buckets 200)"
            )),
            "{line}"
        );
    }
}

#[test]
fn a_host_that_releases_before_the_flush_is_caught() {
    plant_is_caught("early-release", "INV-RELEASED-DURABLE");
}

#[test]
fn a_flush_that_loses_a_write_is_caught() {
    plant_is_caught("drop-write", "INV-RELEASED-DURABLE");
}

/// The liveness phase fails a run on a bucket FAILED after the faults stopped (LIVE-PROGRESS):
/// with a no-progress window of one check interval, buckets still converging then give up.
/// A store that hides a write in doubt (it landed, its answer was lost) lets the host go on with
/// a core that believes the write failed: the core's cache and the store part (F25).
#[test]
fn a_write_in_doubt_that_the_store_hides_is_caught() {
    plant_is_caught("hidden-doubt", "INV-CONTEXT-COHERENT");
}

#[test]
fn a_give_up_after_the_faults_stopped_is_caught() {
    plant_is_caught("short-give-up", "LIVE-PROGRESS");
}

/// The seeds that found spec/findings.md F20 and F23 pass, with no bucket FAILED after the
/// faults stopped: before F22 a leader-only bucket was stranded until its give-up in each of the
/// first three (and the run passed only by a bound that allowed the give-up), and before F23
/// `0x3a` and `0x3a6` (200 buckets) ended with a leaderless bucket.
#[test]
fn the_seeds_of_findings_f20_and_f23_pass() {
    for (seed, buckets) in [
        ("0x2", "500"),
        ("0x24", "500"),
        ("0x47", "500"),
        ("0x3a", "200"),
        ("0x3a6", "200"),
    ] {
        let (code, out) = run(simulate().args(["--seed", seed, "--buckets", buckets, "--quiet"]));
        assert_eq!(code, Some(0), "{out}");
        assert!(out.contains("(0 after the faults stopped)"), "{out}");
    }
}

#[test]
fn bad_arguments_are_a_usage_error() {
    for (args, says) in [
        (
            &["--buckets", "0"][..],
            "invalid value '0' for '--buckets <N>': expected 1 to 1000000",
        ),
        (
            &["--seed", "0xg"],
            "invalid value '0xg' for '--seed <S>': not a number",
        ),
        (
            &["--swarm", "0"],
            "invalid value '0' for '--swarm <K>': expected a count from 1",
        ),
        (
            &["--jobs", "65"],
            "invalid value '65' for '--jobs <J>': expected 1 to 64",
        ),
        (&["--frobnicate"], "unexpected argument '--frobnicate'"),
    ] {
        let out = simulate().args(args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?} ran");
    }
    let out = simulate()
        .env("SIMULATE_PLANT", "nonsense")
        .arg("--buckets")
        .arg("1")
        .output();
    assert_eq!(out.unwrap().status.code(), Some(2));
    let out = simulate().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    for says in [
        "--swarm <K>",
        "--full-check-every <N>",
        "SIMULATE_PLANT",
        "Exit codes:",
    ] {
        assert!(help.contains(says), "{says} not in: {help}");
    }
    let out = simulate().arg("--version").output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("simulate (rebalance-stores {})", env!("CARGO_PKG_VERSION"))
    );
}
