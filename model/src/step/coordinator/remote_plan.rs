//! The remote plan storage of apache/fluss#3868 (the `remote_plan` design;
//! spec/fluss-designs.md, "Large plans outside ZooKeeper"): the plan object R1 writes before
//! the task node's reference, the superseded objects it deletes after, and R16's read of the
//! object the reference names.

use super::{Flow, Step};
use crate::state::types::RebalanceId;
use crate::state::{PlanObject, PlanObjects, TaskNode};
use crate::verdict::bug::Bug;

/// Where the plan of rebalance `id` is stored: under its own id, or at the one fixed path
/// (key 0) of `one-plan-path`.
pub(crate) fn key_of(one_path: bool, id: RebalanceId) -> RebalanceId {
    if one_path {
        0
    } else {
        id
    }
}

/// Whether `task`'s reference resolves: the object at its key holds its plan, whole
/// (INV-PLAN-RESOLVES). `one_path` is `one-plan-path`'s fixed path.
pub fn resolves(plans: &PlanObjects, one_path: bool, task: &TaskNode) -> bool {
    let key = key_of(one_path, task.id);
    plans
        .iter()
        .any(|o| o.key == key && o.content == task.id && o.whole)
}

impl Step<'_> {
    /// R1's write of the plan object. The remote storage is another system than the store:
    /// its writes are not fenced by the coordinator epoch (D7 is ZooKeeper's), and a failed
    /// one may leave a partial object under its key (the worst a file system without atomic
    /// puts allows; an object store's put is atomic, which is a special case).
    pub fn write_plan_object(&mut self, id: RebalanceId) -> Flow {
        let key = key_of(self.bug(Bug::OnePlanPath), id);
        let written = self.store_op();
        let plans = &mut self.s.store.plans;
        plans.retain(|o| o.key != key);
        plans.push(PlanObject {
            key,
            content: id,
            whole: written.is_ok(),
        });
        plans.sort_unstable();
        written
    }

    /// R1's deletion of the objects of every other rebalance, in one operation. Its failure
    /// aborts nothing: the objects stay as garbage for the next Register to collect.
    pub fn collect_superseded_plans(&mut self, id: RebalanceId) {
        let key = key_of(self.bug(Bug::OnePlanPath), id);
        if self.s.store.plans.iter().all(|o| o.key == key) {
            return;
        }
        if self.store_op().is_ok() {
            self.s.store.plans.retain(|o| o.key == key);
        }
    }

    /// R16's read of the object `task` references, after the task node's read: it may fail
    /// like that read (recovery stays pending, D6). An object that does not resolve is read as
    /// a failed read too (D6 again: nothing is recovered from a plan that cannot be verified,
    /// and no new rebalance is admitted until an operator restores it). Unreachable unless
    /// INV-PLAN-RESOLVES is broken.
    pub fn read_plan_object(&mut self, task: &TaskNode) -> Flow {
        self.store_op()?;
        if resolves(&self.s.store.plans, self.bug(Bug::OnePlanPath), task) {
            Ok(())
        } else {
            Err(super::Abort)
        }
    }
}
