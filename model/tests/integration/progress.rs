//! The progress check (spec 7.3, "Progress"): with R14.3 off and a crashed server's restart
//! obligatory (`no_give_up`), every bucket must reach COMPLETED, or CANCELED after a cancel.
//!
//! - That every CI preset holds LIVE-PROGRESS, and every other goal, on every fair cycle of
//!   that check is `model/tests/ci_presets.rs`'s (`every_ci_preset_makes_progress`), where the
//!   model's mutation runs read it.
//! - The switch `no-resend-on-kept-leader` (this spec before finding F22) strands a leader-only
//!   bucket: a fair lasso on `ci-refused-leader` (the seeded simulation's F20, a refusal that
//!   arrives after the leader adopted a newer view) and on `ci-leader-crash` (a lost request),
//!   each pinned, replayed from its kept trace, and checked to be fair from the definitions.
//!   With give-ups on, the same bucket ends FAILED with every server up, which every other goal
//!   accepts: only this check tells.
//! - Each way spec 7.3's audit allows a bucket to end FAILED is made to happen for its cause.

use rebalance_model::check::cycle::fair_cycles_for_goals;
use rebalance_model::check::lasso::Lasso;
use rebalance_model::{
    preset, Action, BucketStatus, Bug, BugSet, Config, Event, OverallStatus, RebalanceModel,
    SystemState, Trace,
};
use std::collections::HashSet;

use crate::common::{self, assert_fair_lasso, replay};

fn progress_config(name: &str) -> Config {
    let mut c = preset(name).unwrap();
    c.no_give_up = true;
    c.max_network = common::cycle_bound(name);
    c
}

/// The first obligatory step, again and again, until the rebalance is COMPLETED (at most 64
/// steps): one fair continuation, for a prefix the progress check says must finish.
fn completed_fairly(model: &RebalanceModel, mut s: SystemState) -> SystemState {
    for _ in 0..64 {
        if s.coordinator.overall == Some(OverallStatus::Completed) {
            break;
        }
        let mut v = Vec::new();
        model.enabled_actions(&s, &mut v);
        let a = v
            .into_iter()
            .find(|a| model.is_obligatory(a))
            .expect("an obligatory step is enabled until the rebalance is over");
        s = model.step(&s, &a).unwrap().0;
    }
    s
}

/// A stranded bucket of the switch: the lasso of LIVE-PROGRESS on `preset`, with its pinned
/// shape, and the cycle's states: every server up, nothing in flight, the bucket tracked and
/// reconciled again and again, its leader the old one.
struct Stranded {
    preset: &'static str,
    trace: &'static str,
}

const REFUSED: Stranded = Stranded {
    preset: "ci-refused-leader",
    trace: concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/bug-no-resend-on-kept-leader.json"
    ),
};

const LOST_REQUEST: Stranded = Stranded {
    preset: "ci-leader-crash",
    trace: concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/traces/bug-no-resend-on-kept-leader-lost-request.json"
    ),
};

fn stranded_lasso(case: &Stranded) -> (RebalanceModel, Lasso) {
    let model = RebalanceModel::new(
        progress_config(case.preset),
        BugSet::of(&[Bug::NoResendOnKeptLeader]),
    );
    let search = fair_cycles_for_goals(&model);
    let lasso = search
        .violations
        .into_iter()
        .find(|l| l.goal == "LIVE-PROGRESS")
        .unwrap_or_else(|| panic!("{}: LIVE-PROGRESS holds under the switch", case.preset));
    (model, lasso)
}

fn assert_stranded(case: &Stranded) {
    let (model, lasso) = stranded_lasso(case);
    assert_eq!(
        (lasso.prefix.len(), lasso.cycle.len()),
        crate::common::pinned_lasso(Bug::NoResendOnKeptLeader, case.preset),
        "{lasso:?}"
    );
    let states = assert_fair_lasso(&model, &lasso);
    for s in &states {
        assert!(s.servers.iter().all(|x| x.up), "every server is up");
        assert!(s.network.is_empty(), "nothing in flight");
        assert_eq!(s.coordinator.status_of(0), Some(BucketStatus::Timeout));
        let e = s.coordinator.plan_entry(0).unwrap();
        assert_ne!(
            s.store.buckets.lai[0].leader,
            Some(e.new_leader),
            "the new leader was never elected"
        );
        assert_eq!(s.budgets.server_crash, 0, "the crash is spent");
    }
    assert!(lasso.cycle.iter().any(|a| matches!(
        a,
        Action::ProcessEvent {
            event: Event::Reconcile { .. },
            ..
        }
    )));
    // The kept trace is this lasso (loading it checks that the cycle closes).
    let kept = Trace::read(case.trace).unwrap();
    assert_eq!(kept, lasso.trace(&model));
    assert_eq!(
        kept.cycle_start,
        Some(crate::common::pinned_lasso(Bug::NoResendOnKeptLeader, case.preset).0)
    );
}

