//! `cargo bench -p rebalance-manager`: throughput of a full rebalance through a simulated
//! cluster, recovery time, store write cost and memory per bucket, for 1k..1M buckets.
//!
//! The cluster is deterministic (seed printed): 8 servers, RF 3; the plan is 70% moves, 20%
//! leader-only, 10% no-op; 1% of the buckets have slow followers (they time out, are tracked,
//! and complete late after reconcile) and 0.05% of messages are lost (repaired by timeout and
//! reconcile). Set `BENCH_MAX_BUCKETS` to stop earlier.

// The bench measures wall-clock time and reads memory use from /proc; the protocol core never
// reads a clock or a file (clippy.toml bans both for the crate).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::{BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    BucketRecord, Config, Effect, Event, Input, LeaderAndIsr, Manager, MemStore, OverallStatus,
    PersistedState, Plan, PlanEntry, Reply, ServerId, Store, TaskNode, TaskStatus,
};
use rebalance_stores::{FileStore, FileStoreOptions};

const SEED: u64 = 0x5EED_F1A5;
const SERVERS: u32 = 8;
const LOSS_PER_MILLION: u64 = 500;
const SLOW_PER_MILLION: u64 = 10_000;
const SLOW_FOR_MS: u64 = 200_000;
/// One input in this many is timed inside `handle` (the column "handle ns/in").
const HANDLE_SAMPLE: u64 = 16;

