//! The host loop: the manager against the simulated cluster on a durable store, with the
//! coordinator log, the injected crash and the ZooKeeper outage.

use std::collections::VecDeque;
use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Event, Input, Manager, OverallStatus, PersistedState,
    Plan, PlanEntry, Reply, ServerId, Store, StoreError,
};
use rebalance_wire::log::{LogWriter, Recorded};

use crate::args::{Args, StoreArg};
use crate::store::{open_store, zk_server, AnyStore, Counted, KILL_AT};
use crate::{Failure, SERVERS};

const SLOW_FOR_MS: u64 = 200_000;

/// A plan from the current assignments: 70% moves, 20% leader-only, 10% no-op.
pub(crate) fn plan_for(records: &[(BucketId, BucketRecord)], rng: &mut Rng) -> Plan {
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

pub(crate) struct Run {
    pub(crate) inputs: u64,
    pub(crate) recovery: Vec<Duration>,
    /// Whether `--zk-outage-at` killed the server (a run may end before it).
    pub(crate) zk_outage: bool,
}

/// The store as the run loop holds it: counted for the figures, around a store that counts
/// each input's operations for the log.
pub(crate) type Host = Counted<Recorded<AnyStore>>;

/// The coordinator log, when `--log` asked for one.
pub(crate) type Log = Option<LogWriter<std::fs::File>>;

/// The start record (R17), written before the Recover runs: a process killed during its
/// Recover has logged its start, and the validator explains the Recover as cut short.
pub(crate) fn log_start(
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
pub(crate) type Started = (Manager<Host>, Vec<Effect>, Option<PersistedState>);

/// R17: a new incarnation on `store`, and its effects (Recover queued). With `read`, the host
/// reads the store back (two reads that are no input's), so that the log shows what this
/// incarnation found.
pub(crate) fn incarnate(store: AnyStore, cluster: &Cluster, now: u64, read: bool) -> Result<Started, Failure> {
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
pub(crate) fn recover(
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
pub(crate) fn model_config(
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
pub(crate) fn progress(m: &Manager<Host>, total: usize, inputs: u64) {
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

pub(crate) fn run(args: &Args) -> Result<(Manager<Host>, Run, Duration), Failure> {
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

/// A new log for a store that already holds a rebalance: its header could not describe it.
pub(crate) fn already_rebalancing(args: &Args) -> Failure {
    Failure::Usage(format!(
        "--log {}: the store already holds a rebalance, which a new log's model configuration \
         cannot describe: give the log of the run that left it, or a new store",
        args.log.as_deref().unwrap_or_default()
    ))
}

/// Writes one input to the log, if there is one, with the store operations it made.
pub(crate) fn record(
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
