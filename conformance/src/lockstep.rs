//! The model and the manager stepped together: one model step per edge, mirrored on the
//! manager side and compared (see [`crate::harness`]), with the coverage of every checked step.
//!
//! Generic over the manager side ([`ManagerSide`]): the manager in this process (the default,
//! `Lockstep<'m>`, with the signatures of [`Lockstep::start`], [`Lockstep::step`] and friends)
//! or an implementation under test in a child process (`Lockstep<'m, Remote>`, through the
//! `try_` methods, whose errors include the side's own failures).

use rebalance_manager as mgr;
use rebalance_model::{Action, RebalanceModel, StepOutput, SystemState};

use crate::coverage::Coverage;
use crate::harness::{in_process, Failure, Harness, Mismatch};
use crate::sut::ManagerSide;

/// Where a lockstep stands: the model's state and the manager side after the same path. Kept
/// boxed: a walk moves positions between its stack and the lockstep on every edge, and a pointer
/// moves for free where the state and the manager are kilobytes.
#[derive(Clone)]
pub struct Position<S = mgr::Manager<mgr::MemStore>> {
    pub state: SystemState,
    pub harness: Harness<S>,
}

/// One step both sides agreed on.
#[derive(Clone, Debug)]
pub struct StepReport {
    /// The model's output of the step.
    pub out: StepOutput,
    /// The manager's effects, in emission order.
    pub effects: Vec<mgr::Effect>,
}

/// Why a step did not go through.
#[derive(Clone, Debug)]
pub enum StepError {
    /// The model does not enable the action in the current state.
    Disabled,
    /// Model and manager differ.
    Diverged(Mismatch),
}

/// The model's current state and the manager side, moved together one action at a time.
pub struct Lockstep<'m, S = mgr::Manager<mgr::MemStore>> {
    model: &'m RebalanceModel,
    position: Box<Position<S>>,
    coverage: Coverage,
}

impl<'m> Lockstep<'m> {
    /// Both sides in the model's initial state; a mismatch there is a divergence before any step.
    pub fn start(model: &'m RebalanceModel) -> Result<Lockstep<'m>, Mismatch> {
        Lockstep::launch(model, &()).map_err(in_process)
    }

    /// The current position, to come back to with [`Lockstep::goto`].
    pub fn position(&self) -> Box<Position> {
        self.position.clone()
    }

    /// Steps `action` on the model and mirrors it on the manager, moving both sides.
    pub fn step(&mut self, action: &Action) -> Result<StepReport, StepError> {
        match self.try_step(action) {
            Ok(Some(report)) => Ok(report),
            Ok(None) => Err(StepError::Disabled),
            Err(f) => Err(StepError::Diverged(in_process(f))),
        }
    }

    /// Mirrors on the manager the model step `action` from the current state to `post` with
    /// output `out`, which the caller has already computed with the model (so that an edge is
    /// stepped once), and moves both sides.
    pub fn follow(
        &mut self,
        action: &Action,
        post: SystemState,
        out: StepOutput,
    ) -> Result<StepReport, Mismatch> {
        self.try_follow(action, post, out).map_err(in_process)
    }

    /// Checks the edge `action` from the current state without moving, on a copy of the manager
    /// side. The position it leads to is kept only if `keep` accepts the model's post-state (a
    /// walk keeps the states it will expand), so an edge into a seen state costs no allocation.
    pub fn explore(
        &mut self,
        action: &Action,
        keep: impl FnOnce(&SystemState) -> bool,
    ) -> Result<Explored, Mismatch> {
        self.try_explore(action, keep).map_err(in_process)
    }
}

impl<'m, S: ManagerSide> Lockstep<'m, S> {
    /// Both sides in the model's initial state, the manager side started by `launcher`.
    pub fn launch(
        model: &'m RebalanceModel,
        launcher: &S::Launcher,
    ) -> Result<Lockstep<'m, S>, Failure<S::Error>> {
        let state = model.init_state();
        let harness = Harness::launch(model, &state, launcher)?;
        Ok(Lockstep {
            model,
            position: Box::new(Position { state, harness }),
            coverage: Coverage::default(),
        })
    }

    /// Both sides at `position` (reached by `model`), with no coverage yet.
    pub fn at(model: &'m RebalanceModel, position: Box<Position<S>>) -> Lockstep<'m, S> {
        Lockstep {
            model,
            position,
            coverage: Coverage::default(),
        }
    }

    pub fn model(&self) -> &'m RebalanceModel {
        self.model
    }

    /// The model's current state.
    pub fn state(&self) -> &SystemState {
        &self.position.state
    }

    pub fn harness(&self) -> &Harness<S> {
        &self.position.harness
    }

    /// A copy of the current position, to come back to with [`Lockstep::goto`].
    pub fn try_position(&mut self) -> Result<Box<Position<S>>, S::Error> {
        Ok(Box::new(Position {
            state: self.position.state.clone(),
            harness: self.position.harness.fork()?,
        }))
    }

    /// Moves to `position` (reached by this lockstep's model, e.g. through [`Lockstep::explore`]).
    pub fn goto(&mut self, position: Box<Position<S>>) {
        self.position = position;
    }

    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    pub fn into_coverage(self) -> Coverage {
        self.coverage
    }

    /// [`Lockstep::step`] on any manager side; `Ok(None)`: the model does not enable `action`.
    pub fn try_step(&mut self, action: &Action) -> Result<Option<StepReport>, Failure<S::Error>> {
        let Some((post, out)) = self.model.step(&self.position.state, action) else {
            return Ok(None);
        };
        self.try_follow(action, post, out).map(Some)
    }

    /// [`Lockstep::follow`] on any manager side.
    pub fn try_follow(
        &mut self,
        action: &Action,
        post: SystemState,
        out: StepOutput,
    ) -> Result<StepReport, Failure<S::Error>> {
        let Position { state, harness } = &mut *self.position;
        let effects = harness.apply(self.model, state, action, &post, &out)?;
        self.coverage.record(action, &out);
        *state = post;
        Ok(StepReport { out, effects })
    }

    /// [`Lockstep::explore`] on any manager side. A kept position is preserved on the side
    /// (a snapshot in a child process), so the walk can come back to it.
    pub fn try_explore(
        &mut self,
        action: &Action,
        keep: impl FnOnce(&SystemState) -> bool,
    ) -> Result<Explored<S>, Failure<S::Error>> {
        let Some((post, out)) = self.model.step(&self.position.state, action) else {
            return Ok(Explored::Disabled);
        };
        let mut harness = self.position.harness.fork().map_err(Failure::Sut)?;
        harness.apply(self.model, &self.position.state, action, &post, &out)?;
        self.coverage.record(action, &out);
        if !keep(&post) {
            return Ok(Explored::Checked(None));
        }
        harness.manager.preserve().map_err(Failure::Sut)?;
        Ok(Explored::Checked(Some(Box::new(Position {
            state: post,
            harness,
        }))))
    }
}

/// What [`Lockstep::explore`] found on an edge both sides agreed on.
pub enum Explored<S = mgr::Manager<mgr::MemStore>> {
    /// The model does not enable the action.
    Disabled,
    /// The edge agreed; the position it leads to if it was kept.
    Checked(Option<Box<Position<S>>>),
}