fn proc_status_kb(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn rss_bytes() -> u64 {
    proc_status_kb("VmRSS:") * 1024
}

fn hwm_bytes() -> u64 {
    proc_status_kb("VmHWM:") * 1024
}

/// Resets VmHWM to the current RSS (Linux `clear_refs` 5), so each size reports its own peak.
fn reset_hwm() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn origin(b: u32) -> Vec<ServerId> {
    (0..3).map(|i| (b + i) % SERVERS).collect()
}

fn at(assignment: &[ServerId], leader: ServerId) -> BucketRecord {
    BucketRecord {
        assignment: assignment.to_vec(),
        lai: LeaderAndIsr {
            leader: Some(leader),
            leader_epoch: 0,
            isr: assignment.iter().copied().collect(),
            bucket_epoch: 0,
            coordinator_epoch: 0,
        },
    }
}

fn plan_entry(b: u32, rng: &mut Rng) -> PlanEntry {
    let ors = origin(b);
    let trs = match rng.below(10) {
        0..=6 => vec![ors[1], ors[2], (b + 3) % SERVERS],
        7..=8 => vec![ors[1], ors[0], ors[2]],
        _ => ors.clone(),
    };
    PlanEntry::new(ors.clone(), trs, Some(ors[0])).expect("non-empty target")
}

fn initial_store(n: u32) -> MemStore {
    let mut s = MemStore::new();
    for b in 0..n {
        let o = origin(b);
        s.put_bucket(b, at(&o, o[0]));
    }
    s
}

struct RunStats {
    inputs: u64,
    ticks: u64,
    handle_time: Duration,
    wall: Duration,
    timeouts: u64,
    manager_bytes: u64,
    register_time: Duration,
    peak_bytes: u64,
    counts: rebalance_manager::StatusCounts,
}

fn full_rebalance(n: u32) -> RunStats {
    let base = rss_bytes();
    reset_hwm();
    let mut rng = Rng::new(SEED ^ u64::from(n));
    let store = initial_store(n);
    let plan = Plan::new((0..n).map(|b| (b, plan_entry(b, &mut rng))).collect());
    let mut cluster = Cluster::new(0..SERVERS);
    for (b, rec) in &store.state().cluster.buckets {
        cluster.init_bucket(*b, rec);
    }
    for b in 0..n {
        if rng.chance(SLOW_PER_MILLION) {
            cluster.slow_for.insert(b, SLOW_FOR_MS);
        }
    }
    let config = Config::default();
    let before_manager = rss_bytes();
    let (mut m, effects) = Manager::start(config.clone(), store, cluster.live(), 0).expect("start");
    assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    let _ = m.handle(0, Input::Event(Event::Recover));
    // Register outside the timed loop: its cost is the full pass the spec requires (R1).
    let register_start = Instant::now();
    let effects = m.handle(0, Input::Register { plan });
    let register_time = register_start.elapsed();
    let after_register = rss_bytes();
    let wall = Instant::now();
    let looped = drive(&mut m, &mut cluster, &mut rng, &config, effects);
    let wall = wall.elapsed();
    assert_eq!(looped.replies.first(), Some(&Reply::Accepted(1)));
    assert_eq!(
        m.overall(),
        Some(OverallStatus::Completed),
        "the simulated rebalance completes"
    );
    RunStats {
        inputs: looped.inputs,
        ticks: looped.ticks,
        handle_time: looped.handle_time,
        wall,
        timeouts: looped.timeouts,
        manager_bytes: after_register.saturating_sub(before_manager),
        register_time,
        peak_bytes: hwm_bytes().saturating_sub(base),
        counts: m.counts(),
    }
}

/// What the loop after register did.
struct Looped {
    inputs: u64,
    ticks: u64,
    timeouts: u64,
    handle_time: Duration,
    replies: Vec<Reply>,
}

/// The timed loop: messages first, then events, then a tick, until nothing is in progress.
/// Not inlined, so that a profiler can count it alone (`valgrind --tool=callgrind
/// --toggle-collect='rebalance::drive'`, docs/measurements.md).
#[inline(never)]
fn drive(
    m: &mut Manager<MemStore>,
    cluster: &mut Cluster,
    rng: &mut Rng,
    config: &Config,
    register_effects: Vec<Effect>,
) -> Looped {
    let mut events = VecDeque::new();
    let mut replies = Vec::new();
    cluster.absorb(register_effects, &mut events, &mut replies);
    let mut now = 0u64;
    let (mut inputs, mut ticks, mut timeouts) = (0u64, 0u64, 0u64);
    let mut handle_time = Duration::ZERO;
    // One effect buffer for the whole loop (`handle_into`), as a host that reuses it would.
    let mut buf: Vec<Effect> = Vec::with_capacity(64);
    let mut feed = |m: &mut Manager<MemStore>,
                    cluster: &mut Cluster,
                    events: &mut VecDeque<Event>,
                    replies: &mut Vec<Reply>,
                    now: u64,
                    input: Input| {
        if matches!(input, Input::Event(Event::Timeout(_))) {
            timeouts += 1;
        }
        // Two clock reads per input would be a tenth of the loop: every 16th input is timed, and
        // `handle_time` is that sample scaled up (the inputs come in a steady mix, so the sample
        // is the mix).
        if inputs % HANDLE_SAMPLE == 0 {
            let t = Instant::now();
            m.handle_into(now, input, &mut buf);
            handle_time += t.elapsed() * HANDLE_SAMPLE as u32;
        } else {
            m.handle_into(now, input, &mut buf);
        }
        inputs += 1;
        cluster.absorb(buf.drain(..), events, replies);
    };
    loop {
        if let Some(_front) = cluster.net.front() {
            if rng.chance(LOSS_PER_MILLION) {
                cluster.drop_msg(0);
            } else if let Some(input) = cluster.deliver(0, now) {
                feed(m, cluster, &mut events, &mut replies, now, input);
            }
        } else if let Some(ev) = events.pop_front() {
            feed(m, cluster, &mut events, &mut replies, now, Input::Event(ev));
        } else if m.has_in_progress() {
            now += config.check_interval_ms;
            ticks += 1;
            cluster.retry_deferred(now);
            feed(m, cluster, &mut events, &mut replies, now, Input::Tick);
        } else {
            break;
        }
    }
    Looped {
        inputs,
        ticks,
        timeouts,
        handle_time,
        replies,
    }
}

/// A persisted mid-migration rebalance: 40% of the buckets at target, one in the union, the rest
/// at origin.
fn mid_migration_state(n: u32) -> PersistedState {
    let mut rng = Rng::new(SEED ^ 0xABCD ^ u64::from(n));
    let plan = Plan::new((0..n).map(|b| (b, plan_entry(b, &mut rng))).collect());
    let mut state = initial_store(n).state().clone();
    state.coordinator_epoch = 1;
    let done = n * 2 / 5;
    for (b, e) in plan.buckets.iter().take(done as usize) {
        state.cluster.buckets.insert(*b, at(&e.trs, e.new_leader));
    }
    if let Some((b, e)) = plan.buckets.get(done as usize) {
        let mut r = at(&e.ors, e.ors[0]);
        r.assignment = e.rs();
        state.cluster.buckets.insert(*b, r);
    }
    state.task = Some(TaskNode {
        id: 1,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::new(plan),
    });
    state
}

fn recover<S: Store>(store: S) -> (Duration, Manager<S>) {
    let live: BTreeSet<ServerId> = (0..SERVERS).collect();
    let t = Instant::now();
    let (mut m, _) = Manager::start(Config::default(), store, live, 0).expect("start");
    let _ = m.handle(0, Input::Event(Event::Recover));
    (t.elapsed(), m)
}

fn mem_recovery(n: u32) -> Duration {
    let store = MemStore::with_state(mid_migration_state(n));
    let (d, m) = recover(store);
    assert!(m.counts().timeout >= 1 && m.counts().rebalancing <= 1);
    d
}

/// (open + start + Recover time, average write_bucket time with fsync)
fn file_recovery(n: u32) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    drop(
        FileStore::create(
            dir.path(),
            mid_migration_state(n),
            FileStoreOptions::default(),
        )
        .expect("create"),
    );
    let t = Instant::now();
    let store = FileStore::open(dir.path(), FileStoreOptions::default()).expect("open");
    let (d, mut m) = recover(store);
    let total = t.elapsed();
    let _ = d;
    assert!(m.counts().timeout >= 1);
    // Per-write cost at this size: R18 AdjustIsr writes (one journal record each).
    let writes = 100u32;
    let t = Instant::now();
    for i in 0..writes {
        let b = n - 1 - i;
        let rec = m.bucket(b).expect("bucket").clone();
        let isr = rec.lai.isr.iter().copied().take(2).collect();
        let effects = m.handle(
            0,
            Input::AdjustIsr {
                from: rec.lai.leader.expect("leader"),
                bucket: b,
                leader_epoch: 0,
                bucket_epoch: 0,
                isr,
            },
        );
        assert!(
            matches!(
                &effects[0],
                Effect::SendAdjustIsrResponse { result: Ok(_), .. }
            ),
            "{effects:?}"
        );
    }
    (total, t.elapsed() / writes)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let max: u32 = std::env::var("BENCH_MAX_BUCKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    println!("rebalance-manager bench, seed {SEED:#x}, {SERVERS} servers, RF 3, loss {LOSS_PER_MILLION} ppm, slow buckets {SLOW_PER_MILLION} ppm");
    println!(
        "{:>9} | {:>10} {:>12} {:>12} {:>8} {:>8} {:>10} | {:>12} {:>12} | {:>11} {:>12} {:>10}",
        "buckets",
        "inputs",
        "inputs/s",
        "handle ns/in",
        "ticks",
        "timeouts",
        "register",
        "mgr B/bucket",
        "peak B/bkt",
        "recover mem",
        "recover file",
        "file wr us"
    );
    for n in [1_000u32, 10_000, 100_000, 1_000_000] {
        if n > max {
            break;
        }
        let r = full_rebalance(n);
        assert_eq!(r.counts.completed, n as usize);
        let rec_mem = mem_recovery(n);
        let (rec_file, write) = file_recovery(n);
        println!(
            "{:>9} | {:>10} {:>12.0} {:>12.0} {:>8} {:>8} {:>8.1}ms | {:>12} {:>12} | {:>9.1}ms {:>10.1}ms {:>10.1}",
            n,
            r.inputs,
            r.inputs as f64 / r.wall.as_secs_f64(),
            r.handle_time.as_nanos() as f64 / r.inputs as f64,
            r.ticks,
            r.timeouts,
            r.register_time.as_secs_f64() * 1e3,
            r.manager_bytes / u64::from(n),
            r.peak_bytes / u64::from(n),
            rec_mem.as_secs_f64() * 1e3,
            rec_file.as_secs_f64() * 1e3,
            write.as_secs_f64() * 1e6,
        );
    }
    println!("inputs/s: whole loop after register (manager + simulated cluster); handle ns/in: inside handle only,");
    println!("timed on one input in {HANDLE_SAMPLE} (timing every one would cost the loop about a tenth).");
    println!("mgr B/bucket: RSS growth of Manager::start + Register: context cache, statuses, pending (the plan,");
    println!("built by the caller and shared with the store by Arc, is not counted); peak B/bkt: VmHWM growth of the");
    println!("whole run (store, plan, simulated servers, manager).");
    println!(
        "register: the R1 input alone (timed separately). recover: start + Recover of a persisted"
    );
    println!("mid-migration plan (file: open + replay too). file wr us: one fsynced R18 bucket write at that size.");
}
