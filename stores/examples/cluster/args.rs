//! The command line of the `cluster` example (clap, as the model's and the harness's binaries).

use clap::error::ErrorKind;
use clap::{CommandFactory, Parser};
use rebalance_manager::PlantedBug;

use crate::numbers::{count_from_one, seed, within};

/// The most buckets: ten times the largest measured run (100k took 7 minutes on FileStore), so a
/// mistyped count is refused at once rather than filling memory for hours.
const MAX_BUCKETS: u32 = 1_000_000;

const AFTER_HELP: &str = "\
The plan is 70% moves, 20% leader-only changes and 10% no-ops; 1% of the buckets have slow
followers (they time out and complete after reconcile) and 0.05% of the messages are lost. Time is
simulated (30 s ticks); the figures are wall-clock. An existing store is opened and verified: a
rebalance in progress is resumed; a finished one is reported and left as it is (with --log, the
new incarnation's start and an end record are logged); an empty one gets a new plan, registered
from the stored assignments. --buckets must match the store's.

Examples:
    cargo run --release -p rebalance-stores --example cluster -- --buckets 10000 --store file:/tmp/rb
    scripts/with-zookeeper.sh sh -c 'cargo run --release -p rebalance-stores --example cluster -- \\
        --buckets 10000 --store zk:$ZK_ADDR --crash-coordinator-at 20000'

Exit codes:
    0  the rebalance completed and every invariant held
    1  an invariant was violated, or the rebalance did not complete
    2  bad usage (including a malformed address, and --buckets or --log that do not match the
       store)
    3  the store failed: unreachable server, corrupt data, a newer format version, ...
       (nothing is overwritten)";

/// Run a bucket rebalance through the rebalance manager against a simulated cluster of 8 tablet
/// servers (replication factor 3), on a durable store.
#[derive(Parser)]
#[command(
    name = "cluster",
    version = concat!("(", env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"), ")"),
    after_help = AFTER_HELP
)]
pub(crate) struct Args {
    /// Buckets in the cluster, 1 to 1000000.
    #[arg(long, value_name = "N", value_parser = within(1u32, MAX_BUCKETS))]
    pub(crate) buckets: u32,
    /// file:DIR, a FileStore in DIR (created if DIR holds no store); or zk:HOST:PORT, a ZkStore
    /// on that ZooKeeper server, under --root (zk:HOST:PORT,HOST:PORT,... for an ensemble).
    #[arg(long, value_name = "file:DIR|zk:HOST:PORT", value_parser = store)]
    pub(crate) store: StoreArg,
    /// The ZkStore's root node.
    #[arg(long, value_name = "PATH", default_value = "/fluss-rebalance-example")]
    pub(crate) root: String,
    /// The plan's and the network's seed, decimal or 0x-hex (printed).
    #[arg(long, value_name = "S", default_value = "0x5eedf1a5", value_parser = seed)]
    pub(crate) seed: u64,
    /// After T inputs, crash the coordinator and start a new incarnation on a reopened store
    /// (the summary reports its recovery time).
    #[arg(long = "crash-coordinator-at", value_name = "T")]
    pub(crate) crash_at: Option<u64>,
    /// Write the coordinator log (spec/log-format.md) to FILE, for `rebalance-conformance
    /// validate FILE`. On a new store FILE must not exist; on a store a killed run left, FILE
    /// must be that run's log, and it is continued (a torn last line is kept and ended). With at
    /// most 16 buckets the header carries the model configuration of this cluster, and each
    /// start the store it read.
    #[arg(long, value_name = "FILE")]
    pub(crate) log: Option<String>,
    /// After T inputs, kill the ZooKeeper server ($ZK_SCRIPT --stop-server --kill), go on until
    /// three store operations have failed (at most 30 inputs) or a write left in doubt stops the
    /// incarnation, and start it again ($ZK_SCRIPT --start-server); needs --store zk: under
    /// scripts/with-zookeeper.sh, which sets ZK_SCRIPT.
    #[arg(long, value_name = "T")]
    pub(crate) zk_outage_at: Option<u64>,
    /// After T inputs, kill the leader of the ZooKeeper ensemble ($ZK_SCRIPT --stop-server
    /// --leader --kill): the other members elect a new one and the session moves to one of them.
    /// The killed member is started again 30 inputs later ($ZK_SCRIPT --start-server). Needs
    /// --store zk:HOST:PORT,... under scripts/with-zookeeper.sh --ensemble 3.
    #[arg(long, value_name = "T")]
    pub(crate) zk_kill_leader_at: Option<u64>,
    /// Messages lost per million; the validator sees every loss only as a delivery that never
    /// came.
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = within(0u64, 1_000_000))]
    pub(crate) loss_per_million: u64,
    /// Buckets with slow followers per million.
    #[arg(long, value_name = "N", default_value_t = 10_000, value_parser = within(0u64, 1_000_000))]
    pub(crate) slow_per_million: u64,
    /// Once this process has made N store operations (reads included), it sends itself SIGKILL:
    /// nothing is flushed or closed, the input in hand is cut off. Run again on the same store
    /// (and --log) to recover; the process-crash tests do
    /// (conformance/tests/integration/validate.rs).
    #[arg(long = "kill-at-store-op", value_name = "N", value_parser = count_from_one)]
    pub(crate) kill_at: Option<u64>,
    /// The manager's normal execution slots (spec 6): how many buckets move at once, so how
    /// many writes one round of messages makes, which is what group commit can batch.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = within(1, MAX_BUCKETS as usize))]
    pub(crate) max_inflight: usize,
    /// Group commit (spec/protocol.md, "Group commit"): gather up to N writes of many inputs
    /// into one durable operation (one fsync, or one ZooKeeper multi-op, at most 1000 writes),
    /// and release each input's messages, events and replies only once its writes are durable.
    /// 1 is one write at a time, nothing held.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = within(1, MAX_BUCKETS as usize))]
    pub(crate) group_commit: usize,
    /// With --group-commit, flush once the oldest held input has waited L ms, even if the batch
    /// is not full; the host also flushes whenever it has no other input to take.
    #[arg(long, value_name = "L", default_value_t = 5)]
    pub(crate) commit_latency_ms: u64,
    /// The Nth batch fails before anything of it is written: the incarnation stops, its held
    /// effects and event queue are dropped, and a new one recovers from the store (a lost
    /// batch). Needs --group-commit N with N > 1.
    #[arg(long, value_name = "N", value_parser = count_from_one)]
    pub(crate) fail_flush_at: Option<u64>,
    /// Put an old manager bug back into every incarnation, so that a check can be seen to catch
    /// it from the log alone (`rebalance-conformance validate`): leader-only-any-ack, R12
    /// completing a leader-only bucket on any replica's ack (apache/fluss#3555). The run itself
    /// still ends as the bug lets it.
    #[arg(long, value_name = "BUG", value_parser = planted)]
    pub(crate) plant: Option<PlantedBug>,
}

