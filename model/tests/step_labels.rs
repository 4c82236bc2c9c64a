//! Every coordinator step names the rule it ran (spec 5, "Labels"). The labels are what a suite
//! targets and what the conformance coverage counts, but no verdict reads them: mutating the
//! model's one labelling call away (`Step::fired` -> `()`) changed no verdict (spec/findings.md
//! F18). Part of the model's mutation oracle (`.cargo/mutants-model.toml`).

mod common;
use common::fingerprint;
use rebalance_model::check::por::reduced;
use rebalance_model::{preset, Action, BugSet, Event, Rule};
use std::collections::{BTreeSet, HashSet};

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
        let init = model.init_state();
        let mut seen = HashSet::from([fingerprint(&init)]);
        let mut stack = vec![init];
        while let Some(s) = stack.pop() {
            model.successors(&s, |a, next, out| {
                if let Some(rule) = rule_of(&a) {
                    assert!(
                        out.rules.contains(rule),
                        "{name}: {a:?} did not fire {rule:?} (fired {:?})",
                        out.rules
                    );
                    seen_rules.insert(format!("{rule:?}"));
                }
                if seen.insert(fingerprint(&next)) {
                    stack.push(next);
                }
            });
        }
    }
    // Every kind of step above was met, so none of the checks is vacuous.
    assert_eq!(seen_rules.len(), 9, "{seen_rules:?}");
}
