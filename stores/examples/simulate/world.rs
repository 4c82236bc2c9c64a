//! One simulated run: the manager on the group-commit host (`rebalance_stores::group_commit`)
//! over the simulated store, against the simulated cluster (`rebalance_manager::sim`), all in
//! one thread and driven by one seed. A fault phase, then a liveness phase with no fault.

use std::collections::VecDeque;
use std::time::Instant;

use rebalance_manager::sim::{Cluster, Msg, Rng};
use rebalance_manager::{
    BucketId, BucketRecord, BucketStatus, Config, Effect, Event, Input, Manager, MemStore,
    OverallStatus, PersistedState, Reply, ServerId,
};
use rebalance_stores::group_commit::released_durable;
use rebalance_stores::{Flow, GroupCommit, Host, HostStore, Observer};

use crate::checks;
use crate::cluster_plan::{initial, plan_for};
use crate::mix::Mix;
use crate::store::{CoreFaults, FlushFaults, Landed};

pub const SERVERS: u32 = 8;
/// How long a slow bucket's followers take to catch up (the bench's and `cluster`'s figure).
const SLOW_FOR_MS: u64 = 200_000;
/// At most this many servers down at once.
const MAX_DOWN: usize = 2;

/// A bug planted on purpose, so that a check can be seen to catch it (`SIMULATE_PLANT`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Plant {
    None,
    /// The host releases effects before their batch is durable (breaks G1).
    EarlyRelease,
    /// A successful flush loses its last write (breaks G2).
    DropWrite,
    /// The manager's no-progress window is 1 ms, so a tracked bucket that sees no change from one
    /// reconcile to the next gives up, faults or not (breaks LIVE-PROGRESS, spec 7.3).
    ShortGiveUp,
    /// The store hides that a write it failed landed (its answer lost): the host goes on with
    /// the core believing the write failed (breaks G3; spec/findings.md F25).
    HiddenDoubt,
}

/// Why a run failed, at which input.
#[derive(Debug)]
pub struct Failure {
    pub input: u64,
    pub what: String,
}

/// What a run did.
#[derive(Debug, Default)]
pub struct Outcome {
    pub status: Option<OverallStatus>,
    pub completed: usize,
    pub failed: usize,
    /// Buckets that gave up after the faults stopped (R14.3 in the liveness phase); a run
    /// that passes has none (LIVE-PROGRESS).
    pub failed_after_faults: usize,
    pub inputs: u64,
    pub fault_inputs: u64,
    pub liveness_inputs: u64,
    pub liveness_ticks: u64,
    pub incarnations: u64,
    pub lost_batches: Vec<Landed>,
    /// Writes that landed with their answer lost (each stopped an incarnation, G3).
    pub doubtful_writes: u64,
    pub server_crashes: u32,
    pub store_failures: u64,
    pub full_checks: u64,
    pub seconds: f64,
}

/// The client: it registers the plan once, again if a crash lost the rebalance before it was
/// stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    Idle,
    Waiting,
    Done,
}

pub type M = Manager<CoreFaults>;

impl HostStore for CoreFaults {
    type Durable = FlushFaults;

    fn adapter(&self) -> &GroupCommit<FlushFaults> {
        &self.inner
    }

    fn adapter_mut(&mut self) -> &mut GroupCommit<FlushFaults> {
        &mut self.inner
    }
}

/// The host's observer: every released effect checked against the durable store
/// (`INV-RELEASED-DURABLE`).
struct ReleaseCheck;

impl Observer<()> for ReleaseCheck {
    type Error = String;

    fn released(
        &mut self,
        _: &(),
        effects: &[Effect],
        durable: Option<&PersistedState>,
    ) -> Result<(), String> {
        let durable = durable.expect("the simulated store shows its durable state");
        for e in effects {
            released_durable(e, durable).map_err(|why| format!("INV-RELEASED-DURABLE: {why}"))?;
        }
        Ok(())
    }
}

