//! `rebalance-model bench`: the JSON report of `tiny` and the exit code of a bad configuration.
//! No timing is asserted: machines are noisy.

use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .arg("bench")
        .args(args)
        .output()
        .expect("run rebalance-model")
}

#[test]
fn tiny_json_report() {
    let out = bench(&[
        "--config",
        "tiny",
        "--profile-states",
        "500",
        "--json",
        "--no-por",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<_> = stdout.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "one JSON object per config: {stdout}");
    let r: serde_json::Value = serde_json::from_str(lines[0]).expect("JSON");
    assert_eq!(r["config"], "tiny");
    let unique = r["unique_states"].as_u64().expect("unique_states");
    assert_eq!(unique, 915, "tiny's pinned count (its whole graph)");
    let transitions = r["transitions"].as_u64().expect("transitions");
    assert!(transitions >= unique, "{transitions} < {unique}");
    assert!(r["state_size_bytes"].as_u64().expect("state_size_bytes") > 0);

    let profile = &r["profile"];
    assert_eq!(profile["states"], 500);
    let phases = profile["phases"].as_array().expect("phases");
    let names: Vec<_> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["enumerate", "step", "clone", "hash", "properties"],
        "{profile}"
    );
    let mut sum = 0.0;
    for p in phases {
        let share = p["share"].as_f64().expect("share");
        assert!((0.0..=1.0).contains(&share), "{p}");
        sum += share;
    }
    assert!((sum - 1.0).abs() <= 0.05, "shares sum to {sum}");
}

#[test]
fn unknown_config_is_a_usage_error() {
    let out = bench(&["--config", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("unknown configuration `nope`"), "{stderr}");
}
