//! Fluss's own choices as switches ("Fluss as written", spec 10): each is shown to break a
//! property of spec 7 by a pinned shortest counterexample, kept as a replayable trace, and the
//! spec's decision is shown to take another path at the step where the variant acts.

use crate::common::pinned_shortest;
use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::{preset, Action, BucketStatus, Bug, BugSet, Config, RebalanceModel, Trace};

const CONFIG: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/configs/variant-fluss-at-origin.json"
);
const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/traces/variant-fluss-at-origin.json"
);

#[test]
fn fluss_at_origin_migrates_a_bucket_after_its_cancel_was_stored() {
    let config = Config::from_json_file(CONFIG).unwrap();
    let model = RebalanceModel::new(config, BugSet::of(&[Bug::FlussAtOrigin]));
    let found = first_discoveries(&model, &["INV-CANCEL-NO-NEW-WORK"]);
    assert_eq!(found.len(), 1, "the variant breaks INV-CANCEL-NO-NEW-WORK");
    assert_eq!(
        found[0].actions.len(),
        pinned_shortest(
            &[Bug::FlussAtOrigin],
            "variant-fluss-at-origin.json",
            "INV-CANCEL-NO-NEW-WORK"
        ),
        "shortest counterexample"
    );
    // The kept trace is that counterexample, and it replays to a violating state.
    let trace = Trace::read(TRACE).unwrap();
    assert_eq!(trace.steps, found[0].actions);
    let replay = trace.replay().expect("every step enabled");
    let last = replay.states.last().unwrap();
    assert!(last.ghost.violations.new_work_after_cancel);
}

#[test]
fn under_d4_recovery_cancels_the_bucket_whose_leader_failed_over() {
    let trace = Trace::read(TRACE).unwrap();
    let model = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let mut state = model.init_state();
    // Register, cancel, the crash that moves b1's leader, the coordinator crash, Recover.
    for a in &trace.steps[..5] {
        state = model.step(&state, a).expect("enabled under D4 too").0;
    }
    assert_eq!(
        state.store.buckets.lai[1].leader,
        Some(1),
        "b1's leader failed over"
    );
    assert_eq!(
        state.coordinator.status_of(1),
        Some(BucketStatus::Canceled),
        "D4: b1 is at its origin assignment, so recovery cancels it"
    );
    assert!(!state.ghost.violations.new_work_after_cancel);
}

const REELECT_TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/traces/variant-reelect-on-reconcile.json"
);

#[test]
fn reelect_on_reconcile_bumps_epochs_without_a_change() {
    let model = RebalanceModel::new(
        preset("ci-leader").unwrap(),
        BugSet::of(&[Bug::ReelectOnReconcile]),
    );
    let found = first_discoveries(&model, &["INV-EPOCH-ONLY-ON-CHANGE"]);
    assert_eq!(
        found.len(),
        1,
        "the variant breaks INV-EPOCH-ONLY-ON-CHANGE"
    );
    assert_eq!(
        found[0].actions.len(),
        pinned_shortest(
            &[Bug::ReelectOnReconcile],
            "ci-leader",
            "INV-EPOCH-ONLY-ON-CHANGE"
        ),
        "shortest counterexample"
    );
    let trace = Trace::read(REELECT_TRACE).unwrap();
    assert_eq!(trace.steps, found[0].actions);
    let replay = trace.replay().expect("every step enabled");
    let (before, after) = (
        &replay.states[replay.states.len() - 2],
        replay.states.last().unwrap(),
    );
    let (old, new) = (before.store.buckets.lai[0], after.store.buckets.lai[0]);
    assert_eq!(old.leader, new.leader, "the election keeps the leader");
    assert_eq!(
        new.bucket_epoch,
        old.bucket_epoch + 1,
        "but bumps the epoch"
    );
}

#[test]
fn under_d3_the_reconcile_of_a_moved_leader_resends_without_a_write() {
    let trace = Trace::read(REELECT_TRACE).unwrap();
    let model = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let mut state = model.init_state();
    for a in &trace.steps {
        state = model.step(&state, a).expect("enabled under D3 too").0;
    }
    assert!(matches!(
        trace.steps.last(),
        Some(Action::ProcessEvent { .. })
    ));
    assert_eq!(state.store.buckets.lai[0].bucket_epoch, 1, "no write");
    assert!(!state.ghost.violations.epoch_without_change);
}

