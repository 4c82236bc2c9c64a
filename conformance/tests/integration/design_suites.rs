//! Suites for Fluss's proposed designs (spec/fluss-designs.md; `conformance/suite-designs/`),
//! exported as the spec's suites are, for an implementation of the design to be replayed
//! against through the driver protocol. The manager follows the spec, not the design, so here
//! each suite must tell the two apart: every trace replays in the model, and the manager departs
//! from some trace exactly where the design acts: Phase B or R7.2 electing the planned leader
//! (apache/fluss#3869), or R1's and R16's extra operations on the remote plan (#3868), where a
//! failed operation is another write or read in the manager than in the design.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_model::trace::suite;
use rebalance_model::{Config, Rule, Trace};

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("suite-designs")
        .join(name)
}

fn traces(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().is_some_and(|n| n != "suite.json"))
        .collect();
    v.sort();
    v
}

/// Regenerates the suite of `config_path` and compares it with `conformance/suite-designs/DIR`,
/// then replays each trace in the model and in the manager: where the manager departs, the
/// model's step there must have fired one of `acts`. Returns how many traces departed.
fn check_design_suite(config_path: &str, dir: &str, acts: &[Rule]) -> usize {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = Config::from_json_file(root.join(config_path)).unwrap();
    // Regenerated, the same files (a change to the model or the design shows here).
    let out = tempfile::tempdir().unwrap();
    suite::build(config_path, &config)
        .write(out.path())
        .unwrap();
    let names = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let shipped_dir = shipped(dir);
    assert_eq!(names(out.path()), names(&shipped_dir), "regenerate with `rebalance-model suite --config {config_path} --out conformance/suite-designs/{dir}`");
    for f in names(&shipped_dir) {
        let a = std::fs::read_to_string(out.path().join(&f)).unwrap();
        let b = std::fs::read_to_string(shipped_dir.join(&f)).unwrap();
        assert!(a == b, "{f} differs from its regeneration");
    }
    let mut departed = 0;
    for path in traces(&shipped_dir) {
        let trace = Trace::read(&path).unwrap();
        let run = trace.replay().expect("every step enabled in the model");
        match replay(&trace) {
            Ok(_) => {}
            Err(ReplayError::Divergence { step, .. }) => {
                let rules = run.outputs[step - 1].rules;
                assert!(
                    acts.iter().any(|r| rules.contains(*r)),
                    "{}: the manager departs at step {step}, where the design does not act",
                    path.display()
                );
                departed += 1;
            }
            Err(e) => panic!("{}: {e:?}", path.display()),
        }
    }
    departed
}

#[test]
fn the_planned_leader_suite_is_current_replays_and_tells_the_design_from_the_spec() {
    let config_path = "model/configs/design-planned-leader-crash.json";
    let departed = check_design_suite(config_path, "planned-leader", &[Rule::R10, Rule::R7_2]);
    assert!(
        departed > 0,
        "no trace of the design's suite tells it from the spec"
    );
}

#[test]
fn the_remote_plan_suite_is_current_replays_and_tells_the_design_from_the_spec() {
    let config_path = "model/configs/design-remote-plan.json";
    let departed = check_design_suite(config_path, "remote-plan", &[Rule::R1, Rule::R16]);
    // The design's companion, which no spec suite can reach (suite.rs excuses it there).
    let manifest = std::fs::read_to_string(shipped("remote-plan").join("suite.json")).unwrap();
    let manifest: serde_json::Value = serde_json::from_str(&manifest).unwrap();
    assert!(
        manifest["covered"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g == "SOME-PLAN-UNREFERENCED"),
        "the remote plan's suite does not reach SOME-PLAN-UNREFERENCED"
    );
    assert!(
        departed > 0,
        "no trace of the design's suite tells it from the spec"
    );
}