/// F20 in the model: the refusal of the leader's older proposal arrives after it adopted the
/// view R19 sent, so it waits for a newer request that the election, which keeps it, never
/// sent before F22.
#[test]
fn a_late_refusal_strands_the_leader_without_the_resend() {
    assert_stranded(&REFUSED);
    let (_, lasso) = stranded_lasso(&REFUSED);
    let entry = {
        let m = RebalanceModel::new(
            progress_config(REFUSED.preset),
            BugSet::of(&[Bug::NoResendOnKeptLeader]),
        );
        replay(&m, &m.init_state(), &lasso.prefix).pop().unwrap()
    };
    let leader = entry.store.buckets.lai[0].leader.unwrap();
    let view = entry.view(leader, 0).unwrap();
    assert!(view.isr_rejected, "the leader waits for a newer request");
    assert!(lasso.prefix.iter().any(|a| matches!(
        a,
        Action::DeliverAdjustIsrResponse { msg } if matches!(msg.result, rebalance_model::AdjustIsrResult::Err)
    )));
}

/// The same with no refusal at all: the request R19 sent the new leader-to-be's old leader is
/// lost, and nothing sends it again.
#[test]
fn a_lost_request_strands_the_leader_without_the_resend() {
    assert_stranded(&LOST_REQUEST);
}

/// With give-ups on (the default check), the stranded bucket gives up at the cycle's first
/// Reconcile past R14.3's window, with every server up and no fault left: FAILED, which
/// LIVE-TRACKED-FINISHES, LIVE-ADMITTED-FINISHES and the rest accept. Under the spec (R5's
/// resend) the prefix goes on to complete instead.
#[test]
fn with_give_ups_the_stranded_bucket_ends_failed_and_the_fix_completes_it() {
    use rebalance_model::check::checker::{check, CheckOptions, Verdict};
    for case in [&REFUSED, &LOST_REQUEST] {
        let mut config = preset(case.preset).unwrap();
        config.max_network = common::cycle_bound(case.preset);
        let with_give_ups = RebalanceModel::new(config, BugSet::of(&[Bug::NoResendOnKeptLeader]));
        let r = check(&with_give_ups, &CheckOptions::dfs(2));
        for (p, v) in &r.verdicts {
            assert!(
                !matches!(v, Verdict::Violated(_)),
                "{}: {p} {v:?}",
                case.preset
            );
        }
        let progress = r.verdicts.iter().find(|(p, _)| *p == "LIVE-PROGRESS");
        assert!(matches!(progress, Some((_, Verdict::NotApplicable(_)))));
        // The kept prefix, then ticks and reconciles with give-ups on: FAILED, all servers up.
        let kept = Trace::read(case.trace).unwrap();
        let n = kept.cycle_start.unwrap();
        let mut s = replay(
            &with_give_ups,
            &with_give_ups.init_state(),
            &kept.steps[..n],
        )
        .pop()
        .unwrap();
        for _ in 0..16 {
            if s.coordinator.status_of(0) == Some(BucketStatus::Failed) {
                break;
            }
            let a = if s.coordinator.events.is_empty() {
                Action::TICK
            } else {
                Action::ProcessEvent {
                    event: s.coordinator.events[0],
                    fail_store_op: None,
                }
            };
            s = with_give_ups.step(&s, &a).expect("enabled").0;
        }
        assert_eq!(s.coordinator.status_of(0), Some(BucketStatus::Failed));
        assert!(s.servers.iter().all(|x| x.up));
        // Under the spec the same prefix, fairly continued, completes: the progress check of
        // the preset holds (`every_ci_preset_makes_progress`); here one continuation.
        let spec = RebalanceModel::new(progress_config(case.preset), BugSet::none());
        let prefix = replay(&spec, &spec.init_state(), &kept.steps[..n]);
        let s = completed_fairly(&spec, prefix.last().unwrap().clone());
        assert_eq!(
            s.coordinator.overall,
            Some(OverallStatus::Completed),
            "{}: the resend completes the bucket",
            case.preset
        );
    }
}

