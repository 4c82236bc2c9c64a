//! A runnable host: drives the pure core with a clock against the simulated cluster, on a
//! durable store (a directory or a ZooKeeper server), and reports what it did.
//!
//! ```sh
//! cargo run --release -p rebalance-stores --example cluster -- --buckets 10000 --store file:/tmp/rb
//! scripts/with-zookeeper.sh sh -c 'cargo run --release -p rebalance-stores --example cluster -- \
//!     --buckets 10000 --store zk:$ZK_ADDR --crash-coordinator-at 20000'
//! ```
//!
//! `--help` says more.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Epoch, Event, Input, LeaderAndIsr, Manager,
    OverallStatus, PersistedState, Plan, PlanEntry, Reply, ServerId, Store, StoreError, TaskNode,
};
use rebalance_stores::zk::{ZkStore, ZkStoreError, ZkStoreOptions};
use rebalance_stores::{FileStore, FileStoreError, FileStoreOptions};
use rebalance_wire::log::{LogWriter, Recorded};

const SERVERS: u32 = 8;
const LOSS_PER_MILLION: u64 = 500;
const SLOW_PER_MILLION: u64 = 10_000;
const SLOW_FOR_MS: u64 = 200_000;
/// The most buckets: ten times the largest measured run (100k took 7 minutes on FileStore), so a
/// mistyped count is refused at once rather than filling memory for hours.
const MAX_BUCKETS: u32 = 1_000_000;

const HELP: &str = "\
cluster: run a bucket rebalance through the rebalance manager against a simulated cluster

USAGE:
    cargo run --release -p rebalance-stores --example cluster -- \\
        --buckets N --store file:DIR|zk:HOST:PORT [--seed S] [--crash-coordinator-at T] [--root PATH]
        [--log FILE] [--loss-per-million N] [--slow-per-million N] [--zk-outage-at T]
        [--kill-at-store-op N]

OPTIONS:
    --buckets N                 buckets in the cluster, 1 to 1000000 (8 servers, replication
                                factor 3)
    --store file:DIR            a FileStore in DIR (created if DIR holds no store)
    --store zk:HOST:PORT        a ZkStore on that ZooKeeper server, under --root
    --root PATH                 the ZkStore's root node (default /fluss-rebalance-example)
    --seed S                    the plan's and the network's seed (default 0x5eedf1a5; printed)
    --crash-coordinator-at T    after T inputs, crash the coordinator and start a new incarnation
                                on a reopened store (the summary reports its recovery time)
    --log FILE                  write the coordinator log (spec/log-format.md) to FILE, for
                                `rebalance-conformance validate FILE`. On a new store FILE must not
                                exist; on a store a killed run left, FILE must be that run's log,
                                and it is continued (a torn last line is kept and ended). With at
                                most 16 buckets the header carries the model configuration of
                                this cluster, and each start the store it read
    --loss-per-million N        messages lost per million (default 500); the validator
                                sees every loss only as a delivery that never came
    --slow-per-million N        buckets with slow followers per million (default 10000)
    --zk-outage-at T            after T inputs, kill the ZooKeeper server ($ZK_SCRIPT --stop-server
                                --kill), go on until three store operations have failed (at most
                                30 inputs), and start it again ($ZK_SCRIPT --start-server); needs
                                --store zk: under scripts/with-zookeeper.sh, which sets ZK_SCRIPT
    --kill-at-store-op N        once this process has made N store operations (reads included),
                                it sends itself SIGKILL: nothing is flushed or closed, the input
                                in hand is cut off. Run again on the same store (and --log) to
                                recover; the process-crash tests do (conformance/tests/integration/validate.rs)
    -V, --version               the version
    -h, --help                  this text

