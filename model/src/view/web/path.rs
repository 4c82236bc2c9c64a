//! A path through the model, as the Explorer's addresses name it, and what each property says
//! of its last state.
//!
//! An address `/steps/0/3/1` is the initial state (the leading `0`, the only one), then the
//! action at index 3 of [`RebalanceModel::candidate_actions`] in it, then index 1 in the state
//! that reached: the indices `check` prints with a counterexample, so its link lands on the very
//! state it reports.

use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use crate::verdict::properties;
use stateright::{Expectation, Property};

/// The states and actions of a path, `states[0]` the initial state and `actions[i]` the step
/// from `states[i]` to `states[i + 1]`.
pub struct Walked {
    pub indices: Vec<usize>,
    pub states: Vec<SystemState>,
    pub actions: Vec<Action>,
}

impl Walked {
    pub fn last(&self) -> &SystemState {
        self.states.last().expect("a path has its initial state")
    }

    pub fn previous(&self) -> Option<&SystemState> {
        self.states.len().checked_sub(2).map(|i| &self.states[i])
    }
}

/// Parses the part of an address after `/steps`: `/0`, `/0/3/1`, a trailing `/` allowed.
pub fn parse(route: &str) -> Result<Vec<usize>, String> {
    let parts: Vec<&str> = route.trim_matches('/').split('/').collect();
    let mut numbers = Vec::with_capacity(parts.len());
    for p in &parts {
        match p.parse::<usize>() {
            Ok(n) => numbers.push(n),
            Err(_) => {
                return Err(format!(
                    "`{p}` in the address is not an action index (the address is /steps/0/I/J/...)"
                ))
            }
        }
    }
    match numbers.split_first() {
        Some((0, rest)) => Ok(rest.to_vec()),
        Some((n, _)) => Err(format!(
            "the model has one initial state, 0; the address starts at {n}"
        )),
        None => Err("the address names no state".into()),
    }
}

/// Takes the actions at `indices` from the initial state; an index that is out of range or
/// names an action not enabled there is an error naming the step.
pub fn walk(model: &RebalanceModel, indices: &[usize]) -> Result<Walked, String> {
    let mut states = vec![model.init_state()];
    let mut actions = Vec::with_capacity(indices.len());
    let mut candidates = Vec::new();
    for (step, &i) in indices.iter().enumerate() {
        let state = states.last().expect("non-empty");
        candidates.clear();
        model.candidate_actions(state, &mut candidates);
        let Some(action) = candidates.get(i) else {
            return Err(format!(
                "step {}: the state has {} actions (0 to {}), not {i}",
                step + 1,
                candidates.len(),
                candidates.len().saturating_sub(1)
            ));
        };
        let Some((next, _)) = model.step(state, action) else {
            return Err(format!(
                "step {}: action {i} ({}) is not enabled in that state",
                step + 1,
                crate::view::describe::short_action(action)
            ));
        };
        actions.push(*action);
        states.push(next);
    }
    Ok(Walked {
        indices: indices.to_vec(),
        states,
        actions,
    })
}

/// The kind of a property as the spec's section 7 sorts them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// INV-*: must hold in every state (history invariants read sticky flags the steps set, so
    /// they are judged on a state too).
    Invariant,
    /// LIVE-*: must hold at every fair end state.
    Liveness,
    /// SOME-*: some reachable state must satisfy it.
    Companion,
}

impl Kind {
    pub fn of(p: &Property<RebalanceModel>) -> Kind {
        match p.expectation {
            Expectation::Sometimes => Kind::Companion,
            _ if p.name.starts_with("LIVE-") => Kind::Liveness,
            _ => Kind::Invariant,
        }
    }

    pub fn word(self) -> &'static str {
        match self {
            Kind::Invariant => "invariant",
            Kind::Liveness => "liveness",
            Kind::Companion => "companion",
        }
    }
}

/// What a property says of the last state of a path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Mark {
    /// An invariant or liveness goal that holds here.
    Holds,
    /// Violated here; `first` is the step (0: the initial state) where it first failed on this
    /// path.
    Violated { first: usize },
    /// A companion satisfied here.
    ExampleHere,
    /// A companion satisfied earlier on this path, first at step `at`, not here.
    ExampleEarlier { at: usize },
    /// A companion satisfied nowhere on this path.
    NoExampleOnPath,
    /// A companion `check` does not require here, and why.
    NotApplicable(&'static str),
}

