//! `Manager`: the coordinator's rebalance manager, migration executor and the context it reads,
//! as a pure state machine: `handle(now_ms, input) -> effects`. Each input is one atomic step
//! (spec/protocol.md sections 1 and 5) and time is an input (section 3.5).
//!
//! The rules are split by group: `client` (R1, R2), `execute` (R3-R11; R11 is `try_complete`,
//! which `responses` calls), `responses` (R12, R18), `timers` (R13-R15, R23), `recovery` (R16),
//! `liveness` (R19, R20, deletion, and R23.5's retry of their failed writes, which Tick calls).
//! R17, the start of an incarnation, is [`Manager::start`] in this file. `planted` holds the old
//! bugs a test may put back (the `testing` feature only).

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use crate::core::bucket_map::BucketMap;
use crate::core::config::{Config, ConfigError};
use crate::core::effects::{Effect, Event, Input, Nli};
use crate::core::progress::StatusCounts;
use crate::core::types::{
    Attempt, BucketId, BucketRecord, BucketStatus, Epoch, Key, LeaderAndIsr, OverallStatus, Plan,
    PlanEntry, PlanKind, RebalanceId, ServerId,
};
use crate::store::{Store, StoreError};

mod client;
pub(crate) mod context;
mod execute;
mod liveness;
mod observe;
mod planted;
mod recovery;
mod responses;
mod timers;

use context::Context;

/// A step was aborted by a failed store write (R8): stop here, keep what was done and emitted.
#[derive(Debug)]
pub(crate) struct Abort;

/// The result of a rule procedure: `Ok` lets the step go on, `Err(Abort)` ends it here (R8).
pub(crate) type StepResult = Result<(), Abort>;

/// A plan bucket's manager-side record: where its entry is in the plan, its kind, its status.
/// (Not an execution slot: those are `max_inflight`'s, spec R3 and `INV-SLOT`.)
#[derive(Clone, Debug)]
pub(crate) struct PlanBucket {
    pub index: usize,
    pub kind: PlanKind,
    pub status: BucketStatus,
}

/// Why [`Manager::start`] failed. The store passed in is dropped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartError {
    /// The configuration is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The epoch write or the cache load failed (R17 assumes they succeed; a host retries start).
    #[error("coordinator start failed: {0}")]
    Store(#[from] StoreError),
}

/// The rebalance manager of one coordinator incarnation.
#[derive(Clone, Debug)]
pub struct Manager<S> {
    pub(crate) config: Config,
    pub(crate) store: S,
    /// `ce`: this incarnation's coordinator epoch.
    pub(crate) ce: Epoch,
    pub(crate) now_ms: u64,
    pub(crate) ctx: Context,
    pub(crate) rid: Option<RebalanceId>,
    pub(crate) overall: Option<OverallStatus>,
    pub(crate) plan: Arc<Plan>,
    /// `status[b]` for every plan bucket (with its plan index and kind).
    pub(crate) plan_buckets: BucketMap<PlanBucket>,
    /// Buckets per status, so "no bucket in progress" (spec 3.2, `has_in_progress`) is O(1)
    /// instead of a pass over the plan (NOTES.md, "Scale").
    pub(crate) counts: StatusCounts,
    /// `pending`, with lazy deletion: an entry whose status is no longer NOT_STARTED is stale and
    /// skipped by R3, so R6 need not search the queue. The logical FIFO is the NOT_STARTED entries.
    pub(crate) pending: VecDeque<BucketId>,
    pub(crate) attempts: BTreeMap<BucketId, Attempt>,
    pub(crate) queued_timeouts: BTreeSet<Key>,
    pub(crate) queued_reconciles: BTreeSet<Key>,
    pub(crate) cancel_requested: bool,
    pub(crate) finalize_pending: bool,
    pub(crate) finalize_queued: bool,
    pub(crate) recovery_pending: bool,
    pub(crate) recovery_queued: bool,
    /// Attempts restored by the last recovery (INV-TRACKED-BOUND's `restored`).
    pub(crate) restored: usize,
    /// R3 is a loop: a finish inside execute returns to the running loop instead of recursing.
    pub(crate) admitting: bool,
    /// Buckets whose R19/R20 liveness write failed; retried on every tick (R23.5), lost by a
    /// coordinator crash (R17).
    pub(crate) liveness_repairs: BTreeSet<BucketId>,
    /// Buckets whose deleted-marker write failed; retried on every tick.
    pub(crate) deletion_retries: BTreeSet<BucketId>,
    /// Store operations that failed in this incarnation, and the last error (observability only).
    pub(crate) store_failures: u64,
    pub(crate) last_store_error: Option<StoreError>,
    pub(crate) out: Vec<Effect>,
    /// A bug a test put back (`planted`, the `testing` feature only).
    #[cfg(feature = "testing")]
    pub(crate) planted: Option<crate::core::planted_bug::PlantedBug>,
}