pub struct World {
    pub buckets: u32,
    pub mix: Mix,
    plant: Plant,
    rng: Rng,
    cluster: Cluster,
    h: Option<Host<CoreFaults>>,
    now: u64,
    faults: bool,
    client: Client,
    /// Attempts the last recovery restored (INV-TRACKED-BOUND's `restored`).
    restored: usize,
    coordinator_crash_at: Vec<u64>,
    server_crash_at: Vec<u64>,
    down: Vec<(ServerId, u64)>,
    flush_in: u64,
    full_every: u64,
    /// A full check is due at the next input that leaves nothing pending.
    full_due: bool,
    out: Outcome,
}

impl World {
    pub fn new(seed: u64, buckets: u32, mix: Mix, plant: Plant, full_every: u64) -> World {
        let mut rng = Rng::new(seed);
        let state = initial(buckets, SERVERS);
        let mut cluster = Cluster::new(0..SERVERS);
        for (b, r) in &state.cluster.buckets {
            cluster.init_bucket(*b, r);
            if rng.chance(mix.slow_ppm) {
                cluster.slow_for.insert(*b, SLOW_FOR_MS);
            }
        }
        let fault_inputs = u64::from(buckets) * mix.fault_inputs_per_bucket_tenths / 10;
        let points = |n: u32, rng: &mut Rng| {
            let mut v: Vec<u64> = (0..n).map(|_| rng.below(fault_inputs.max(1))).collect();
            v.sort_unstable();
            v
        };
        let coordinator_crash_at = points(mix.coordinator_crashes, &mut rng);
        let server_crash_at = points(mix.server_crashes, &mut rng);
        // Flush failures: at flushes drawn from the ones a run of this size makes.
        let expected_flushes = (u64::from(buckets) * 3 / mix.group_commit as u64).max(4);
        let mut fail_at: Vec<u64> = (0..mix.flush_failures)
            .map(|_| 1 + rng.below(expected_flushes))
            .collect();
        fail_at.sort_unstable();
        fail_at.dedup();
        // Writes that go alone and are left in doubt: at points drawn, from a stream of their
        // own (so that every earlier seed keeps its run), from the writes a run of this size
        // makes alone (every write with a batch of one; the plan and the deleted markers else).
        let expected_singles = if mix.group_commit == 1 {
            u64::from(buckets) * 3
        } else {
            2
        };
        let mut doubt_rng = Rng::new(seed ^ 0x4455_4254);
        let mut doubt_at: Vec<u64> = (0..mix.doubtful_writes)
            .map(|_| 1 + doubt_rng.below(expected_singles))
            .collect();
        doubt_at.sort_unstable();
        doubt_at.dedup();
        let store = FlushFaults {
            durable: MemStore::with_state(state),
            fail_at,
            flushes: 0,
            rng: Rng::new(rng.next_u64()),
            drop_write: plant == Plant::DropWrite,
            failed: Vec::new(),
            doubt_at,
            singles: 0,
            doubt: false,
            doubted: 0,
            hide_doubt: plant == Plant::HiddenDoubt,
        };
        let flush_in = mix.flush_every;
        let mut w = World {
            buckets,
            mix,
            plant,
            rng,
            cluster,
            h: None,
            now: 0,
            faults: true,
            client: Client::Idle,
            restored: 0,
            coordinator_crash_at,
            server_crash_at,
            down: Vec::new(),
            flush_in,
            full_every,
            full_due: false,
            out: Outcome::default(),
        };
        w.incarnate(store);
        w
    }

    pub fn m(&self) -> &M {
        self.h().manager()
    }

    fn h(&self) -> &Host<CoreFaults> {
        self.h.as_ref().expect("an incarnation runs")
    }

    fn h_mut(&mut self) -> &mut Host<CoreFaults> {
        self.h.as_mut().expect("an incarnation runs")
    }

