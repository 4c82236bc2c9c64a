//! The manager side of a lockstep, pluggable: the manager in this process
//! ([`in_process`], the default and the fast path), the same on the group-commit host's batching
//! adapter ([`group_commit`]), or an implementation under test in a child process speaking the
//! driver protocol of `spec/driver-protocol.md` ([`remote`]).
//!
//! The harness ([`crate::harness`]) owns what a host owns around the manager, the event queue
//! and the clock, for both; a [`ManagerSide`] owns the manager and its store.

pub mod command;
pub mod driver;
pub mod group_commit;
pub mod in_process;
pub mod remote;
pub mod replay;

use std::collections::{BTreeSet, VecDeque};

use rebalance_manager as mgr;

use crate::projection::{self, manager::AgeCaps};

/// What an incarnation of the coordinator starts from besides its store (R17): the
/// configuration, the servers the cluster reports live, and the clock.
pub struct Incarnation<'a> {
    pub config: &'a mgr::Config,
    pub live: BTreeSet<mgr::ServerId>,
    pub now_ms: u64,
}

/// What the harness knows after a step, for [`ManagerSide::accessors_disagree`].
pub struct Seen<'a> {
    /// The configuration every incarnation was started with.
    pub config: &'a mgr::Config,
    /// The host's clock.
    pub now_ms: u64,
    /// Store operations the harness made fail, and that did fail, in this incarnation.
    pub store_failures: u64,
    /// The model's state after the step.
    pub post: &'a rebalance_model::SystemState,
}

/// A manager and its store, driven by the harness one input at a time.
///
/// Inputs may be answered late: a side may queue them and deliver their effects, in order, at
/// [`ManagerSide::settle`], which ends every step. The observers (`store_ops`, `fault_pending`,
/// `project`, `invariant_violation`, `progress`) describe the state at the last `settle`.
pub trait ManagerSide: Sized {
    /// What starts a side (nothing in-process; the child process's driver otherwise).
    type Launcher;
    /// A failure of the side itself, not of conformance (the child crashed, hung, or sent a
    /// malformed line). Uninhabited in-process.
    type Error;

    /// R17 on `store` (handed over; the side owns it from now on), with the start's effects
    /// appended to `effects`. `Ok(Err(why))`: the manager refused to start.
    fn start(
        launcher: &Self::Launcher,
        store: mgr::MemStore,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<Self, String>, Self::Error>;

    /// R17 again: a new incarnation on the same store, the old one's memory gone.
    /// `Ok(Err(why))`: the manager refused to start.
    fn restart(
        &mut self,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, Self::Error>;

    /// The `k`-th store operation from now fails, once (spec 9).
    fn fail_nth_store_op(&mut self, k: u64) -> Result<(), Self::Error>;

    /// One input at `now_ms`; its effects are appended to `effects` now or at `settle`.
    fn input(
        &mut self,
        now_ms: u64,
        input: mgr::Input,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<(), Self::Error>;

    /// Ends a step: every input given since the last `settle` has run, its effects are in
    /// `effects`, and the observers describe the state reached.
    fn settle(&mut self, effects: &mut Vec<mgr::Effect>) -> Result<(), Self::Error>;

    /// Store operations performed since the store was handed over.
    fn store_ops(&self) -> u64;

    /// A failure armed by `fail_nth_store_op` has not happened yet.
    fn fault_pending(&self) -> bool;

    /// Fills `o` with the projection of the manager and the host's event queue `queue`.
    fn project(&self, queue: &VecDeque<mgr::Event>, caps: AgeCaps, o: &mut projection::State);

    /// The manager's own invariant check, if it failed.
    fn invariant_violation(&self) -> Option<String>;

    /// What a client's progress query would return.
    fn progress(&self) -> mgr::Progress;

    /// Where the manager's read accessors disagree with what the harness and the model say
    /// after a step (`seen`), if anywhere. Only the in-process manager has them; an
    /// implementation under test answers `None`, since the driver protocol has no such queries.
    fn accessors_disagree(&self, _seen: &Seen<'_>) -> Option<String> {
        None
    }

    /// Before the model's step `action`: a side that holds effects back (group commit) releases
    /// what the step could need; nothing for a side that releases every effect at once.
    fn before_step(&mut self, _action: &rebalance_model::Action) -> Result<(), Self::Error> {
        Ok(())
    }

    /// An independent copy of this side (a branch point of a walk).
    fn fork(&mut self) -> Result<Self, Self::Error>;

    /// Keeps this side's state reachable while other copies move on (a position a walk will
    /// come back to). A no-op where a copy is a value.
    fn preserve(&mut self) -> Result<(), Self::Error>;
}

/// The message for a failure of the implementation under test at `step` (1-based; 0 is the
/// start) of `steps`: the step, its action, and the request and line of the failure.
pub fn failure_message(
    step: usize,
    steps: &[rebalance_model::Action],
    error: &impl std::fmt::Display,
) -> String {
    match step.checked_sub(1).and_then(|i| steps.get(i)) {
        Some(a) => format!(
            "the implementation under test failed at step {step} ({}): {error}",
            rebalance_model::view::describe::action(a)
        ),
        None => format!("the implementation under test failed at the start: {error}"),
    }
}