impl<S: Store> Manager<S> {
    /// R17: start a new coordinator incarnation on `store`: `ce = store epoch + 1` (written),
    /// the cache loaded from the store, `live` from the server registrations,
    /// `recovery_pending = recovery_queued = true`, and `Enqueue(Recover)` emitted.
    pub fn start(
        config: Config,
        mut store: S,
        live: BTreeSet<ServerId>,
        now_ms: u64,
    ) -> Result<(Manager<S>, Vec<Effect>), StartError> {
        config.validate()?;
        let ce = store.elect_coordinator()?;
        let cluster = store.load_cluster()?;
        let mut m = Manager {
            config,
            store,
            ce,
            now_ms,
            ctx: Context::new(live, cluster),
            rid: None,
            overall: None,
            plan: Arc::new(Plan::default()),
            plan_buckets: BucketMap::new(),
            counts: StatusCounts::default(),
            pending: VecDeque::new(),
            attempts: BTreeMap::new(),
            queued_timeouts: BTreeSet::new(),
            queued_reconciles: BTreeSet::new(),
            cancel_requested: false,
            finalize_pending: false,
            finalize_queued: false,
            recovery_pending: true,
            recovery_queued: true,
            restored: 0,
            admitting: false,
            liveness_repairs: BTreeSet::new(),
            deletion_retries: BTreeSet::new(),
            store_failures: 0,
            last_store_error: None,
            out: Vec::new(),
            #[cfg(feature = "testing")]
            planted: None,
        };
        // R17: the repairs a failed liveness write left for R23.5 died with the last
        // incarnation; they are read back from the store and the live servers (F23).
        m.rederive_liveness_repairs();
        m.emit(Effect::Enqueue(Event::Recover));
        let effects = std::mem::take(&mut m.out);
        m.debug_check();
        Ok((m, effects))
    }

    /// Handle one input at time `now_ms` and return the effects, in emission order. The clock
    /// never goes back: an earlier `now_ms` than the last one is treated as the last one.
    /// Remote and store failures are handled inside (spec R8); this never fails.
    pub fn handle(&mut self, now_ms: u64, input: Input) -> Vec<Effect> {
        let mut out = Vec::new();
        self.handle_into(now_ms, input, &mut out);
        out
    }

    /// Like [`Manager::handle`], appending the effects to `out` (lets a host reuse a buffer).
    pub fn handle_into(&mut self, now_ms: u64, input: Input, out: &mut Vec<Effect>) {
        // The rules emit straight into the caller's buffer: swapped in for the step and back out
        // after it, so the effects are neither copied nor grown in a second vector.
        std::mem::swap(&mut self.out, out);
        self.step(now_ms, input);
        std::mem::swap(&mut self.out, out);
        self.debug_check();
    }

