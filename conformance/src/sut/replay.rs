//! A trace replayed against an implementation under test: [`crate::replay::replay_on`] with
//! the manager side a child process (a fresh one per trace), `expect` blocks included.

use rebalance_model::Trace;

use super::driver::{DriverError, SutCommand};
use super::remote::Remote;
use crate::replay::{replay_on, ReplayOk, SideReplayError};

/// Why a replay against an implementation under test did not agree: an invalid trace or a
/// divergence ([`crate::replay::ReplayError`]), or the implementation failed at a step.
pub type SutReplayError = SideReplayError<DriverError>;

/// Replays `trace` against the implementation `sut` starts.
pub fn replay(trace: &Trace, sut: &SutCommand) -> Result<ReplayOk, SutReplayError> {
    replay_on::<Remote>(trace, sut)
}
