//! A runnable host: drives the pure core with a clock against the simulated cluster, on a
//! durable store (a directory or a ZooKeeper server), and reports what it did.
//!
//! ```sh
//! cargo run --release -p rebalance-manager --example cluster -- --buckets 10000 --store file:/tmp/rb
//! scripts/with-zookeeper.sh sh -c 'cargo run --release -p rebalance-manager --example cluster -- \
//!     --buckets 10000 --store zk:$ZK_ADDR --crash-coordinator-at 20000'
//! ```
//!
//! `--help` says more.

// A host reads the wall clock (progress, figures) and the store adapters do I/O; the protocol
// core never does (clippy.toml bans both for the crate, and the core denies them).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use rebalance_manager::log::{LogWriter, Recorded};
use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::store::zk::{ZkStore, ZkStoreError, ZkStoreOptions};
use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Epoch, Event, FileStore, FileStoreError,
    FileStoreOptions, Input, LeaderAndIsr, Manager, OverallStatus, PersistedState, Plan, PlanEntry,
    Reply, ServerId, Store, StoreError, TaskNode,
};

const SERVERS: u32 = 8;
const LOSS_PER_MILLION: u64 = 500;
const SLOW_PER_MILLION: u64 = 10_000;
const SLOW_FOR_MS: u64 = 200_000;

const HELP: &str = "\
cluster: run a bucket rebalance through the rebalance manager against a simulated cluster

USAGE:
    cargo run --release -p rebalance-manager --example cluster -- \\
        --buckets N --store file:DIR|zk:HOST:PORT [--seed S] [--crash-coordinator-at T] [--root PATH]
        [--log FILE] [--loss-per-million N] [--slow-per-million N] [--zk-outage-at T]

OPTIONS:
    --buckets N                 buckets in the cluster (8 servers, replication factor 3)
    --store file:DIR            a FileStore in DIR (created if DIR holds no store)
    --store zk:HOST:PORT        a ZkStore on that ZooKeeper server, under --root
    --root PATH                 the ZkStore's root node (default /fluss-rebalance-example)
    --seed S                    the plan's and the network's seed (default 0x5eedf1a5; printed)
    --crash-coordinator-at T    after T inputs, crash the coordinator and start a new incarnation
                                on a reopened store (the summary reports its recovery time)
    --log FILE                  write the coordinator log (spec/log-format.md) to FILE, which must
                                not exist, for `rebalance-conformance validate FILE`; needs a new
                                store, and with at most 16 buckets the header carries the model
                                configuration of this cluster
    --loss-per-million N        messages lost per million (default 500); the validator
                                sees every loss only as a delivery that never came
    --slow-per-million N        buckets with slow followers per million (default 10000)
    --zk-outage-at T            after T inputs, kill the ZooKeeper server ($ZK_SCRIPT --stop-server
                                --kill), go on until three store operations have failed (at most
                                30 inputs), and start it again ($ZK_SCRIPT --start-server); needs
                                --store zk: under scripts/with-zookeeper.sh, which sets ZK_SCRIPT
    -h, --help                  this text

The plan is 70% moves, 20% leader-only changes and 10% no-ops; 1% of the buckets have slow
followers (they time out and complete after reconcile) and 0.05% of the messages are lost. Time is
simulated (30 s ticks); the figures are wall-clock. An existing store is opened and verified: a
rebalance in progress is resumed, otherwise a new plan is registered from the stored assignments.

EXIT CODES:
    0  the rebalance completed and every invariant held
    1  an invariant was violated, or the rebalance did not complete
    2  bad usage (including a malformed address)
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
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--buckets" => {
                let v = value("--buckets")?;
                let n: u32 = v
                    .parse()
                    .map_err(|_| format!("--buckets {v}: not a number"))?;
                if n == 0 {
                    return Err("--buckets must be at least 1".into());
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
                    rebalance_manager::store::zk::parse_addr(addr).map_err(|e| e.to_string())?;
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
    }))
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
        r
    }
}

impl<S: Store> Store for Counted<S> {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.timed(|s| s.elect_coordinator())
    }
    fn load_cluster(&mut self) -> Result<rebalance_manager::ClusterState, StoreError> {
        self.inner.load_cluster()
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.inner.read_task()
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
    Store(String),
    Invariant(String),
}

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
            Ok(s) => Ok(AnyStore::File(s)),
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
}

/// The store as the run loop holds it: counted for the figures, around a store that counts
/// each input's operations for the log.
type Host = Counted<Recorded<AnyStore>>;

/// The coordinator log, when `--log` asked for one.
type Log = Option<LogWriter<std::fs::File>>;

/// The records of a start (R17) and its Recover, for the log, which a host writes as it goes.
struct StartRecords {
    now: u64,
    start: Vec<Effect>,
    recover: Vec<Effect>,
    recover_ops: rebalance_manager::log::StoreOps,
}

/// Writes a start and its Recover to the log, if there is one.
fn log_start(log: &mut Log, m: &Manager<Host>, r: &StartRecords) -> Result<(), Failure> {
    if let Some(w) = log {
        w.start(r.now, m.coordinator_epoch(), m.live(), &r.start)
            .and_then(|_| {
                w.input(
                    r.now,
                    &Input::Event(Event::Recover),
                    &r.recover,
                    r.recover_ops,
                )
            })
            .map_err(|e| Failure::Store(format!("writing the log: {e}")))?;
    }
    Ok(())
}

