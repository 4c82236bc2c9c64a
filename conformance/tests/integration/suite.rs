//! The shipped conformance suites (`conformance/suite/<preset>/`, written by `rebalance-model
//! suite`): every trace replays on the model and on the manager in lockstep with every `expect`
//! block holding on both sides; each manifest says truly what its traces cover; together the
//! suites cover every rule, action kind and `SOME-*` companion the CI presets can reach; and
//! regenerating a suite gives the same files.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rebalance_conformance::replay::replay;
use rebalance_model::trace::suite::{self, Goal, MANIFEST};
use rebalance_model::{preset, Trace};
use serde_json::Value;

/// The presets a suite is shipped for.
const SHIPPED: &[&str] = &[
    "ci-store",
    "ci-leader",
    "ci-coordinator-crash",
    "ci-messages",
    "ci-server-crash",
    "ci-rf2-recovery",
    "ci-two-buckets",
    "ci-liveness-store",
    "ci-backoff",
    "ci-tracked2",
    "ci-leader-crash",
];

/// Goals no shipped preset reaches, each with why. A goal that a suite starts to cover must
/// leave this list (the test checks both ways).
const NOT_ON_SHIPPED_PRESETS: &[(&str, &str)] = &[
    ("zombie_process_event", ZOMBIE),
    ("zombie_deliver_nli_response", ZOMBIE),
    ("zombie_cancel", ZOMBIE),
    ("SOME-PLAN-UNREFERENCED", REMOTE_PLAN),
];

/// Why no spec suite reaches the remote plan's companion: it needs the `remote_plan` design,
/// which the manager does not implement; the design's own suite (`conformance/suite-designs/
/// remote-plan`, `design_suites.rs`) covers it.
const REMOTE_PLAN: &str = "a proposed design's companion: only `remote_plan` reaches it";

/// Why no suite carries the deposed coordinator's steps: an implementation under test runs one
/// incarnation, so for it these are environment steps whose replies it never sees, and a suite's
/// expectations on them could not be checked. `ci-zombie`'s exhaustive conformance walk covers
/// them instead (the manager's state and store must not change).
const ZOMBIE: &str = "a deposed coordinator's step: no implementation under test runs it";

fn dir(preset: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("suite")
        .join(preset)
}

fn manifest(preset: &str) -> Value {
    let path = dir(preset).join(MANIFEST);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn every_suite_trace_replays_on_model_and_manager_with_every_expectation() {
    let mut traces = 0;
    for preset in SHIPPED {
        let m = manifest(preset);
        assert_eq!(m["config"], *preset);
        let mut union = BTreeSet::new();
        let mut files: BTreeSet<String> = BTreeSet::from([MANIFEST.to_string()]);
        for entry in m["traces"].as_array().unwrap() {
            let file = entry["file"].as_str().unwrap();
            files.insert(file.to_string());
            let path = dir(preset).join(file);
            let t = Trace::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(t.version, 2, "{file}");
            assert!(
                t.expectations.iter().any(|e| e.is_end()),
                "{file}: no final expect block"
            );
            assert!(t.expectations.len() >= 2, "{file}: no expect on a step");
            let model_replay = t.replay().unwrap();
            assert_eq!(
                t.check(&model_replay),
                vec![],
                "{preset}/{file} on the model"
            );
            let ok = replay(&t).unwrap_or_else(|e| panic!("{preset}/{file}: {e:?}"));
            assert_eq!(ok.steps, t.steps.len());
            assert!(
                ok.failures.is_empty(),
                "{preset}/{file} on the manager:\n{}",
                ok.failures
                    .iter()
                    .map(|f| f.render("manager"))
                    .collect::<String>()
            );
            let covers = suite::covers(&t.model(), &t.steps);
            assert_eq!(covers, strings(&entry["covers"]), "{preset}/{file}");
            assert!(
                !strings(&entry["adds"]).is_empty(),
                "{preset}/{file} adds nothing"
            );
            union.extend(covers);
            traces += 1;
        }
        let on_disk: BTreeSet<String> = std::fs::read_dir(dir(preset))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(on_disk, files, "{preset}: files the manifest does not list");
        let covered: BTreeSet<String> = strings(&m["covered"]).into_iter().collect();
        assert_eq!(union, covered, "{preset}: the manifest's `covered`");
        let all: BTreeSet<String> = Goal::all().iter().map(Goal::label).collect();
        let unreachable: BTreeSet<String> = strings(&m["unreachable"]).into_iter().collect();
        let both: BTreeSet<String> = covered.union(&unreachable).cloned().collect();
        assert_eq!(
            both, all,
            "{preset}: covered and unreachable are every goal"
        );
    }
    assert!(traces >= SHIPPED.len(), "{traces} traces");
}

#[test]
fn the_suites_together_cover_every_goal_the_ci_presets_reach() {
    let mut union = BTreeSet::new();
    for preset in SHIPPED {
        union.extend(strings(&manifest(preset)["covered"]));
    }
    let excused: Vec<&str> = NOT_ON_SHIPPED_PRESETS.iter().map(|(g, _)| *g).collect();
    let missing: Vec<String> = Goal::all()
        .iter()
        .map(Goal::label)
        .filter(|g| !union.contains(g) && !excused.contains(&g.as_str()))
        .collect();
    assert_eq!(
        missing,
        Vec::<String>::new(),
        "goals no shipped suite covers"
    );
    let now_covered: Vec<&&str> = excused.iter().filter(|g| union.contains(**g)).collect();
    assert!(
        now_covered.is_empty(),
        "covered now, take them off NOT_ON_SHIPPED_PRESETS: {now_covered:?}"
    );
    // Every rule number of spec 5 is covered, whatever its sub-cases.
    for n in rebalance_model::Rule::numbers() {
        assert!(
            union.iter().any(|g| g.split('.').next() == Some(n)),
            "{n} is in no suite"
        );
    }
}

fn regenerated_equals_shipped(preset_name: &str) {
    let out = tempfile::tempdir().unwrap();
    let target = out.path().join(preset_name);
    let s = suite::build(preset_name, &preset(preset_name).unwrap());
    s.write(&target).unwrap();
    let shipped = dir(preset_name);
    let names = |d: &Path| -> BTreeSet<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let regen = format!(
        "the model changed: regenerate with `rebalance-model suite --config {preset_name} \
         --out conformance/suite/{preset_name}` and review the diff"
    );
    assert_eq!(names(&target), names(&shipped), "{regen}");
    for f in names(&target) {
        let a = std::fs::read_to_string(target.join(&f)).unwrap();
        let b = std::fs::read_to_string(shipped.join(&f)).unwrap();
        assert!(a == b, "{preset_name}/{f} differs; {regen}");
    }
}

/// The smaller shipped presets, regenerated in a few seconds (release). The larger ones are
/// regenerated and diffed by `scripts/scheduled-checks.sh`.
#[test]
fn regenerating_a_suite_gives_the_same_files() {
    for p in ["ci-store", "ci-leader", "ci-two-buckets"] {
        regenerated_equals_shipped(p);
    }
}
