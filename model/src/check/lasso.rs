//! What the fair-cycle search (`cycle.rs`) decides about one strongly connected component, and
//! the lasso it reports (spec 7.3, "Fair cycles").
//!
//! Fairness is weak fairness per action instance: an obligatory action ([`Action::is_obligatory`],
//! one `Action` value, such as the delivery of one message) that stays enabled must be taken.
//! Enabled means enabled by [`RebalanceModel::step`], whatever the `max_network` bound, as for
//! [`RebalanceModel::is_fair_end`]. For a goal `g`, the component is restricted to its states
//! where `g` is false and split into components again; a non-trivial sub-component `C` is fair
//! when every obligatory action enabled in every state of `C` is taken by an edge inside `C`.
//! That test is exact, with no further splitting: a cycle inside `C` keeps every action enabled
//! throughout `C` enabled throughout itself and takes no more actions, so an unfair `C` holds no
//! fair cycle; and a fair `C` holds one (a walk through every state and edge of `C`, or the
//! shorter one [`build`] constructs).

use crate::check::walk::{self, fingerprint};
use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use crate::trace::Trace;
use std::collections::{HashMap, HashSet, VecDeque};
use std::ops::ControlFlow;

/// A liveness goal: its name and the predicate that must hold infinitely often on a fair run.
pub type Goal = (&'static str, fn(&RebalanceModel, &SystemState) -> bool);

/// A violation of a goal: from the initial state, `prefix` (shortest) reaches a state of a fair
/// component where the goal never holds; `cycle`, taken from there, comes back to that state,
/// never passes a state where the goal holds, and is fair itself: every obligatory action
/// enabled in all its states is one of its steps.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lasso {
    pub goal: &'static str,
    pub prefix: Vec<Action>,
    pub cycle: Vec<Action>,
    /// States of the fair component (with the goal false in each).
    pub component_states: usize,
}

impl Lasso {
    /// The lasso as a replayable trace: the prefix, then one turn of the cycle, with
    /// `cycle_start` where the cycle begins (spec/trace-format.md, "Lassos").
    pub fn trace(&self, model: &RebalanceModel) -> Trace {
        Trace::lasso(model.config.clone(), model.bugs, &self.prefix, &self.cycle)
    }
}

/// A component as a graph of its own: per state, the edges that stay inside (action, target,
/// in candidate order) and the obligatory actions enabled there.
struct Local {
    succ: Vec<Vec<(Action, usize)>>,
    enabled: Vec<Vec<Action>>,
}

