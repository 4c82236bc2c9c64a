//! The host loop: the manager against the simulated cluster on a durable store, with the
//! coordinator log, the injected crash and the ZooKeeper outage.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use rebalance_manager::sim::{Cluster, Rng};
use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Event, Input, Manager, OverallStatus, Plan, Reply,
};
use rebalance_wire::log::LogWriter;

use crate::args::{Args, StoreArg};
use crate::cluster_plan::plan_for;
use crate::failure::Failure;
use crate::host::{Core, HostLoop, Log, Stop};
use crate::store::{open_store, zk_server, FAIL_FLUSH_AT, KILL_AT, SERVERS};

const SLOW_FOR_MS: u64 = 200_000;

/// The model holds at most this many buckets (model/src/state/types.rs).
const MODEL_MAX_BUCKETS: usize = 16;

/// The model configuration (the format of `model/configs/*.json`) of this cluster and `plan`,
/// for the log's header: the model holds at most 16 buckets, so a larger cluster's header
/// carries none. Loss is budgeted as the model's largest budget. So are coordinator crashes,
/// registers and store failures: a process may be killed at any point and run again on the same
/// store and log, and the model explains a kill in the middle of an input as a crash after that
/// input with one store operation failed (spec/log-format.md, "Crashes"); each new process
/// registers if the store holds no task. Server crashes and deletions never happen, nor
/// duplication but for identical resends (below).
pub(crate) fn model_config(
    args: &Args,
    records: &[(BucketId, BucketRecord)],
    plan: &Plan,
) -> Option<serde_json::Value> {
    if records.len() > MODEL_MAX_BUCKETS {
        return None;
    }
    let c = Config {
        max_inflight: args.max_inflight,
        ..Config::default()
    };
    let ticks = |ms: u64| ms / c.check_interval_ms;
    // The model absorbs a message identical to one in flight and counts a second copy as a
    // duplicate (F-DUP). Group commit holds a resend's twin back, so both copies are in flight
    // at once far more often than without it: the budget allows them then.
    let duplication = if args.group_commit > 1 { 255 } else { 0 };
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
            "message_duplication": duplication, "bucket_deletion": 0
        },
        "failed_responses_in_flight": true
    }))
}

