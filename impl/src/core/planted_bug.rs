//! The old bugs a test may put back into the manager ([`crate::Manager::plant`], in
//! `manager/planted.rs`): the `testing` feature only. A file of its own so that the manager's
//! state can name the type without importing the module that implements the plant.

/// A bug a test can put back into one incarnation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlantedBug {
    /// R12 completes a leader-only bucket on a successful, current ack from any replica once the
    /// stored leader is the new leader, not only on the new leader's own ack. Fluss had exactly
    /// this (apache/fluss#3555, fixed by #3556): the request goes to every replica, and a
    /// follower's answer could finish the task before the new leader had applied it.
    LeaderOnlyAckFromAnyReplica,
}
