//! Every coordinator step names the rule it ran (spec 5, "Labels"), and reports the events it
//! enqueued. The labels are what a suite targets and what the conformance coverage counts, but
//! no verdict reads them: mutating the model's one labelling call away (`Step::fired` -> `()`)
//! changed no verdict (spec/findings.md F18). Part of the model's mutation oracle
//! (`.cargo/mutants-model.toml`).

mod common;
use common::each_edge;
use rebalance_model::check::por::reduced;
use rebalance_model::{preset, Action, BugSet, Event, Rule};
use std::collections::BTreeSet;

/// The rule a coordinator step of this action runs first, whatever it then decides.
fn rule_of(a: &Action) -> Option<Rule> {
    Some(match a {
        Action::Register { .. } => Rule::R1,
        Action::Cancel { .. } => Rule::R2,
        Action::ProcessEvent { event, .. } => match event {
            Event::Timeout { .. } => Rule::R13,
            Event::Reconcile { .. } => Rule::R14,
            Event::Finalize { .. } => Rule::R15,
            Event::Recover => Rule::R16,
        },
        Action::DeliverNliResponse { .. } => Rule::R12,
        Action::CrashCoordinator => Rule::R17,
        Action::Tick { .. } => Rule::R23,
        _ => return None,
    })
}

#[test]
fn every_coordinator_step_fires_its_rule() {
    let mut seen_rules = BTreeSet::new();
    for name in ["ci-store", "ci-coordinator-crash"] {
        let (model, _) = reduced(preset(name).expect("preset"), BugSet::none());
        each_edge(&model, |_, a, _, out| {
            if let Some(rule) = rule_of(a) {
                assert!(
                    out.rules.contains(rule),
                    "{name}: {a:?} did not fire {rule:?} (fired {:?})",
                    out.rules
                );
                seen_rules.insert(format!("{rule:?}"));
            }
        });
    }
    // Every kind of step above was met, so none of the checks is vacuous.
    assert_eq!(seen_rules.len(), 9, "{seen_rules:?}");
}

/// Every step reports the events it enqueued (`StepOutput::enqueued`, which conformance
/// compares with the manager's effects): the queue after it is the queue before, its front
/// taken if the step processed an event, with those appended. A crash of the coordinator is
/// left out (R17 starts a new queue). Walked under `recovered-shows-rebalancing` too, whose
/// recovery takes back the reconciles it enqueued (its `!=` turned to `==` reported the wrong
/// ones and changed no verdict, F18).
#[test]
fn every_step_reports_the_events_it_enqueued() {
    use rebalance_model::Bug;
    let cases = [
        ("ci-coordinator-crash", BugSet::none()),
        (
            "ci-two-buckets",
            BugSet::of(&[Bug::RecoveredShowsRebalancing]),
        ),
    ];
    let mut enqueued = 0;
    for (name, bugs) in cases {
        let mut config = preset(name).expect("preset");
        config.max_network = Some(2);
        let model = rebalance_model::RebalanceModel::new(config, bugs);
        each_edge(&model, |s, a, next, out| {
            if !matches!(a, Action::CrashCoordinator) {
                let mut expected: Vec<Event> = s.coordinator.events.iter().copied().collect();
                if matches!(a, Action::ProcessEvent { .. }) {
                    expected.remove(0);
                }
                expected.extend(out.enqueued.iter().copied());
                let got: Vec<Event> = next.coordinator.events.iter().copied().collect();
                assert_eq!(got, expected, "{name}: {a:?}");
                enqueued += out.enqueued.len();
            }
        });
    }
    assert!(enqueued > 0);
}

/// R18's outcome as INV-ADJUST-ISR-FENCED's ghost reads it (`adjust_isr_accepted`, the Ok
/// reply in the step's output) is what R18 did: accepted exactly when it wrote the bucket to
/// the store. R18 refuses every AdjustIsr whose epochs are not the current ones, so no step
/// of the model ever sets the ghost, and under `adjust_isr_accepted` -> `false` no verdict
/// changed (F18, whole-set shard 3/8). Walked where proposals are both accepted and refused
/// (a store failure refuses one on `ci-store`; a lost answer leaves a stale one on
/// `ci-rf3-loss`).
#[test]
fn every_adjust_isr_step_reports_acceptance_exactly_when_it_wrote() {
    use rebalance_model::ghost_inputs::adjust_isr_accepted;
    let (mut accepted, mut refused) = (0, 0);
    for name in ["ci-store", "ci-rf3-loss"] {
        let (model, _) = reduced(preset(name).expect("preset"), BugSet::none());
        each_edge(&model, |s, a, next, out| {
            let Action::DeliverAdjustIsr { msg, .. } = a else {
                return;
            };
            let b = msg.bucket as usize;
            let wrote = next.store.buckets.lai[b] != s.store.buckets.lai[b]
                || next.store.buckets.assignment[b] != s.store.buckets.assignment[b];
            assert_eq!(adjust_isr_accepted(out), wrote, "{name}: {a:?}");
            if wrote {
                accepted += 1;
            } else {
                refused += 1;
            }
        });
    }
    assert!(
        accepted > 0 && refused > 0,
        "{accepted} accepted, {refused} refused"
    );
}
