//! Fluss's proposed designs (spec/fluss-designs.md), checked as model extensions with their own
//! configuration. apache/fluss#3869, the planned leader (`planned_leader`): a move ends with the
//! plan's new leader, elected in Phase B and acknowledged by it, across its own crash and
//! restart between the election and the acknowledgement. apache/fluss#3868, the remote plan
//! (`remote_plan`): the stored task's reference always resolves to its plan, whole, and each
//! of three misreadings of the design breaks that.

use rebalance_model::check::cycle::fair_cycles_for_goals;
use rebalance_model::check::por::reduced;
use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::trace::Trace;

use rebalance_model::{
    Action, BucketStatus, Bug, BugSet, Config, Event, RebalanceModel, ServerId, SystemState,
};
use stateright::{Expectation, Model};
use std::collections::BTreeSet;

use crate::common::{each_edge, fingerprint, pinned_shortest};

const PLANNED_LEADER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/configs/design-planned-leader-crash.json"
);

/// The stored leader of bucket 0 at each step that completes it, over the whole graph.
fn leaders_at_completion(config: Config) -> BTreeSet<Option<ServerId>> {
    let (model, _) = reduced(config, BugSet::none());
    let mut leaders = BTreeSet::new();
    let done = |s: &SystemState| s.coordinator.status_of(0) == Some(BucketStatus::Completed);
    each_edge(&model, |s, _, next, _| {
        if done(next) && !done(s) {
            leaders.insert(next.store.buckets.lai[0].leader);
        }
    });
    leaders
}

#[test]
fn with_the_planned_leader_every_move_completes_with_it_and_without_it_the_old_leader_may_stay() {
    let design = Config::from_json_file(PLANNED_LEADER).unwrap();
    assert!(design.planned_leader);
    // The move [0,1] -> [2,0]: the old leader 0 stays in the target, the plan's leader is 2.
    assert_eq!(
        leaders_at_completion(design.clone()),
        BTreeSet::from([Some(2)])
    );
    // This spec's R10 keeps a current leader that is in the target (D3).
    let spec = Config {
        planned_leader: false,
        ..design
    };
    assert!(leaders_at_completion(spec).contains(&Some(0)));
}

/// The progress check (spec 7.3) holds under the design: once the planned leader is back, the
/// bucket completes with it, without a give-up; no fair cycle strands it.
#[test]
fn the_planned_leader_design_makes_progress_across_the_new_leaders_crash() {
    let mut config = Config::from_json_file(PLANNED_LEADER).unwrap();
    config.no_give_up = true;
    let search = fair_cycles_for_goals(&RebalanceModel::new(config, BugSet::none()));
    assert!(search.violations.is_empty(), "{:?}", search.violations);
    assert!(
        search.nontrivial_sccs > 0,
        "a graph without cycles checks nothing here"
    );
}

/// Every `always` property of the model (the invariants, INV-PLAN-RESOLVES among them, and the
/// liveness goals at fair end states) holds on its whole graph, searched breadth-first.
fn assert_every_always_holds(model: &RebalanceModel) {
    let always: Vec<&'static str> = model
        .properties()
        .iter()
        .filter(|p| p.expectation == Expectation::Always)
        .map(|p| p.name)
        .collect();
    assert!(always.contains(&"INV-PLAN-RESOLVES"));
    let violated = first_discoveries(model, &always);
    assert!(
        violated.is_empty(),
        "{:?}",
        violated.iter().map(|c| c.property).collect::<Vec<_>>()
    );
}

const REMOTE_PLAN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/configs/design-remote-plan.json"
);

/// The design as spec/fluss-designs.md states it holds on its whole graph (a leader-only bucket,
/// two registers, a cancel, two store failures, a coordinator crash): every invariant, with a
/// Register that failed after its plan object's write among the states (the companion).
#[test]
fn with_the_remote_plan_every_stored_reference_resolves() {
    let config = Config::from_json_file(REMOTE_PLAN).unwrap();
    assert!(config.remote_plan);
    let model = RebalanceModel::new(config, BugSet::none());
    assert_every_always_holds(&model);
    let example = first_discoveries(&model, &["SOME-PLAN-UNREFERENCED"]);
    assert_eq!(
        example.len(),
        1,
        "no state holds an unreferenced plan object"
    );
    // Each of the design's operations does fail somewhere in the graph: R1's object write (1),
    // reference (2) and cleanup (3), and R16's second read, of the object (2).
    let mut failed = BTreeSet::new();
    each_edge(&model, |_, action, _, out| {
        if !out.store_failed {
            return;
        }
        match action {
            Action::Register { fail_store_op, .. } => {
                failed.insert(("R1", *fail_store_op));
            }
            Action::ProcessEvent {
                event: Event::Recover,
                fail_store_op,
            } => {
                failed.insert(("R16", *fail_store_op));
            }
            _ => {}
        }
    });
    for op in [
        ("R1", Some(1)),
        ("R1", Some(2)),
        ("R1", Some(3)),
        ("R16", Some(2)),
    ] {
        assert!(failed.contains(&op), "{op:?} never fails: {failed:?}");
    }
}