    fn fail(&self, what: impl Into<String>) -> Failure {
        Failure {
            input: self.out.inputs,
            what: what.into(),
        }
    }

    /// The whole run: the fault phase, then the liveness phase, then the liveness goals.
    pub fn run(&mut self, mut progress: impl FnMut(&str, &World)) -> Result<Outcome, Failure> {
        let started = Instant::now();
        self.recover()?;
        let fault_inputs = u64::from(self.buckets) * self.mix.fault_inputs_per_bucket_tenths / 10;
        let mut next_report = Instant::now();
        while self.out.inputs < fault_inputs && !self.finished() {
            if !self.step()? {
                break;
            }
            if next_report.elapsed().as_secs() >= 10 {
                progress("faults", self);
                next_report = Instant::now();
            }
        }
        self.out.fault_inputs = self.out.inputs;
        self.stop_faults()?;
        let failed_before = self.failed_buckets();
        let bound = checks::LivenessBound::at(&self.seen());
        let (inputs0, now0) = (self.out.inputs, self.now);
        while !self.finished() {
            if !self.step()? {
                return Err(self.fail(format!(
                    "liveness: nothing left to do but the rebalance is {:?}",
                    self.m().overall()
                )));
            }
            let (inputs, ticks) = (
                self.out.inputs - inputs0,
                (self.now - now0) / self.m().config().check_interval_ms,
            );
            if let Err(why) = bound.check(inputs, ticks) {
                return Err(self.fail(format!("liveness: {why}")));
            }
            if next_report.elapsed().as_secs() >= 10 {
                progress("liveness", self);
                next_report = Instant::now();
            }
        }
        self.out.liveness_inputs = self.out.inputs - inputs0;
        self.out.liveness_ticks = (self.now - now0) / self.m().config().check_interval_ms;
        self.flush()?;
        // LIVE-PROGRESS (spec 7.3): once the faults have stopped, no bucket gives up. A bucket
        // that gave up while they lasted may have had a cause; one that gives up after had none.
        let failed_after: Vec<BucketId> = self
            .failed_buckets()
            .into_iter()
            .filter(|b| failed_before.binary_search(b).is_err())
            .collect();
        if let Some(b) = failed_after.first() {
            return Err(self.fail(format!(
                "liveness: LIVE-PROGRESS: {} buckets FAILED after the faults stopped, the first \
                 bucket {b}",
                failed_after.len()
            )));
        }
        checks::liveness_goals(&self.seen())
            .map_err(|why| self.fail(format!("liveness: {why}")))?;
        self.full_check()?;
        let c = self.m().counts();
        self.out.status = self.m().overall();
        self.out.completed = c.completed;
        self.out.failed = c.failed;
        self.out.failed_after_faults = failed_after.len();
        self.out.store_failures += self.m().store().failures;
        self.out.lost_batches = self.flush_faults().failed.clone();
        self.out.doubtful_writes = self.flush_faults().doubted;
        self.out.seconds = started.elapsed().as_secs_f64();
        Ok(std::mem::take(&mut self.out))
    }

    /// The plan's FAILED buckets, ascending (one pass over the plan).
    fn failed_buckets(&self) -> Vec<BucketId> {
        let mut failed: Vec<BucketId> = self
            .m()
            .plan()
            .buckets
            .iter()
            .map(|(b, _)| *b)
            .filter(|b| self.m().bucket_status(*b) == Some(BucketStatus::Failed))
            .collect();
        failed.sort_unstable();
        failed
    }

    fn flush_faults(&self) -> &FlushFaults {
        self.m().store().inner.inner()
    }

    /// The rebalance is over: a final status stored, nothing in flight, queued or held.
    fn finished(&self) -> bool {
        self.client == Client::Done
            && self.idle()
            && !self.m().has_in_progress()
            && self.m().overall().is_some_and(|o| o.is_final())
            && self.retries_empty()
    }

