//! The harness has teeth: each historical bug's shortest counterexample, replayed against the
//! manager (which implements the fixed protocol), diverges, and it diverges at the step where
//! the old behaviour acts, never earlier. Likewise each "Fluss as written" variant's kept trace
//! (spec 10): the manager follows the spec, not Fluss's choice.

use rebalance_conformance::lockstep::Lockstep;
use rebalance_conformance::replay::{replay, ReplayError};
use rebalance_model::check::shortest::bug_counterexample;
use rebalance_model::{preset, Action, Bug, BugSet, Event, RebalanceModel, Trace};

/// Per bug: the CI preset its counterexample is found on, the 1-based step at which the manager
/// must diverge, and what that step is (the first step where the old behaviour differs).
const EXPECTED: &[(Bug, &str, usize, Acts)] = &[
    // H1: the Timeout event finishes the bucket instead of tracking it.
    (Bug::TimeoutCompletes, "tiny", 4, Acts::TimeoutEvent),
    // H2: the finalize write (here the one a cancel triggers) fails and is ignored.
    (Bug::FinalNotPersisted, "ci-store", 2, Acts::StoreFault),
    // H3: the cancel's intent write fails and the cancel goes ahead.
    (
        Bug::CancelBestEffort,
        "ci-store",
        2,
        Acts::CancelWithStoreFault,
    ),
    // H5: a response with a stale context completes the bucket.
    (Bug::NoRequestFencing, "ci-messages", 6, Acts::Response),
    // H6: the retry of Phase A bumps the bucket epoch.
    (Bug::EpochBumpOnRetry, "tiny", 5, Acts::ReconcileEvent),
    // H8: admission ignores the tracked cap (here right after recovery restored a bucket).
    (
        Bug::UnboundedTracked,
        "ci-two-buckets",
        3,
        Acts::RecoverEvent,
    ),
    // H10 and H13: recovery puts a mid-migration bucket into pending.
    (
        Bug::CancelAfterRestart,
        "ci-two-buckets",
        8,
        Acts::RecoverEvent,
    ),
    (Bug::RecoveryOrder, "ci-two-buckets", 8, Acts::RecoverEvent),
    // H12: the cancel leaves the attempt whose Phase A write failed (still at origin) running.
    (Bug::UntouchedAfterCancel, "ci-store", 2, Acts::Cancel),
];

/// A Fluss-as-written variant's row: its trace under `model/traces`, the switches to replay it
/// with (`None`: the trace's own), the 1-based step at which the manager must diverge, and what
/// that step is.
struct VariantRow {
    variant: Bug,
    trace: &'static str,
    switches: Option<&'static [Bug]>,
    step: usize,
    acts: Acts,
}

/// One row per variant; `startup-read-blocks` is checked by its own test below.
const VARIANTS: &[VariantRow] = &[
    // R16 restores b1, whose leader failed over, instead of canceling it (D4).
    VariantRow {
        variant: Bug::FlussAtOrigin,
        trace: "variant-fluss-at-origin.json",
        switches: None,
        step: 5,
        acts: Acts::RecoverEvent,
    },
    // R14 re-elects the current leader and writes the bucket (D3).
    VariantRow {
        variant: Bug::ReelectOnReconcile,
        trace: "variant-reelect-on-reconcile.json",
        switches: None,
        step: 5,
        acts: Acts::ReconcileEvent,
    },
    // R16 gives recovery up after a failed read (D6).
    VariantRow {
        variant: Bug::StartupReadSkips,
        trace: "variant-startup-read-skips.json",
        switches: None,
        step: 3,
        acts: Acts::RecoverEvent,
    },
    // The deposed coordinator's finalize lands on the task node: the manager's store refuses
    // a write of an older coordinator epoch (D7), so the stored cancel stays.
    VariantRow {
        variant: Bug::UnfencedTaskWrites,
        trace: "variant-unfenced-task-writes.json",
        switches: None,
        step: 6,
        acts: Acts::ZombieResponse,
    },
    // R16 restores both buckets as running, in slots (D1 tracks them).
    VariantRow {
        variant: Bug::RecoveredShowsRebalancing,
        trace: "variant-recovered-shows-rebalancing.json",
        switches: None,
        step: 8,
        acts: Acts::RecoverEvent,
    },
    // With `recovery-order`: b1 is admitted before b0, whose union waits in pending; both
    // switches act at this Recover.
    VariantRow {
        variant: Bug::HashOrderRecovery,
        trace: "variant-hash-order-recovery.json",
        switches: None,
        step: 3,
        acts: Acts::RecoverEvent,
    },
    // Alone it violates nothing (findings F11), but it still acts: on the steps of F10's trace
    // recovery restores both mid-migration buckets, and in reverse plan order it queues
    // Reconcile(b1) before Reconcile(b0), where the manager queues them in plan order.
    VariantRow {
        variant: Bug::HashOrderRecovery,
        trace: "variant-recovered-shows-rebalancing.json",
        switches: Some(&[Bug::HashOrderRecovery]),
        step: 8,
        acts: Acts::RecoverEvent,
    },
    // Phase A's union write is a second store operation and fails; the manager's Phase A is
    // one write (D15), which has no second operation to fail and lands.
    VariantRow {
        variant: Bug::SplitBucketWrites,
        trace: "variant-split-bucket-writes.json",
        switches: None,
        step: 1,
        acts: Acts::StoreFault,
    },
];

