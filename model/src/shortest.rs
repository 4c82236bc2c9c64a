//! Shortest counterexamples. Stateright 0.31.0 keeps the last discovery, not the first, so
//! this is our own breadth-first search: every state is recorded with its parent and the index
//! of the action that reached it, at its first (hence minimal) depth, and each property is
//! checked when a state is first seen.

use crate::action::Action;
use crate::model::RebalanceModel;
use crate::state::SystemState;
use stateright::{Model, Property};
use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, Hasher};

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

pub fn fingerprint(s: &SystemState) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
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
    let init = model.init_state();
    let init_fp = fingerprint(&init);
    let mut parents: HashMap<u64, (u64, u32)> = HashMap::new();
    parents.insert(init_fp, (init_fp, u32::MAX));
    let mut found: Vec<(&'static str, u64)> = Vec::new();
    for p in &props {
        if hit(p, &init) {
            found.push((p.name, init_fp));
        }
    }
    let mut queue = VecDeque::from([(init.clone(), init_fp)]);
    let mut actions = Vec::new();
    while found.len() < props.len() {
        let Some((state, fp)) = queue.pop_front() else {
            break;
        };
        actions.clear();
        model.actions(&state, &mut actions);
        for (i, a) in actions.iter().enumerate() {
            let Some(next) = model.next_state(&state, *a) else {
                continue;
            };
            if !model.within_bound(&next) {
                continue;
            }
            let nfp = fingerprint(&next);
            if parents.contains_key(&nfp) {
                continue;
            }
            parents.insert(nfp, (fp, i as u32));
            for p in &props {
                if !found.iter().any(|(n, _)| *n == p.name) && hit(p, &next) {
                    found.push((p.name, nfp));
                }
            }
            queue.push_back((next, nfp));
        }
    }
    found
        .into_iter()
        .map(|(name, fp)| rebuild(model, &init, &parents, name, fp))
        .collect()
}

fn rebuild(
    model: &RebalanceModel,
    init: &SystemState,
    parents: &HashMap<u64, (u64, u32)>,
    property: &'static str,
    mut fp: u64,
) -> Counterexample {
    let mut indices = Vec::new();
    while let Some(&(parent, i)) = parents.get(&fp) {
        if i == u32::MAX {
            break;
        }
        indices.push(i as usize);
        fp = parent;
    }
    indices.reverse();
    let mut state = init.clone();
    let mut actions = Vec::new();
    for &i in &indices {
        let mut enabled = Vec::new();
        model.actions(&state, &mut enabled);
        let a = enabled[i];
        state = model.next_state(&state, a).expect("recorded edge");
        actions.push(a);
    }
    Counterexample {
        property,
        actions,
        indices,
    }
}