fn planted(v: &str) -> Result<PlantedBug, String> {
    match v {
        "leader-only-any-ack" => Ok(PlantedBug::LeaderOnlyAckFromAnyReplica),
        _ => Err("expected leader-only-any-ack".into()),
    }
}

#[derive(Clone)]
pub(crate) enum StoreArg {
    File(String),
    Zk(String),
}

fn store(v: &str) -> Result<StoreArg, String> {
    if let Some(dir) = v.strip_prefix("file:") {
        if dir.is_empty() {
            return Err("file:DIR needs a directory".into());
        }
        Ok(StoreArg::File(dir.to_string()))
    } else if let Some(addr) = v.strip_prefix("zk:") {
        rebalance_stores::zk::parse_addr(addr).map_err(|e| e.to_string())?;
        Ok(StoreArg::Zk(addr.to_string()))
    } else {
        Err("expected file:DIR or zk:HOST:PORT".into())
    }
}

/// The command line, or the process ends: with `--help` or `--version` (exit 0), or with a
/// usage error (exit 2), the flags that cannot go together included.
pub(crate) fn parse() -> Args {
    let args = Args::parse();
    if let Err((kind, why)) = combination(&args) {
        Args::command().error(kind, why).exit();
    }
    args
}

/// A flag that stops ZooKeeper servers needs a ZkStore and the script that stops them; each
/// message names the flag.
fn stops_zk_servers(
    args: &Args,
    without_zk: &'static str,
    without_script: &'static str,
) -> Result<(), (ErrorKind, &'static str)> {
    if !matches!(args.store, StoreArg::Zk(_)) {
        return Err((ErrorKind::MissingRequiredArgument, without_zk));
    }
    if std::env::var_os("ZK_SCRIPT").is_none() {
        return Err((ErrorKind::MissingRequiredArgument, without_script));
    }
    Ok(())
}

/// What the flags' types cannot say: the ones that need another, or exclude one.
fn combination(args: &Args) -> Result<(), (ErrorKind, &'static str)> {
    if args.zk_outage_at.is_some() {
        stops_zk_servers(
            args,
            "--zk-outage-at needs --store zk:HOST:PORT",
            "--zk-outage-at needs ZK_SCRIPT: run under scripts/with-zookeeper.sh",
        )?;
    }
    if args.zk_kill_leader_at.is_some() {
        stops_zk_servers(
            args,
            "--zk-kill-leader-at needs --store zk:HOST:PORT,... (an ensemble)",
            "--zk-kill-leader-at needs ZK_SCRIPT: run under scripts/with-zookeeper.sh --ensemble 3",
        )?;
        if args.zk_outage_at.is_some() {
            return Err((
                ErrorKind::ArgumentConflict,
                "--zk-kill-leader-at and --zk-outage-at stop the same servers: use one",
            ));
        }
    }
    if args.group_commit == 1 && args.fail_flush_at.is_some() {
        return Err((
            ErrorKind::MissingRequiredArgument,
            "--fail-flush-at needs --group-commit N with N > 1",
        ));
    }
    if args.group_commit > 1 && args.kill_at.is_some() {
        // A kill between a flush and the log records of its inputs leaves several inputs durable
        // and unlogged, which the validator cannot explain (it allows one input cut short).
        return Err((
            ErrorKind::ArgumentConflict,
            "--kill-at-store-op counts single writes: use it without --group-commit",
        ));
    }
    Ok(())
}