    fn idle(&self) -> bool {
        self.cluster.net.is_empty() && self.h().events().is_empty() && !self.h().holding()
    }

    /// R23.5's retry sets are empty (they keep the clock going, spec 9). Only asked when idle.
    fn retries_empty(&self) -> bool {
        let s = self.m().snapshot();
        s.liveness_repairs.is_empty() && s.deletion_retries.is_empty()
    }

    /// One step of the fault phase or of the liveness phase; false when there was nothing to do.
    fn step(&mut self) -> Result<bool, Failure> {
        if self.faults {
            self.scheduled_faults()?;
        }
        let early_tick = self.faults && self.rng.chance(self.mix.early_tick_ppm);
        if !self.cluster.net.is_empty() && !early_tick {
            return self.network().map(|()| true);
        }
        if let Some(ev) = self.h_mut().next_event() {
            return self.feed(Input::Event(ev)).map(|()| true);
        }
        if self.h().holding() && !early_tick {
            return self.flush().map(|()| true);
        }
        self.tick_or_register()
    }

    /// A tick if something is timed, else the client's register if it still wants one. False
    /// when neither is due.
    fn tick_or_register(&mut self) -> Result<bool, Failure> {
        if self.client == Client::Idle && !self.m().has_in_progress() {
            return self.register().map(|_| true);
        }
        if self.m().has_in_progress() || !self.retries_empty() || self.client != Client::Done {
            self.now += self.m().config().check_interval_ms;
            let now = self.now;
            self.cluster.retry_deferred(now);
            self.feed(Input::Tick)?;
            return Ok(true);
        }
        Ok(false)
    }

    fn register(&mut self) -> Result<(), Failure> {
        let records: Vec<(BucketId, BucketRecord)> = (0..self.buckets)
            .filter_map(|b| self.m().bucket(b).map(|r| (b, r.clone())))
            .collect();
        let plan = plan_for(&records, SERVERS, &mut self.rng);
        self.client = Client::Waiting;
        self.feed(Input::Register { plan })
    }

    /// A message: lost, copied, or delivered, the oldest or (reordering) any.
    fn network(&mut self) -> Result<(), Failure> {
        let n = self.cluster.net.len() as u64;
        if self.faults && self.rng.chance(self.mix.loss_ppm) {
            let i = self.rng.below(n) as usize;
            // A leader whose proposal or its answer was lost proposes again (R21 stays enabled):
            // on the next tick.
            if let Some(Msg::AdjustIsr {
                from: s, bucket, ..
            })
            | Some(Msg::AdjustIsrResponse { to: s, bucket, .. }) = self.cluster.net.get(i)
            {
                self.cluster.deferred.insert((*s, *bucket));
            }
            // Swapped to the front first: removing from the middle of a long queue is O(n), and
            // which of the others comes next is the network's choice anyway.
            self.cluster.net.swap(0, i);
            self.cluster.drop_msg(0);
            return Ok(());
        }
        if self.faults && self.rng.chance(self.mix.dup_ppm) {
            let i = self.rng.below(n) as usize;
            self.cluster.duplicate(i);
        }
        if self.faults && self.rng.chance(self.mix.reorder_ppm) {
            let i = self.rng.below(self.cluster.net.len() as u64) as usize;
            self.cluster.net.swap(0, i);
        }
        match self.cluster.deliver(0, self.now) {
            Some(input) => self.feed(input),
            None => Ok(()),
        }
    }

