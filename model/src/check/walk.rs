//! The model's own graph searches share this engine: one fingerprint, a breadth-first search
//! that keeps parent links (for shortest paths) and a depth-first search that tells which
//! edges close a cycle. Both follow the edges Stateright follows: every candidate action in
//! `Model::actions` order that `step` enables, within the configuration's search bound, so an
//! action index recorded here opens the same path in the Explorer.

use crate::state::SystemState;
use crate::step::action::{Action, StepOutput};
use crate::step::model::RebalanceModel;
use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::ControlFlow;

/// A state's fingerprint, the one every search of ours and Stateright's checker give it:
/// AHash with Stateright 0.31's fixed seeds (`stateright::fingerprint`, private there), the same
/// on every run. Zero, which Stateright refuses, is read as 1.
pub fn fingerprint(s: &SystemState) -> u64 {
    const KEY1: u64 = 123_456_789_987_654_321;
    const KEY2: u64 = 98_765_432_123_456_789;
    // Stateright's steps, spelled out: ahash's `hash_one` may take a specialised path.
    #[allow(clippy::manual_hash_one)]
    {
        let mut h = ahash::RandomState::with_seeds(KEY1, KEY2, 0, 0).build_hasher();
        s.hash(&mut h);
        h.finish().max(1)
    }
}

/// The edges out of `state`: action index (in candidate order), action, successor, output.
pub fn edges(
    model: &RebalanceModel,
    state: &SystemState,
    mut visit: impl FnMut(usize, Action, SystemState, StepOutput),
) {
    let mut candidates = Vec::new();
    crate::check::por::search_actions(model, state, &mut candidates);
    for (i, a) in candidates.into_iter().enumerate() {
        if let Some((next, out)) = model.step(state, &a) {
            if model.within_bound(&next) {
                visit(i, a, next, out);
            }
        }
    }
}

/// Parent links of a breadth-first search: each state's first (hence shortest) predecessor
/// and the index of the action that reached it.
pub struct Parents {
    init: SystemState,
    links: HashMap<u64, (u64, u32)>,
}

impl Parents {
    /// Number of distinct states seen.
    pub fn len(&self) -> usize {
        self.links.len()
    }

    pub fn is_empty(&self) -> bool {
        self.links.is_empty()
    }

    /// The shortest path to the state with fingerprint `fp`: its actions and their indices.
    pub fn path_to(&self, model: &RebalanceModel, mut fp: u64) -> (Vec<Action>, Vec<usize>) {
        let mut indices = Vec::new();
        while let Some(&(parent, i)) = self.links.get(&fp) {
            if i == u32::MAX {
                break;
            }
            indices.push(i as usize);
            fp = parent;
        }
        indices.reverse();
        let mut state = self.init.clone();
        let mut actions = Vec::new();
        for &i in &indices {
            let mut candidates = Vec::new();
            crate::check::por::search_actions(model, &state, &mut candidates);
            let a = candidates[i];
            state = model.step(&state, &a).expect("recorded edge").0;
            actions.push(a);
        }
        (actions, indices)
    }
}

/// Breadth-first from the initial state. `visit` sees every state once, at its first depth,
/// with its fingerprint, and stops the search by returning `Break`.
pub fn bfs(
    model: &RebalanceModel,
    mut visit: impl FnMut(&SystemState, u64) -> ControlFlow<()>,
) -> Parents {
    let init = model.init_state();
    let init_fp = fingerprint(&init);
    let mut links = HashMap::from([(init_fp, (init_fp, u32::MAX))]);
    let mut queue = VecDeque::new();
    if visit(&init, init_fp).is_continue() {
        queue.push_back((init.clone(), init_fp));
    }
    'search: while let Some((state, fp)) = queue.pop_front() {
        let mut children = Vec::new();
        edges(model, &state, |i, _, next, _| children.push((i, next)));
        for (i, next) in children {
            let nfp = fingerprint(&next);
            if links.contains_key(&nfp) {
                continue;
            }
            links.insert(nfp, (fp, i as u32));
            if visit(&next, nfp).is_break() {
                break 'search;
            }
            queue.push_back((next, nfp));
        }
    }
    Parents { init, links }
}

/// An edge as the depth-first search meets it.
pub struct DfsEdge<'a> {
    pub action: Action,
    /// The actions from the initial state to the edge's source.
    pub path: &'a [Action],
    /// The target is on the current search path: the edge closes a cycle.
    pub closes_cycle: bool,
}

/// What a depth-first search saw.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DfsCount {
    pub states: usize,
    pub edges: usize,
}

/// Depth-first from the initial state, visiting every edge once; `visit` stops the search by
/// returning `Break`.
pub fn dfs(
    model: &RebalanceModel,
    mut visit: impl FnMut(DfsEdge<'_>) -> ControlFlow<()>,
) -> DfsCount {
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    struct Frame {
        fp: u64,
        out: Vec<Option<(Action, SystemState)>>,
        next: usize,
    }
    let frame = |state: &SystemState, fp: u64| {
        let mut out = Vec::new();
        edges(model, state, |_, a, next, _| out.push(Some((a, next))));
        Frame { fp, out, next: 0 }
    };
    let init = model.init_state();
    let init_fp = fingerprint(&init);
    let mut color: HashMap<u64, u8> = HashMap::from([(init_fp, ON_PATH)]);
    let mut stack = vec![frame(&init, init_fp)];
    let mut path: Vec<Action> = Vec::new();
    let mut count = DfsCount::default();
    while let Some(top) = stack.last_mut() {
        if top.next == top.out.len() {
            color.insert(top.fp, DONE);
            stack.pop();
            path.pop();
            continue;
        }
        let (action, next) = top.out[top.next].take().expect("each edge is taken once");
        top.next += 1;
        count.edges += 1;
        let nfp = fingerprint(&next);
        let seen = color.get(&nfp).copied();
        let edge = DfsEdge {
            action,
            path: &path,
            closes_cycle: seen == Some(ON_PATH),
        };
        if visit(edge).is_break() {
            break;
        }
        if seen.is_none() {
            color.insert(nfp, ON_PATH);
            path.push(action);
            stack.push(frame(&next, nfp));
        }
    }
    count.states = color.len();
    count
}
