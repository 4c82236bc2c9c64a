//! Property tests: random input sequences over a simulated cluster, with store faults and
//! coordinator restarts; `check_invariants()` after every step, then a fault-free liveness
//! phase that must reach a quiescent, clean state (spec 7.3, the LIVE-* goals).

use crate::common;

use std::collections::{BTreeSet, VecDeque};

use proptest::prelude::*;
use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    BucketStatus, Config, Event, Input, Manager, MemStore, Plan, PlanEntry, Reply, ServerId, Store,
};

const SERVERS: u32 = 4;
const BUCKETS: u32 = 3;

/// Model-sized durations: one tick is 1000 ms.
fn config() -> Config {
    Config {
        task_timeout_ms: 2_000,
        check_interval_ms: 1_000,
        max_reconcile_backoff_ms: 2_000,
        target_unavailable_timeout_ms: 3_000,
        no_progress_timeout_ms: 4_000,
        max_tracked_timed_out: 1,
        max_inflight: 1,
    }
}

#[derive(Clone, Debug)]
enum Op {
    Register(u64),
    Cancel,
    Tick,
    Event,
    Deliver(usize),
    Drop(usize),
    Dup(usize),
    Propose(ServerId, u32),
    Down(ServerId),
    Up(ServerId),
    Delete(u32),
    /// The k-th store operation of the next coordinator step fails.
    Fault(u64),
    /// Every store operation of the next coordinator step fails.
    FaultAll,
    Restart,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => any::<u64>().prop_map(Op::Register),
        1 => Just(Op::Cancel),
        3 => Just(Op::Tick),
        6 => Just(Op::Event),
        10 => any::<usize>().prop_map(Op::Deliver),
        1 => any::<usize>().prop_map(Op::Drop),
        1 => any::<usize>().prop_map(Op::Dup),
        3 => (0..SERVERS, 0..BUCKETS).prop_map(|(s, b)| Op::Propose(s, b)),
        1 => (0..SERVERS).prop_map(Op::Down),
        2 => (0..SERVERS).prop_map(Op::Up),
        1 => (0..BUCKETS).prop_map(Op::Delete),
        2 => (1..=2u64).prop_map(Op::Fault),
        1 => Just(Op::FaultAll),
        1 => Just(Op::Restart),
    ]
}

struct World {
    config: Config,
    m: Option<Manager<MemStore>>,
    cluster: Cluster,
    events: VecDeque<Event>,
    replies: Vec<Reply>,
    now: u64,
    /// `Some(0)` means every operation of the next step fails.
    fault: Option<u64>,
    /// (rid, bucket) pairs seen FAILED: a final overall status restored by R16 overwrites every
    /// bucket's status (D5, D8), so the quiescence check needs this history.
    failed: BTreeSet<(u64, u32)>,
}

impl World {
    fn new() -> Self {
        Self::with_config(config())
    }

    fn with_config(config: Config) -> Self {
        let store = common::store(BUCKETS);
        let mut cluster = Cluster::new(0..SERVERS);
        for (b, rec) in &store.state().cluster.buckets {
            cluster.init_bucket(*b, rec);
        }
        let mut w = World {
            config,
            m: None,
            cluster,
            events: VecDeque::new(),
            replies: Vec::new(),
            now: 0,
            fault: None,
            failed: BTreeSet::new(),
        };
        w.start(store);
        w
    }

    fn start(&mut self, mut store: MemStore) {
        store.fail_nth_op(0);
        store.fail_all(false);
        let (m, effects) =
            Manager::start(self.config.clone(), store, self.cluster.live(), self.now).unwrap();
        self.events.clear(); // volatile, lost with the old incarnation
        self.cluster
            .absorb(effects, &mut self.events, &mut self.replies);
        self.m = Some(m);
    }

    fn m(&mut self) -> &mut Manager<MemStore> {
        self.m.as_mut().unwrap()
    }

    fn feed(&mut self, input: Input) {
        let now = self.now;
        let fault = self.fault.take();
        let m = self.m.as_mut().unwrap();
        match fault {
            Some(0) => m.store_mut().fail_all(true),
            Some(k) => m.store_mut().fail_nth_op(k),
            None => {}
        }
        let effects = m.handle(now, input);
        m.store_mut().fail_nth_op(0);
        m.store_mut().fail_all(false);
        self.cluster
            .absorb(effects, &mut self.events, &mut self.replies);
        let m = self.m.as_ref().unwrap();
        if let Err(v) = m.check_invariants() {
            panic!("{v}");
        }
        if let Some(rid) = m.rid() {
            let failed = m
                .progress()
                .buckets
                .into_iter()
                .filter(|(_, st)| *st == BucketStatus::Failed);
            self.failed.extend(failed.map(|(b, _)| (rid, b)));
        }
    }