/// What the diverging step must be.
#[derive(Clone, Copy, Debug)]
enum Acts {
    TimeoutEvent,
    ReconcileEvent,
    RecoverEvent,
    Response,
    ZombieResponse,
    StoreFault,
    Cancel,
    CancelWithStoreFault,
    /// A step that runs R5 for a leader-only bucket: its admission (a Register) or a Reconcile.
    Lead,
}

impl Acts {
    fn matches(self, a: &Action) -> bool {
        match self {
            Acts::TimeoutEvent => matches!(
                a,
                Action::ProcessEvent {
                    event: Event::Timeout { .. },
                    ..
                }
            ),
            Acts::ReconcileEvent => {
                matches!(
                    a,
                    Action::ProcessEvent {
                        event: Event::Reconcile { .. },
                        ..
                    }
                )
            }
            Acts::RecoverEvent => matches!(
                a,
                Action::ProcessEvent {
                    event: Event::Recover,
                    ..
                }
            ),
            Acts::Response => matches!(
                a,
                Action::DeliverNliResponse {
                    fail_store_op: None,
                    ..
                }
            ),
            Acts::ZombieResponse => matches!(a, Action::ZombieDeliverNliResponse { .. }),
            Acts::StoreFault => a.fail_store_op().is_some(),
            Acts::Cancel => matches!(
                a,
                Action::Cancel {
                    fail_store_op: None
                }
            ),
            Acts::Lead => matches!(a, Action::Register { .. }) || Acts::ReconcileEvent.matches(a),
            Acts::CancelWithStoreFault => {
                matches!(
                    a,
                    Action::Cancel {
                        fail_store_op: Some(_)
                    }
                )
            }
        }
    }
}

fn describe(a: &Action) -> String {
    rebalance_model::view::describe::action(a)
}

/// The divergences seen, and what was not as pinned.
#[derive(Default)]
struct Teeth {
    report: Vec<String>,
    wrong: Vec<String>,
}

impl Teeth {
    /// Replays `trace` against the manager: it must diverge at `want_step`, a step that `acts`.
    fn check(&mut self, label: &str, trace: &Trace, want_step: usize, acts: Acts) {
        match replay(trace) {
            Ok(_) => panic!("{label}: the manager agreed with the model on every step"),
            Err(ReplayError::Invalid(e)) => {
                panic!("{label}: the model's own trace is invalid: {e}")
            }
            Err(ReplayError::Divergence { step, mismatch }) => {
                self.report.push(format!(
                    "{label}: {} steps, diverges at step {step} ({}): {}",
                    trace.steps.len(),
                    describe(&trace.steps[step - 1]),
                    mismatch.summary
                ));
                if step != want_step {
                    self.wrong.push(format!(
                        "{label}: diverged at step {step}, pinned {want_step}"
                    ));
                }
                if !acts.matches(&trace.steps[step - 1]) {
                    self.wrong
                        .push(format!("{label}: step {step} is not {acts:?}"));
                }
            }
        }
    }

    fn assert_as_pinned(self) {
        println!("{}", self.report.join("\n"));
        assert!(
            self.wrong.is_empty(),
            "{}\n{}",
            self.wrong.join("\n"),
            self.report.join("\n")
        );
    }
}

#[test]
fn every_bug_counterexample_diverges_where_the_old_behaviour_acts() {
    let mut teeth = Teeth::default();
    for &(bug, preset_name, want_step, acts) in EXPECTED {
        let config = preset(preset_name).expect("preset exists");
        let trace = bug_counterexample(config, bug)
            .unwrap_or_else(|| panic!("{bug}: no counterexample on {preset_name}"));
        teeth.check(&format!("{bug} on {preset_name}"), &trace, want_step, acts);
    }
    teeth.assert_as_pinned();
}