impl Mark {
    /// The token the page carries (`data-mark`), for tests and styles.
    pub fn token(&self) -> &'static str {
        match self {
            Mark::Holds => "holds",
            Mark::Violated { .. } => "violated",
            Mark::ExampleHere => "example-here",
            Mark::ExampleEarlier { .. } => "example-earlier",
            Mark::NoExampleOnPath => "no-example",
            Mark::NotApplicable(_) => "n-a",
        }
    }
}

pub struct PropertyMark {
    pub name: &'static str,
    pub kind: Kind,
    pub mark: Mark,
}

/// Every property's mark on the last state of `walked`, in the spec's order.
pub fn marks(model: &RebalanceModel, walked: &Walked) -> Vec<PropertyMark> {
    let last = walked.states.len() - 1;
    properties::all()
        .iter()
        .map(|p| {
            let kind = Kind::of(p);
            let holds = |s: &SystemState| (p.condition)(model, s);
            let first = |want: bool| walked.states.iter().position(|s| holds(s) == want);
            let na = properties::property_not_applicable(p, &model.config);
            let mark = match kind {
                Kind::Invariant | Kind::Liveness if na.is_some() => {
                    Mark::NotApplicable(na.expect("checked"))
                }
                Kind::Invariant | Kind::Liveness if holds(walked.last()) => Mark::Holds,
                Kind::Invariant | Kind::Liveness => Mark::Violated {
                    first: first(false).unwrap_or(last),
                },
                Kind::Companion => match na {
                    Some(why) => Mark::NotApplicable(why),
                    None if holds(walked.last()) => Mark::ExampleHere,
                    None => match first(true) {
                        Some(at) => Mark::ExampleEarlier { at },
                        None => Mark::NoExampleOnPath,
                    },
                },
            };
            PropertyMark {
                name: p.name,
                kind,
                mark,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::bug::{Bug, BugSet};

    #[test]
    fn addresses_parse_to_action_indices_and_bad_ones_say_why() {
        assert_eq!(parse("/0"), Ok(vec![]));
        assert_eq!(parse("/0/3/1/"), Ok(vec![3, 1]));
        assert!(parse("/1/2").unwrap_err().contains("one initial state"));
        assert!(parse("/0/x").unwrap_err().contains("`x`"));
    }

    fn cancel_best_effort() -> RebalanceModel {
        RebalanceModel::new(
            crate::config::presets::preset("ci-store").unwrap(),
            BugSet::of(&[Bug::CancelBestEffort]),
        )
    }

    /// `check --config ci-store --bug cancel-best-effort` reports INV-CANCEL-PERSISTED-FIRST
    /// violated in two steps at `0/0/1`; its last state must carry the mark, and its first not.
    #[test]
    fn the_checks_counterexample_is_marked_violated_on_its_last_state() {
        let m = cancel_best_effort();
        let find = |w: &Walked| {
            marks(&m, w)
                .into_iter()
                .find(|p| p.name == "INV-CANCEL-PERSISTED-FIRST")
                .unwrap()
                .mark
        };
        let w = walk(&m, &[0, 1]).unwrap();
        assert_eq!(find(&w), Mark::Violated { first: 2 });
        assert_eq!(find(&walk(&m, &[0]).unwrap()), Mark::Holds);
        // A companion n/a on ci-store is marked so, whatever the path.
        let na = marks(&m, &w)
            .into_iter()
            .find(|p| p.name == "SOME-RECOVERED-COMPLETES")
            .unwrap();
        assert!(matches!(na.mark, Mark::NotApplicable(_)));
    }

    #[test]
    fn a_disabled_or_missing_action_is_refused_with_its_step() {
        let m = cancel_best_effort();
        let e = walk(&m, &[0, 999]).err().unwrap();
        assert!(e.starts_with("step 2: the state has"), "{e}");
        // A candidate action that `step` refuses, on some path of at most eight steps: the
        // walk must refuse it by name. (Its absence would fail the test, not skip the check.)
        let mut paths = vec![Vec::new()];
        let mut found = None;
        'search: for _ in 0..8 {
            let mut next = Vec::new();
            for p in &paths {
                let s = walk(&m, p).unwrap().last().clone();
                let mut all = Vec::new();
                m.candidate_actions(&s, &mut all);
                for (i, a) in all.iter().enumerate() {
                    let mut q = p.clone();
                    q.push(i);
                    if m.step(&s, a).is_none() {
                        found = Some(q);
                        break 'search;
                    }
                    next.push(q);
                }
            }
            paths = next;
        }
        let path = found.expect("a refused candidate within eight steps of ci-store");
        let e = walk(&m, &path).err().unwrap();
        assert!(
            e.starts_with(&format!("step {}: action", path.len())) && e.contains("is not enabled"),
            "{e}"
        );
    }
}
