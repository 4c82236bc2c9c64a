//! A trace's `expect` blocks checked on the manager: the manager's projection (state after the
//! step, effects of the step) turned into the model crate's [`Observation`], the JSON an
//! expectation is matched against (spec/trace-format.md, "Expectations").

use rebalance_model::trace::expect::{Observation, ObservedBucket, ObservedTask};
use serde_json::json;

use crate::projection::json::{attempt, event, reply, sent, servers, set};
use crate::projection::{Effects, State};

/// What an expectation sees of the manager: its projected state after a step and the effects
/// of the step's actions.
pub fn observe(state: &State, effects: &[Effects]) -> Observation {
    Observation {
        overall: state.overall.map(|s| s.name().to_string()),
        task: state.task.as_ref().map(|t| ObservedTask {
            id: t.id,
            status: t.status.name().to_string(),
            cancel_requested: t.cancel_requested,
        }),
        buckets: state
            .buckets
            .iter()
            .map(|b| ObservedBucket {
                bucket: b.bucket,
                status: state
                    .status
                    .iter()
                    .find(|(x, _)| *x == b.bucket)
                    .map(|(_, st)| st.name().to_string()),
                assignment: servers(&b.assignment),
                leader: b.lai.leader,
                isr: set(b.lai.isr),
                leader_epoch: b.lai.leader_epoch,
                bucket_epoch: b.lai.bucket_epoch,
                deleted: b.deleted,
                attempt: state
                    .attempts
                    .iter()
                    .find(|(x, _)| *x == b.bucket)
                    .map(|(_, a)| attempt(a)),
            })
            .collect(),
        sent: effects
            .iter()
            .flat_map(|e| e.sent.iter())
            .map(sent)
            .collect(),
        replies: effects
            .iter()
            .flat_map(|e| e.replies.iter())
            .map(reply)
            .collect(),
        events: state.events.iter().map(event).collect(),
        live: set(state.live),
        plan: state
            .plan
            .iter()
            .map(|e| json!({"bucket": e.bucket, "ors": servers(&e.ors), "trs": servers(&e.trs)}))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::projection::{BucketStatus, ServerSet, Servers};

    #[test]
    fn statuses_and_lists_read_as_the_spec_writes_them() {
        assert_eq!(BucketStatus::TimeoutFinal.name(), "TIMEOUT_FINAL");
        assert_eq!(BucketStatus::NotStarted.name(), "NOT_STARTED");
        assert_eq!(servers(&Servers::of([3, 0, 1])), vec![3, 0, 1]);
        assert_eq!(set(ServerSet::of([2, 0])), vec![0, 2]);
    }
}
