//! Old manager bugs put back on purpose, for the checks that must catch them from outside: the
//! trace validator, given only a real host's coordinator log, has to reject a run of a manager
//! with one of these (issue 34; `conformance/tests/integration/validate.rs`). Behind the
//! `testing` feature, so that no host that links the library can plant one; without it the
//! checks below are constant `false` and compile away.

use super::Manager;
#[cfg(feature = "testing")]
use crate::core::planted_bug::PlantedBug;

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
