//! The model and the manager stepped together: one model step per edge, mirrored on the
//! manager and compared (see [`crate::harness`]), with the coverage of every checked step.

use rebalance_manager as mgr;
use rebalance_model::{Action, RebalanceModel, StepOutput, SystemState};

use crate::coverage::Coverage;
use crate::harness::{Harness, Mismatch};

/// Where a lockstep stands: the model's state and the manager side after the same path. Kept
/// boxed: a walk moves positions between its stack and the lockstep on every edge, and a pointer
/// moves for free where the state and the manager are kilobytes.
#[derive(Clone)]
pub struct Position {
    pub state: SystemState,
    pub harness: Harness,
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
pub struct Lockstep<'m> {
    model: &'m RebalanceModel,
    position: Box<Position>,
    coverage: Coverage,
}

impl<'m> Lockstep<'m> {
    /// Both sides in the model's initial state; a mismatch there is a divergence before any step.
    pub fn start(model: &'m RebalanceModel) -> Result<Lockstep<'m>, Mismatch> {
        let state = model.init_state();
        let harness = Harness::start(model, &state)?;
        Ok(Lockstep {
            model,
            position: Box::new(Position { state, harness }),
            coverage: Coverage::default(),
        })
    }

    /// Both sides at `position` (reached by `model`), with no coverage yet.
    pub fn at(model: &'m RebalanceModel, position: Box<Position>) -> Lockstep<'m> {
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

    pub fn harness(&self) -> &Harness {
        &self.position.harness
    }

    /// The current position, to come back to with [`Lockstep::goto`].
    pub fn position(&self) -> Box<Position> {
        self.position.clone()
    }

    /// Moves to `position` (reached by this lockstep's model, e.g. through [`Lockstep::explore`]).
    pub fn goto(&mut self, position: Box<Position>) {
        self.position = position;
    }

    pub fn coverage(&self) -> &Coverage {
        &self.coverage
    }

    pub fn into_coverage(self) -> Coverage {
        self.coverage
    }

    /// Steps `action` on the model and mirrors it on the manager, moving both sides.
    pub fn step(&mut self, action: &Action) -> Result<StepReport, StepError> {
        let (post, out) = self
            .model
            .step(&self.position.state, action)
            .ok_or(StepError::Disabled)?;
        self.follow(action, post, out).map_err(StepError::Diverged)
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
        let Position { state, harness } = &mut *self.position;
        let effects = harness.apply(self.model, state, action, &post, &out)?;
        self.coverage.record(action, &out);
        *state = post;
        Ok(StepReport { out, effects })
    }

    /// Checks the edge `action` from the current state without moving, on a clone of the manager
    /// side. The position it leads to is kept only if `keep` accepts the model's post-state (a
    /// walk keeps the states it will expand), so an edge into a seen state costs no allocation.
    pub fn explore(
        &mut self,
        action: &Action,
        keep: impl FnOnce(&SystemState) -> bool,
    ) -> Result<Explored, Mismatch> {
        let Some((post, out)) = self.model.step(&self.position.state, action) else {
            return Ok(Explored::Disabled);
        };
        let mut harness = self.position.harness.clone();
        harness.apply(self.model, &self.position.state, action, &post, &out)?;
        self.coverage.record(action, &out);
        if !keep(&post) {
            return Ok(Explored::Checked(None));
        }
        Ok(Explored::Checked(Some(Box::new(Position {
            state: post,
            harness,
        }))))
    }
}

/// What [`Lockstep::explore`] found on an edge both sides agreed on.
pub enum Explored {
    /// The model does not enable the action.
    Disabled,
    /// The edge agreed; the position it leads to if it was kept.
    Checked(Option<Box<Position>>),
}