/// R17 and R16: a new incarnation on `store`, recovered. Returns it, the time it took, and its
/// records for the log.
fn start(
    store: AnyStore,
    cluster: &mut Cluster,
    now: u64,
    events: &mut VecDeque<Event>,
    replies: &mut Vec<Reply>,
) -> Result<(Manager<Host>, Duration, StartRecords), Failure> {
    let t = Instant::now();
    let (mut m, effects) = Manager::start(
        Config::default(),
        Counted::new(Recorded::new(store)),
        cluster.live(),
        now,
    )
    .map_err(|e| Failure::Store(e.to_string()))?;
    assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
    m.store_mut().inner.take(); // the start's own reads and epoch write are not an input's
    let recover = m.handle(now, Input::Event(Event::Recover));
    let took = t.elapsed();
    let records = StartRecords {
        now,
        start: effects,
        recover: recover.clone(),
        recover_ops: m.store_mut().inner.take(),
    };
    cluster.absorb(recover, events, replies);
    if let (n, Some(e)) = m.store_failures() {
        if n > 0 {
            return Err(Failure::Store(format!("recovery: {e}")));
        }
    }
    m.check_invariants()
        .map_err(|v| Failure::Invariant(format!("{v:?}")))?;
    Ok((m, took, records))
}

/// The model configuration (the format of `model/configs/*.json`) of this cluster and `plan`,
/// for the log's header: the model holds at most 16 buckets, so a larger cluster's header
/// carries none. Loss is budgeted as the model's largest budget, and so are store failures under
/// a ZooKeeper outage; nothing else fails.
fn model_config(
    args: &Args,
    records: &[(BucketId, BucketRecord)],
    plan: &Plan,
) -> Option<serde_json::Value> {
    const MODEL_MAX_BUCKETS: usize = 16;
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
            "register": 1, "cancel": 0, "coordinator_crash": u8::from(args.crash_at.is_some()),
            "server_crash": 0,
            "store_failure": if args.zk_outage_at.is_some() { 255 } else { 0 },
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
    let mut rng = Rng::new(args.seed);
    let store = open_store(args)?;
    let mut events = VecDeque::new();
    let mut replies = Vec::new();
    let mut now = 0u64;
    // The simulated servers start from what the store says (their views survive restarts).
    let mut cluster = Cluster::new(0..SERVERS);
    // Created before anything runs, so an existing file is refused before the store is touched.
    let mut log_file = match &args.log {
        Some(path) => Some(
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| Failure::Store(format!("--log {path}: {e}")))?,
        ),
        None => None,
    };
    let (mut m, _, first) = start(store, &mut cluster, now, &mut events, &mut replies)?;
    let records: Vec<(BucketId, BucketRecord)> = (0..)
        .map_while(|b| m.bucket(b).map(|r| (b, r.clone())))
        .collect();
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
    let mut log: Log = None;
    if m.overall() != Some(OverallStatus::Rebalancing) {
        let plan = plan_for(&records, &mut rng);
        if let Some(file) = log_file.take() {
            let header = model_config(args, &records, &plan);
            log = Some(
                LogWriter::new(file, header)
                    .map_err(|e| Failure::Store(format!("writing the log: {e}")))?,
            );
            log_start(&mut log, &m, &first)?;
        }
        let input = Input::Register { plan };
        let effects = m.handle(now, input.clone());
        record(&mut log, &mut m, now, &input, &effects)?;
        cluster.absorb(effects, &mut events, &mut replies);
        match replies.last() {
            Some(Reply::Accepted(_)) => {}
            other => return Err(Failure::Store(format!("register: {other:?}"))),
        }
    } else {
        if log_file.is_some() {
            return Err(Failure::Store(
                "--log needs a new store: this one holds a rebalance in progress, which the \
                 log's model configuration cannot describe"
                    .into(),
            ));
        }
        eprintln!("cluster: resuming the rebalance in progress");
    }

    let wall = Instant::now();
    let mut last_progress = Instant::now();
    let every = if std::io::stderr().is_terminal() {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(10)
    };
    let mut stats = Run {
        inputs: 0,
        recovery: Vec::new(),
    };
    let mut crashed = false;
    // The ZooKeeper outage: the store failure count at which, or the input at which, it ends.
    let mut outage: Option<(u64, u64)> = None;
    let mut outage_done = false;
    loop {
        if args.zk_outage_at == Some(stats.inputs) && !outage_done {
            outage_done = true;
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
            let open_time = t.elapsed();
            let (restarted, took, records) =
                start(store, &mut cluster, now, &mut events, &mut replies)?;
            m = restarted;
            log_start(&mut log, &m, &records)?;
            m.store_mut().writes += writes.0;
            m.store_mut().write_time += writes.1;
            stats.recovery.push(open_time + took);
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

fn main() -> ExitCode {
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
    match stats.recovery.first() {
        Some(d) => println!(
            "recovery          {:.1} ms (open the store, start, Recover) after the crash",
            d.as_secs_f64() * 1e3
        ),
        None => println!("recovery          no crash injected (--crash-coordinator-at T)"),
    }
    if m.overall() == Some(OverallStatus::Completed) {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the rebalance did not complete: {:?}", m.overall());
        ExitCode::from(1)
    }
}
