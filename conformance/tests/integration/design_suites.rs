//! Suites for Fluss's proposed designs (spec/fluss-designs.md; `conformance/suite-designs/`),
//! exported as the spec's suites are, for an implementation of the design to be replayed
//! against through the driver protocol. The manager follows the spec, not the design, so here
//! the suite must tell the two apart: every trace replays in the model, and the manager departs
//! from some trace exactly where the design acts (Phase B or R7.2 electing the planned leader).

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

#[test]
fn the_planned_leader_suite_is_current_replays_and_tells_the_design_from_the_spec() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config_path = "model/configs/design-planned-leader-crash.json";
    let config = Config::from_json_file(root.join(config_path)).unwrap();
    assert!(config.planned_leader);
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
    let dir = shipped("planned-leader");
    assert_eq!(names(out.path()), names(&dir), "regenerate with `rebalance-model suite --config {config_path} --out conformance/suite-designs/planned-leader`");
    for f in names(&dir) {
        let a = std::fs::read_to_string(out.path().join(&f)).unwrap();
        let b = std::fs::read_to_string(dir.join(&f)).unwrap();
        assert!(a == b, "{f} differs from its regeneration");
    }
    let mut departed = 0;
    for path in traces(&dir) {
        let trace = Trace::read(&path).unwrap();
        let run = trace.replay().expect("every step enabled in the model");
        match replay(&trace) {
            Ok(_) => {}
            Err(ReplayError::Divergence { step, .. }) => {
                let rules = run.outputs[step - 1].rules;
                assert!(
                    rules.contains(Rule::R10) || rules.contains(Rule::R7_2),
                    "{}: the manager departs at step {step}, where the design does not act",
                    path.display()
                );
                departed += 1;
            }
            Err(e) => panic!("{}: {e:?}", path.display()),
        }
    }
    assert!(
        departed > 0,
        "no trace of the design's suite tells it from the spec"
    );
}
