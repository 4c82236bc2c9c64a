//! The coordinator (manager) rules R1-R20 and R23 as one mutable step context. Each file holds
//! one group of rules; every function cites the rule it implements.

mod client;
mod execution;
mod recovery;
mod responses;
pub use responses::adjust_isr_accepted as responses_accepted;
mod timers;
mod zombie;
pub use zombie::zombie_candidates;

use crate::action::StepOutput;
use crate::bug::{Bug, BugSet};
use crate::config::Config;
use crate::message::{Message, Nli};
pub use crate::rule::Rule;
use crate::state::{Event, Observed, SystemState};
use crate::types::{BucketId, BucketStatus, Key, LeaderAndIsr, PlanEntry, Replicas, ServerId};

/// A store operation failed: the rest of the step is skipped, every change already made stays
/// (spec 5, "Abort"; R8).
#[derive(Debug)]
pub struct Abort;

pub type Flow = Result<(), Abort>;

/// One atomic step in progress: the state being changed and what it emitted.
pub struct Step<'a> {
    pub config: &'a Config,
    pub bugs: BugSet,
    /// The state being changed, in place (a state is about 2 KB: moving it in and out of the
    /// step would cost more than the step's logic).
    pub s: &'a mut SystemState,
    pub out: StepOutput,
    fail_at: Option<u8>,
}

impl<'a> Step<'a> {
    pub fn new(
        config: &'a Config,
        bugs: BugSet,
        s: &'a mut SystemState,
        fail_at: Option<u8>,
    ) -> Self {
        Step {
            config,
            bugs,
            s,
            out: StepOutput::default(),
            fail_at,
        }
    }

    pub fn bug(&self, bug: Bug) -> bool {
        self.bugs.has(bug)
    }

    pub fn fired(&mut self, rule: Rule) {
        self.out.rules.insert(rule);
    }

    /// Counts one failable store operation (spec 9); the `fail_store_op`-th one fails (R8).
    pub fn store_op(&mut self) -> Flow {
        self.out.store_ops += 1;
        if self.fail_at == Some(self.out.store_ops) {
            self.out.store_failed = true;
            Err(Abort)
        } else {
            Ok(())
        }
    }

    /// D7: a store write is conditional on the writer's coordinator epoch being the store's
    /// current one. Only a deposed incarnation (a zombie, spec 9) writes with another epoch, so
    /// for the current coordinator this never fails. `task_node` writes are not fenced under
    /// `unfenced-task-writes` (H21), as in Fluss.
    pub fn fence(&self, task_node: bool) -> Flow {
        if self.s.coordinator.ce == self.s.store.coordinator_epoch
            || (task_node && self.bug(Bug::UnfencedTaskWrites))
        {
            Ok(())
        } else {
            Err(Abort)
        }
    }

    // ---- reads of the store through the write-through cache (spec 3.2) ----

    pub fn entry(&self, b: BucketId) -> PlanEntry {
        *self.s.coordinator.plan_entry(b).expect("plan bucket")
    }
    pub fn assignment(&self, b: BucketId) -> &Replicas {
        &self.s.coordinator.cache.assignment[b as usize]
    }
    pub fn lai(&self, b: BucketId) -> LeaderAndIsr {
        self.s.coordinator.cache.lai[b as usize]
    }
    pub fn deleted(&self, b: BucketId) -> bool {
        self.s.coordinator.cache.deleted[b as usize]
    }

    /// `at_origin_assignment(b)` (spec 4).
    pub fn at_origin_assignment(&self, b: BucketId) -> bool {
        *self.assignment(b) == self.entry(b).ors
    }
    /// `at_origin(b)` (spec 4, D4).
    pub fn at_origin(&self, b: BucketId) -> bool {
        let e = self.entry(b);
        if self.bug(Bug::FlussAtOrigin) {
            let lai = self.lai(b);
            let ors = crate::types::ServerSet::from_servers(&e.ors);
            return self.at_origin_assignment(b)
                && lai.leader == Some(e.old_leader)
                && lai.isr.is_subset(ors);
        }
        e.at_origin(self.assignment(b), self.lai(b).leader)
    }
    /// `at_target(b)` (spec 4).
    pub fn at_target(&self, b: BucketId) -> bool {
        *self.assignment(b) == self.entry(b).trs
    }
    /// `caught_up(b)` (spec 4).
    pub fn caught_up(&self, b: BucketId) -> bool {
        let trs = self.entry(b).trs_set();
        trs.is_subset(self.s.coordinator.live) && trs.is_subset(self.lai(b).isr)
    }
    /// `final_state(b)` (spec 4).
    pub fn final_state(&self, b: BucketId) -> bool {
        let live = self.s.coordinator.live;
        self.entry(b)
            .final_state(self.assignment(b), &self.lai(b), live, self.deleted(b))
    }
    /// `elect(b, candidates)` (spec 4).
    pub fn elect(&self, b: BucketId, candidates: &[ServerId]) -> Option<ServerId> {
        let lai = self.lai(b);
        candidates
            .iter()
            .copied()
            .find(|c| self.s.coordinator.live.contains(*c) && lai.isr.contains(*c))
    }
    /// `observe(b)` (spec 3.2).
    pub fn observe(&self, b: BucketId) -> Observed {
        let lai = self.lai(b);
        Observed {
            assignment: *self.assignment(b),
            leader: lai.leader,
            isr: lai.isr,
        }
    }
    pub fn key_of(&self, b: BucketId) -> Option<Key> {
        self.s.coordinator.attempt(b).map(|a| a.key)
    }
    // ---- effects ----

