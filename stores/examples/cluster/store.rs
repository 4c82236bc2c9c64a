//! The stores behind one type, counted for the figures and for `--kill-at-store-op`.

use std::time::{Duration, Instant};

use rebalance_manager::{
    BatchStore, BatchedWrite, BucketId, BucketRecord, Epoch, PersistedState, Store, StoreError,
    TaskNode,
};
use rebalance_stores::zk::{ZkStore, ZkStoreError, ZkStoreOptions};
use rebalance_stores::{FileStore, FileStoreError, FileStoreOptions};

use crate::args::{Args, StoreArg};
use crate::cluster_plan::initial;
use crate::failure::Failure;

/// The simulated cluster's tablet servers: the initial state every store starts from holds
/// them, and the plans move buckets among them.
pub(crate) const SERVERS: u32 = 8;

/// `--kill-at-store-op`: the process's store operations so far, and the one after which it dies.
pub(crate) static STORE_OPS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(crate) static KILL_AT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// Counts one store operation, and dies by SIGKILL if it was the `--kill-at-store-op`th: the
/// operation's outcome is durable (or not) as the adapter left it, and nothing after it (the
/// rest of the input, its log record, its effects) happens.
pub(crate) fn store_op_done() {
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

/// `--fail-flush-at`: the batches this process has asked a store to make durable, and the one
/// that fails before it writes anything.
pub(crate) static FLUSHES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
pub(crate) static FAIL_FLUSH_AT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();

/// A store that counts and times its successful writes (the figures), around any adapter.
pub(crate) struct Counted<S> {
    pub(crate) inner: S,
    pub(crate) writes: u64,
    pub(crate) write_time: Duration,
}

impl<S: Store> Counted<S> {
    pub(crate) fn new(inner: S) -> Self {
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
pub(crate) enum AnyStore {
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

/// Group commit on either store; `--fail-flush-at` fails one batch here, before it reaches the
/// store, which the host must treat as a lost batch (a coordinator crash).
impl BatchStore for AnyStore {
    fn max_batch(&self) -> usize {
        match self {
            AnyStore::File(s) => s.max_batch(),
            AnyStore::Zk(s) => s.max_batch(),
        }
    }
    fn in_doubt(&self) -> bool {
        match self {
            AnyStore::File(s) => s.in_doubt(),
            AnyStore::Zk(s) => s.in_doubt(),
        }
    }
    fn write_batch(&mut self, e: Epoch, writes: &[BatchedWrite]) -> Result<(), StoreError> {
        let n = FLUSHES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if FAIL_FLUSH_AT.get() == Some(&n) {
            return Err(StoreError::Io(format!(
                "batch {n} failed (--fail-flush-at {n}); nothing of it was written"
            )));
        }
        match self {
            AnyStore::File(s) => s.write_batch(e, writes),
            AnyStore::Zk(s) => s.write_batch(e, writes),
        }
    }
}

/// The ZkStore's options: under an outage, or while an ensemble elects a new leader, a failed
/// operation should fail within a second, not the default five.
pub(crate) fn zk_options(args: &Args) -> ZkStoreOptions {
    match args.zk_outage_at.or(args.zk_kill_leader_at) {
        Some(_) => ZkStoreOptions {
            op_timeout: Duration::from_secs(1),
            ..ZkStoreOptions::default()
        },
        None => ZkStoreOptions::default(),
    }
}

/// Stops or starts the ZooKeeper server through scripts/with-zookeeper.sh.
pub(crate) fn zk_server(args: &[&str]) -> Result<(), Failure> {
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

pub(crate) fn open_store(args: &Args) -> Result<AnyStore, Failure> {
    let init = || initial(args.buckets, SERVERS);
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
