//! The acyclicity check behind LIVE-QUIESCENT (spec 7.3): a depth-first search that reports a
//! back edge, i.e. a cycle that could avoid terminal states forever.

use crate::action::Action;
use crate::model::RebalanceModel;
use crate::shortest::fingerprint;
use crate::state::SystemState;
use std::collections::HashMap;

/// The result of a full search of the reachable graph.
#[derive(Debug)]
pub struct CycleSearch {
    pub states: usize,
    pub edges: usize,
    /// A path from the initial state to a state, followed by the actions of a cycle back to it.
    pub cycle: Option<Vec<Action>>,
}

/// A DFS frame: state, fingerprint, enabled actions, next action index, action into it.
type Frame = (SystemState, u64, Vec<Action>, usize, Option<Action>);

const ON_STACK: u8 = 1;
const DONE: u8 = 2;

pub fn find_cycle(model: &RebalanceModel) -> CycleSearch {
    let init = model.init_state();
    let mut color: HashMap<u64, u8> = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let fp = fingerprint(&init);
    color.insert(fp, ON_STACK);
    let mut acts = Vec::new();
    model.candidate_actions(&init, &mut acts);
    stack.push((init, fp, acts, 0, None));
    let mut edges = 0;
    while let Some(top) = stack.last_mut() {
        if top.3 >= top.2.len() {
            color.insert(top.1, DONE);
            stack.pop();
            continue;
        }
        let a = top.2[top.3];
        top.3 += 1;
        let Some((next, _)) = model.step(&top.0, &a) else {
            continue;
        };
        if !model.within_bound(&next) {
            continue;
        }
        edges += 1;
        let nfp = fingerprint(&next);
        match color.get(&nfp) {
            Some(&ON_STACK) => {
                let mut path: Vec<Action> = stack.iter().filter_map(|f| f.4).collect();
                path.push(a);
                return CycleSearch {
                    states: color.len(),
                    edges,
                    cycle: Some(path),
                };
            }
            Some(_) => {}
            None => {
                color.insert(nfp, ON_STACK);
                let mut acts = Vec::new();
                model.candidate_actions(&next, &mut acts);
                stack.push((next, nfp, acts, 0, Some(a)));
            }
        }
    }
    CycleSearch {
        states: color.len(),
        edges,
        cycle: None,
    }
}