    fn step(&mut self, now_ms: u64, input: Input) {
        self.now_ms = self.now_ms.max(now_ms);
        // An Abort has already done what R8 asks (stop, keep what was done); nothing to add.
        let _: StepResult = match input {
            Input::Register { plan } => self.on_register(plan),
            Input::Cancel => self.on_cancel(),
            Input::Tick => self.on_tick(),
            Input::Event(Event::Timeout(key)) => self.on_timeout(key),
            Input::Event(Event::Reconcile(key)) => self.on_reconcile(key),
            Input::Event(Event::Finalize(id)) => self.on_finalize_event(id),
            Input::Event(Event::Recover) => self.on_recover(),
            Input::NliResponse {
                from,
                bucket,
                ok,
                context,
            } => self.on_nli_response(from, bucket, ok, &context),
            Input::AdjustIsr {
                from,
                bucket,
                leader_epoch,
                bucket_epoch,
                isr,
            } => self.on_adjust_isr(from, bucket, leader_epoch, bucket_epoch, isr),
            Input::ServerCrashed(s) => self.on_server_crashed(s),
            Input::ServerRestarted(s) => self.on_server_restarted(s),
            Input::BucketDeleted(b) => self.on_bucket_deleted(b),
        };
    }

    /// The store (read-only).
    pub fn store(&self) -> &S {
        &self.store
    }

