//! Old manager bugs put back on purpose, for the checks that must catch them from outside: the
//! trace validator, given only a real host's coordinator log, has to reject a run of a manager
//! with one of these (issue 34; `conformance/tests/integration/validate.rs`). Behind the
//! `testing` feature, so that no host that links the library can plant one; without it the
//! checks below are constant `false` and compile away.

use super::Manager;

/// A bug a test can put back into one incarnation ([`Manager::plant`]).
#[cfg(feature = "testing")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlantedBug {
    /// R12 completes a leader-only bucket on a successful, current ack from any replica once the
    /// stored leader is the new leader, not only on the new leader's own ack. Fluss had exactly
    /// this (apache/fluss#3555, fixed by #3556): the request goes to every replica, and a
    /// follower's answer could finish the task before the new leader had applied it.
    LeaderOnlyAckFromAnyReplica,
}

#[cfg(feature = "testing")]
impl<S> Manager<S> {
    /// Puts `bug` back into this incarnation, from its next input on.
    pub fn plant(&mut self, bug: PlantedBug) {
        self.planted = Some(bug);
    }

    pub(crate) fn planted(&self, bug: PlantedBug) -> bool {
        self.planted == Some(bug)
    }
}

impl<S> Manager<S> {
    /// Whether R12 accepts any replica's ack for a leader-only bucket (the planted bug).
    pub(crate) fn any_replica_completes_leader_only(&self) -> bool {
        #[cfg(feature = "testing")]
        return self.planted(PlantedBug::LeaderOnlyAckFromAnyReplica);
        #[cfg(not(feature = "testing"))]
        false
    }
}