/// One progress line: redrawn in place on a terminal, one line per report otherwise.
pub(crate) fn progress(m: &Manager<Core>, total: usize, inputs: u64) {
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

pub(crate) fn run(args: &Args) -> Result<(HostLoop<'_>, Duration), Failure> {
    if let Some(n) = args.kill_at {
        KILL_AT.set(n).expect("set once");
    }
    if let Some(n) = args.fail_flush_at {
        FAIL_FLUSH_AT.set(n).expect("set once");
    }
    let mut rng = Rng::new(args.seed);
    let (log, new_log, last_epoch, now) = open_log(args)?;
    let store = open_store(args)?;
    // The simulated servers live in this process, so a new process starts them from what the
    // store says: as if each had adopted the latest stored metadata, which the validator
    // explains as the requests still in flight delivered (and a pending ISR proposal lost).
    let cluster = Cluster::new(0..SERVERS);
    let read = args.log.is_some() && args.buckets as usize <= MODEL_MAX_BUCKETS;
    let mut host = HostLoop::new(args, cluster, log, now, read);
    let found = host.incarnate(store)?;
    if last_epoch.is_some_and(|e| host.m().coordinator_epoch() <= e) {
        return Err(Failure::Usage(format!(
            "--log {}: the log's last incarnation has coordinator epoch {}, this one {}: the log \
             is of another store",
            args.log.as_deref().unwrap_or_default(),
            last_epoch.unwrap_or_default(),
            host.m().coordinator_epoch()
        )));
    }
    let records: Vec<(BucketId, BucketRecord)> = (0..)
        .map_while(|b| host.m().bucket(b).map(|r| (b, r.clone())))
        .collect();
    if records.len() != args.buckets as usize {
        return Err(Failure::Usage(format!(
            "--buckets {}: the store holds {} buckets",
            args.buckets,
            records.len()
        )));
    }
    for (b, r) in &records {
        host.cluster.init_bucket(*b, r);
        if rng.chance(args.slow_per_million) {
            host.cluster.slow_for.insert(*b, SLOW_FOR_MS);
        }
    }
    let total = records.len();
    eprintln!(
        "cluster: {total} buckets, {SERVERS} servers, seed {:#x}, store {}, max inflight {}, {}",
        args.seed,
        match &args.store {
            StoreArg::File(d) => format!("file:{d}"),
            StoreArg::Zk(a) => format!("zk:{a}{}", args.root),
        },
        args.max_inflight,
        if args.group_commit > 1 {
            format!(
                "group commit of at most {} writes, {} ms",
                host_limit(&host),
                args.commit_latency_ms
            )
        } else {
            "one write at a time".to_string()
        }
    );
    // A new log's header describes the plan this run registers, so it is drawn now.
    let fresh_log = new_log.is_some();
    let mut plan = None;
    if let Some(file) = new_log {
        if found.as_ref().is_some_and(|f| f.task.is_some()) {
            return Err(already_rebalancing(args));
        }
        let p = plan_for(&records, SERVERS, &mut rng);
        let header = model_config(args, &records, &p);
        host.watch.log = Some(LogWriter::new(file, header).map_err(write_failed)?);
        plan = Some(p);
        // The start record was not written: the log had no header yet.
        let (epoch, live) = (host.m().coordinator_epoch(), host.m().live().clone());
        let start = [Effect::Enqueue(Event::Recover)];
        if let Some(w) = &mut host.watch.log {
            w.start(now, epoch, &live, &start, found.as_ref())
                .map_err(write_failed)?;
        }
    }
    host.recover()?;
    match host.m().overall() {
        None => {
            let plan = plan.unwrap_or_else(|| plan_for(&records, SERVERS, &mut rng));
            host.feed(Input::Register { plan })?;
            host.flush()?; // the client waits for its answer
            match host.replies.last() {
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
            if let Some(w) = &mut host.watch.log {
                w.end(host.now).map_err(write_failed)?;
            }
            host.inputs = 0;
            host.finish();
            return Ok((host, Duration::ZERO));
        }
    }
    host.inputs = 0;
    let wall = Instant::now();
    drive(&mut host, total, &mut rng)?;
    let wall = wall.elapsed();
    if let Some(w) = &mut host.watch.log {
        w.end(host.now).map_err(write_failed)?;
    }
    progress(host.m(), total, host.inputs);
    eprintln!();
    host.m()
        .check_invariants()
        .map_err(|v| Failure::Invariant(format!("{v:?}")))?;
    host.finish();
    Ok((host, wall))
}

/// The batch bound the adapter took (the store's own may be lower).
fn host_limit(host: &HostLoop<'_>) -> usize {
    host.m().store().inner.inner.limit()
}

/// The loop: take the next input (a message, then an event, then a tick), with the crash and
/// the ZooKeeper outage injected where asked, until nothing is left to do.
fn drive(host: &mut HostLoop<'_>, total: usize, rng: &mut Rng) -> Result<(), Failure> {
    let args = host.args;
    let mut last_progress = Instant::now();
    let every = if std::io::stderr().is_terminal() {
        Duration::from_millis(250)
    } else {
        Duration::from_secs(10)
    };
    let mut crashed = false;
    let mut outage_done = false;
    loop {
        if args.zk_outage_at.is_some_and(|t| host.inputs >= t) && !outage_done {
            outage_done = true;
            host.zk_outage = true;
            eprintln!(
                "\ncluster: killing the ZooKeeper server after {} inputs",
                host.inputs
            );
            zk_server(&["--stop-server", "--kill"])?;
            host.outage = Some((host.m().store_failures().0 + 3, host.inputs + 30));
        }
        if args.zk_kill_leader_at.is_some_and(|t| host.inputs >= t) && !host.zk_leader_killed {
            host.zk_leader_killed = true;
            eprintln!(
                "\ncluster: killing the ZooKeeper ensemble's leader after {} inputs",
                host.inputs
            );
            zk_server(&["--stop-server", "--leader", "--kill"])?;
            host.member_down_until = Some(host.inputs + 30);
        }
        if host
            .member_down_until
            .is_some_and(|until| host.inputs >= until)
        {
            eprintln!("cluster: starting the killed ZooKeeper member again");
            zk_server(&["--start-server"])?;
            host.member_down_until = None;
        }
        if let Some((failures, until)) = host.outage {
            if host.m().store_failures().0 >= failures || host.inputs >= until {
                eprintln!("cluster: starting the ZooKeeper server again");
                zk_server(&["--start-server"])?;
                host.outage = None;
            }
        }
        if args.crash_at.is_some_and(|t| host.inputs >= t) && !crashed {
            crashed = true;
            host.stop(Stop::Injected)?;
        }
        let input = if !host.cluster.net.is_empty() {
            if rng.chance(args.loss_per_million) {
                host.cluster.drop_msg(0);
                continue;
            }
            match host.cluster.deliver(0, host.now) {
                Some(input) => input,
                None => continue,
            }
        } else if let Some(ev) = host.next_event() {
            Input::Event(ev)
        } else if host.holding() {
            // Nothing to take that does not wait on a held effect: flush (step 3).
            host.flush()?;
            continue;
        } else if host.m().has_in_progress() {
            host.now += host.m().config().check_interval_ms;
            let now = host.now;
            host.cluster.retry_deferred(now);
            Input::Tick
        } else {
            break;
        };
        host.feed(input)?;
        if host.inputs.is_multiple_of(10_000) && !host.holding() {
            host.m()
                .check_invariants()
                .map_err(|v| Failure::Invariant(format!("{v:?}")))?;
        }
        if last_progress.elapsed() >= every {
            progress(host.m(), total, host.inputs);
            last_progress = Instant::now();
        }
    }
    if host.outage.take().is_some() || host.member_down_until.take().is_some() {
        zk_server(&["--start-server"])?; // the run ended while a server was down
    }
    Ok(())
}

/// The log, opened before the store is touched: a new one (created, never overwritten), or the
/// one a killed run left, continued from its clock. Returns the writer of a continued log, the
/// file of a new one, the last logged epoch and the clock to start from.
fn open_log(args: &Args) -> Result<OpenedLog, Failure> {
    let Some(path) = &args.log else {
        return Ok((None, None, None, 0));
    };
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
        return Ok((Some(w), None, resume.last_epoch, resume.now_ms));
    }
    // A new file, or the empty one a run killed before its header left.
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| Failure::Store(format!("--log {}: {e}", path.display())))?;
    Ok((None, Some(file), None, 0))
}

/// A continued log's writer, a new log's file, the last logged epoch, the clock to start from.
type OpenedLog = (Log, Option<std::fs::File>, Option<u64>, u64);

fn write_failed(e: std::io::Error) -> Failure {
    Failure::Store(format!("writing the log: {e}"))
}

/// A new log for a store that already holds a rebalance: its header could not describe it.
pub(crate) fn already_rebalancing(args: &Args) -> Failure {
    Failure::Usage(format!(
        "--log {}: the store already holds a rebalance, which a new log's model configuration \
         cannot describe: give the log of the run that left it, or a new store",
        args.log.as_deref().unwrap_or_default()
    ))
}
