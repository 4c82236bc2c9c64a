//! `rebalance-model` through the binary: `--variant`, `check --liveness cycles`, `churn`, and
//! what `check --json` reports.

use rebalance_model::Bug;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .args(args)
        .output()
        .expect("runs")
}

#[test]
fn an_unknown_variant_is_a_usage_error_listing_the_valid_names() {
    // A historical bug is not a variant either: `--variant` takes Fluss's choices only.
    for name in ["no-such-variant", "timeout-completes"] {
        let out = run(&["check", "--config", "tiny", "--variant", name]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        for v in Bug::variants() {
            assert!(
                stderr.contains(v.name()),
                "{name}: {v} not listed: {stderr}"
            );
        }
    }
}

#[test]
fn the_verdict_names_every_active_switch_by_kind() {
    let out = run(&[
        "check",
        "--config",
        "ci-store",
        "--variant",
        "split-bucket-writes",
        "--bug",
        "final-not-persisted",
        "--variant",
        "startup-read-skips",
    ]);
    assert_eq!(out.status.code(), Some(1), "a violation");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.lines().next(),
        Some("config ci-store, bugs final-not-persisted, variants split-bucket-writes,startup-read-skips"),
        "{stdout}"
    );
    // The Explorer command keeps each switch's kind, so it rebuilds the same model.
    assert!(
        stdout.contains(
            "--bug final-not-persisted --variant split-bucket-writes --variant startup-read-skips"
        ),
        "{stdout}"
    );
}

/// `(mean, max)` elections per completed bucket from `churn`'s output.
fn churn(variant: Option<&str>) -> (f64, f64) {
    let mut args = vec![
        "churn",
        "--config",
        "ci-leader",
        "--walks",
        "2000",
        "--seed",
        "7",
    ];
    if let Some(v) = variant {
        args.extend(["--variant", v]);
    }
    let out = run(&args);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("elections per completed bucket"))
        .unwrap_or_else(|| panic!("{stdout}"));
    let number = |key: &str| -> f64 {
        let rest = &line[line.find(key).expect(key) + key.len()..];
        rest.split(|c: char| c == ',' || c.is_whitespace())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (number("mean "), number("max "))
}

#[test]
fn reelect_on_reconcile_churns_elections_that_d3_does_not() {
    let (mean, max) = churn(None);
    assert!(
        max <= 1.0,
        "D3: at most one election per completed bucket, got {max}"
    );
    let (variant_mean, variant_max) = churn(Some("reelect-on-reconcile"));
    assert!(
        variant_max > 1.0,
        "the variant re-elects: max {variant_max}"
    );
    assert!(variant_mean > mean, "{variant_mean} vs {mean}");
}

