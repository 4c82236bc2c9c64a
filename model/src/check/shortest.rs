//! Shortest counterexamples. Stateright 0.31.0 keeps the last discovery, not the first, so
//! this is our own breadth-first search (`walk::bfs`): every state is recorded with its parent
//! and the index of the action that reached it, at its first (hence minimal) depth, and each
//! property is checked when a state is first seen.

use crate::check::walk;
use crate::config::Config;
use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use crate::trace::Trace;
use crate::verdict::bug::{Bug, BugSet};
use stateright::{Model, Property};
use std::ops::ControlFlow;

/// A path from the initial state: the actions and their indices in `actions()` order.
#[derive(Clone, Debug)]
pub struct Counterexample {
    pub property: &'static str,
    pub actions: Vec<Action>,
    pub indices: Vec<usize>,
}

impl Counterexample {
    /// The Explorer path, `0/3/1` (the leading 0 is the initial state).
    pub fn encoded(&self) -> String {
        std::iter::once("0".to_string())
            .chain(self.indices.iter().map(|i| i.to_string()))
            .collect::<Vec<_>>()
            .join("/")
    }
}

pub use crate::check::walk::fingerprint;

/// The shortest violation of the property `bug` breaks, on `config` with `bug` switched on, as
/// a replayable trace; `None` if the property holds there.
pub fn bug_counterexample(config: Config, bug: Bug) -> Option<Trace> {
    let bugs = BugSet::of(&[bug]);
    let model = RebalanceModel::new(config.clone(), bugs);
    let property = bug.violated_property();
    first_discoveries(&model, &[property])
        .into_iter()
        .find(|c| c.property == property)
        .map(|c| Trace::new(config, bugs, c.actions))
}

/// The first violation of each named `always` property (or example of a `sometimes`), in BFS
/// order, so each path is a shortest one. Stops when all are found or the graph is exhausted.
pub fn first_discoveries(model: &RebalanceModel, names: &[&'static str]) -> Vec<Counterexample> {
    let props: Vec<Property<RebalanceModel>> = model
        .properties()
        .into_iter()
        .filter(|p| names.contains(&p.name))
        .collect();
    let hit = |p: &Property<RebalanceModel>, s: &SystemState| {
        let holds = (p.condition)(model, s);
        if p.expectation == stateright::Expectation::Always {
            !holds
        } else {
            holds
        }
    };
    let mut found: Vec<(&'static str, u64)> = Vec::new();
    let parents = walk::bfs(model, |state, fp| {
        for p in &props {
            if !found.iter().any(|(n, _)| *n == p.name) && hit(p, state) {
                found.push((p.name, fp));
            }
        }
        if found.len() == props.len() {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    found
        .into_iter()
        .map(|(property, fp)| {
            let (actions, indices) = parents.path_to(model, fp);
            Counterexample {
                property,
                actions,
                indices,
            }
        })
        .collect()
}