    /// The crashes and restarts scheduled at this input.
    fn scheduled_faults(&mut self) -> Result<(), Failure> {
        let at = self.out.inputs;
        if self.coordinator_crash_at.first().is_some_and(|t| *t <= at) {
            self.coordinator_crash_at.remove(0);
            self.restart()?;
        }
        if self.server_crash_at.first().is_some_and(|t| *t <= at) {
            self.server_crash_at.remove(0);
            let up: Vec<ServerId> = self.cluster.live().into_iter().collect();
            if self.down.len() < MAX_DOWN && !up.is_empty() {
                let s = up[self.rng.below(up.len() as u64) as usize];
                let back = at + 1 + self.rng.below(u64::from(self.buckets) * 2 + 100);
                self.down.push((s, back));
                self.out.server_crashes += 1;
                self.cluster.crash(s);
                self.feed(Input::ServerCrashed(s))?;
            }
        }
        if let Some(i) = self.down.iter().position(|(_, back)| *back <= at) {
            let (s, _) = self.down.remove(i);
            self.restart_server(s)?;
        }
        Ok(())
    }

    /// A server comes back (R20). Its followers fetch from their leaders again, so every leader
    /// with it among its replicas proposes it for the ISR (R21, which stays enabled until taken:
    /// spec 7.3), on the next tick, even if the request R20 sends the leader is lost.
    fn restart_server(&mut self, s: ServerId) -> Result<(), Failure> {
        self.cluster.restart(s);
        let leaders: Vec<(ServerId, BucketId)> = self
            .cluster
            .servers
            .iter()
            .flat_map(|(l, srv)| {
                srv.views
                    .iter()
                    .filter(move |(_, v)| v.leader == Some(*l) && v.replicas.contains(&s))
                    .map(move |(b, _)| (*l, b))
            })
            .collect();
        self.cluster.deferred.extend(leaders);
        self.feed(Input::ServerRestarted(s))
    }

    /// The end of the fault phase: every server back, no more faults of any kind.
    fn stop_faults(&mut self) -> Result<(), Failure> {
        self.faults = false;
        self.h_mut().store_mut().fail_ppm = 0;
        self.cluster.slow_for.clear();
        self.cluster.slow_until.clear();
        let now = self.now;
        self.cluster.retry_deferred(now);
        for (s, _) in std::mem::take(&mut self.down) {
            self.restart_server(s)?;
        }
        self.h_mut().store_mut().inner.inner_mut().fail_at.clear();
        self.h_mut().store_mut().inner.inner_mut().doubt_at.clear();
        Ok(())
    }

    /// Steps 1-2 of the host procedure, then 4 for what is durable, 3 by the latency schedule,
    /// and 5 on a lost batch; the per-input checks.
    fn feed(&mut self, input: Input) -> Result<(), Failure> {
        let input_bucket = match &input {
            Input::NliResponse { bucket, .. } | Input::AdjustIsr { bucket, .. } => Some(*bucket),
            Input::Event(Event::Timeout(k) | Event::Reconcile(k)) => Some(k.bucket),
            _ => None,
        };
        let recover = matches!(input, Input::Event(Event::Recover));
        let now = self.now;
        self.out.inputs += 1;
        let flow = self
            .h_mut()
            .offer(now, input, &mut ReleaseCheck, |_| ())
            .map_err(|why| self.fail(why))?;
        self.send();
        if let Flow::Stopped(_) = flow {
            return self.restart();
        }
        if recover {
            self.restored = self.m().counts().timeout;
        }
        let touched = std::mem::take(&mut self.h_mut().store_mut().touched);
        checks::after_input(&self.seen(), &touched, input_bucket).map_err(|why| self.fail(why))?;
        if self.out.inputs.is_multiple_of(self.full_every) {
            self.full_due = true;
        }
        if self.full_due && self.m().store().inner.pending() == 0 {
            self.full_check()?;
        }
        self.flush_in = self.flush_in.saturating_sub(1);
        if self.flush_in == 0 {
            self.flush_in = 1 + self.rng.below(2 * self.mix.flush_every);
            self.flush()?;
        }
        Ok(())
    }

    /// Step 3, then 4 (or 5).
    fn flush(&mut self) -> Result<(), Failure> {
        let flow = self
            .h_mut()
            .flush(&mut ReleaseCheck)
            .map_err(|why| self.fail(why))?;
        self.send();
        match flow {
            Flow::Going => Ok(()),
            Flow::Stopped(_) => self.restart(),
        }
    }