/// Spec 7.3's audit, "every way to FAILED", its first allowed row: a target server lost for
/// good. With give-ups on, R14.3's target-unavailable clause gives the bucket up while the
/// target is down, which is the clause's cause; in the progress check the restart is
/// obligatory, so no fair run keeps the target down and no bucket fails.
#[test]
fn a_target_lost_for_good_gives_up_for_its_cause() {
    let model = RebalanceModel::new(preset("ci-server-crash").unwrap(), BugSet::none());
    let s = common::find(&model, |s| {
        s.coordinator.status_of(0) == Some(BucketStatus::Failed)
            && s.coordinator
                .plan_entry(0)
                .is_some_and(|e| !e.trs_set().is_subset(s.live()))
    });
    let e = s.coordinator.plan_entry(0).unwrap();
    let down: Vec<_> = e
        .trs
        .iter()
        .filter(|t| !s.servers[**t as usize].up)
        .collect();
    assert!(!down.is_empty(), "a target is down at the give-up");
    let progress = RebalanceModel::new(progress_config("ci-server-crash"), BugSet::none());
    let mut seen = HashSet::new();
    let mut stack = vec![progress.init_state()];
    while let Some(s) = stack.pop() {
        assert_ne!(s.coordinator.status_of(0), Some(BucketStatus::Failed));
        progress.successors(&s, |_, next, _| {
            if seen.insert(common::fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
}

/// The audit's second allowed row: a no-progress give-up while faults are still injected. On a
/// variant of `ci-store` (three store failures, a no-progress window of one tick), Phase A's
/// write fails at admission and at each reconcile of the window, so the observed state never
/// changes and R14.3's no-progress clause gives the bucket up: every step of the window had a
/// fault. The progress check's same prefix completes once the faults stop.
#[test]
fn store_failures_through_the_window_give_up_for_their_cause() {
    let mut config = preset("ci-store").unwrap();
    config.budgets.store_failure = 3;
    config.budgets.cancel = 0;
    config.no_progress_timeout_ticks = 1;
    config.target_unavailable_timeout_ticks = 1;
    let model = RebalanceModel::new(config.clone(), BugSet::none());
    let failing = |a: Action| a.with_fail_store_op(Some(1));
    let reconcile = |key| Action::ProcessEvent {
        event: Event::Reconcile { key },
        fail_store_op: None,
    };
    let key = rebalance_model::Key { rid: 1, bucket: 0 };
    let timeout = Action::ProcessEvent {
        event: Event::Timeout { key },
        fail_store_op: None,
    };
    // Register, its Phase A failing; the task timeout; the first two reconciles failing too.
    let prefix = [
        // The task write is the register's first store operation, Phase A's the second.
        Action::Register {
            plan: None,
            fail_store_op: Some(2),
        },
        Action::TICK,
        Action::TICK,
        timeout,
        failing(reconcile(key)),
        Action::TICK,
        failing(reconcile(key)),
        Action::TICK,
    ];
    let states = replay(&model, &model.init_state(), &prefix);
    let last = states.last().unwrap();
    assert_eq!(
        last.budgets.store_failure, 0,
        "a fault at every step of the window"
    );
    assert_eq!(
        last.store.buckets.assignment[0].as_slice(),
        [0],
        "still at origin"
    );
    let (after, out) = model
        .step(last, &reconcile(key))
        .expect("the reconcile is queued");
    let gave_up = out.gave_up.expect("R14.3 gives up");
    assert!(gave_up.no_progress && !gave_up.target_unavailable);
    assert_eq!(after.coordinator.status_of(0), Some(BucketStatus::Failed));
    // Without give-ups the same prefix completes once the faults stop.
    config.no_give_up = true;
    let progress = RebalanceModel::new(config, BugSet::none());
    let states = replay(&progress, &progress.init_state(), &prefix);
    let s = completed_fairly(&progress, states.last().unwrap().clone());
    assert_eq!(s.coordinator.overall, Some(OverallStatus::Completed));
}

/// The audit's third row: statuses restored from a stored FAILED task (R16) are no give-up of
/// this run; LIVE-PROGRESS exempts them as INV-NO-STRAY-UNION does.
#[test]
fn a_recovered_failed_task_is_not_a_give_up() {
    let mut config = preset("ci-recovery-store").unwrap();
    config.no_give_up = true;
    config.store = Some(rebalance_model::StoreConfig {
        coordinator_epoch: 1,
        task: Some(rebalance_model::TaskConfig {
            id: 1,
            status: rebalance_model::TaskStatus::Failed,
            cancel_requested: false,
            plan: vec![rebalance_model::PlanEntryConfig {
                bucket: 0,
                ors: vec![0, 1],
                trs: vec![1, 2],
                old_leader: 0,
            }],
        }),
    });
    config.budgets = rebalance_model::Budgets::default();
    let model = RebalanceModel::new(config, BugSet::none());
    let recover = Action::ProcessEvent {
        event: Event::Recover,
        fail_store_op: None,
    };
    let s = model.step(&model.init_state(), &recover).unwrap().0;
    assert_eq!(s.coordinator.status_of(0), Some(BucketStatus::Failed));
    assert!(s.ghost.final_recovered);
    assert!(model.is_fair_end(&s));
    let p = stateright::Model::property(&model, "LIVE-PROGRESS");
    assert!((p.condition)(&model, &s), "exempt");
}
