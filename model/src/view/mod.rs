//! What people read: the Explorer's pages ([`web`]), the model Stateright's own Explorer
//! serves and the picture both show ([`explorer`]), a step in words ([`describe`]) and the short
//! forms of actions and messages they use ([`render`]). Nothing here is part of the protocol or
//! changes a verdict; [`pipe`] keeps a closed output pipe from looking like a crash.

pub mod describe;
pub mod explorer;
pub mod pipe;
pub mod render;
pub mod web;
