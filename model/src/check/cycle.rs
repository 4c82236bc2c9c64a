//! The acyclicity check behind the LIVE-* goals (spec 7.3): a depth-first search that reports a
//! back edge, i.e. a cycle that could avoid terminal states forever.

use crate::action::Action;
use crate::model::RebalanceModel;
use crate::walk;
use std::ops::ControlFlow;

/// The result of a full search of the reachable graph.
#[derive(Debug)]
pub struct CycleSearch {
    pub states: usize,
    pub edges: usize,
    /// A path from the initial state to a state, followed by the actions of a cycle back to it.
    pub cycle: Option<Vec<Action>>,
}

pub fn find_cycle(model: &RebalanceModel) -> CycleSearch {
    let mut cycle = None;
    let count = walk::dfs(model, |edge| {
        if edge.closes_cycle {
            let mut path = edge.path.to_vec();
            path.push(edge.action);
            cycle = Some(path);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    });
    CycleSearch {
        states: count.states,
        edges: count.edges,
        cycle,
    }
}
