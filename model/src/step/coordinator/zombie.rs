//! The zombie coordinator (spec 9): after R17 started a new incarnation, the deposed one may
//! still take a budgeted number of steps. It processes its own queued events, handles
//! responses addressed to its coordinator epoch and a client's cancel, with the same rules as
//! any incarnation; its store writes carry its old epoch, so D7 refuses every one of them
//! ([`Step::fence`]), except task-node writes under `unfenced-task-writes`.
//!
//! The deposed incarnation is kept as a snapshot in the state only while the `zombie_steps`
//! budget lasts, and each of its steps uses one unit; it is dropped with the last unit, so a
//! configuration without the budget has the same states as before.

use super::Step;
use crate::state::message::Message;
use crate::state::{Event, SystemState};
use crate::step::action::Action;

impl Step<'_> {
    /// Runs a zombie action on the deposed incarnation; false if it is not enabled. The
    /// ghost is left as it was: it describes the current incarnation's rebalance, and the
    /// transition check (`transition.rs`) judges what the zombie changed in the store.
    pub fn zombie_step(&mut self, pre: &SystemState, action: &Action) -> bool {
        let Some(zombie) = pre.zombie.as_deref() else {
            return false;
        };
        if pre.budgets.zombie_steps == 0 {
            return false;
        }
        let enabled = match action {
            Action::ZombieProcessEvent { event } => zombie.events.first() == Some(event),
            Action::ZombieDeliverNliResponse { msg } => {
                msg.context.coordinator_epoch == zombie.ce
                    && pre.network.contains(&Message::NliResponse(*msg))
            }
            Action::ZombieCancel => pre.budgets.cancel > 0,
            _ => false,
        };
        if !enabled {
            return false;
        }
        let ghost = self.s.ghost;
        let zombie = self.s.zombie.take().expect("checked above");
        let current = std::mem::replace(&mut self.s.coordinator, *zombie);
        match action {
            Action::ZombieProcessEvent { event } => {
                self.s.coordinator.events.remove(0);
                let _ = match *event {
                    Event::Timeout { key } => self.on_timeout(key),
                    Event::Reconcile { key } => self.on_reconcile(key),
                    Event::Finalize { rid } => self.on_finalize_event(rid),
                    Event::Recover => self.on_recover(),
                };
            }
            Action::ZombieDeliverNliResponse { msg } => {
                self.s.take(&Message::NliResponse(*msg));
                let _ = self.on_nli_response(msg);
            }
            Action::ZombieCancel => {
                crate::config::spend(&mut self.s.budgets.cancel);
                let _ = self.cancel();
            }
            _ => unreachable!("checked above"),
        }
        let deposed = std::mem::replace(&mut self.s.coordinator, current);
        self.s.ghost = ghost;
        crate::config::spend(&mut self.s.budgets.zombie_steps);
        if self.s.budgets.zombie_steps > 0 {
            self.s.zombie = Some(Box::new(deposed));
        }
        true
    }
}

/// The zombie actions that may be enabled in `state`, in a fixed order.
pub fn zombie_candidates(state: &SystemState, out: &mut Vec<Action>) {
    let Some(zombie) = state.zombie.as_deref() else {
        return;
    };
    if state.budgets.zombie_steps == 0 {
        return;
    }
    if let Some(event) = zombie.events.first() {
        out.push(Action::ZombieProcessEvent { event: *event });
    }
    let network = &state.network;
    for (i, m) in network.iter().enumerate() {
        if let Message::NliResponse(msg) = m {
            if msg.context.coordinator_epoch == zombie.ce && (i == 0 || network[i - 1] != *m) {
                out.push(Action::ZombieDeliverNliResponse { msg: *msg });
            }
        }
    }
    if state.budgets.cancel > 0 {
        out.push(Action::ZombieCancel);
    }
}