    fn plan(&mut self, seed: u64) -> Plan {
        let mut rng = Rng::new(seed);
        let m = self.m.as_ref().unwrap();
        let mut entries = Vec::new();
        for b in 0..BUCKETS {
            let Some(rec) = m.bucket(b) else { continue };
            if m.store().state().cluster.deleted.contains(&b) || rng.chance(200_000) {
                continue;
            }
            let mut servers: Vec<ServerId> = (0..SERVERS).collect();
            for i in (1..servers.len()).rev() {
                servers.swap(i, rng.below(i as u64 + 1) as usize);
            }
            let rf = 2 + rng.below(2) as usize;
            let trs = servers[..rf].to_vec();
            entries.push((
                b,
                PlanEntry::new(rec.assignment.clone(), trs, rec.lai.leader).unwrap(),
            ));
        }
        Plan::new(entries)
    }

    fn tick(&mut self) {
        self.now += self.config.check_interval_ms;
        self.cluster.retry_deferred(self.now);
        self.feed(Input::Tick);
    }

    fn deliver(&mut self, i: usize) {
        if self.cluster.net.is_empty() {
            return;
        }
        let i = i % self.cluster.net.len();
        if let Some(input) = self.cluster.deliver(i, self.now) {
            self.feed(input);
        }
    }

    fn apply(&mut self, op: Op) {
        match op {
            Op::Register(seed) => {
                let plan = self.plan(seed);
                self.feed(Input::Register { plan });
            }
            Op::Cancel => self.feed(Input::Cancel),
            Op::Tick => self.tick(),
            Op::Event => {
                if let Some(ev) = self.events.pop_front() {
                    self.feed(Input::Event(ev));
                }
            }
            Op::Deliver(i) => self.deliver(i),
            Op::Drop(i) => {
                if !self.cluster.net.is_empty() {
                    let n = self.cluster.net.len();
                    self.cluster.drop_msg(i % n);
                }
            }
            Op::Dup(i) => {
                if !self.cluster.net.is_empty() {
                    let n = self.cluster.net.len();
                    self.cluster.duplicate(i % n);
                }
            }
            Op::Propose(s, b) => {
                self.cluster.propose(s, b, self.now);
            }
            Op::Down(s) => {
                self.cluster.crash(s);
                self.feed(Input::ServerCrashed(s));
            }
            Op::Up(s) => {
                self.cluster.restart(s);
                self.feed(Input::ServerRestarted(s));
            }
            Op::Delete(b) => self.feed(Input::BucketDeleted(b)),
            Op::Fault(k) => self.fault = Some(k),
            Op::FaultAll => self.fault = Some(0),
            Op::Restart => {
                let store = self.m.take().unwrap().into_store();
                self.start(store);
            }
        }
    }

    /// Heal every fault and drive the system with fair scheduling until nothing is left to do.
    fn settle(&mut self) {
        self.fault = None;
        for s in 0..SERVERS {
            if !self.cluster.servers[&s].up {
                self.cluster.restart(s);
                self.feed(Input::ServerRestarted(s));
            }
        }
        for _ in 0..20_000 {
            if !self.cluster.net.is_empty() {
                self.deliver(0);
            } else if let Some(ev) = self.events.pop_front() {
                self.feed(Input::Event(ev));
            } else if self.m().has_in_progress() {
                self.tick();
                // Leaders whose proposal was lost or rejected try again (R21 is always enabled).
                let leaders: Vec<(ServerId, u32)> = self
                    .cluster
                    .servers
                    .iter()
                    .flat_map(|(s, srv)| {
                        srv.views
                            .iter()
                            .filter(|(_, v)| v.leader == Some(*s))
                            .map(|(b, _)| (*s, b))
                    })
                    .collect();
                for (s, b) in leaders {
                    self.cluster.propose(s, b, self.now);
                }
            } else {
                return;
            }
        }
        panic!(
            "no quiescence after 20 000 steps: {:?}",
            self.m().snapshot()
        );
    }