impl Local {
    fn of<'a>(model: &RebalanceModel, states: impl Iterator<Item = &'a SystemState>) -> Local {
        let states: Vec<&SystemState> = states.collect();
        let at: HashMap<u64, usize> = states
            .iter()
            .enumerate()
            .map(|(i, s)| (fingerprint(s), i))
            .collect();
        let mut local = Local {
            succ: Vec::with_capacity(states.len()),
            enabled: Vec::with_capacity(states.len()),
        };
        for s in states {
            let (mut succ, mut enabled) = (Vec::new(), Vec::new());
            let mut candidates = Vec::new();
            model.candidate_actions(s, &mut candidates);
            for a in candidates {
                let Some((next, _)) = model.step(s, &a) else {
                    continue;
                };
                if model.is_obligatory(&a) {
                    enabled.push(a);
                }
                if model.within_bound(&next) {
                    if let Some(&j) = at.get(&fingerprint(&next)) {
                        succ.push((a, j));
                    }
                }
            }
            local.succ.push(succ);
            local.enabled.push(enabled);
        }
        local
    }

    /// The first obligatory action (in the order of `states[0]`'s list) that is enabled in
    /// every one of `states` and not among `taken`.
    fn starved(&self, states: &[usize], taken: &HashSet<Action>) -> Option<Action> {
        let first = *states.first()?;
        self.enabled[first]
            .iter()
            .find(|a| !taken.contains(a) && states.iter().all(|&s| self.enabled[s].contains(a)))
            .copied()
    }

    /// The components of the graph restricted to `keep`, non-trivial ones only (iterative
    /// Tarjan again; components are small next to the whole graph).
    fn components(&self, keep: &[bool]) -> Vec<Vec<usize>> {
        const NONE: usize = usize::MAX;
        let n = self.succ.len();
        let (mut index, mut low) = (vec![NONE; n], vec![0; n]);
        let mut on_stack = vec![false; n];
        let (mut stack, mut out, mut counter) = (Vec::new(), Vec::new(), 0);
        for root in (0..n).filter(|&r| keep[r]) {
            if index[root] != NONE {
                continue;
            }
            let mut frames = vec![(root, 0usize)];
            index[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on_stack[root] = true;
            while let Some(top) = frames.last_mut() {
                let v = top.0;
                if let Some(&(_, w)) = self.succ[v].get(top.1) {
                    top.1 += 1;
                    if !keep[w] {
                        continue;
                    }
                    if index[w] == NONE {
                        index[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        frames.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                frames.pop();
                if let Some(&(parent, _)) = frames.last() {
                    low[parent] = low[parent].min(low[v]);
                }
                if low[v] == index[v] {
                    let at = stack.iter().rposition(|&x| x == v).expect("on stack");
                    let c: Vec<usize> = stack.drain(at..).collect();
                    for &x in &c {
                        on_stack[x] = false;
                    }
                    let self_loop = self.succ[v].iter().any(|&(_, w)| w == v);
                    if c.len() > 1 || self_loop {
                        out.push(c);
                    }
                }
            }
        }
        out
    }

    /// The actions of the edges inside `c`.
    fn taken(&self, c: &[usize], inside: &[bool]) -> HashSet<Action> {
        c.iter()
            .flat_map(|&v| self.succ[v].iter())
            .filter(|(_, w)| inside[*w])
            .map(|(a, _)| *a)
            .collect()
    }

    /// A shortest path inside the graph from `from` to a state where `stop` holds, as edges
    /// (source, action, target); with `nonempty`, at least one edge even if `from` stops.
    fn path(
        &self,
        from: usize,
        nonempty: bool,
        stop: impl Fn(usize) -> bool,
    ) -> Vec<(usize, Action, usize)> {
        if !nonempty && stop(from) {
            return Vec::new();
        }
        let mut parent: HashMap<usize, (usize, Action)> = HashMap::new();
        let mut queue = VecDeque::from([from]);
        let mut seen = HashSet::from([from]);
        while let Some(u) = queue.pop_front() {
            for &(a, v) in &self.succ[u] {
                if stop(v) {
                    let mut path = vec![(u, a, v)];
                    let mut x = u;
                    while x != from {
                        let (p, pa) = parent[&x];
                        path.push((p, pa, x));
                        x = p;
                    }
                    path.reverse();
                    return path;
                }
                if seen.insert(v) {
                    parent.insert(v, (u, a));
                    queue.push_back(v);
                }
            }
        }
        panic!("the component is strongly connected")
    }
}

/// What [`verdicts`] found in one component.
#[derive(Debug, Default)]
pub struct Verdicts {
    /// For each goal (by its position in the goals) that the component violates, the
    /// fingerprints of one fair sub-component on which it never holds.
    pub violations: Vec<(usize, Vec<u64>)>,
    /// Non-trivial sub-components where a goal never holds but no fair run stays: per goal,
    /// the obligatory action each starves (the first in candidate order).
    pub unfair: Vec<(usize, Action)>,
}

/// Decides every goal on the component `scc`: restricted to the states where the goal is
/// false, split into components, each non-trivial one fair or not.
pub fn verdicts(model: &RebalanceModel, goals: &[Goal], scc: &[(u64, SystemState)]) -> Verdicts {
    let mut local = None;
    let mut found = Verdicts::default();
    for (g, (_, holds)) in goals.iter().enumerate() {
        let keep: Vec<bool> = scc.iter().map(|(_, s)| !holds(model, s)).collect();
        if !keep.contains(&true) {
            continue;
        }
        let local = local.get_or_insert_with(|| Local::of(model, scc.iter().map(|(_, s)| s)));
        let mut violated = false;
        for c in local.components(&keep) {
            let mut inside = vec![false; scc.len()];
            for &v in &c {
                inside[v] = true;
            }
            match local.starved(&c, &local.taken(&c, &inside)) {
                Some(a) => found.unfair.push((g, a)),
                None if !violated => {
                    violated = true;
                    found
                        .violations
                        .push((g, c.iter().map(|&v| scc[v].0).collect()));
                }
                None => {}
            }
        }
    }
    found
}

/// The lasso of a violation of `goal` on the fair component with fingerprints `fps`: a shortest
/// prefix (breadth-first, [`walk::bfs`]) to a state of it, then a fair cycle from that state.
pub fn build(model: &RebalanceModel, goal: Goal, fps: &[u64]) -> Lasso {
    let set: HashSet<u64> = fps.iter().copied().collect();
    let mut entry_fp = None;
    let parents = walk::bfs(model, |_, fp| {
        if set.contains(&fp) {
            entry_fp = Some(fp);
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    });
    let entry_fp = entry_fp.expect("the component is reachable");
    let (prefix, _) = parents.path_to(model, entry_fp);
    drop(parents);
    let mut entry = model.init_state();
    for a in &prefix {
        entry = model.step(&entry, a).expect("a recorded edge").0;
    }
    // The component again, breadth-first from the entry, inside `set`.
    let mut states = vec![entry];
    let mut seen = HashSet::from([entry_fp]);
    let mut i = 0;
    while i < states.len() {
        let mut next_states = Vec::new();
        walk::edges(model, &states[i], |_, _, next, _| {
            let fp = fingerprint(&next);
            if set.contains(&fp) && seen.insert(fp) {
                next_states.push(next);
            }
        });
        states.extend(next_states);
        i += 1;
    }
    assert_eq!(
        states.len(),
        set.len(),
        "the component is strongly connected"
    );
    let local = Local::of(model, states.iter());
    Lasso {
        goal: goal.0,
        prefix,
        cycle: fair_cycle(&local).into_iter().map(|(_, a, _)| a).collect(),
        component_states: states.len(),
    }
}

/// A cycle from state 0 back to it that is fair: greedily, close the walk so far back to 0; if an
/// obligatory action is enabled in every state of that cycle and not taken, extend the walk to
/// the nearest state where it is disabled or which takes it, and try again. Each round settles
/// one action for good (the walk only grows), so this ends; a fair component always offers such
/// a state (strongly connected, and each action is disabled somewhere in it or taken inside).
fn fair_cycle(local: &Local) -> Vec<(usize, Action, usize)> {
    let mut walk: Vec<(usize, Action, usize)> = Vec::new();
    loop {
        let cur = walk.last().map_or(0, |e| e.2);
        let mut cycle = walk.clone();
        cycle.extend(local.path(cur, walk.is_empty(), |v| v == 0));
        let states: Vec<usize> = cycle.iter().map(|e| e.0).collect();
        let taken: HashSet<Action> = cycle.iter().map(|e| e.1).collect();
        let Some(a) = local.starved(&states, &taken) else {
            return cycle;
        };
        let takes = |v: usize| local.succ[v].iter().find(|(b, _)| *b == a).copied();
        let disabled = |v: usize| !local.enabled[v].contains(&a);
        let to = local.path(cur, false, |v| disabled(v) || takes(v).is_some());
        let end = to.last().map_or(cur, |e| e.2);
        walk.extend(to);
        if !disabled(end) {
            let (a, w) = takes(end).expect("stopped where it is taken");
            walk.push((end, a, w));
        }
    }
}