fn model_trace(name: &str) -> Trace {
    let path = format!("{}/../model/traces/{name}", env!("CARGO_MANIFEST_DIR"));
    Trace::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_variant_trace_diverges_where_the_variant_acts() {
    let mut teeth = Teeth::default();
    for row in VARIANTS {
        let mut trace = model_trace(row.trace);
        if let Some(switches) = row.switches {
            trace = Trace::new(trace.config, BugSet::of(switches), trace.steps);
        }
        let label = format!("{} ({})", row.variant, row.trace);
        assert!(
            trace.bugs.contains(&row.variant),
            "{label}: replayed without it"
        );
        teeth.check(&label, &trace, row.step, row.acts);
    }
    teeth.assert_as_pinned();
}

/// `startup-read-blocks` acts by leaving out R23's retry of the failed read, so its trace (a
/// coordinator crash, a Recover whose read fails) ends where the variant's model has no
/// obligatory step left (a fair end state, spec 7.3), and no replayed step can show it. The step where
/// it acts is the next Tick, which the variant's model leaves out as a stutter (it changes
/// nothing): mirrored on the manager as that, a Tick with no effect, the manager diverges,
/// because under D6 its Tick queues the read again.
#[test]
fn startup_read_blocks_diverges_at_the_tick_that_does_not_retry() {
    let trace = model_trace("variant-startup-read-blocks.json");
    assert_eq!(trace.bugs, vec![Bug::StartupReadBlocks]);
    let model = trace.model();
    let mut lockstep = Lockstep::start(&model).expect("same initial state");
    for (i, a) in trace.steps.iter().enumerate() {
        if let Err(e) = lockstep.step(a) {
            panic!(
                "step {}: the manager diverged before the variant acts: {e:?}",
                i + 1
            );
        }
    }
    let blocked = lockstep.state().clone();
    assert!(blocked.coordinator.recovery_pending && blocked.coordinator.events.is_empty());
    assert!(
        model.is_fair_end(&blocked),
        "the variant's model has no obligatory step left"
    );
    // Under D6 the same state has a Tick, which queues the read again.
    let spec = RebalanceModel::new(trace.config.clone(), BugSet::none());
    let (_, mut out) = spec
        .step(&blocked, &Action::TICK)
        .expect("D6: Tick retries");
    assert_eq!(out.enqueued.as_slice(), &[Event::Recover]);
    // The variant's Tick: the same step without the retry, so nothing queued, nothing changed.
    out.enqueued.clear();
    let stutter = lockstep.follow(&Action::TICK, blocked, out);
    let mismatch = stutter.expect_err("the manager retries the read on a Tick");
    println!(
        "startup-read-blocks: diverges at the Tick after step 2: {}",
        mismatch.summary
    );
    assert!(
        mismatch.summary.starts_with("emitted effects differ"),
        "the difference is what the Tick emitted (the queued read): {}",
        mismatch.summary
    );
}

/// `endless-reconcile` (H7) is a livelock, found by the fair-cycle search as a lasso (kept as
/// `model/traces/bug-endless-reconcile.json`, pinned by `model/tests/integration/cycles.rs`): a prefix to a
/// tracked attempt whose target server is down, then a cycle of a Reconcile and a Tick.
/// Replayed as the prefix plus one turn of the cycle, the manager diverges at the prefix's first
/// Reconcile, the first step where the old behaviour acts: H7 has no backoff, so it counts no
/// reconcile, where the manager counts one for its backoff (R14.4). The other half of H7, the
/// give-up, is shown by the same steps under the spec: through the cycle's first Reconcile the
/// manager agrees with the spec's model on every step, and that Reconcile gives the attempt up
/// (R14.3), the step the endless model repeats forever instead.
#[test]
fn endless_reconcile_lasso_diverges_where_the_old_behaviour_acts() {
    let trace = model_trace("bug-endless-reconcile.json");
    assert_eq!(trace.bugs, vec![Bug::EndlessReconcile]);
    let start = trace.cycle_start.expect("a lasso");
    let first_reconcile = 1 + trace
        .steps
        .iter()
        .position(|a| Acts::ReconcileEvent.matches(a))
        .expect("a Reconcile");
    assert!(
        first_reconcile <= start,
        "the prefix reconciles before the cycle"
    );
    let mut teeth = Teeth::default();
    teeth.check(
        "endless-reconcile (lasso)",
        &trace,
        first_reconcile,
        Acts::ReconcileEvent,
    );
    teeth.assert_as_pinned();
    let spec = Trace::new(
        trace.config.clone(),
        BugSet::none(),
        trace.steps[..=start].to_vec(),
    );
    let ok = replay(&spec).expect("the manager follows the spec's model on every step");
    assert_eq!(
        ok.progress.buckets.get(&0),
        Some(&rebalance_manager::BucketStatus::Failed),
        "the cycle's Reconcile gives the attempt up"
    );
    assert_eq!(
        ok.progress.overall,
        Some(rebalance_manager::OverallStatus::Failed)
    );
}

/// `repairs-lost-on-restart` (F23) acts in R17, which keeps no repair for the next tick, and
/// the projection does not hold the retry sets, so no step of its 4-step counterexample (the
/// leader's crash, its restart with the election write failing, a coordinator crash, Recover)
/// shows it: the switch's model ends there with nothing enabled (a fair end state). The step
/// where it acts is the next Tick, which that model does not have: the manager, which read the
/// repair back at its start, takes it and elects the restarted server, as the spec's model does.
#[test]
fn repairs_lost_on_restart_diverges_at_the_tick_that_repairs() {
    let config = preset("ci-repair-after-crash").unwrap();
    let trace = bug_counterexample(config.clone(), Bug::RepairsLostOnRestart)
        .expect("the switch violates LIVE-METADATA-REPAIRED");
    assert_eq!(trace.steps.len(), 4);
    assert!(matches!(trace.steps[2], Action::CrashCoordinator));
    let model = trace.model();
    let mut lockstep = Lockstep::start(&model).expect("same initial state");
    for (i, a) in trace.steps.iter().enumerate() {
        if let Err(e) = lockstep.step(a) {
            panic!("step {}: diverged before the switch acts: {e:?}", i + 1);
        }
    }
    let stuck = lockstep.state().clone();
    assert!(
        model.is_fair_end(&stuck),
        "the switch's model has nothing left to do"
    );
    assert_eq!(stuck.store.buckets.lai[0].leader, None, "leaderless");
    // Under the spec the same four steps leave the repair pending, and a Tick makes it.
    let spec = RebalanceModel::new(config, BugSet::none());
    let mut s = spec.init_state();
    for a in &trace.steps {
        s = spec.step(&s, a).expect("enabled under the spec").0;
    }
    assert!(
        !s.coordinator.liveness_repairs.is_empty(),
        "R17 read it back"
    );
    let (after, mut out) = spec.step(&s, &Action::TICK).expect("R23.5 repairs");
    assert_eq!(after.store.buckets.lai[0].leader, Some(0), "elected");
    // The switch's Tick, were it enabled: nothing written, nothing sent.
    out.sent.clear();
    let mismatch = lockstep
        .follow(&Action::TICK, stuck, out)
        .expect_err("the manager repairs the bucket on the Tick");
    println!(
        "repairs-lost-on-restart: diverges at the Tick after step 4: {}",
        mismatch.summary
    );
}

/// `no-resend-on-kept-leader` (F22) strands a leader-only bucket, found by the progress check
/// as a lasso (kept as two traces, pinned by `model/tests/integration/progress.rs`). Replayed
/// against the manager, each diverges at the first step where R5 runs with an election that
/// keeps the leader: the manager resends the current request there, the switch sends nothing.
/// In the late-refusal trace that is the admission itself (the new leader is outside the ISR
/// from the start); in the lost-request trace, the first Reconcile after the loss.
#[test]
fn no_resend_lassos_diverge_where_r5_keeps_the_leader() {
    let mut teeth = Teeth::default();
    for (name, want) in [
        ("bug-no-resend-on-kept-leader.json", 1),
        ("bug-no-resend-on-kept-leader-lost-request.json", 11),
    ] {
        let trace = model_trace(name);
        assert_eq!(trace.bugs, vec![Bug::NoResendOnKeptLeader]);
        assert!(
            trace.config.no_give_up,
            "{name}: a lasso of the progress check"
        );
        teeth.check(name, &trace, want, Acts::Lead);
    }
    teeth.assert_as_pinned();
}

#[test]
fn every_variant_has_a_teeth_row() {
    for variant in Bug::variants() {
        let row = VARIANTS.iter().any(|r| r.variant == variant);
        assert!(
            row || variant == Bug::StartupReadBlocks,
            "{variant} has no row in VARIANTS"
        );
    }
}
