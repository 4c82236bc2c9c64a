//! `cargo bench -p rebalance-manager`: throughput of a full rebalance through a simulated
//! cluster, recovery time, store write cost and memory per bucket, for 1k..1M buckets.
//!
//! The cluster is deterministic (seed printed): 8 servers, RF 3; the plan is 70% moves, 20%
//! leader-only, 10% no-op; 1% of the buckets have slow followers (they time out, are tracked,
//! and complete late after reconcile) and 0.05% of messages are lost (repaired by timeout and
//! reconcile). Set `BENCH_MAX_BUCKETS` to stop earlier. The FileStore's figures, which need an
//! I/O adapter this crate does not link, are `cargo bench -p rebalance-stores`
//! (`stores/benches/file_store.rs`).

// The bench measures wall-clock time and reads memory use from /proc; the protocol core never
// reads a clock or a file (clippy.toml bans both for the crate).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    Config, Effect, Event, Input, Manager, MemStore, OverallStatus, Plan, Reply,
};

mod fixtures;

use fixtures::{initial_store, mid_migration_state, plan_entry, recover, SEED, SERVERS};

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

fn mem_recovery(n: u32) -> Duration {
    let store = MemStore::with_state(mid_migration_state(n));
    let (d, m) = recover(store);
    assert!(m.counts().timeout >= 1 && m.counts().rebalancing <= 1);
    d
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let max: u32 = std::env::var("BENCH_MAX_BUCKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    println!("rebalance-manager bench, seed {SEED:#x}, {SERVERS} servers, RF 3, loss {LOSS_PER_MILLION} ppm, slow buckets {SLOW_PER_MILLION} ppm");
    println!(
        "{:>9} | {:>10} {:>12} {:>12} {:>8} {:>8} {:>10} | {:>12} {:>12} | {:>11}",
        "buckets",
        "inputs",
        "inputs/s",
        "handle ns/in",
        "ticks",
        "timeouts",
        "register",
        "mgr B/bucket",
        "peak B/bkt",
        "recover mem"
    );
    for n in [1_000u32, 10_000, 100_000, 1_000_000] {
        if n > max {
            break;
        }
        let r = full_rebalance(n);
        assert_eq!(r.counts.completed, n as usize);
        let rec_mem = mem_recovery(n);
        println!(
            "{:>9} | {:>10} {:>12.0} {:>12.0} {:>8} {:>8} {:>8.1}ms | {:>12} {:>12} | {:>9.1}ms",
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
    println!("mid-migration plan, on MemStore. The FileStore's recovery and write figures: cargo bench -p rebalance-stores.");
}