    /// `send_current(b)` (spec 4): the current metadata to every live assigned server, in
    /// ascending server order. No store write, no epoch change.
    pub fn send_current(&mut self, b: BucketId) {
        let lai = self.lai(b);
        let mut replicas_sorted = *self.assignment(b);
        replicas_sorted.sort_unstable();
        let exec_key = self.key_of(b);
        for to in replicas_sorted {
            if !self.s.coordinator.live.contains(to) {
                continue;
            }
            let m = Message::Nli(Nli {
                to,
                bucket: b,
                replicas: *self.assignment(b),
                leader: lai.leader,
                leader_epoch: lai.leader_epoch,
                isr: lai.isr,
                bucket_epoch: lai.bucket_epoch,
                coordinator_epoch: self.s.coordinator.ce,
                exec_key,
            });
            self.out.sent.push(m);
            self.s.send(m);
        }
    }

    /// `write_bucket(b, assignment', lai')` (spec 4), only when it changes the assignment, the
    /// leader or the ISR (INV-EPOCH-ONLY-ON-CHANGE). `failable` is false for the liveness path
    /// of R19/R20 (D10).
    pub fn write_bucket(
        &mut self,
        b: BucketId,
        assignment: Replicas,
        leader: Option<ServerId>,
        isr: crate::types::ServerSet,
        failable: bool,
    ) -> Flow {
        let lai = self.lai(b);
        if assignment == *self.assignment(b) && leader == lai.leader && isr == lai.isr {
            return Ok(());
        }
        self.write_bucket_raw(b, assignment, leader, isr, failable)
    }

    /// The store write itself. The ghost of INV-EPOCH-ONLY-ON-CHANGE is recorded here, for any
    /// caller.
    pub fn write_bucket_raw(
        &mut self,
        b: BucketId,
        assignment: Replicas,
        leader: Option<ServerId>,
        isr: crate::types::ServerSet,
        failable: bool,
    ) -> Flow {
        if failable {
            self.store_op()?;
        }
        self.fence(false)?;
        let old = self.lai(b);
        if assignment == *self.assignment(b) && leader == old.leader && isr == old.isr {
            self.s.ghost.violations.epoch_without_change = true;
        }
        let new = LeaderAndIsr {
            leader,
            leader_epoch: old.leader_epoch + u8::from(leader != old.leader),
            isr,
            bucket_epoch: old.bucket_epoch + 1,
            coordinator_epoch: self.s.coordinator.ce,
        };
        let i = b as usize;
        self.s.store.buckets.assignment[i] = assignment;
        self.s.store.buckets.lai[i] = new;
        // Write-through: the cache changes only after the store write succeeded.
        self.s.coordinator.cache.assignment[i] = assignment;
        self.s.coordinator.cache.lai[i] = new;
        Ok(())
    }

    pub fn enqueue(&mut self, e: Event) {
        self.out.enqueued.push(e);
        self.s.coordinator.events.push(e);
    }

    /// Enqueues `Reconcile(key)` unless one is queued (R13, R16, R23).
    pub fn enqueue_reconcile(&mut self, key: Key) {
        let q = &mut self.s.coordinator.queued_reconciles;
        if let Err(pos) = q.binary_search(&key) {
            q.insert(pos, key);
            self.enqueue(Event::Reconcile { key });
        }
    }

    /// Marks a bucket CANCELED (R2, R16). INV-CANCELED-AT-ORIGIN and
    /// INV-CANCEL-PERSISTED-FIRST are checked on the transition (`transition.rs`).
    pub fn mark_canceled(&mut self, b: BucketId) {
        self.s.coordinator.set_status(b, BucketStatus::Canceled);
    }
}