The plan is 70% moves, 20% leader-only changes and 10% no-ops; 1% of the buckets have slow
followers (they time out and complete after reconcile) and 0.05% of the messages are lost. Time is
simulated (30 s ticks); the figures are wall-clock. An existing store is opened and verified: a
rebalance in progress is resumed; a finished one is reported and left as it is (with --log, the
new incarnation's start and an end record are logged); an empty one gets a new plan, registered
from the stored assignments. --buckets must match the store's.

EXIT CODES:
    0  the rebalance completed and every invariant held
    1  an invariant was violated, or the rebalance did not complete
    2  bad usage (including a malformed address, and --buckets or --log that do not match the
       store)
    3  the store failed: unreachable server, corrupt data, a newer format version, ...
       (nothing is overwritten)
";

struct Args {
    buckets: u32,
    store: StoreArg,
    root: String,
    seed: u64,
    crash_at: Option<u64>,
    log: Option<String>,
    zk_outage_at: Option<u64>,
    loss_per_million: u64,
    slow_per_million: u64,
    kill_at: Option<u64>,
}

enum StoreArg {
    File(String),
    Zk(String),
}

fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut buckets = None;
    let mut store = None;
    let mut root = "/fluss-rebalance-example".to_string();
    let mut seed = 0x5EED_F1A5u64;
    let mut crash_at = None;
    let mut log = None;
    let mut zk_outage_at = None;
    let mut loss_per_million = LOSS_PER_MILLION;
    let mut slow_per_million = SLOW_PER_MILLION;
    let mut kill_at = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "-V" | "--version" => {
                // The example's own crate, whose version this is (it moved out of the
                // manager's crate, whose name it used to print).
                let (name, version) = (env!("CARGO_PKG_NAME"), env!("CARGO_PKG_VERSION"));
                println!("cluster ({name} {version})");
                std::process::exit(0);
            }
            "--buckets" => {
                let v = value("--buckets")?;
                let n: u32 = v
                    .parse()
                    .map_err(|_| format!("--buckets {v}: not a number"))?;
                if !(1..=MAX_BUCKETS).contains(&n) {
                    return Err(format!("--buckets {v}: expected 1 to {MAX_BUCKETS}"));
                }
                buckets = Some(n);
            }
            "--store" => {
                let v = value("--store")?;
                store = Some(if let Some(dir) = v.strip_prefix("file:") {
                    if dir.is_empty() {
                        return Err("--store file:DIR needs a directory".into());
                    }
                    StoreArg::File(dir.to_string())
                } else if let Some(addr) = v.strip_prefix("zk:") {
                    rebalance_stores::zk::parse_addr(addr).map_err(|e| e.to_string())?;
                    StoreArg::Zk(addr.to_string())
                } else {
                    return Err(format!("--store {v}: expected file:DIR or zk:HOST:PORT"));
                });
            }
            "--root" => root = value("--root")?,
            "--log" => log = Some(value("--log")?),
            "--zk-outage-at" => {
                let v = value("--zk-outage-at")?;
                zk_outage_at = Some(
                    v.parse()
                        .map_err(|_| format!("--zk-outage-at {v}: not a number"))?,
                );
            }
            "--loss-per-million" | "--slow-per-million" => {
                let v = value(a)?;
                let n: u64 = v
                    .parse()
                    .ok()
                    .filter(|n| *n <= 1_000_000)
                    .ok_or_else(|| format!("{a} {v}: expected 0 to 1000000"))?;
                if a == "--loss-per-million" {
                    loss_per_million = n;
                } else {
                    slow_per_million = n;
                }
            }
            "--seed" => {
                let v = value("--seed")?;
                let parsed = match v.strip_prefix("0x") {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => v.parse(),
                };
                seed = parsed.map_err(|_| format!("--seed {v}: not a number"))?;
            }
            "--crash-coordinator-at" => {
                let v = value("--crash-coordinator-at")?;
                crash_at = Some(
                    v.parse()
                        .map_err(|_| format!("--crash-coordinator-at {v}: not a number"))?,
                );
            }
            "--kill-at-store-op" => {
                let v = value("--kill-at-store-op")?;
                let n: u64 =
                    v.parse().ok().filter(|n| *n >= 1).ok_or_else(|| {
                        format!("--kill-at-store-op {v}: expected a count from 1")
                    })?;
                kill_at = Some(n);
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if zk_outage_at.is_some() {
        if !matches!(store, Some(StoreArg::Zk(_))) {
            return Err("--zk-outage-at needs --store zk:HOST:PORT".into());
        }
        if std::env::var_os("ZK_SCRIPT").is_none() {
            return Err(
                "--zk-outage-at needs ZK_SCRIPT: run under scripts/with-zookeeper.sh".into(),
            );
        }
    }
    Ok(Some(Args {
        buckets: buckets.ok_or("--buckets N is required")?,
        store: store.ok_or("--store file:DIR|zk:HOST:PORT is required")?,
        root,
        seed,
        crash_at,
        log,
        zk_outage_at,
        loss_per_million,
        slow_per_million,
        kill_at,
    }))
}

/// `--kill-at-store-op`: the process's store operations so far, and the one after which it dies.
static STORE_OPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static KILL_AT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Counts one store operation, and dies by SIGKILL if it was the `--kill-at-store-op`th: the
/// operation's outcome is durable (or not) as the adapter left it, and nothing after it (the
/// rest of the input, its log record, its effects) happens.
fn store_op_done() {
    let n = STORE_OPS.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    if KILL_AT.get() == Some(&n) {
        eprintln!("\ncluster: SIGKILL after store operation {n}");
        // SAFETY: kill(2) on our own pid with a valid signal number; it does not return.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
        loop {
            std::thread::park(); // the signal is on its way
        }
    }
}

/// A store that counts and times its successful writes (the figures), around any adapter.
struct Counted<S> {
    inner: S,
    writes: u64,
    write_time: Duration,
}

impl<S: Store> Counted<S> {
    fn new(inner: S) -> Self {
        Counted {
            inner,
            writes: 0,
            write_time: Duration::ZERO,
        }
    }

    fn timed<T>(
        &mut self,
        f: impl FnOnce(&mut S) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        let t = Instant::now();
        let r = f(&mut self.inner);
        if r.is_ok() {
            self.writes += 1;
            self.write_time += t.elapsed();
        }
        store_op_done();
        r
    }
}

impl<S: Store> Store for Counted<S> {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.timed(|s| s.elect_coordinator())
    }
    fn load_cluster(&mut self) -> Result<rebalance_manager::ClusterState, StoreError> {
        let r = self.inner.load_cluster();
        store_op_done();
        r
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        let r = self.inner.read_task();
        store_op_done();
        r
    }
    fn write_task(&mut self, e: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        self.timed(|s| s.write_task(e, task))
    }
    fn write_bucket(&mut self, e: Epoch, b: BucketId, r: &BucketRecord) -> Result<(), StoreError> {
        self.timed(|s| s.write_bucket(e, b, r))
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        self.timed(|s| s.mark_deleted(e, b))
    }
    fn inspect(&self) -> Option<&PersistedState> {
        self.inner.inspect()
    }
}

