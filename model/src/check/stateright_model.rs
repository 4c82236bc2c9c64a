//! The Stateright [`Model`] of the protocol: Stateright's checker, the Explorer and our own
//! searches all step [`RebalanceModel`] through this impl. It is its own file because it ties
//! three layers together, the protocol (`step/model.rs`), its properties
//! (`verdict/properties.rs`, which read the model) and the views for people (`view/`), and none
//! of those may import another in a circle.

use stateright::{Model, Path, Property};

use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use crate::verdict::properties;
use crate::view::{describe, explorer};

/// The Stateright `Model`: the checker, the Explorer and our own searches all step the protocol
/// through these.
impl Model for RebalanceModel {
    type State = SystemState;
    type Action = Action;

    fn init_states(&self) -> Vec<SystemState> {
        vec![self.init_state()]
    }

    fn actions(&self, state: &SystemState, actions: &mut Vec<Action>) {
        // Candidates, not the exact enabled set: `next_state` runs each once and drops those
        // that turn out disabled, so no transition is computed twice. Under the partial-order
        // reduction, a stubborn set's where there is one.
        crate::check::por::search_actions(self, state, actions);
    }

    fn next_state(&self, state: &SystemState, action: Action) -> Option<SystemState> {
        let mut next = state.clone();
        self.step_into(state, &action, &mut next)?;
        Some(next)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        properties::all()
    }

    fn within_boundary(&self, state: &SystemState) -> bool {
        self.within_bound_counted(state)
    }

    fn format_action(&self, action: &Action) -> String {
        describe::action(action)
    }

    fn format_step(&self, last_state: &SystemState, action: Action) -> Option<String> {
        describe::step(self, last_state, &action)
    }

    fn as_svg(&self, path: Path<SystemState, Action>) -> Option<String> {
        Some(explorer::svg(self, path.last_state()))
    }
}
