//! What the simulation checks, and when.
//!
//! **After every input** (O(what the input touched), so that a million buckets can be checked
//! at every step): every released effect against the durable store (`INV-RELEASED-DURABLE`, in
//! `world.rs`); every write the input made (`INV-EPOCH-ONLY-ON-CHANGE`, `INV-ELECTION-CLEAN`, in
//! `store.rs`); for each bucket it wrote and the bucket it was about, the cache against the
//! store as the core sees it (`INV-CONTEXT-COHERENT`), the status against the attempt
//! (`INV-STRUCTURE`, `INV-ONE-ATTEMPT`) and a pending bucket at its origin
//! (`INV-PENDING-AT-ORIGIN`); and the state parts that are counters (`INV-STRUCTURE`'s status
//! counts and overall, `INV-SLOT`, `INV-TRACKED-BOUND`, `INV-FINAL-PERSISTED`).
//!
//! **Every `--full-check-every` inputs, after every recovery and at the end**, whenever nothing
//! is pending: the manager's own `check_invariants`, O(plan + cluster), with the store parts.
//!
//! **At the end of the liveness phase**: the liveness goals of spec 7.3, within the bound of
//! [`LivenessBound`].

use rebalance_manager::{BucketId, BucketStatus, Manager, OverallStatus, PersistedState};

use crate::store::CoreFaults;

/// What the checks read of the simulated world. `world.rs` calls the checks and hands them this
/// view, so that they need nothing else of it (and it nothing of them but these functions).
pub struct Seen<'a> {
    /// The running incarnation.
    pub m: &'a Manager<CoreFaults>,
    /// The buckets the run started with.
    pub buckets: u32,
    /// What the store has made durable.
    pub durable: &'a PersistedState,
    /// Messages on the network.
    pub in_flight: usize,
    pub max_inflight: usize,
    /// Attempts the last recovery restored as tracked.
    pub restored: usize,
}

/// Per-input checks: `touched`, the buckets the input wrote, and `bucket`, the one it was about.
pub fn after_input(
    w: &Seen<'_>,
    touched: &[BucketId],
    bucket: Option<BucketId>,
) -> Result<(), String> {
    let m = w.m;
    let core = m.store();
    if let Some(v) = &core.violation {
        return Err(v.clone());
    }
    for b in touched.iter().copied().chain(bucket) {
        check_bucket(w, b)?;
    }
    let c = m.counts();
    let flags = m.flags();
    if let Some(rid) = m.rid() {
        if c.total() != w.m.plan().buckets.len() {
            return Err(format!(
                "INV-STRUCTURE: {} statuses for a plan of {} (rebalance {rid})",
                c.total(),
                w.m.plan().buckets.len()
            ));
        }
    }
    if c.rebalancing > w.max_inflight {
        return Err(format!(
            "INV-SLOT: {} running > max_inflight {}",
            c.rebalancing, w.max_inflight
        ));
    }
    let tracked_cap = m.config().max_tracked_timed_out;
    let bound = (tracked_cap + w.max_inflight - 1).max(w.restored);
    if c.rebalancing + c.timeout > bound {
        return Err(format!(
            "INV-TRACKED-BOUND: {} running + {} tracked > {bound}",
            c.rebalancing, c.timeout
        ));
    }
    let rebalancing = m.overall() == Some(OverallStatus::Rebalancing);
    let busy = c.in_progress() > 0 || flags.finalize_pending;
    if rebalancing != (m.rid().is_some() && busy) {
        return Err(format!(
            "INV-STRUCTURE: overall {:?} with rid {:?}, {} in progress, finalize pending {}",
            m.overall(),
            m.rid(),
            c.in_progress(),
            flags.finalize_pending
        ));
    }
    if let Some(o) = m.overall().filter(|o| o.is_final()) {
        let stored = core.logical_task();
        if stored.map(|t| (t.id, t.status)) != m.rid().map(|r| (r, o.task_status())) {
            return Err(format!(
                "INV-FINAL-PERSISTED: overall {o:?} but the stored task is {:?}",
                stored.map(|t| (t.id, t.status))
            ));
        }
    }
    Ok(())
}

/// The invariants of one bucket.
fn check_bucket(w: &Seen<'_>, b: BucketId) -> Result<(), String> {
    let m = w.m;
    let cached = m.bucket(b);
    let stored = m.store().logical(b);
    if cached != stored {
        return Err(format!(
            "INV-CONTEXT-COHERENT: bucket {b} cached {cached:?}, stored {stored:?}"
        ));
    }
    let status = m.bucket_status(b);
    let attempt = m.attempt(b);
    let active = matches!(
        status,
        Some(BucketStatus::Rebalancing | BucketStatus::Timeout)
    );
    if active != attempt.is_some() {
        return Err(format!(
            "INV-STRUCTURE: bucket {b} is {status:?} with attempt {}",
            attempt.is_some()
        ));
    }
    if let (Some(a), Some(rid)) = (attempt, m.rid()) {
        if a.key.rid != rid || a.key.bucket != b {
            return Err(format!(
                "INV-ONE-ATTEMPT: bucket {b} has attempt key {:?} in rebalance {rid}",
                a.key
            ));
        }
    }
    if status == Some(BucketStatus::NotStarted) {
        let entry =
            w.m.plan()
                .buckets
                .get(b as usize)
                .filter(|(pb, _)| *pb == b);
        if let (Some((_, e)), Some(rec)) = (entry, cached) {
            if rec.assignment != e.ors {
                return Err(format!(
                    "INV-PENDING-AT-ORIGIN: NOT_STARTED bucket {b} assigned {:?}, origin {:?}",
                    rec.assignment, e.ors
                ));
            }
        }
    }
    Ok(())
}