/// A startup-read variant's trace: the pinned shortest counterexample, replaying to a fair end
/// state (no obligatory step left) where the stored task is not recovered; and under D6 the
/// same steps are followed by a retried read.
fn startup_read(bug: Bug, trace: &str) {
    let len = pinned_shortest(&[bug], "ci-recovery-store", "LIVE-RECOVERED");
    let model = RebalanceModel::new(preset("ci-recovery-store").unwrap(), BugSet::of(&[bug]));
    let found = first_discoveries(&model, &["LIVE-RECOVERED"]);
    assert_eq!(found.len(), 1, "{bug} breaks LIVE-RECOVERED");
    assert_eq!(
        found[0].actions.len(),
        len,
        "{bug}: shortest counterexample"
    );
    let path = format!("{}/traces/{trace}", env!("CARGO_MANIFEST_DIR"));
    let trace = Trace::read(&path).unwrap();
    assert_eq!(trace.steps, found[0].actions);
    let last = trace.replay().expect("enabled").states.pop().unwrap();
    assert!(model.is_fair_end(&last), "{bug}: no obligatory step left");
    // The register budget is unspent there: the terminal-state check never looked at it.
    assert_eq!(
        model.is_terminal(&last),
        last.budgets.register == 0,
        "{bug}: terminal iff the register budget is spent"
    );
    let live = stateright::Model::property(&model, "LIVE-RECOVERED");
    assert!(!(live.condition)(&model, &last), "{bug}: not recovered");
    // D6: recovery stays pending and the next Tick enqueues the read again.
    let spec = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let mut state = spec.init_state();
    for a in &trace.steps {
        state = spec.step(&state, a).expect("enabled under D6").0;
    }
    assert!(
        state.coordinator.recovery_pending,
        "D6 keeps recovery pending"
    );
    let (after_tick, _) = spec
        .step(&state, &Action::TICK)
        .expect("Tick retries the read");
    assert_eq!(
        after_tick.coordinator.events.len(),
        1,
        "Recover enqueued again"
    );
}

#[test]
fn startup_read_blocks_leaves_recovery_pending_forever() {
    // Two steps since liveness is checked at fair end states: the register budget need not be
    // spent first, as the terminal-state check required (it was 3 steps then).
    startup_read(Bug::StartupReadBlocks, "variant-startup-read-blocks.json");
}

#[test]
fn startup_read_skips_abandons_the_stored_task() {
    startup_read(Bug::StartupReadSkips, "variant-startup-read-skips.json");
}

fn shortest_trace(bugs: &[Bug], preset_name: &str, property: &'static str, trace: &str) -> Trace {
    let len = pinned_shortest(bugs, preset_name, property);
    let model = RebalanceModel::new(preset(preset_name).unwrap(), BugSet::of(bugs));
    let found = first_discoveries(&model, &[property]);
    assert_eq!(found.len(), 1, "{bugs:?} break {property} on {preset_name}");
    assert_eq!(found[0].actions.len(), len, "shortest counterexample");
    let path = format!("{}/traces/{trace}", env!("CARGO_MANIFEST_DIR"));
    let trace = Trace::read(&path).unwrap();
    assert_eq!(
        trace.steps, found[0].actions,
        "the kept trace is that counterexample"
    );
    let last = trace
        .replay()
        .expect("every step enabled")
        .states
        .pop()
        .unwrap();
    let p = stateright::Model::property(&model, property);
    assert!(
        !(p.condition)(&model, &last),
        "the last state violates {property}"
    );
    trace
}

#[test]
fn unfenced_task_writes_let_a_deposed_coordinator_overwrite_a_stored_cancel() {
    let trace = shortest_trace(
        &[Bug::UnfencedTaskWrites],
        "ci-zombie",
        "INV-CANCEL-PERSISTED-FIRST",
        "variant-unfenced-task-writes.json",
    );
    assert!(matches!(
        trace.steps.last(),
        Some(Action::ZombieDeliverNliResponse { .. })
    ));
    let last = trace.replay().unwrap().states.pop().unwrap();
    let task = last.store.task.unwrap();
    assert!(
        last.coordinator.cancel_requested,
        "the new incarnation canceled"
    );
    assert!(
        !task.cancel_requested,
        "the deposed one's finalize erased the flag"
    );
    assert!(task.status.is_final());
    // D7: the same steps with fenced writes; the deposed incarnation's finalize is refused.
    let spec = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let mut state = spec.init_state();
    for a in &trace.steps {
        state = spec.step(&state, a).expect("enabled under D7 too").0;
    }
    let task = state.store.task.unwrap();
    assert!(
        task.cancel_requested && !task.status.is_final(),
        "D7 keeps the cancel"
    );
}

#[test]
fn without_a_zombie_budget_the_deposed_coordinator_is_fail_stop() {
    let mut config = preset("ci-zombie").unwrap();
    config.budgets.zombie_steps = 0;
    let model = RebalanceModel::new(config, BugSet::of(&[Bug::UnfencedTaskWrites]));
    let mut state = model.init_state();
    state = model.step(&state, &Action::CrashCoordinator).unwrap().0;
    assert!(
        state.zombie.is_none(),
        "R17 keeps no snapshot without the budget"
    );
    let found = first_discoveries(&model, &["INV-CANCEL-PERSISTED-FIRST"]);
    assert!(
        found.is_empty(),
        "unfenced task writes need a zombie to matter"
    );
}