/// The two durable adapters behind one type, so the run loop is written once.
enum AnyStore {
    File(FileStore),
    Zk(Box<ZkStore>),
}

impl Store for AnyStore {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        match self {
            AnyStore::File(s) => s.elect_coordinator(),
            AnyStore::Zk(s) => s.elect_coordinator(),
        }
    }
    fn load_cluster(&mut self) -> Result<rebalance_manager::ClusterState, StoreError> {
        match self {
            AnyStore::File(s) => s.load_cluster(),
            AnyStore::Zk(s) => s.load_cluster(),
        }
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        match self {
            AnyStore::File(s) => s.read_task(),
            AnyStore::Zk(s) => s.read_task(),
        }
    }
    fn write_task(&mut self, e: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        match self {
            AnyStore::File(s) => s.write_task(e, task),
            AnyStore::Zk(s) => s.write_task(e, task),
        }
    }
    fn write_bucket(&mut self, e: Epoch, b: BucketId, r: &BucketRecord) -> Result<(), StoreError> {
        match self {
            AnyStore::File(s) => s.write_bucket(e, b, r),
            AnyStore::Zk(s) => s.write_bucket(e, b, r),
        }
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        match self {
            AnyStore::File(s) => s.mark_deleted(e, b),
            AnyStore::Zk(s) => s.mark_deleted(e, b),
        }
    }
    fn inspect(&self) -> Option<&PersistedState> {
        match self {
            AnyStore::File(s) => s.inspect(),
            AnyStore::Zk(_) => None,
        }
    }
}

/// Why the run stopped early.
enum Failure {
    /// Arguments that do not fit the store (exit 2).
    Usage(String),
    Store(String),
    Invariant(String),
}

/// The cluster before any rebalance: bucket `b` on servers `b, b+1, b+2` (mod 8), led by `b`,
/// every replica in sync. Its metadata is stamped with coordinator epoch 1, the epoch the first
/// incarnation elects, as the model's initial state has it (written by the first coordinator);
/// the log's `read` field compares the store with the model's, stamp included.
fn initial(n: u32) -> PersistedState {
    let mut s = PersistedState::default();
    for b in 0..n {
        let a: Vec<ServerId> = (0..3).map(|i| (b + i) % SERVERS).collect();
        s.cluster.buckets.insert(
            b,
            BucketRecord {
                lai: LeaderAndIsr {
                    leader: Some(a[0]),
                    isr: a.iter().copied().collect(),
                    coordinator_epoch: 1,
                    ..LeaderAndIsr::default()
                },
                assignment: a,
            },
        );
    }
    s
}