    /// What the host released: replies to the client, messages to the simulated servers.
    fn send(&mut self) {
        let h = self.h.as_mut().expect("an incarnation runs");
        let client = &mut self.client;
        let out = h.drain_outgoing().inspect(|e| {
            if let Effect::Reply(r) = e {
                *client = match r {
                    Reply::Accepted(_) => Client::Done,
                    _ if *client == Client::Waiting => Client::Idle,
                    _ => *client,
                };
            }
        });
        let mut no_events = VecDeque::new();
        self.cluster.absorb(out, &mut no_events, &mut Vec::new());
        debug_assert!(no_events.is_empty(), "the host keeps the events");
    }

    /// Step 5, or a coordinator crash: the incarnation stops with its event queue, its open batch
    /// and what it held; a new one starts on the durable store and recovers.
    fn restart(&mut self) -> Result<(), Failure> {
        let core = self.h.take().expect("an incarnation runs").stop().store;
        self.out.store_failures += core.failures;
        let mut store = core.inner.into_inner();
        store.reopen();
        if self.client == Client::Waiting {
            self.client = Client::Idle; // its answer was lost; recovery says whether it landed
        }
        self.incarnate(store);
        self.recover()
    }

    fn incarnate(&mut self, store: FlushFaults) {
        let mut config = Config {
            max_inflight: self.mix.max_inflight,
            ..Config::default()
        };
        if self.plant == Plant::ShortGiveUp {
            config.no_progress_timeout_ms = 1;
        }
        let core = CoreFaults::new(
            GroupCommit::new(store, self.mix.group_commit),
            if self.faults {
                self.mix.store_fail_ppm
            } else {
                0
            },
            Rng::new(self.rng.next_u64()),
        );
        let (mut h, effects) = Host::start(config, core, self.cluster.live(), self.now)
            .expect("R17: the simulated store never fails an election or a load");
        if self.plant == Plant::EarlyRelease {
            h.plant_early_release();
        }
        self.out.incarnations += 1;
        self.h = Some(h);
        debug_assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    }

    /// R16 for the new incarnation (its start queued Recover), then the full check (recovery is
    /// a full pass anyway).
    fn recover(&mut self) -> Result<(), Failure> {
        let recover = self.h_mut().next_event();
        debug_assert_eq!(recover, Some(Event::Recover));
        self.feed(Input::Event(Event::Recover))?;
        if self.h.is_some() && self.m().rid().is_some() && self.client == Client::Idle {
            self.client = Client::Done; // the rebalance is stored: the client's request landed
        }
        self.flush()?;
        self.full_check()
    }

    /// `check_invariants` (O(plan + cluster)) with the store parts, whenever nothing is pending.
    fn full_check(&mut self) -> Result<(), Failure> {
        if self.m().store().inner.pending() > 0 {
            self.full_due = true;
            return Ok(());
        }
        self.full_due = false;
        self.out.full_checks += 1;
        self.m()
            .check_invariants()
            .map_err(|v| self.fail(format!("{}: {}", v.name, v.detail)))
    }

    // ---- for the checks ----

    /// What the checks read (`checks::Seen`).
    fn seen(&self) -> checks::Seen<'_> {
        checks::Seen {
            m: self.m(),
            buckets: self.buckets,
            durable: self.flush_faults().durable.state(),
            in_flight: self.cluster.net.len(),
            max_inflight: self.mix.max_inflight,
            restored: self.restored,
        }
    }

    pub fn progress_line(&self) -> String {
        let c = self.m().counts();
        format!(
            "{} inputs, {} of {} buckets final ({} completed, {} failed), {} incarnations",
            self.out.inputs,
            c.completed + c.failed + c.canceled,
            self.buckets,
            c.completed,
            c.failed,
            self.out.incarnations
        )
    }
}
