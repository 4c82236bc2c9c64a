//! The fair-cycle search (spec 7.3, "Fair cycles"): an on-the-fly iterative Tarjan search for
//! the strongly connected components of the reachable graph, over exactly the edges of
//! [`walk::edges`] (the order and the `max_network` bound Stateright follows), and for each
//! non-trivial component the question whether a fair run can stay in it forever without a
//! liveness goal ever holding (`lasso.rs`).
//!
//! Memory: per state, its fingerprint and a 32-bit Tarjan index in one map (the index while the
//! state is on the Tarjan stack, a "done" mark after); the states themselves are kept only on
//! the Tarjan stack and in the search frames, each frame with the successors it has still to
//! visit, as the back-edge search before it did. The low-link lives in the frame. In an acyclic
//! graph every state is its own component and leaves the stack when its frame ends, so the cost
//! is that of a plain depth-first search.

use crate::check::lasso::{self, Goal, Lasso};
use crate::check::walk::{self, fingerprint};
use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use std::collections::HashMap;

/// The liveness goals the search decides, each as "infinitely often g" (spec 7.3): the LIVE-*
/// goals, the same predicates the checker reads at fair end states.
pub fn goals() -> &'static [Goal] {
    crate::verdict::properties::live_goals()
}

/// What the search saw, and every violation: per goal, the first fair component (in the order
/// the search closes them) on which it never holds.
#[derive(Debug)]
pub struct FairCycleSearch {
    pub states: usize,
    pub edges: usize,
    /// Components with at least one edge inside.
    pub nontrivial_sccs: usize,
    /// States in those components.
    pub cyclic_states: usize,
    /// Every non-trivial sub-component (spec 7.3, "Fair cycles") on which a goal never holds
    /// but which no fair run stays in: the goal and the obligatory action it starves, in the
    /// order the search met them.
    pub unfair: Vec<(&'static str, Action)>,
    pub violations: Vec<Lasso>,
}

/// Searches the reachable graph of `model` for fair cycles that violate one of `goals`, and
/// builds a lasso (a shortest prefix, then a fair cycle) for each goal violated.
pub fn fair_cycles(model: &RebalanceModel, goals: &[Goal]) -> FairCycleSearch {
    let mut found: Vec<(usize, Vec<u64>)> = Vec::new();
    let mut unfair: Vec<(&'static str, Action)> = Vec::new();
    let (count, nontrivial, cyclic) = tarjan(model, |scc| {
        let v = lasso::verdicts(model, goals, scc);
        for (g, fps) in v.violations {
            if !found.iter().any(|(f, _)| *f == g) {
                found.push((g, fps));
            }
        }
        unfair.extend(v.unfair.into_iter().map(|(g, a)| (goals[g].0, a)));
    });
    found.sort_by_key(|(g, _)| *g);
    let violations = found
        .into_iter()
        .map(|(g, fps)| lasso::build(model, goals[g], &fps))
        .collect();
    FairCycleSearch {
        states: count.0,
        edges: count.1,
        nontrivial_sccs: nontrivial,
        cyclic_states: cyclic,
        unfair,
        violations,
    }
}

/// `fair_cycles` over [`goals`].
pub fn fair_cycles_for_goals(model: &RebalanceModel) -> FairCycleSearch {
    fair_cycles(model, goals())
}

/// A search frame: a state being expanded, its successors still to visit, its low-link.
struct Frame {
    fp: u64,
    index: u32,
    low: u32,
    out: Vec<Option<(Action, SystemState)>>,
    next: usize,
    /// The state has an edge to itself (a component of one state is then non-trivial).
    self_loop: bool,
}

const DONE: u32 = u32::MAX;

/// The search's bookkeeping: the index map, the Tarjan stack and the next index.
struct Tarjan<'m> {
    model: &'m RebalanceModel,
    index: HashMap<u64, u32>,
    stack: Vec<(u64, SystemState)>,
    counter: u32,
}

impl Tarjan<'_> {
    /// Gives `state` the next index, puts it on the Tarjan stack, and opens its frame.
    fn open(&mut self, state: SystemState, fp: u64) -> Frame {
        let mut out = Vec::new();
        walk::edges(self.model, &state, |_, a, next, _| {
            out.push(Some((a, next)))
        });
        let i = self.counter;
        self.counter = i
            .checked_add(1)
            .filter(|c| *c != DONE)
            .expect("fewer than 2^32 - 1 states");
        self.index.insert(fp, i);
        self.stack.push((fp, state));
        Frame {
            fp,
            index: i,
            low: i,
            out,
            next: 0,
            self_loop: false,
        }
    }
}

/// Iterative Tarjan. `component` is called once per non-trivial component with its states (the
/// component's root first, in the order the search reached them). Returns (states, edges), the
/// number of non-trivial components and the states in them.
fn tarjan(
    model: &RebalanceModel,
    mut component: impl FnMut(&[(u64, SystemState)]),
) -> ((usize, usize), usize, usize) {
    let mut t = Tarjan {
        model,
        index: HashMap::new(),
        stack: Vec::new(),
        counter: 0,
    };
    let (mut edges, mut nontrivial, mut cyclic) = (0usize, 0usize, 0usize);
    let init = model.init_state();
    let init_fp = fingerprint(&init);
    let mut frames = vec![t.open(init, init_fp)];
    while let Some(top) = frames.last_mut() {
        if top.next < top.out.len() {
            let (_, next) = top.out[top.next].take().expect("each edge is taken once");
            top.next += 1;
            edges += 1;
            let nfp = fingerprint(&next);
            match t.index.get(&nfp).copied() {
                None => {
                    let f = t.open(next, nfp);
                    frames.push(f);
                }
                Some(DONE) => {}
                Some(i) => {
                    top.low = top.low.min(i);
                    top.self_loop |= nfp == top.fp;
                }
            }
            continue;
        }
        let done = frames.pop().expect("top");
        if let Some(parent) = frames.last_mut() {
            parent.low = parent.low.min(done.low);
        }
        if done.low != done.index {
            continue;
        }
        // `done` is the root of a component: it and everything above it on the stack.
        let at = t
            .stack
            .iter()
            .rposition(|(fp, _)| *fp == done.fp)
            .expect("root on stack");
        let size = t.stack.len() - at;
        if size > 1 || done.self_loop {
            nontrivial += 1;
            cyclic += size;
            component(&t.stack[at..]);
        }
        for (fp, _) in t.stack.drain(at..) {
            t.index.insert(fp, DONE);
        }
    }
    ((t.index.len(), edges), nontrivial, cyclic)
}