    /// The LIVE-* goals of spec 7.3 (once one property, LIVE-QUIESCENT).
    fn check_quiescent(&mut self) {
        let m = self.m.as_ref().unwrap();
        let snap = m.snapshot();
        assert!(!snap.flags.recovery_pending);
        let stored = m.store().state();
        if let Some(task) = &stored.task {
            assert!(
                task.status.is_final(),
                "stored task not final: {:?}",
                task.status
            );
            if snap.rid.is_some() {
                assert_eq!(snap.overall.map(|o| o.task_status()), Some(task.status));
            }
        }
        let Some(plan) = stored.task.as_ref().map(|t| t.plan.clone()) else {
            return;
        };
        if snap.rid != stored.task.as_ref().map(|t| t.id) {
            return;
        }
        for (b, e) in &plan.buckets {
            if stored.cluster.deleted.contains(b)
                || snap.rid.is_some_and(|rid| self.failed.contains(&(rid, *b)))
            {
                continue;
            }
            let assigned: BTreeSet<_> = stored.cluster.buckets[b]
                .assignment
                .iter()
                .copied()
                .collect();
            let ors: BTreeSet<_> = e.ors.iter().copied().collect();
            assert!(
                assigned == ors || assigned == e.trs_set(),
                "bucket {b} left at {assigned:?} ({e:?})"
            );
        }
    }
}

/// The proptest seed: `PROP_SEED` or a fixed default, printed so a failure replays exactly.
fn prop_seed() -> u64 {
    let seed = std::env::var("PROP_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5EED_0003);
    eprintln!("proptest seed {seed} (replay with PROP_SEED={seed})");
    seed
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(prop_seed()),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn invariants_hold_after_every_step_and_the_system_quiesces(ops in prop::collection::vec(op(), 1..80)) {
        let mut w = World::new();
        for op in ops {
            w.apply(op);
        }
        w.settle();
        w.check_quiescent();
    }

    /// The same with several normal slots and a larger tracked cap (D14): the admission loop,
    /// aborts inside it and the slot bound get exercised with more than one running attempt.
    #[test]
    fn invariants_hold_with_several_slots(
        ops in prop::collection::vec(op(), 1..80),
        max_inflight in 1..=3usize,
        max_tracked in 1..=3usize,
    ) {
        let mut w = World::with_config(Config { max_inflight, max_tracked_timed_out: max_tracked, ..config() });
        for op in ops {
            w.apply(op);
        }
        w.settle();
        w.check_quiescent();
    }
}

#[test]
fn a_fault_free_run_completes_every_bucket() {
    let mut w = World::new();
    w.events.clear();
    w.feed(Input::Event(Event::Recover));
    let plan = w.plan(7);
    w.feed(Input::Register { plan });
    w.settle();
    w.check_quiescent();
    let m = w.m.as_ref().unwrap();
    assert_eq!(
        m.overall(),
        Some(rebalance_manager::OverallStatus::Completed)
    );
    assert!(m.store().inspect().is_some());
}

fn random_op(rng: &mut Rng) -> Op {
    let any = |rng: &mut Rng| rng.next_u64() as usize;
    match rng.below(34) {
        0..=1 => Op::Register(rng.next_u64()),
        2 => Op::Cancel,
        3..=5 => Op::Tick,
        6..=11 => Op::Event,
        12..=21 => Op::Deliver(any(rng)),
        22 => Op::Drop(any(rng)),
        23 => Op::Dup(any(rng)),
        24..=26 => Op::Propose(
            rng.below(SERVERS as u64) as u32,
            rng.below(BUCKETS as u64) as u32,
        ),
        27 => Op::Down(rng.below(SERVERS as u64) as u32),
        28..=29 => Op::Up(rng.below(SERVERS as u64) as u32),
        30 => Op::Delete(rng.below(BUCKETS as u64) as u32),
        31 => Op::Fault(1 + rng.below(2)),
        32 => Op::FaultAll,
        _ => Op::Restart,
    }
}

/// The random runs are not vacuous: across seeds they reach every outcome the spec's `SOME-*`
/// companions name for the manager (completed, canceled, failed, recovery restoring an attempt).
#[test]
fn seeded_random_runs_reach_every_outcome() {
    use rebalance_manager::OverallStatus;
    let (mut completed, mut canceled, mut failed, mut restored) = (0, 0, 0, 0);
    for seed in 0..300u64 {
        let mut rng = Rng::new(seed);
        let mut w = World::new();
        for _ in 0..60 {
            let op = random_op(&mut rng);
            w.apply(op);
            if w.m.as_ref().unwrap().snapshot().restored > 0 {
                restored += 1;
            }
        }
        w.settle();
        w.check_quiescent();
        match w.m.as_ref().unwrap().overall() {
            Some(OverallStatus::Completed) => completed += 1,
            Some(OverallStatus::Canceled) => canceled += 1,
            Some(OverallStatus::Failed) => failed += 1,
            _ => {}
        }
    }
    eprintln!(
        "completed {completed}, canceled {canceled}, failed {failed}, restored-steps {restored}"
    );
    assert!(completed > 0 && canceled > 0 && failed > 0 && restored > 0);
}