/// `check --json` says what bounded its verdicts (the fair end states the LIVE-* goals were
/// read at, the network bound) and carries the configuration as checked, which `check` reads
/// back to the same graph.
#[test]
fn check_json_names_its_bounds_and_the_resolved_configuration() {
    // ci-leader-crash with a bound of two messages, searched whole: 56,791 states, of which
    // the bound truncates some (ci-two-buckets, used before, took four checks of 2.3 M states,
    // 30 s of CI, to show the same).
    let dir = tempfile::tempdir().unwrap();
    let bounded = dir.path().join("bounded.json");
    let mut config = rebalance_model::preset("ci-leader-crash").unwrap();
    config.max_network = Some(2);
    std::fs::write(&bounded, serde_json::to_string(&config).unwrap()).unwrap();
    let bounded = bounded.to_str().unwrap();
    let out = run(&["check", "--config", bounded, "--no-por", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ends = report["fair_end_states"].as_u64().expect("fair_end_states");
    assert!(ends > 0, "{report}");
    assert_eq!(report["max_network"], 2);
    assert!(report["truncated_transitions"].as_u64().unwrap() > 0);
    assert_eq!(report["reduction"]["on"], false);
    let path = dir.path().join("resolved.json");
    std::fs::write(&path, report["config_resolved"].to_string()).unwrap();
    let again = run(&[
        "check",
        "--config",
        path.to_str().unwrap(),
        "--no-por",
        "--json",
    ]);
    assert_eq!(again.status.code(), Some(0));
    let again: serde_json::Value = serde_json::from_slice(&again.stdout).expect("json");
    assert_eq!(again["unique_states"], report["unique_states"]);
    assert_eq!(again["fair_end_states"], report["fair_end_states"]);
    assert_eq!(again["config_resolved"], report["config_resolved"]);
    // By default the reduction drops the bound, says so, and resolves no bound.
    let out = run(&["check", "--config", bounded, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let reduced: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(reduced["reduction"]["on"], true);
    assert_eq!(reduced["max_network"], serde_json::Value::Null);
    assert_eq!(reduced["truncated_transitions"], 0);
    assert!(
        reduced["reduction"]["adjustments"]
            .to_string()
            .contains("max_network dropped"),
        "{reduced}"
    );
    assert!(reduced["config_resolved"].get("max_network").is_none());
    let ends = reduced["fair_end_states"]
        .as_u64()
        .expect("fair_end_states");
    // The text report says it too, on the verdict of every LIVE-* goal.
    let text = run(&["check", "--config", bounded]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains(&format!(
            "liveness: LIVE-* checked at {ends} fair end states"
        )),
        "{text}"
    );
    let live: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("LIVE-"))
        .collect();
    assert_eq!(
        live.iter()
            .filter(|l| l.ends_with(&format!("holds at {ends} fair end states")))
            .count(),
        rebalance_model::verdict::properties::live_goals().len() - 1,
        "{text}"
    );
    // LIVE-PROGRESS is the progress check's (spec 7.3): with give-ups on it says where it is
    // decided instead of holding.
    assert!(
        live.iter().any(|l| l.contains("LIVE-PROGRESS")
            && l.contains("n/a")
            && l.contains("--no-give-up")),
        "{text}"
    );
}

/// `check --liveness cycles`: the fair-cycle search's line, its JSON field, and a lasso written
/// by `--trace-out` that makes the exit code 1.
#[test]
fn liveness_cycles_reports_the_search_and_writes_a_lasso() {
    use rebalance_model::check::cycle::fair_cycles_for_goals;
    use rebalance_model::{preset, BugSet, RebalanceModel, Trace};
    let tiny = fair_cycles_for_goals(&RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::none(),
    ));
    let out = run(&["check", "--config", "tiny", "--liveness", "cycles"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = format!(
        "fair-cycle search: no fair cycle ({} states, {} edges, 0 non-trivial SCCs)",
        tiny.states, tiny.edges
    );
    assert!(stdout.contains(&line), "{stdout}");
    let json = |args: &[&str]| -> serde_json::Value {
        let out = run(args);
        serde_json::from_slice(&out.stdout).expect("json")
    };
    let plain = json(&["check", "--config", "tiny", "--json"]);
    assert!(plain["cycle_search"].is_null(), "{plain}");
    let with = json(&[
        "check",
        "--config",
        "tiny",
        "--json",
        "--liveness",
        "cycles",
    ]);
    assert_eq!(with["cycle_search"]["states"], tiny.states);
    assert_eq!(with["cycle_search"]["violations"], serde_json::json!([]));

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lasso.json");
    let out = run(&[
        "check",
        "--config",
        "ci-backoff",
        "--bug",
        "endless-reconcile",
        "--liveness",
        "cycles",
        "--trace-out",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let model = RebalanceModel::new(
        preset("ci-backoff").unwrap(),
        BugSet::of(&[Bug::EndlessReconcile]),
    );
    let lasso = fair_cycles_for_goals(&model).violations.remove(0);
    let head = format!(
        "{:<30} VIOLATED on a fair cycle: a prefix of {} steps, then a cycle of {} steps",
        lasso.goal,
        lasso.prefix.len(),
        lasso.cycle.len()
    );
    assert!(stdout.contains(&head), "{stdout}");
    assert!(
        stdout.contains("cycle (back to the state after step"),
        "{stdout}"
    );
    let written = Trace::read(&path).expect("a lasso that closes");
    assert_eq!(written, lasso.trace(&model));
}

/// `check --no-give-up`: the progress check (spec 7.3). It runs the fair-cycle search by
/// default (a stranded bucket shows only on a cycle), decides LIVE-PROGRESS, exits 1 with the
/// lasso on a stranded bucket and 0 under the spec, and says so in `--json`.
#[test]
fn no_give_up_decides_progress_and_reports_the_stranded_lasso() {
    let out = run(&["check", "--config", "ci-leader-crash", "--no-give-up"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("fair-cycle search: no fair cycle"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.trim_start().starts_with("LIVE-PROGRESS") && l.contains("holds at")),
        "{stdout}"
    );
    let out = run(&[
        "check",
        "--config",
        "ci-leader-crash",
        "--no-give-up",
        "--bug",
        "no-resend-on-kept-leader",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["config_resolved"]["no_give_up"], true, "{v}");
    let goals: Vec<&str> = v["cycle_search"]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .filter_map(|l| l["property"].as_str())
        .collect();
    assert!(goals.contains(&"LIVE-PROGRESS"), "{v}");
    let lasso = v["cycle_search"]["violations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["property"] == "LIVE-PROGRESS")
        .unwrap();
    assert_eq!(
        lasso["prefix"].as_array().map(Vec::len),
        lasso["prefix_steps"].as_u64().map(|n| n as usize)
    );
    assert!(!lasso["cycle"].as_array().unwrap().is_empty());
    // With give-ups on, the same switch passes every check: only the progress check tells.
    let out = run(&[
        "check",
        "--config",
        "ci-leader-crash",
        "--bug",
        "no-resend-on-kept-leader",
        "--liveness",
        "cycles",
    ]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn check_help_explains_the_liveness_modes() {
    let out = run(&["check", "--help"]);
    let help = String::from_utf8_lossy(&out.stdout);
    for needle in [
        "--liveness",
        "fair-ends",
        "fair end states",
        "cycles",
        "weak fairness",
        "RestartServer",
        "per state",
    ] {
        assert!(help.contains(needle), "{needle}: {help}");
    }
}

/// Numeric flags out of range are usage errors (exit 2) naming the flag and the range, before
/// any work starts: `--threads 0` once printed "1 unique states" forever, and a huge count
/// aborted on a stack guard.
#[test]
fn numeric_flags_out_of_range_are_usage_errors_and_version_answers() {
    for args in [
        &["check", "--threads", "0"][..],
        &["check", "--threads", "99999999999"],
        &["bench", "--threads", "0"],
        &["churn", "--walks", "0"],
        &["churn", "--max-steps", "0"],
        // A simulation of 0 s checked no state and reported every property as holding; one of
        // u64::MAX seconds panicked on the checker's deadline.
        &["check", "--strategy", "simulate", "--seconds", "0"],
        &[
            "check",
            "--strategy",
            "simulate",
            "--seconds",
            "18446744073709551615",
        ],
    ] {
        let out = run(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("is not in 1..="), "{args:?}: {err}");
        let flag = args[args.len() - 2];
        assert!(err.contains(flag), "{args:?}: {flag} not named: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: did work before refusing");
    }
    let out = run(&["--version"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("rebalance-model {}", env!("CARGO_PKG_VERSION"))
    );
}

/// The subcommands `rebalance-model --help` lists (without clap's own `help`).
fn subcommands() -> Vec<String> {
    let out = run(&["--help"]);
    let help = String::from_utf8_lossy(&out.stdout).to_string();
    let listed = help
        .split("Commands:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .unwrap_or_else(|| panic!("no Commands section: {help}"));
    // A command's name starts its line; a description that wraps goes on indented further.
    let names: Vec<String> = listed
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(String::from)
        .collect();
    assert_eq!(
        names,
        [
            "check",
            "explore",
            "churn",
            "faults",
            "configs",
            "catalogue",
            "suite",
            "replay",
            "bench"
        ],
        "{help}"
    );
    names
}

/// `--version` answers after every subcommand too, where a user types it: `check --version`
/// was an unknown argument that suggested `--variant`.
#[test]
fn every_subcommand_answers_version() {
    for sub in subcommands() {
        let out = run(&[&sub, "--version"]);
        assert_eq!(out.status.code(), Some(0), "{sub}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            format!("rebalance-model-{sub} {}", env!("CARGO_PKG_VERSION")),
            "{sub}"
        );
        let help = run(&[&sub, "--help"]);
        assert_eq!(help.status.code(), Some(0), "{sub}");
        assert!(
            String::from_utf8_lossy(&help.stdout).contains("-V, --version"),
            "{sub}"
        );
    }
}

/// A reader that closes the pipe early (`check | head`) ends the output without a panic: exit
/// 141, as SIGPIPE would, and nothing on stderr (it was exit 101 with a backtrace).
#[test]
fn a_closed_output_pipe_ends_the_run_quietly() {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .args(["check", "--config", "tiny", "--bug", "timeout-completes"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before the check (tens of milliseconds) prints anything.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(141), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