/// The ZkStore's options: under an outage a failed operation should fail within a second, not
/// the default five.
fn zk_options(args: &Args) -> ZkStoreOptions {
    match args.zk_outage_at {
        Some(_) => ZkStoreOptions {
            op_timeout: Duration::from_secs(1),
            ..ZkStoreOptions::default()
        },
        None => ZkStoreOptions::default(),
    }
}

/// Stops or starts the ZooKeeper server through scripts/with-zookeeper.sh.
fn zk_server(args: &[&str]) -> Result<(), Failure> {
    let script =
        std::env::var("ZK_SCRIPT").map_err(|_| Failure::Store("ZK_SCRIPT unset".into()))?;
    let status = std::process::Command::new(script)
        .args(args)
        .status()
        .map_err(|e| Failure::Store(format!("ZK_SCRIPT {args:?}: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::Store(format!("ZK_SCRIPT {args:?}: {status}")))
    }
}

fn open_store(args: &Args) -> Result<AnyStore, Failure> {
    let init = || initial(args.buckets);
    match &args.store {
        StoreArg::File(dir) => match FileStore::open(dir, FileStoreOptions::default()) {
            Ok(s) => {
                if let Some(n) = s.torn_tail_discarded() {
                    eprintln!(
                        "cluster: the journal in {dir} ended in a record cut short ({n} bytes, \
                         a write that never returned); discarded"
                    );
                }
                Ok(AnyStore::File(s))
            }
            Err(FileStoreError::NotFound(_)) => {
                FileStore::create(dir, init(), FileStoreOptions::default())
                    .map(AnyStore::File)
                    .map_err(|e| Failure::Store(e.to_string()))
            }
            Err(e) => Err(Failure::Store(e.to_string())),
        },
        StoreArg::Zk(addr) => match ZkStore::open(addr, &args.root, zk_options(args)) {
            Ok(s) => Ok(AnyStore::Zk(Box::new(s))),
            Err(ZkStoreError::NotFound(_)) => {
                ZkStore::create(addr, &args.root, &init(), zk_options(args))
                    .map(|s| AnyStore::Zk(Box::new(s)))
                    .map_err(|e| Failure::Store(e.to_string()))
            }
            Err(e) => Err(Failure::Store(e.to_string())),
        },
    }
}

/// A plan from the current assignments: 70% moves, 20% leader-only, 10% no-op.
fn plan_for(records: &[(BucketId, BucketRecord)], rng: &mut Rng) -> Plan {
    Plan::new(
        records
            .iter()
            .filter(|(_, r)| !r.assignment.is_empty())
            .map(|(b, r)| {
                let ors = r.assignment.clone();
                let trs = match rng.below(10) {
                    0..=6 => {
                        let mut t: Vec<ServerId> = ors.iter().skip(1).copied().collect();
                        let spare = (0..SERVERS)
                            .map(|i| (b + i) % SERVERS)
                            .find(|s| !ors.contains(s));
                        t.extend(spare);
                        t
                    }
                    7..=8 if ors.len() > 1 => {
                        let mut t = ors.clone();
                        t.swap(0, 1);
                        t
                    }
                    _ => ors.clone(),
                };
                let entry = PlanEntry::new(ors, trs, r.lai.leader).expect("non-empty target");
                (*b, entry)
            })
            .collect(),
    )
}

struct Run {
    inputs: u64,
    recovery: Vec<Duration>,
    /// Whether `--zk-outage-at` killed the server (a run may end before it).
    zk_outage: bool,
}

/// The store as the run loop holds it: counted for the figures, around a store that counts
/// each input's operations for the log.
type Host = Counted<Recorded<AnyStore>>;

/// The coordinator log, when `--log` asked for one.
type Log = Option<LogWriter<std::fs::File>>;

/// The start record (R17), written before the Recover runs: a process killed during its
/// Recover has logged its start, and the validator explains the Recover as cut short.
fn log_start(
    log: &mut Log,
    m: &Manager<Host>,
    now: u64,
    effects: &[Effect],
    read: Option<&PersistedState>,
) -> Result<(), Failure> {
    if let Some(w) = log {
        w.start(now, m.coordinator_epoch(), m.live(), effects, read)
            .map_err(|e| Failure::Store(format!("writing the log: {e}")))?;
    }
    Ok(())
}

/// A new incarnation, its start's effects, and the store it read, if it read it back.
type Started = (Manager<Host>, Vec<Effect>, Option<PersistedState>);

/// R17: a new incarnation on `store`, and its effects (Recover queued). With `read`, the host
/// reads the store back (two reads that are no input's), so that the log shows what this
/// incarnation found.
fn incarnate(store: AnyStore, cluster: &Cluster, now: u64, read: bool) -> Result<Started, Failure> {
    let (mut m, effects) = Manager::start(
        Config::default(),
        Counted::new(Recorded::new(store)),
        cluster.live(),
        now,
    )
    .map_err(|e| Failure::Store(e.to_string()))?;
    assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    let read = if read {
        let fail = |e: StoreError| Failure::Store(format!("reading the store back: {e}"));
        let cluster = m.store_mut().load_cluster().map_err(fail)?;
        let task = m.store_mut().read_task().map_err(fail)?;
        Some(PersistedState {
            coordinator_epoch: m.coordinator_epoch(),
            task,
            cluster,
        })
    } else {
        None
    };
    m.store_mut().inner.take(); // the start's own reads and epoch write are not an input's
    Ok((m, effects, read))
}

/// R16: the new incarnation's Recover, handled and logged.
fn recover(
    m: &mut Manager<Host>,
    cluster: &mut Cluster,
    now: u64,
    log: &mut Log,
    events: &mut VecDeque<Event>,
    replies: &mut Vec<Reply>,
) -> Result<(), Failure> {
    let input = Input::Event(Event::Recover);
    let effects = m.handle(now, input.clone());
    record(log, m, now, &input, &effects)?;
    cluster.absorb(effects, events, replies);
    if let (n, Some(e)) = m.store_failures() {
        if n > 0 {
            return Err(Failure::Store(format!("recovery: {e}")));
        }
    }
    m.check_invariants()
        .map_err(|v| Failure::Invariant(format!("{v:?}")))
}

/// The model holds at most this many buckets (model/src/types.rs).
const MODEL_MAX_BUCKETS: usize = 16;

/// The model configuration (the format of `model/configs/*.json`) of this cluster and `plan`,
/// for the log's header: the model holds at most 16 buckets, so a larger cluster's header
/// carries none. Loss is budgeted as the model's largest budget. So are coordinator crashes,
/// registers and store failures: a process may be killed at any point and run again on the same
/// store and log, and the model explains a kill in the middle of an input as a crash after that
/// input with one store operation failed (spec/log-format.md, "Crashes"); each new process
/// registers if the store holds no task. Server crashes, duplication and deletions never happen.
fn model_config(
    args: &Args,
    records: &[(BucketId, BucketRecord)],
    plan: &Plan,
) -> Option<serde_json::Value> {
    if records.len() > MODEL_MAX_BUCKETS {
        return None;
    }
    let c = Config::default();
    let ticks = |ms: u64| ms / c.check_interval_ms;
    let buckets: Vec<serde_json::Value> = records
        .iter()
        .map(|(_, r)| serde_json::json!({"assignment": r.assignment, "leader": r.lai.leader}))
        .collect();
    let plan: Vec<serde_json::Value> = plan
        .buckets
        .iter()
        .map(|(b, e)| serde_json::json!({"bucket": b, "target": e.trs}))
        .collect();
    Some(serde_json::json!({
        "description": format!("the cluster example: {} buckets, seed {:#x}", records.len(), args.seed),
        "servers": SERVERS,
        "replication_factor": 3,
        "buckets": buckets,
        "plan": plan,
        "task_timeout_ticks": ticks(c.task_timeout_ms),
        "max_reconcile_backoff_ticks": ticks(c.max_reconcile_backoff_ms),
        "target_unavailable_timeout_ticks": ticks(c.target_unavailable_timeout_ms),
        "no_progress_timeout_ticks": ticks(c.no_progress_timeout_ms),
        "max_tracked_timed_out": c.max_tracked_timed_out,
        "max_inflight": c.max_inflight,
        "check_interval_ms": c.check_interval_ms,
        "budgets": {
            "register": 255, "cancel": 0, "coordinator_crash": 255,
            "server_crash": 0,
            "store_failure": 255,
            "message_loss": 255,
            "message_duplication": 0, "bucket_deletion": 0
        },
        "failed_responses_in_flight": true
    }))
}

/// One progress line: redrawn in place on a terminal, one line per report otherwise.
fn progress(m: &Manager<Host>, total: usize, inputs: u64) {
    let c = m.counts();
    let done = c.completed + c.failed + c.canceled;
    let width = 30;
    let filled = (done * width).checked_div(total).unwrap_or(width);
    let (start, end) = if std::io::stderr().is_terminal() {
        ("\r", "")
    } else {
        ("", "\n")
    };
    eprint!(
        "{start}[{}{}] {done}/{total} completed {} timed out {} failed {} | {inputs} inputs {end}",
        "#".repeat(filled),
        ".".repeat(width - filled),
        c.completed,
        c.timeout,
        c.failed
    );
    let _ = std::io::stderr().flush();
}

fn run(args: &Args) -> Result<(Manager<Host>, Run, Duration), Failure> {
    if let Some(n) = args.kill_at {
        KILL_AT.set(n).expect("set once");
    }
    let mut rng = Rng::new(args.seed);
    // The log, opened before the store is touched: a new one (created, never overwritten), or
    // the one a killed run left, continued from its clock.
    let mut new_log: Option<std::fs::File> = None;
    let mut last_epoch = None;
    let mut log: Log = None;
    let mut now = 0u64;
    if let Some(path) = &args.log {
        let path = std::path::Path::new(path);
        let appended = if path.exists() {
            LogWriter::append(path).map_err(|e| Failure::Usage(format!("--log: {e}")))?
        } else {
            None
        };
        if let Some((w, resume)) = appended {
            if resume.ended {
                return Err(Failure::Usage(format!(
                    "--log {}: this log ends with an end record: its run finished",
                    path.display()
                )));
            }
            if resume.torn {
                eprintln!(
                    "cluster: --log {}: the last line was torn (the run that wrote it was \
                     killed); kept, and the log continues on the next line",
                    path.display()
                );
            }
            now = resume.now_ms;
            log = Some(w);
            last_epoch = resume.last_epoch;
        } else {
            // A new file, or the empty one a run killed before its header left.
            new_log = Some(
                std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(path)
                    .map_err(|e| Failure::Store(format!("--log {}: {e}", path.display())))?,
            );
        }
    }
    let store = open_store(args)?;
    let mut events = VecDeque::new();
    let mut replies = Vec::new();
    // The simulated servers live in this process, so a new process starts them from what the
    // store says: as if each had adopted the latest stored metadata, which the validator
    // explains as the requests still in flight delivered (and a pending ISR proposal lost).
    let mut cluster = Cluster::new(0..SERVERS);
    let read = args.log.is_some() && args.buckets as usize <= MODEL_MAX_BUCKETS;
    let (mut m, start_effects, found) = incarnate(store, &cluster, now, read)?;
    if last_epoch.is_some_and(|e| m.coordinator_epoch() <= e) {
        return Err(Failure::Usage(format!(
            "--log {}: the log's last incarnation has coordinator epoch {}, this one {}: the log \
             is of another store",
            args.log.as_deref().unwrap_or_default(),
            last_epoch.unwrap_or_default(),
            m.coordinator_epoch()
        )));
    }
    let records: Vec<(BucketId, BucketRecord)> = (0..)
        .map_while(|b| m.bucket(b).map(|r| (b, r.clone())))
        .collect();
    if records.len() != args.buckets as usize {
        return Err(Failure::Usage(format!(
            "--buckets {}: the store holds {} buckets",
            args.buckets,
            records.len()
        )));
    }
    for (b, r) in &records {
        cluster.init_bucket(*b, r);
        if rng.chance(args.slow_per_million) {
            cluster.slow_for.insert(*b, SLOW_FOR_MS);
        }
    }
    let total = records.len();
    eprintln!(
        "cluster: {total} buckets, {SERVERS} servers, seed {:#x}, store {}",
        args.seed,
        match &args.store {
            StoreArg::File(d) => format!("file:{d}"),
            StoreArg::Zk(a) => format!("zk:{a}{}", args.root),
        }
    );
    let mut stats = Run {
        inputs: 0,
        recovery: Vec::new(),
        zk_outage: false,
    };
    let write_failed = |e: std::io::Error| Failure::Store(format!("writing the log: {e}"));
    // A new log's header describes the plan this run registers, so it is drawn now.
    let fresh_log = new_log.is_some();
    let mut plan = None;
    if let Some(file) = new_log.take() {
        if found.as_ref().is_some_and(|f| f.task.is_some()) {
            return Err(already_rebalancing(args));
        }
        let p = plan_for(&records, &mut rng);
        let header = model_config(args, &records, &p);
        log = Some(LogWriter::new(file, header).map_err(write_failed)?);
        plan = Some(p);
    }
    log_start(&mut log, &m, now, &start_effects, found.as_ref())?;
    recover(
        &mut m,
        &mut cluster,
        now,
        &mut log,
        &mut events,
        &mut replies,
    )?;
    match m.overall() {
        None => {
            let plan = plan.unwrap_or_else(|| plan_for(&records, &mut rng));
            let input = Input::Register { plan };
            let effects = m.handle(now, input.clone());
            record(&mut log, &mut m, now, &input, &effects)?;
            cluster.absorb(effects, &mut events, &mut replies);
            match replies.last() {
                Some(Reply::Accepted(_)) => {}
                other => return Err(Failure::Store(format!("register: {other:?}"))),
            }
        }
        Some(_) if fresh_log => return Err(already_rebalancing(args)),
        Some(OverallStatus::Rebalancing) => {
            eprintln!("cluster: resuming the rebalance in progress")
        }
        Some(status) => {
            eprintln!("cluster: the store's rebalance has finished ({status:?}); nothing to do");
            if let Some(w) = &mut log {
                w.end(now).map_err(write_failed)?;
            }
            return Ok((m, stats, Duration::ZERO));
        }
    }

    let wall = Instant::now();
    let mut last_progress = Instant::now();
    let every = if std::io::stderr().is_terminal() {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(10)
    };
    let mut crashed = false;
    // The ZooKeeper outage: the store failure count at which, or the input at which, it ends.
    let mut outage: Option<(u64, u64)> = None;
    let mut outage_done = false;
    loop {
        if args.zk_outage_at == Some(stats.inputs) && !outage_done {
            outage_done = true;
            stats.zk_outage = true;
            eprintln!(
                "\ncluster: killing the ZooKeeper server after {} inputs",
                stats.inputs
            );
            zk_server(&["--stop-server", "--kill"])?;
            outage = Some((m.store_failures().0 + 3, stats.inputs + 30));
        }
        if let Some((failures, until)) = outage {
            if m.store_failures().0 >= failures || stats.inputs >= until {
                eprintln!("cluster: starting the ZooKeeper server again");
                zk_server(&["--start-server"])?;
                outage = None;
            }
        }
        if args.crash_at == Some(stats.inputs) && !crashed {
            crashed = true;
            eprintln!(
                "\ncluster: crashing the coordinator after {} inputs",
                stats.inputs
            );
            let writes = (m.store().writes, m.store().write_time);
            let store = m.into_store().inner;
            drop(store); // the process dies: its session and file lock go with it
            events.clear(); // and so does its event queue
            let t = Instant::now();
            let store = open_store(args)?;
            let (restarted, effects, found) = incarnate(store, &cluster, now, read)?;
            m = restarted;
            log_start(&mut log, &m, now, &effects, found.as_ref())?;
            recover(
                &mut m,
                &mut cluster,
                now,
                &mut log,
                &mut events,
                &mut replies,
            )?;
            m.store_mut().writes += writes.0;
            m.store_mut().write_time += writes.1;
            stats.recovery.push(t.elapsed());
        }
        let input = if !cluster.net.is_empty() {
            if rng.chance(args.loss_per_million) {
                cluster.drop_msg(0);
                continue;
            }
            match cluster.deliver(0, now) {
                Some(input) => input,
                None => continue,
            }
        } else if let Some(ev) = events.pop_front() {
            Input::Event(ev)
        } else if m.has_in_progress() {
            now += m.config().check_interval_ms;
            cluster.retry_deferred(now);
            Input::Tick
        } else {
            break;
        };
        let effects = m.handle(now, input.clone());
        record(&mut log, &mut m, now, &input, &effects)?;
        cluster.absorb(effects, &mut events, &mut replies);
        stats.inputs += 1;
        if stats.inputs.is_multiple_of(10_000) {
            m.check_invariants()
                .map_err(|v| Failure::Invariant(format!("{v:?}")))?;
        }
        if last_progress.elapsed() >= every {
            progress(&m, total, stats.inputs);
            last_progress = Instant::now();
        }
    }
    if outage.is_some() {
        zk_server(&["--start-server"])?; // the run ended during the outage
    }
    if let Some(w) = &mut log {
        w.end(now)
            .map_err(|e| Failure::Store(format!("writing the log: {e}")))?;
    }
    progress(&m, total, stats.inputs);
    eprintln!();
    m.check_invariants()
        .map_err(|v| Failure::Invariant(format!("{v:?}")))?;
    Ok((m, stats, wall.elapsed()))
}

/// The summary's recovery figure, or why there is none: a `--crash-coordinator-at` (or
/// `--zk-outage-at`) beyond the run's last input injected nothing, which the summary says rather
/// than reading as a run that had no crash asked for.
fn recovery(args: &Args, stats: &Run) -> String {
    let mut line = match (stats.recovery.first(), args.crash_at) {
        (Some(d), _) => format!(
            "{:.1} ms (open the store, start, Recover) after the crash",
            d.as_secs_f64() * 1e3
        ),
        (None, Some(t)) => format!(
            "no crash: the run ended after {} inputs, before --crash-coordinator-at {t}",
            stats.inputs
        ),
        (None, None) => "no crash injected (--crash-coordinator-at T)".to_string(),
    };
    if let (Some(t), false) = (args.zk_outage_at, stats.zk_outage) {
        line.push_str(&format!(
            "; no ZooKeeper outage: the run ended after {} inputs, before --zk-outage-at {t}",
            stats.inputs
        ));
    }
    line
}

/// A new log for a store that already holds a rebalance: its header could not describe it.
fn already_rebalancing(args: &Args) -> Failure {
    Failure::Usage(format!(
        "--log {}: the store already holds a rebalance, which a new log's model configuration \
         cannot describe: give the log of the run that left it, or a new store",
        args.log.as_deref().unwrap_or_default()
    ))
}

/// Writes one input to the log, if there is one, with the store operations it made.
fn record(
    log: &mut Log,
    m: &mut Manager<Host>,
    now: u64,
    input: &Input,
    effects: &[Effect],
) -> Result<(), Failure> {
    let ops = m.store_mut().inner.take();
    if let Some(w) = log {
        w.input(now, input, effects, ops)
            .map_err(|e| Failure::Store(format!("writing the log: {e}")))?;
    }
    Ok(())
}

/// A reader that closed our output pipe (`cluster ... | head`) ends the process as SIGPIPE
/// would, silently with status 141, instead of `println!`'s panic (Rust ignores SIGPIPE). The
/// model's binaries do the same (`rebalance_model::view::pipe`, a crate this one must not use).
fn end_quietly_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(Some(a)) => a,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n(see --help)");
            return ExitCode::from(2);
        }
    };
    let (m, stats, wall) = match run(&args) {
        Ok(r) => r,
        Err(Failure::Usage(e)) => {
            eprintln!("error: {e}\n(see --help)");
            return ExitCode::from(2);
        }
        Err(Failure::Store(e)) => {
            eprintln!("\nerror: store: {e}");
            return ExitCode::from(3);
        }
        Err(Failure::Invariant(e)) => {
            eprintln!("\nerror: invariant violated: {e}");
            return ExitCode::from(1);
        }
    };
    let store = m.store();
    let secs = wall.as_secs_f64();
    let c = m.counts();
    // The spec's names (spec 3.2), as the task node stores them.
    let status = match m.overall() {
        None => "none (no rebalance registered)",
        Some(OverallStatus::Rebalancing) => "REBALANCING",
        Some(OverallStatus::Completed) => "COMPLETED",
        Some(OverallStatus::Failed) => "FAILED",
        Some(OverallStatus::Canceled) => "CANCELED",
    };
    println!("status            {status}");
    println!(
        "buckets           {} completed, {} failed, {} canceled",
        c.completed, c.failed, c.canceled
    );
    println!("time              {secs:.2} s");
    println!(
        "inputs            {} ({:.0}/s)",
        stats.inputs,
        stats.inputs as f64 / secs
    );
    println!(
        "store writes      {} ({:.0}/s of run time; {:.0} us each on average)",
        store.writes,
        store.writes as f64 / secs,
        store.write_time.as_secs_f64() * 1e6 / store.writes.max(1) as f64
    );
    let (failures, last) = m.store_failures();
    println!(
        "store failures    {failures}{}",
        last.map(|e| format!(" (last: {e})")).unwrap_or_default()
    );
    println!("recovery          {}", recovery(&args, &stats));
    if m.overall() == Some(OverallStatus::Completed) {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the rebalance did not complete: {:?}", m.overall());
        ExitCode::from(1)
    }
}
