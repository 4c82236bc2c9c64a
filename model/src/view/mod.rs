//! What people read: the Stateright Explorer's page and picture ([`explorer`]), a step in words
//! ([`describe`]) and the short forms of actions and messages both use ([`render`]). Nothing
//! here is part of the protocol or changes a verdict.

pub mod describe;
pub mod explorer;
pub mod render;