    /// The store, for fault injection and environment setup. Changing persisted state behind
    /// the manager's back breaks INV-CONTEXT-COHERENT unless it plays a newer coordinator.
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }

    /// Stop this incarnation and hand back its store (a coordinator crash, R17).
    pub fn into_store(self) -> S {
        self.store
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// This incarnation's coordinator epoch `ce`.
    pub fn coordinator_epoch(&self) -> Epoch {
        self.ce
    }

    /// The manager's clock (the largest `now_ms` seen).
    pub fn now_ms(&self) -> u64 {
        self.now_ms
    }

    /// `has_in_progress = recovery_pending || finalize_pending || some status is in progress`.
    pub fn has_in_progress(&self) -> bool {
        self.recovery_pending || self.finalize_pending || self.counts.in_progress() > 0
    }

    /// Store operations that failed in this incarnation, and the last such error.
    pub fn store_failures(&self) -> (u64, Option<&StoreError>) {
        (self.store_failures, self.last_store_error.as_ref())
    }

    /// The cached record of a bucket (equal to the store's, INV-CONTEXT-COHERENT).
    pub fn bucket(&self, b: BucketId) -> Option<&BucketRecord> {
        self.ctx.buckets.get(&b)
    }

    /// The live servers.
    pub fn live(&self) -> &BTreeSet<ServerId> {
        &self.ctx.live
    }

    /// The current plan.
    pub fn plan(&self) -> &Arc<Plan> {
        &self.plan
    }

    // ---- helpers shared by the rule groups ----

    pub(crate) fn emit(&mut self, effect: Effect) {
        self.out.push(effect);
    }

    pub(crate) fn note_store_error(&mut self, e: StoreError) {
        self.store_failures += 1;
        self.last_store_error = Some(e);
    }

    /// The plan entry of a plan bucket. The Arc is cloned so callers may mutate `self`.
    pub(crate) fn entry(&self, b: BucketId) -> Option<(Arc<Plan>, usize, PlanKind)> {
        self.plan_buckets
            .get(&b)
            .map(|s| (Arc::clone(&self.plan), s.index, s.kind))
    }

    pub(crate) fn status(&self, b: BucketId) -> Option<BucketStatus> {
        self.plan_buckets.get(&b).map(|s| s.status)
    }

    /// Sets `status[b]`, keeping the per-status counters exact.
    pub(crate) fn set_status(&mut self, b: BucketId, st: BucketStatus) {
        if let Some(pb) = self.plan_buckets.get_mut(&b) {
            self.counts.adjust(pb.status, -1);
            self.counts.adjust(st, 1);
            pb.status = st;
        }
    }

    /// Clears every rebalance field (R1's reset, and R16 before restoring). The event queue is
    /// the host's and is kept; stale events are fenced by key and rid.
    pub(crate) fn reset_rebalance(&mut self) {
        self.rid = None;
        self.overall = None;
        self.plan = Arc::new(Plan::default());
        self.plan_buckets.clear();
        self.counts = StatusCounts::default();
        self.pending.clear();
        self.attempts.clear();
        self.queued_timeouts.clear();
        self.queued_reconciles.clear();
        self.cancel_requested = false;
        self.finalize_pending = false;
        self.finalize_queued = false;
        self.restored = 0;
    }

    /// Installs `plan` with every bucket in `status` (counts kept exact).
    pub(crate) fn install_plan(&mut self, plan: Arc<Plan>, status: BucketStatus) {
        self.plan_buckets = plan
            .buckets
            .iter()
            .enumerate()
            .map(|(index, (b, e))| {
                (
                    *b,
                    PlanBucket {
                        index,
                        kind: e.kind(),
                        status,
                    },
                )
            })
            .collect();
        self.counts = StatusCounts::default();
        self.counts.adjust_by(status, self.plan_buckets.len());
        self.plan = plan;
    }

    /// `send_current(b)`: NotifyLeaderAndIsr with the cached state to every live member of the
    /// assignment, ascending server order. No store write, no epoch change.
    pub(crate) fn send_current(&mut self, b: BucketId) {
        let Some(rec) = self.ctx.buckets.get(&b) else {
            return;
        };
        let exec_key = self.attempts.get(&b).map(|a| a.key);
        // Ascending server order without a vector: the members in increasing order, each once.
        let mut last = None;
        while let Some(s) = rec
            .assignment
            .iter()
            .copied()
            .filter(|s| last.is_none_or(|l| *s > l))
            .min()
        {
            last = Some(s);
            if !self.ctx.live.contains(&s) {
                continue;
            }
            self.out.push(Effect::SendNli(Nli {
                to: s,
                bucket: b,
                replicas: rec.assignment.clone(),
                leader: rec.lai.leader,
                leader_epoch: rec.lai.leader_epoch,
                isr: rec.lai.isr.clone(),
                bucket_epoch: rec.lai.bucket_epoch,
                coordinator_epoch: self.ce,
                exec_key,
            }));
        }
    }

    /// `write_bucket(b, assignment', lai')` (spec 4): one atomic store write with
    /// `bucket_epoch + 1`, `leader_epoch + 1` iff the leader changes, `coordinator_epoch = ce`;
    /// the cache is updated only on success (write-through). A write that would change none of
    /// assignment, leader and ISR is not issued (INV-EPOCH-ONLY-ON-CHANGE) and succeeds.
    pub(crate) fn write_bucket(
        &mut self,
        b: BucketId,
        assignment: Vec<ServerId>,
        leader: Option<ServerId>,
        isr: BTreeSet<ServerId>,
    ) -> StepResult {
        let Some(cur) = self.ctx.buckets.get(&b) else {
            return Err(Abort);
        };
        if cur.assignment == assignment && cur.lai.leader == leader && cur.lai.isr == isr {
            return Ok(());
        }
        let lai = LeaderAndIsr {
            leader,
            leader_epoch: cur.lai.leader_epoch + u64::from(leader != cur.lai.leader),
            isr,
            bucket_epoch: cur.lai.bucket_epoch + 1,
            coordinator_epoch: self.ce,
        };
        let rec = BucketRecord { assignment, lai };
        match self.store.write_bucket(self.ce, b, &rec) {
            Ok(()) => {
                self.ctx.set_bucket(b, rec);
                Ok(())
            }
            Err(e) => {
                // R8: the failed write changed nothing; abort the step.
                self.note_store_error(e);
                Err(Abort)
            }
        }
    }

    #[cfg(debug_assertions)]
    fn debug_check(&self) {
        if let Err(v) = self.check_invariants() {
            panic!("rebalance manager invariant violated: {v}");
        }
    }

    #[cfg(not(debug_assertions))]
    fn debug_check(&self) {}
}

/// The plan entry behind an `entry()` lookup.
pub(crate) fn plan_entry(plan: &Plan, index: usize) -> &PlanEntry {
    &plan.buckets[index].1
}