/// Each misreading of the design is caught on the design's configuration by INV-PLAN-RESOLVES,
/// at the length the catalogue pins, and its kept trace (`model/traces/design-remote-plan-*.json`)
/// is that counterexample and replays to a state that violates it.
#[test]
fn each_misreading_of_the_remote_plan_leaves_a_reference_that_does_not_resolve() {
    let config = Config::from_json_file(REMOTE_PLAN).unwrap();
    for bug in [
        Bug::ReferenceBeforePlan,
        Bug::CleanupBeforeReference,
        Bug::OnePlanPath,
    ] {
        let property = bug.violated_property();
        assert_eq!(property, "INV-PLAN-RESOLVES");
        let model = RebalanceModel::new(config.clone(), BugSet::of(&[bug]));
        let found = first_discoveries(&model, &[property]);
        assert_eq!(found.len(), 1, "{bug} does not break {property}");
        let len = pinned_shortest(&[bug], "design-remote-plan.json", property);
        assert_eq!(
            found[0].actions.len(),
            len,
            "{bug}: shortest counterexample"
        );
        let path = format!(
            "{}/traces/design-remote-plan-{bug}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let trace = Trace::read(&path).unwrap();
        assert_eq!(trace.bugs, vec![bug]);
        assert_eq!(
            trace.steps, found[0].actions,
            "{path} is that counterexample"
        );
        let last = trace
            .replay()
            .expect("every step enabled")
            .states
            .pop()
            .unwrap();
        let p = model.property(property);
        assert!(
            !(p.condition)(&model, &last),
            "{path}: {property} holds at its end"
        );
    }
}

/// The switches change nothing unless the design is on: without `remote_plan` there is no plan
/// object, and each switch's graph is the clean one, state for state.
#[test]
fn the_remote_plan_switches_do_nothing_without_the_design() {
    let mut config = Config::from_json_file(REMOTE_PLAN).unwrap();
    config.remote_plan = false;
    let states = |bugs: &[Bug]| {
        let mut seen = BTreeSet::new();
        each_edge(
            &RebalanceModel::new(config.clone(), BugSet::of(bugs)),
            |_, _, next, _| {
                seen.insert(fingerprint(next));
            },
        );
        seen
    };
    let clean = states(&[]);
    assert!(clean.len() > 1000, "{} states", clean.len());
    for bug in [
        Bug::ReferenceBeforePlan,
        Bug::CleanupBeforeReference,
        Bug::OnePlanPath,
    ] {
        assert!(states(&[bug]) == clean, "{bug} without remote_plan");
    }
}

const OVERSIZED_NODE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/configs/design-oversized-node.json"
);

/// apache/fluss#4335 (`session_lost_on_store_failure`): a failed store operation costs the
/// coordinator its session in the same step. Every property holds on the whole graph (the
/// reduction does not apply), the faults stop after three such failures and every goal is met,
/// and the graph does take a step that both fails a write and starts a new incarnation.
#[test]
fn a_coordinator_that_loses_its_session_at_each_failed_write_stays_safe_and_live() {
    let config = Config::from_json_file(OVERSIZED_NODE).unwrap();
    assert!(config.session_lost_on_store_failure);
    let (model, setup) = reduced(config.clone(), BugSet::none());
    assert!(
        matches!(setup, rebalance_model::check::por::Setup::NotApplicable(_)),
        "the reduction's argument does not cover R17 inside a step"
    );
    assert_every_always_holds(&model);
    let mut lost_sessions = 0;
    each_edge(&model, |s, _, next, out| {
        if out.store_failed && next.store.coordinator_epoch > s.store.coordinator_epoch {
            lost_sessions += 1;
        }
    });
    assert!(lost_sessions > 0, "no failed write cost a session");
    // The progress check: once the failures stop, the bucket completes, or is canceled.
    let mut progress = config;
    progress.no_give_up = true;
    let search = fair_cycles_for_goals(&RebalanceModel::new(progress, BugSet::none()));
    assert!(search.violations.is_empty(), "{:?}", search.violations);
}

/// A preloaded store under the design starts with its task's plan object where R1 would have
/// written it, under `one-plan-path` too: the initial state resolves, so the switch is caught
/// for what it does and not for where the run starts (a 0-step violation before this test).
#[test]
fn a_preloaded_task_starts_with_its_plan_object_where_r1_puts_it() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../conformance/traces/hand-written-recovery-from-preloaded-store.json"
    );
    let mut config = Trace::read(path).unwrap().config;
    assert!(config.store.as_ref().is_some_and(|s| s.task.is_some()));
    config.remote_plan = true;
    for bugs in [&[][..], &[Bug::OnePlanPath]] {
        let model = RebalanceModel::new(config.clone(), BugSet::of(bugs));
        let init = model.init_state();
        assert_eq!(init.store.plans.len(), 1, "{bugs:?}");
        let p = model.property("INV-PLAN-RESOLVES");
        assert!(
            (p.condition)(&model, &init),
            "{bugs:?}: the start does not resolve"
        );
    }
}
