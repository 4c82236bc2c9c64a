//! The coordinator (manager) rules R1-R20, R23 and the bucket deletion as one mutable step
//! context. Each file holds one group of rules; every function cites the rule it implements.

mod client;
mod execution;
mod liveness;
mod recovery;
pub(crate) mod remote_plan;
pub(crate) mod rest;
// The two rule groups the model calls directly (not through `Step`) are `pub(crate)`, and
// their callers name them by their own path: a re-export here would make this file and theirs
// import each other.
pub(crate) mod responses;
mod timers;
pub(crate) mod zombie;

use crate::config::Config;
use crate::state::message::{Message, Nli};
use crate::state::types::{
    BucketId, BucketStatus, Key, LeaderAndIsr, PlanEntry, Replicas, ServerId,
};
use crate::state::{Event, Observed, SystemState};
use crate::step::action::StepOutput;
use crate::verdict::bug::{Bug, BugSet};
pub use crate::verdict::rule::Rule;

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
            let ors = crate::state::types::ServerSet::from_servers(&e.ors);
            return self.at_origin_assignment(b)
                && lai.leader == Some(e.old_leader)
                && lai.isr.is_subset(ors);
        }
        e.at_origin(self.assignment(b), self.lai(b).leader)
    }
    /// Whether bucket writes are split as in Fluss (`split-bucket-writes`, D15).
    pub fn split_writes(&self) -> bool {
        self.bug(Bug::SplitBucketWrites)
    }
    /// The LeaderAndIsr the move decision table (R7, R11) reads. Under `split-bucket-writes`
    /// it is the store's, as Fluss reads it from ZooKeeper there, since its context may have
    /// run ahead; otherwise the cache, which equals the store.
    pub fn decision_lai(&self, b: BucketId) -> LeaderAndIsr {
        if self.split_writes() {
            self.s.store.buckets.lai[b as usize]
        } else {
            self.lai(b)
        }
    }
    /// `at_target(b)` (spec 4). Under `split-bucket-writes` both the context's and the store's
    /// assignment must be the target, as in Fluss's decision table.
    pub fn at_target(&self, b: BucketId) -> bool {
        let trs = self.entry(b).trs;
        *self.assignment(b) == trs
            && (!self.split_writes() || self.s.store.buckets.assignment[b as usize] == trs)
    }
    /// `caught_up(b)` (spec 4).
    pub fn caught_up(&self, b: BucketId) -> bool {
        let trs = self.entry(b).trs_set();
        trs.is_subset(self.s.coordinator.live) && trs.is_subset(self.decision_lai(b).isr)
    }
    /// `final_state(b)` (spec 4).
    pub fn final_state(&self, b: BucketId) -> bool {
        let live = self.s.coordinator.live;
        self.entry(b).final_state(
            self.assignment(b),
            &self.decision_lai(b),
            live,
            self.deleted(b),
        ) && self.at_target(b)
            && (!self.config.planned_leader
                || self.decision_lai(b).leader == Some(self.entry(b).new_leader))
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
        if self.config.is_abstract(b) {
            return; // an abstract bucket's messages are not modelled (spec 9)
        }
        let lai = self.lai(b);
        let mut replicas_sorted = *self.assignment(b);
        replicas_sorted.sort_unstable();
        let exec_key = self.key_of(b);
        for to in replicas_sorted {
            if !self.s.coordinator.live.contains(to) {
                continue;
            }
            let nli = Nli {
                to,
                bucket: b,
                replicas: *self.assignment(b),
                leader: lai.leader,
                leader_epoch: lai.leader_epoch,
                isr: lai.isr,
                bucket_epoch: lai.bucket_epoch,
                coordinator_epoch: self.s.coordinator.ce,
                exec_key,
            };
            self.out.sent.push(Message::Nli(nli));
            // Spec 3.4, "redundant requests": a resend the server would adopt without change,
            // answering what is already in flight, is absorbed like one still in flight.
            if !(self.config.absorb_redundant_nli
                && crate::step::environment::nli_redundant(self.s, &nli))
            {
                self.s.send(Message::Nli(nli));
            }
        }
    }

    /// `write_bucket(b, assignment', lai')` (spec 4), only when it changes the assignment, the
    /// leader or the ISR (INV-EPOCH-ONLY-ON-CHANGE).
    pub fn write_bucket(
        &mut self,
        b: BucketId,
        assignment: Replicas,
        leader: Option<ServerId>,
        isr: crate::state::types::ServerSet,
    ) -> Flow {
        let lai = self.lai(b);
        if assignment == *self.assignment(b) && leader == lai.leader && isr == lai.isr {
            return Ok(());
        }
        self.write_bucket_raw(b, assignment, leader, isr)
    }

    /// The store write itself. The ghost of INV-EPOCH-ONLY-ON-CHANGE is recorded here, for any
    /// caller.
    pub fn write_bucket_raw(
        &mut self,
        b: BucketId,
        assignment: Replicas,
        leader: Option<ServerId>,
        isr: crate::state::types::ServerSet,
    ) -> Flow {
        self.store_op()?;
        self.fence(false)?;
        let old = self.lai(b);
        if assignment == *self.assignment(b) && leader == old.leader && isr == old.isr {
            self.s.ghost.violations.epoch_without_change = true;
        }
        let new = self.next_lai(old, leader, isr);
        let i = b as usize;
        self.s.store.buckets.lai[i] = new;
        // Write-through: the cache changes only after the store write succeeded.
        self.s.coordinator.cache.lai[i] = new;
        if self.split_writes() {
            // Fluss writes the LeaderAndIsr node alone here; the stored assignment may lag the
            // context's (D15), and copying the context's into the store would repair it.
            debug_assert_eq!(
                assignment,
                *self.assignment(b),
                "a split write changes the LAI only"
            );
        } else {
            self.s.store.buckets.assignment[i] = assignment;
            self.s.coordinator.cache.assignment[i] = assignment;
        }
        Ok(())
    }

    /// The LeaderAndIsr a write makes of `old` (spec 4, `write_bucket`): bucket epoch + 1, leader
    /// epoch + 1 iff the leader changes, this incarnation's coordinator epoch.
    fn next_lai(
        &self,
        old: LeaderAndIsr,
        leader: Option<ServerId>,
        isr: crate::state::types::ServerSet,
    ) -> LeaderAndIsr {
        LeaderAndIsr {
            leader,
            leader_epoch: old.leader_epoch + u8::from(leader != old.leader),
            isr,
            bucket_epoch: old.bucket_epoch + 1,
            coordinator_epoch: self.s.coordinator.ce,
        }
    }

    /// Fluss's bucket write that moves a replica set (Phase A, Phase B) under
    /// `split-bucket-writes` (D15): the LeaderAndIsr node, then the assignment node, each put
    /// into the context before the store is written. A failure at either aborts the step with
    /// the context ahead of the store, and at the second with the store half written (a crash
    /// between the two leaves the same store). `assignment_first` puts the new assignment into
    /// the context before both, as Fluss's Phase B does before its LeaderAndIsr writes. The
    /// new LeaderAndIsr is built from the stored one, as Fluss's Phase A reads it from
    /// ZooKeeper.
    pub fn write_bucket_split(
        &mut self,
        b: BucketId,
        assignment: Replicas,
        leader: Option<ServerId>,
        isr: crate::state::types::ServerSet,
        assignment_first: bool,
    ) -> Flow {
        let i = b as usize;
        if assignment_first {
            self.s.coordinator.cache.assignment[i] = assignment;
        }
        let new = self.next_lai(self.s.store.buckets.lai[i], leader, isr);
        self.s.coordinator.cache.lai[i] = new;
        self.store_op()?;
        self.fence(false)?;
        self.s.store.buckets.lai[i] = new;
        self.write_assignment(b, assignment)
    }

    /// The assignment node alone, context first, as Fluss writes it (`split-bucket-writes`:
    /// the second half of Phase A and Phase B, and the retry of Phase A, which rewrites the
    /// union). The assignment node carries no epoch.
    pub fn write_assignment(&mut self, b: BucketId, assignment: Replicas) -> Flow {
        let i = b as usize;
        self.s.coordinator.cache.assignment[i] = assignment;
        self.store_op()?;
        self.fence(false)?;
        self.s.store.buckets.assignment[i] = assignment;
        Ok(())
    }

    /// A resend of the decision table (R7.1, R7.2, R7.4). Under `split-bucket-writes` Fluss
    /// reads the LeaderAndIsr from ZooKeeper and copies it into the context first, which is
    /// how a context that ran ahead by an aborted write is repaired.
    pub fn resend_stored(&mut self, b: BucketId) {
        if self.split_writes() {
            let i = b as usize;
            self.s.coordinator.cache.lai[i] = self.s.store.buckets.lai[i];
        }
        self.send_current(b);
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