#[test]
fn recovered_shows_rebalancing_runs_more_buckets_than_slots() {
    let trace = shortest_trace(
        &[Bug::RecoveredShowsRebalancing],
        "ci-two-buckets",
        "INV-SLOT",
        "variant-recovered-shows-rebalancing.json",
    );
    // D1: the same steps restore both buckets as tracked, neither in a slot.
    let spec = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let mut state = spec.init_state();
    for a in &trace.steps {
        state = spec.step(&state, a).expect("enabled under D1 too").0;
    }
    assert_eq!(state.coordinator.running_count(), 0);
    assert_eq!(state.coordinator.tracked_count(), 2);
    assert_eq!(state.coordinator.status_of(0), Some(BucketStatus::Timeout));
}

#[test]
fn hash_order_recovery_halves_the_late_recovery_counterexample() {
    shortest_trace(
        &[Bug::RecoveryOrder, Bug::HashOrderRecovery],
        "ci-two-buckets",
        "INV-NO-STRAY-UNION",
        "variant-hash-order-recovery.json",
    );
    // In plan order, `[late]` recovery needs more than twice the steps to strand a union.
    let late = RebalanceModel::new(
        preset("ci-two-buckets").unwrap(),
        BugSet::of(&[Bug::RecoveryOrder]),
    );
    let found = first_discoveries(&late, &["INV-NO-STRAY-UNION"]);
    assert_eq!(
        found[0].actions.len(),
        pinned_shortest(
            &[Bug::RecoveryOrder],
            "ci-two-buckets",
            "INV-NO-STRAY-UNION"
        )
    );
}

#[test]
fn hash_order_recovery_alone_holds_on_ci_two_buckets() {
    use rebalance_model::check::checker::{check, CheckOptions, Verdict};
    // Within the two messages in flight the preset had before the partial-order reduction: its
    // graph under this switch is 2.5 million states reduced, too slow for CI; the scheduled
    // checks run the switch on the whole preset (`scripts/scheduled-checks.sh`).
    let mut config = preset("ci-two-buckets").unwrap();
    config.max_network = crate::common::cycle_bound("ci-two-buckets");
    let model = RebalanceModel::new(config, BugSet::of(&[Bug::HashOrderRecovery]));
    let r = check(&model, &CheckOptions::dfs(2));
    assert_eq!(r.unique_states, 81_260);
    for (p, v) in &r.verdicts {
        assert!(!matches!(v, Verdict::Violated(_)), "{p}: {v:?}");
    }
}

#[test]
fn split_bucket_writes_migrate_a_bucket_after_its_cancel_was_stored() {
    let trace = shortest_trace(
        &[Bug::SplitBucketWrites],
        "ci-store",
        "INV-CANCEL-NO-NEW-WORK",
        "variant-split-bucket-writes.json",
    );
    let replay = trace.replay().unwrap();
    // After the Register whose assignment write failed, the context holds the union and the
    // store the origin, with the LeaderAndIsr already bumped.
    let after_register = &replay.states[1];
    assert_eq!(
        after_register.coordinator.cache.assignment[0].as_slice(),
        &[1, 0]
    );
    assert_eq!(after_register.store.buckets.assignment[0].as_slice(), &[0]);
    assert_eq!(after_register.store.buckets.lai[0].bucket_epoch, 1);
    // The cancel spares the bucket (the context says it left its origin), and the retry of
    // Phase A writes the union into the store under the stored cancel.
    let after_cancel = &replay.states[2];
    assert_eq!(
        after_cancel.coordinator.status_of(0),
        Some(BucketStatus::Rebalancing)
    );
    let last = replay.states.last().unwrap();
    assert_eq!(last.store.buckets.assignment[0].as_slice(), &[1, 0]);
    assert!(last.store.task.as_ref().unwrap().cancel_requested);
    // D15: Phase A is one write, so the register has no third store operation; when that one
    // write fails, context and store both stay at the origin and the cancel cancels the bucket.
    let spec = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let init = spec.init_state();
    assert!(
        spec.step(&init, &trace.steps[0]).is_none(),
        "no third store operation"
    );
    let failed_phase_a = Action::Register {
        plan: None,
        fail_store_op: Some(2),
    };
    let mut state = spec.step(&init, &failed_phase_a).expect("enabled").0;
    assert_eq!(state.coordinator.cache, state.store.buckets);
    state = spec
        .step(&state, &trace.steps[1])
        .expect("cancel enabled")
        .0;
    assert_eq!(state.coordinator.status_of(0), Some(BucketStatus::Canceled));
    assert!(!state.ghost.violations.new_work_after_cancel);
}
