//! The manager follows the spec, not Fluss's choices: each "Fluss as written" counterexample
//! (spec 10) diverges from the manager at the step where the variant acts.

use std::path::Path;
use std::process::Command;

/// `(trace under model/traces, the step where the variant acts)`.
const VARIANTS: &[(&str, usize)] = &[
    // R16 restores b1, whose leader failed over, instead of canceling it (D4).
    ("variant-fluss-at-origin.json", 5),
    // R14 re-elects the current leader and writes the bucket (D3).
    ("variant-reelect-on-reconcile.json", 5),
    // R16 gives recovery up after a failed read (D6).
    ("variant-startup-read-skips.json", 3),
    // The deposed coordinator's finalize lands on the task node: the manager's store refuses
    // a write of an older coordinator epoch (D7), so the stored cancel stays.
    ("variant-unfenced-task-writes.json", 6),
    // R16 restores both buckets as running, in slots (D1 tracks them).
    ("variant-recovered-shows-rebalancing.json", 19),
    // R16 under `recovery-order` with `hash-order-recovery`: b1 is admitted before b0, whose
    // union waits in pending. Both switches act at this Recover; `hash-order-recovery` alone
    // holds on every preset tried (spec/findings.md F11), so it has no trace of its own.
    ("variant-hash-order-recovery.json", 7),
    // `startup-read-blocks` has no row: it acts by leaving out R23's retry, so its trace ends
    // where the model has nothing left to do, and the step on which the manager would retry (a
    // Tick) is not enabled in the variant's model (spec/findings.md F8).
];

#[test]
fn every_variant_counterexample_diverges_where_the_variant_acts() {
    let out_dir = tempfile::tempdir().expect("temp dir");
    for (trace, step) in VARIANTS {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../model/traces")
            .join(trace);
        let out = Command::new(env!("CARGO_BIN_EXE_rebalance-conformance"))
            .arg("replay")
            .arg(&path)
            .arg("--out-dir")
            .arg(out_dir.path())
            .output()
            .expect("runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{trace}: {stdout}");
        assert!(
            stdout.contains(&format!("DIVERGENCE at step {step}:")),
            "{trace}: {stdout}"
        );
    }
}
