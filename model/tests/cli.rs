//! `rebalance-model`'s `--variant` flag and `churn` subcommand, through the binary.

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