/// How long the liveness phase may take: from the moment faults stop (every server back, no
/// message lost, copied or reordered, no store operation or flush failing, no slow follower),
/// the rebalance must reach a final status stored within
///
/// - `(open / min(max_inflight, max_tracked_timed_out) + 1) * P + 8` check intervals of
///   simulated time, where `open` is the number of buckets not final when the faults stop and
///   `P = 2 * task_timeout + 4 * max_reconcile_backoff`. An attempt is done within two rounds of
///   timeout and reconcile: a running attempt whose messages were lost times out once, and a
///   tracked one is reconciled within one backoff and resends (R7, and R5 since finding F22),
///   after which acknowledgements, ISR proposals and Phase B need no time; the second round is
///   a leader-only bucket's, whose election over its targets waits for the reconcile after its
///   new leader joined the ISR (R18 advances only moves). Such buckets hold a slot until their
///   timeout and are then tracked, so they leave in waves of `min(max_inflight,
///   max_tracked_timed_out)`, one wave per `P`: hence the factor. No bound here allows a
///   give-up: R14.3's `no_progress_timeout` (24 hours by default) is far beyond it, and a bucket
///   FAILED after the faults stopped fails the run by itself (LIVE-PROGRESS, spec 7.3). The rest
///   is recovery, finalize and R23.5 retries, one interval each. (Before F22 the bound had to
///   include the give-up, in waves of `max_tracked_timed_out`: seeds `0x2` and `0x47` at 500
///   buckets.)
/// - `40` inputs per bucket not final when faults stop, plus `10` per message then in flight,
///   plus `10` per wave and slot's reconciles, plus `10,000`: a fault-free bucket takes about 6.3
///   inputs (the bench's figure).
pub struct LivenessBound {
    ticks: u64,
    inputs: u64,
}

impl LivenessBound {
    pub fn at(w: &Seen<'_>) -> LivenessBound {
        let c = w.m.config();
        let interval = c.check_interval_ms;
        // Buckets not final yet; all of them if no rebalance is stored (the client registers).
        let counts = w.m.counts();
        let open = match w.m.rid() {
            Some(_) => counts.not_started + counts.in_progress(),
            None => w.buckets as usize,
        } as u64;
        let period = (4 * c.max_reconcile_backoff_ms + 2 * c.task_timeout_ms) / interval;
        let width = c.max_tracked_timed_out.min(c.max_inflight).max(1) as u64;
        let waves = open / width + 1;
        LivenessBound {
            ticks: waves * period + 8,
            inputs: 40 * open + 10 * w.in_flight as u64 + 10 * waves * period * width + 10_000,
        }
    }

    pub fn check(&self, inputs: u64, ticks: u64) -> Result<(), String> {
        if ticks > self.ticks {
            return Err(format!(
                "the rebalance is not over {ticks} check intervals after the faults stopped \
                 (bound {})",
                self.ticks
            ));
        }
        if inputs > self.inputs {
            return Err(format!(
                "the rebalance is not over {inputs} inputs after the faults stopped (bound {})",
                self.inputs
            ));
        }
        Ok(())
    }
}

/// The liveness goals of spec 7.3 at the end of the liveness phase, every server up.
pub fn liveness_goals(w: &Seen<'_>) -> Result<(), String> {
    let m = w.m;
    let flags = m.flags();
    let c = m.counts();
    if flags.recovery_pending {
        return Err("LIVE-RECOVERED: recovery still pending".into());
    }
    let Some(overall) = m.overall().filter(|o| o.is_final()) else {
        return Err(format!(
            "LIVE-FINAL-STORED: overall {:?}, {} buckets in progress",
            m.overall(),
            c.in_progress()
        ));
    };
    if c.in_progress() > 0 || flags.finalize_pending || m.has_in_progress() {
        return Err(format!(
            "LIVE-ADMITTED-FINISHES / LIVE-REGISTER-ACCEPTED: {} in progress, finalize pending {}",
            c.in_progress(),
            flags.finalize_pending
        ));
    }
    let durable = w.durable;
    match &durable.task {
        Some(t) if Some(t.id) == m.rid() && t.status == overall.task_status() => {}
        t => {
            return Err(format!(
                "LIVE-FINAL-STORED: overall {overall:?}, stored task {:?}",
                t.as_ref().map(|t| (t.id, t.status))
            ))
        }
    }
    for (b, e) in &w.m.plan().buckets {
        let rec = &durable.cluster.buckets[b];
        if m.bucket_status(*b) != Some(BucketStatus::Failed) {
            let set = |v: &[u32]| v.iter().copied().collect::<std::collections::BTreeSet<_>>();
            let a = set(&rec.assignment);
            if a != set(&e.ors) && a != set(&e.trs) {
                return Err(format!(
                    "LIVE-ADMITTED-FINISHES: bucket {b} ({:?}) assigned {:?}, neither origin {:?} \
                     nor target {:?}",
                    m.bucket_status(*b),
                    rec.assignment,
                    e.ors,
                    e.trs
                ));
            }
        }
        if rec.lai.leader.is_none() {
            return Err(format!(
                "LIVE-METADATA-REPAIRED: bucket {b} has no leader with every server up (ISR {:?})",
                rec.lai.isr
            ));
        }
    }
    Ok(())
}
