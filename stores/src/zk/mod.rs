//! `ZkStore`: the storage port over Apache ZooKeeper, the store Fluss keeps its coordinator
//! state in.
//!
//! # Layout (spec/fluss-mapping.md, "ZooKeeper node layout of ZkStore")
//! Under a root (default `/fluss-rebalance`): the root's data is the layout header;
//! `coordinator_epoch` holds the epoch, and its data version always equals `epoch - epoch_base`;
//! `task` is the task node; `plans/plan-<seq>/<i>` are the chunks of the task's plan;
//! `buckets/p<page>/<b>` is bucket `b`'s assignment and LeaderAndIsr in one node (D15), and
//! `buckets/p<page>/d<b>` its deleted marker, `bucket_page` buckets to a page.
//!
//! # Fencing (D7)
//! Every write is one multi-op whose first operation checks the `coordinator_epoch` node's data
//! version against the writer's epoch, so a deposed coordinator's write fails as a whole with
//! [`StoreError::Fenced`] and changes nothing. `elect_coordinator` is a conditional increment: a
//! `setData` of the epoch node at the version just read.
//!
//! # Failures
//! Every call waits for ZooKeeper's answer (no write is acknowledged before ZooKeeper has
//! acknowledged it) and at most [`ZkStoreOptions::op_timeout`]. Connection loss and timeouts are
//! [`StoreError::Unavailable`]; session expiry is [`StoreError::SessionExpired`] (the next call
//! opens a new session). A write whose outcome is unknown (its answer was lost) is "in doubt":
//! before its next operation the store reads the node back and, if the write landed after all,
//! undoes it with a fenced write, so that a failed call has changed nothing, as the port
//! requires. Until the doubt is resolved every operation fails with the same typed errors.
//!
//! The client is async; the store owns a tokio runtime with one worker thread and blocks on each
//! call, so the core's port stays synchronous. One worker, not a current-thread runtime, because
//! the session must keep sending heartbeats between the manager's calls.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use tokio::runtime::Runtime;
use zookeeper_client as zk;

use rebalance_manager::store::{ClusterState, PersistedState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Epoch, Plan, TaskNode};

use crate::crc32::crc32;
use crate::header::{check_header, HeaderFault};

pub mod codec;
mod doubt;
mod error;

use codec::{
    decode, encode, page_child, DeletedMarker, EpochNode, PageChild, Paths, PlanChunk, PlanRef,
    RootHeader, TaskHeader, FORMAT, PLAN_CHUNK_BYTES, VERSION,
};
use doubt::{decide, Decision, InDoubt, Known, Target, Undo};
use error::Fail;
pub use error::ZkStoreError;

/// The default root node.
pub const DEFAULT_ROOT: &str = "/fluss-rebalance";

/// Operations per multi request when pages are read or a store is populated (keeps every
/// request and response far below ZooKeeper's 1 MiB `jute.maxbuffer`).
const BATCH_OPS: usize = 500;

/// Tuning of a [`ZkStore`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ZkStoreOptions {
    /// The session timeout asked of the server.
    pub session_timeout: Duration,
    /// The longest a store call waits for one ZooKeeper answer before it fails with
    /// [`StoreError::Unavailable`].
    pub op_timeout: Duration,
    /// Buckets per page node (used by `create`; `open` reads it from the root header).
    pub bucket_page: u32,
}

impl Default for ZkStoreOptions {
    fn default() -> Self {
        ZkStoreOptions {
            session_timeout: Duration::from_secs(10),
            op_timeout: Duration::from_secs(5),
            bucket_page: 1000,
        }
    }
}

/// What the store knows of the task node.
#[derive(Clone, Debug)]
enum TaskCache {
    /// Not read yet.
    Unknown,
    /// There is no task node.
    Absent,
    /// The task node, its header and its plan (the `Arc` handed out, so that a status-only
    /// rewrite of the same plan is recognised and does not rewrite the chunks).
    Present {
        known: Known,
        header: TaskHeader,
        plan: Arc<Plan>,
    },
}

/// One operation of a multi-op, after the epoch check.
enum Op<'a> {
    Create(&'a str, &'a [u8], zk::CreateMode),
    Set(&'a str, &'a [u8], i32),
    Delete(&'a str, i32),
}

/// Why a fenced multi-op failed.
enum WriteFail {
    /// The whole request failed with this port error (fenced, unavailable, ...).
    Store(StoreError),
    /// An operation after the check failed with this client error (the check passed).
    Op(zk::Error),
}

impl From<StoreError> for WriteFail {
    fn from(e: StoreError) -> Self {
        WriteFail::Store(e)
    }
}

impl WriteFail {
    /// The port's error for a failed fenced write of the node `path`: the request's own error
    /// as it is, and an operation's failure after the epoch check passed (a version or
    /// existence condition of `path` did not hold) as [`StoreError::Conflict`]. The one place
    /// this mapping is made; callers that read an operation's failure otherwise match it first.
    fn into_store_error(self, path: &str) -> StoreError {
        match self {
            WriteFail::Store(e) => e,
            WriteFail::Op(e) => StoreError::Conflict(format!("{path} ({e})")),
        }
    }
}

/// The store over ZooKeeper. See the module documentation.
pub struct ZkStore {
    rt: Runtime,
    addr: String,
    options: ZkStoreOptions,
    paths: Paths,
    epoch_base: u64,
    client: Option<zk::Client>,
    buckets: BTreeMap<BucketId, Known>,
    deleted: BTreeSet<BucketId>,
    task: TaskCache,
    in_doubt: Option<InDoubt>,
    acknowledged_writes: u64,
}

impl std::fmt::Debug for ZkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkStore")
            .field("addr", &self.addr)
            .field("root", &self.paths.root)
            .field("connected", &self.client.is_some())
            .field("in_doubt", &self.in_doubt.as_ref().map(|d| &d.path))
            .finish()
    }
}

/// Checks `HOST:PORT` (no chroot, no list: one server or one name for an ensemble).
pub fn parse_addr(addr: &str) -> Result<String, ZkStoreError> {
    let bad = || ZkStoreError::BadAddress(addr.to_string());
    let (host, port) = addr.rsplit_once(':').ok_or_else(bad)?;
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'));
    match port.parse::<u16>() {
        Ok(p) if p > 0 && host_ok => Ok(addr.to_string()),
        _ => Err(bad()),
    }
}

fn check_root(root: &str) -> Result<(), ZkStoreError> {
    let ok = root.len() > 1
        && root.starts_with('/')
        && !root.ends_with('/')
        && !root.contains("//")
        && root
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ZkStoreError::BadRoot(root.to_string()))
    }
}

fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

impl ZkStore {
    fn new_unopened(addr: &str, root: &str, options: ZkStoreOptions) -> Result<Self, ZkStoreError> {
        let addr = parse_addr(addr)?;
        check_root(root)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("zk-store")
            .enable_all()
            .build()
            .map_err(|e| ZkStoreError::Zk {
                op: "starting the client runtime".into(),
                detail: e.to_string(),
            })?;
        let mut store = ZkStore {
            rt,
            addr,
            paths: Paths {
                root: root.to_string(),
                bucket_page: options.bucket_page.max(1),
            },
            options,
            epoch_base: 0,
            client: None,
            buckets: BTreeMap::new(),
            deleted: BTreeSet::new(),
            task: TaskCache::Unknown,
            in_doubt: None,
            acknowledged_writes: 0,
        };
        store.connect().map_err(|e| ZkStoreError::Unreachable {
            addr: store.addr.clone(),
            detail: e.to_string(),
        })?;
        Ok(store)
    }

    /// Opens the store under `root` on the server at `addr` (`HOST:PORT`). Reads and verifies
    /// the root header and the epoch node; reads nothing else.
    pub fn open(addr: &str, root: &str, options: ZkStoreOptions) -> Result<Self, ZkStoreError> {
        let mut s = Self::new_unopened(addr, root, options)?;
        let root = s.paths.root.clone();
        let data = match s.call(|c| c.get_data(&root)) {
            Ok((data, _)) => data,
            Err(Fail::Zk(zk::Error::NoNode)) => return Err(ZkStoreError::NotFound(root)),
            Err(e) => {
                return Err(ZkStoreError::Zk {
                    op: format!("reading {root}"),
                    detail: e.to_string(),
                })
            }
        };
        let header = read_root_header(&root, &data)?;
        s.paths.bucket_page = header.bucket_page;
        s.options.bucket_page = header.bucket_page;
        s.epoch_base = header.epoch_base;
        s.read_epoch().map_err(ZkStoreError::from)?;
        Ok(s)
    }

    /// Creates a store under `root` holding `initial` (environment setup: the cluster as it is
    /// before any coordinator ran). Fails if `root` exists. The root header is written last, so
    /// an interrupted create is refused by `open` as corrupt rather than read as a store.
    pub fn create(
        addr: &str,
        root: &str,
        initial: &PersistedState,
        options: ZkStoreOptions,
    ) -> Result<Self, ZkStoreError> {
        let mut s = Self::new_unopened(addr, root, options)?;
        let root = s.paths.root.clone();
        let setup = |e: Fail, what: &str| ZkStoreError::Zk {
            op: format!("creating {what}"),
            detail: e.to_string(),
        };
        match s.call(|c| c.create(&root, &[], &persistent())) {
            Ok(_) => {}
            Err(Fail::Zk(zk::Error::NodeExists)) => return Err(ZkStoreError::AlreadyExists(root)),
            Err(Fail::Zk(zk::Error::NoNode)) => return Err(ZkStoreError::BadRoot(root)),
            Err(e) => return Err(setup(e, &root)),
        }
        s.epoch_base = initial.coordinator_epoch;
        let epoch = encode(&EpochNode {
            epoch: initial.coordinator_epoch,
        });
        for (path, data) in [
            (s.paths.epoch(), epoch),
            (s.paths.plans(), Vec::new()),
            (s.paths.buckets(), Vec::new()),
        ] {
            s.call(|c| c.create(&path, &data, &persistent()))
                .map_err(|e| setup(e, &path))?;
        }
        s.populate(initial)?;
        if let Some(task) = &initial.task {
            s.task = TaskCache::Absent;
            s.write_task(initial.coordinator_epoch, task)?;
        }
        let header = RootHeader {
            format: FORMAT.to_string(),
            version: VERSION,
            bucket_page: s.paths.bucket_page,
            epoch_base: s.epoch_base,
        };
        let header = serde_json::to_vec(&header).expect("header serializes");
        s.call(|c| c.set_data(&root, &header, Some(0)))
            .map_err(|e| setup(e, "the root header"))?;
        s.acknowledged_writes = 0;
        Ok(s)
    }

    /// Opens the store under `root`, or creates an empty one if `root` does not exist.
    pub fn open_or_create(
        addr: &str,
        root: &str,
        options: ZkStoreOptions,
    ) -> Result<Self, ZkStoreError> {
        match Self::open(addr, root, options.clone()) {
            Err(ZkStoreError::NotFound(_)) => {
                Self::create(addr, root, &PersistedState::default(), options)
            }
            other => other,
        }
    }

    /// Deletes `root` and everything under it (environment teardown for tests and the example;
    /// not a coordinator operation and not fenced). Absent root: nothing to do.
    pub fn delete_tree(addr: &str, root: &str) -> Result<(), ZkStoreError> {
        let s = Self::new_unopened(addr, root, ZkStoreOptions::default())?;
        s.delete_recursive(root).map_err(|e| ZkStoreError::Zk {
            op: format!("deleting {root}"),
            detail: e.to_string(),
        })
    }

    fn delete_recursive(&self, path: &str) -> Result<(), Fail> {
        let children = match self.call(|c| c.list_children(path)) {
            Ok(ch) => ch,
            Err(Fail::Zk(zk::Error::NoNode)) => return Ok(()),
            Err(e) => return Err(e),
        };
        for child in children {
            self.delete_recursive(&format!("{path}/{child}"))?;
        }
        match self.call(|c| c.delete(path, None)) {
            Ok(()) | Err(Fail::Zk(zk::Error::NoNode)) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The server address.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The root node.
    pub fn root(&self) -> &str {
        &self.paths.root
    }

    /// The node of bucket `b` (for tests and tools that inspect the layout).
    pub fn bucket_path(&self, b: BucketId) -> String {
        self.paths.bucket(b)
    }

    /// The task node's path.
    pub fn task_path(&self) -> String {
        self.paths.task()
    }

    /// The coordinator-epoch node's path.
    pub fn epoch_path(&self) -> String {
        self.paths.epoch()
    }

    /// Writes that ZooKeeper acknowledged through this store (epoch, task, bucket, deleted).
    pub fn acknowledged_writes(&self) -> u64 {
        self.acknowledged_writes
    }

    /// True if a write's outcome is still unknown (resolved by the next operation).
    pub fn in_doubt(&self) -> bool {
        self.in_doubt.is_some()
    }

    /// Environment access for tests: a node's raw data, `None` if absent.
    pub fn raw_get(&mut self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.ensure_connected()?;
        match self.call(|c| c.get_data(path)) {
            Ok((data, _)) => Ok(Some(data)),
            Err(Fail::Zk(zk::Error::NoNode)) => Ok(None),
            Err(e) => Err(self.fail(e, "raw read")),
        }
    }

    /// Environment access for tests that damage nodes: overwrite a node's data, unfenced.
    pub fn raw_set(&mut self, path: &str, data: &[u8]) -> Result<(), StoreError> {
        self.ensure_connected()?;
        self.call(|c| c.set_data(path, data, None))
            .map(|_| ())
            .map_err(|e| self.fail(e, "raw write"))
    }

    /// Waits up to `limit` for this store's session to end (the client declares it expired when
    /// it could not reach the server within the session's expiry time) and says whether it did.
    /// For fault tests; the store's next call then reports [`StoreError::SessionExpired`].
    pub fn wait_for_session_end(&self, limit: Duration) -> bool {
        let Some(client) = &self.client else {
            return true;
        };
        let mut watcher = client.state_watcher();
        let ended = self.rt.block_on(async {
            tokio::time::timeout(limit, async {
                while !watcher.state().is_terminated() {
                    watcher.changed().await;
                }
            })
            .await
        });
        ended.is_ok()
    }

    // ---- connection and calls ----

    fn connect(&mut self) -> Result<(), StoreError> {
        let addr = self.addr.clone();
        let session_timeout = self.options.session_timeout;
        let connect = zk::Client::connector()
            .with_session_timeout(session_timeout)
            .with_fail_eagerly()
            .connect(&addr);
        match self
            .rt
            .block_on(async { tokio::time::timeout(self.options.op_timeout, connect).await })
        {
            Ok(Ok(client)) => {
                self.client = Some(client);
                Ok(())
            }
            Ok(Err(e)) => Err(StoreError::Unavailable(format!(
                "connecting to {addr}: {e}"
            ))),
            Err(_) => Err(StoreError::Unavailable(format!(
                "connecting to {addr}: no session within {:?}",
                self.options.op_timeout
            ))),
        }
    }

    /// A session for the next call. A session that ended since the last call is reported once
    /// as [`StoreError::SessionExpired`] (the manager counts it as a store failure, R8); the
    /// call after that opens a new session.
    fn ensure_connected(&mut self) -> Result<(), StoreError> {
        match &self.client {
            Some(c) if c.state().is_terminated() => {
                let ended = format!("session {} ended ({})", c.session_id(), c.state());
                self.client = None;
                Err(StoreError::SessionExpired(ended))
            }
            Some(_) => Ok(()),
            None => self.connect(),
        }
    }

    /// Resolves a write in doubt now, if there is one (what every operation does first).
    pub fn settle(&mut self) -> Result<(), StoreError> {
        self.prepare()
    }

    /// Runs one client call to completion or the operation timeout.
    fn call<'a, T, F, Fut>(&'a self, f: F) -> Result<T, Fail>
    where
        F: FnOnce(&'a zk::Client) -> Fut,
        Fut: Future<Output = Result<T, zk::Error>> + 'a,
    {
        let Some(client) = self.client.as_ref() else {
            return Err(Fail::Zk(zk::Error::ClientClosed));
        };
        let fut = f(client);
        match self
            .rt
            .block_on(async { tokio::time::timeout(self.options.op_timeout, fut).await })
        {
            Ok(r) => r.map_err(Fail::Zk),
            Err(_) => Err(Fail::TimedOut),
        }
    }

    /// Maps a failure to the port's error, dropping a client whose session is gone.
    fn fail(&mut self, e: Fail, what: &str) -> StoreError {
        if e.session_lost() {
            self.client = None;
        }
        e.to_store(what)
    }

    /// Before every store operation: a session, and no write in doubt.
    fn prepare(&mut self) -> Result<(), StoreError> {
        self.ensure_connected()?;
        if let Some(doubt) = self.in_doubt.clone() {
            self.resolve(doubt)?;
        }
        Ok(())
    }

    /// Settles a write whose answer was lost: reads its node back and, if the write landed,
    /// undoes it (fenced by its epoch). What the node says is decided by [`doubt::decide`].
    fn resolve(&mut self, doubt: InDoubt) -> Result<(), StoreError> {
        let read_back = match self.call(|c| c.get_data(&doubt.path)) {
            Ok((data, stat)) => Some(Known {
                version: stat.version,
                data,
            }),
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => return Err(self.fail(e, "resolving an earlier write")),
        };
        match decide(doubt.before.as_ref(), &doubt.wrote, read_back.as_ref()) {
            Decision::NotLanded => {}
            // Changed by someone else: reload it on next use.
            Decision::Unknown => self.forget(doubt.target),
            Decision::Landed { undo } => {
                let op = match &undo {
                    Undo::Restore { version, data } => Op::Set(&doubt.path, data, *version),
                    Undo::Delete { version } => Op::Delete(&doubt.path, *version),
                };
                match self.multi(doubt.epoch, &[op], None) {
                    Ok(_) => {}
                    // A newer coordinator owns the store: it reloads everything, nothing to undo
                    // for.
                    Err(WriteFail::Store(StoreError::Fenced { .. })) => {
                        self.in_doubt = None;
                        self.forget(doubt.target);
                        return Ok(());
                    }
                    Err(f) => return Err(f.into_store_error(&doubt.path)),
                }
                self.remember(doubt.target, undo.after());
            }
        }
        self.in_doubt = None;
        Ok(())
    }

    /// Updates the cache of `target` after a write (`None`: the node is gone).
    fn remember(&mut self, target: Target, known: Option<Known>) {
        match (target, known) {
            (Target::Bucket(b), Some(k)) => {
                self.buckets.insert(b, k);
            }
            (Target::Bucket(b), None) => {
                self.buckets.remove(&b);
            }
            (Target::Deleted(b), Some(_)) => {
                self.deleted.insert(b);
            }
            (Target::Deleted(b), None) => {
                self.deleted.remove(&b);
            }
            (Target::Task, _) => self.task = TaskCache::Unknown,
        }
    }

    fn forget(&mut self, target: Target) {
        match target {
            Target::Bucket(b) => {
                self.buckets.remove(&b);
            }
            Target::Deleted(b) => {
                self.deleted.remove(&b);
            }
            Target::Task => self.task = TaskCache::Unknown,
        }
    }

    /// The store's coordinator epoch and the epoch node's data version.
    fn read_epoch(&mut self) -> Result<(Epoch, i32), StoreError> {
        let path = self.paths.epoch();
        let (data, stat) = match self.call(|c| c.get_data(&path)) {
            Ok(r) => r,
            Err(Fail::Zk(zk::Error::NoNode)) => {
                return Err(StoreError::Corrupt {
                    node: path,
                    detail: "missing".into(),
                })
            }
            Err(e) => return Err(self.fail(e, "reading the coordinator epoch")),
        };
        let node: EpochNode = decode(&path, &data)?;
        if node.epoch != self.epoch_base + stat.version as u64 {
            return Err(StoreError::Corrupt {
                node: path,
                detail: format!(
                    "epoch {} but data version {} (base {})",
                    node.epoch, stat.version, self.epoch_base
                ),
            });
        }
        Ok((node.epoch, stat.version))
    }

    /// One multi-op: check that the epoch node is at `writer_epoch`, then `ops`. On an unknown
    /// outcome, `doubt` is remembered and resolved before the next operation.
    fn multi(
        &mut self,
        writer_epoch: Epoch,
        ops: &[Op<'_>],
        doubt: Option<InDoubt>,
    ) -> Result<Vec<zk::MultiWriteResult>, WriteFail> {
        let epoch_path = self.paths.epoch();
        let version = writer_epoch
            .checked_sub(self.epoch_base)
            .and_then(|v| i32::try_from(v).ok());
        let Some(version) = version else {
            let (store_epoch, _) = self.read_epoch()?;
            return Err(WriteFail::Store(StoreError::Fenced {
                writer_epoch,
                store_epoch,
            }));
        };
        let Some(client) = self.client.as_ref() else {
            return Err(WriteFail::Store(StoreError::Unavailable(
                "no session".into(),
            )));
        };
        let mut w = client.new_multi_writer();
        let build = (|| {
            w.add_check_version(&epoch_path, version)?;
            for op in ops {
                match op {
                    Op::Create(p, d, mode) => {
                        w.add_create(p, d, &mode.with_acls(zk::Acls::anyone_all()))?
                    }
                    Op::Set(p, d, v) => w.add_set_data(p, d, Some(*v))?,
                    Op::Delete(p, v) => w.add_delete(p, Some(*v))?,
                }
            }
            Ok::<(), zk::Error>(())
        })();
        if let Err(e) = build {
            return Err(WriteFail::Store(StoreError::Io(format!(
                "building a ZooKeeper request: {e}"
            ))));
        }
        let commit = w.commit();
        let answer = self
            .rt
            .block_on(async { tokio::time::timeout(self.options.op_timeout, commit).await });
        match answer {
            Ok(Ok(results)) => Ok(results.into_iter().skip(1).collect()),
            Ok(Err(zk::MultiWriteError::OperationFailed { index: 0, source })) => match source {
                zk::Error::BadVersion => {
                    let (store_epoch, _) = self.read_epoch()?;
                    Err(WriteFail::Store(StoreError::Fenced {
                        writer_epoch,
                        store_epoch,
                    }))
                }
                zk::Error::NoNode => Err(WriteFail::Store(StoreError::Corrupt {
                    node: epoch_path,
                    detail: "missing".into(),
                })),
                e => Err(WriteFail::Store(self.fail(Fail::Zk(e), "a fenced write"))),
            },
            Ok(Err(zk::MultiWriteError::OperationFailed { source, .. })) => {
                Err(WriteFail::Op(source))
            }
            Ok(Err(zk::MultiWriteError::RequestFailed { source })) => {
                let f = Fail::Zk(source);
                if f.outcome_unknown() && doubt.is_some() {
                    self.in_doubt = doubt;
                }
                Err(WriteFail::Store(self.fail(f, "a fenced write")))
            }
            Err(_) => {
                if doubt.is_some() {
                    self.in_doubt = doubt;
                }
                Err(WriteFail::Store(Fail::TimedOut.to_store("a fenced write")))
            }
        }
    }

    /// Makes sure the cache knows whether bucket `b`'s node exists and at which version.
    fn ensure_bucket_known(&mut self, b: BucketId) -> Result<(), StoreError> {
        if self.buckets.contains_key(&b) {
            return Ok(());
        }
        let path = self.paths.bucket(b);
        match self.call(|c| c.get_data(&path)) {
            Ok((data, stat)) => {
                // Never overwrite a record this build cannot read.
                let _: BucketRecord = decode(&path, &data)?;
                self.buckets.insert(
                    b,
                    Known {
                        version: stat.version,
                        data,
                    },
                );
                Ok(())
            }
            Err(Fail::Zk(zk::Error::NoNode)) => Ok(()),
            Err(e) => Err(self.fail(e, "reading a bucket")),
        }
    }

    /// Creates `path` (and its page node if missing) in one fenced multi-op.
    fn create_in_page(
        &mut self,
        writer_epoch: Epoch,
        b: BucketId,
        path: &str,
        data: &[u8],
        target: Target,
    ) -> Result<i32, StoreError> {
        let doubt = InDoubt {
            target,
            path: path.to_string(),
            wrote: data.to_vec(),
            before: None,
            epoch: writer_epoch,
        };
        let ops = [Op::Create(path, data, zk::CreateMode::Persistent)];
        match self.multi(writer_epoch, &ops, Some(doubt.clone())) {
            Ok(_) => return Ok(0),
            // No page node yet: create it with the node, below.
            Err(WriteFail::Op(zk::Error::NoNode)) => {}
            Err(f) => return Err(f.into_store_error(path)),
        }
        let page = self.paths.page_of(b);
        let ops = [
            Op::Create(&page, &[], zk::CreateMode::Persistent),
            Op::Create(path, data, zk::CreateMode::Persistent),
        ];
        self.multi(writer_epoch, &ops, Some(doubt))
            .map(|_| 0)
            .map_err(|f| f.into_store_error(path))
    }

    /// Environment setup of `create`: the initial buckets and deleted markers, in batches of
    /// creates (not fenced: nobody else knows the root yet).
    fn populate(&mut self, initial: &PersistedState) -> Result<(), ZkStoreError> {
        let mut nodes: Vec<(String, Vec<u8>)> = Vec::new();
        let mut pages = BTreeSet::new();
        for (b, rec) in &initial.cluster.buckets {
            pages.insert(b / self.paths.bucket_page);
            nodes.push((self.paths.bucket(*b), encode(rec)));
        }
        for b in &initial.cluster.deleted {
            pages.insert(b / self.paths.bucket_page);
            nodes.push((self.paths.deleted(*b), encode(&DeletedMarker {})));
        }
        let page_nodes: Vec<(String, Vec<u8>)> = pages
            .into_iter()
            .map(|p| (format!("{}/p{p}", self.paths.buckets()), Vec::new()))
            .collect();
        for batch in page_nodes.chunks(BATCH_OPS).chain(nodes.chunks(BATCH_OPS)) {
            let client = self.client.as_ref().expect("connected by new_unopened");
            let mut w = client.new_multi_writer();
            for (path, data) in batch {
                w.add_create(path, data, &persistent())
                    .map_err(|e| ZkStoreError::Zk {
                        op: format!("creating {path}"),
                        detail: e.to_string(),
                    })?;
            }
            let commit = w.commit();
            let r = self
                .rt
                .block_on(async { tokio::time::timeout(self.options.op_timeout, commit).await });
            match r {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    return Err(ZkStoreError::Zk {
                        op: "creating the initial buckets".into(),
                        detail: e.to_string(),
                    })
                }
                Err(_) => {
                    return Err(ZkStoreError::Zk {
                        op: "creating the initial buckets".into(),
                        detail: "no answer in time".into(),
                    })
                }
            }
        }
        Ok(())
    }

    /// Reads every child of `dir` with multi-reads of at most [`BATCH_OPS`] nodes.
    fn read_children(&mut self, dir: &str) -> Result<Vec<(String, Vec<u8>, i32)>, StoreError> {
        let names = match self.call(|c| c.list_children(dir)) {
            Ok(n) => n,
            Err(e) => return Err(self.fail(e, "listing a page")),
        };
        let mut out = Vec::with_capacity(names.len());
        for batch in names.chunks(BATCH_OPS) {
            let r = self.call(|c| {
                let mut reader = c.new_multi_reader();
                let mut added = Ok(());
                for name in batch {
                    if added.is_ok() {
                        added = reader.add_get_data(&format!("{dir}/{name}"));
                    }
                }
                let commit = reader.commit();
                async move {
                    added?;
                    commit.await
                }
            });
            let results = match r {
                Ok(r) => r,
                Err(e) => return Err(self.fail(e, "reading a page")),
            };
            if results.len() != batch.len() {
                return Err(StoreError::Io(format!(
                    "ZooKeeper answered {} reads for {} in {dir}",
                    results.len(),
                    batch.len()
                )));
            }
            for (name, result) in batch.iter().zip(results) {
                match result {
                    zk::MultiReadResult::Data { data, stat } => {
                        out.push((name.clone(), data, stat.version))
                    }
                    zk::MultiReadResult::Error { err } => {
                        return Err(StoreError::Io(format!("reading {dir}/{name}: {err}")))
                    }
                    other => {
                        return Err(StoreError::Io(format!(
                            "reading {dir}/{name}: unexpected answer {other:?}"
                        )))
                    }
                }
            }
        }
        Ok(out)
    }

    /// Writes `plan` as chunk nodes under a new sequential directory; returns a `PlanRef` to them.
    fn write_plan(&mut self, writer_epoch: Epoch, plan: &Plan) -> Result<PlanRef, StoreError> {
        let mut chunks: Vec<Vec<u8>> = Vec::new();
        let mut current: PlanChunk = Vec::new();
        let mut current_bytes = 0usize;
        for entry in &plan.buckets {
            let size = serde_json::to_vec(entry).map(|v| v.len()).unwrap_or(0) + 1;
            if !current.is_empty() && current_bytes + size > PLAN_CHUNK_BYTES {
                chunks.push(encode(&current));
                current.clear();
                current_bytes = 0;
            }
            current.push(entry.clone());
            current_bytes += size;
        }
        if !current.is_empty() || chunks.is_empty() {
            chunks.push(encode(&current));
        }
        let all: Vec<u8> = chunks.concat();
        let prefix = format!("{}/plan-", self.paths.plans());
        let ops = [Op::Create(
            &prefix,
            &[],
            zk::CreateMode::PersistentSequential,
        )];
        let dir = match self.multi(writer_epoch, &ops, None) {
            Ok(r) => match r.into_iter().next() {
                Some(zk::MultiWriteResult::Create { path, .. }) => path,
                other => {
                    return Err(StoreError::Io(format!(
                        "unexpected answer to a create: {other:?}"
                    )))
                }
            },
            // The check passed but the sequential create failed: the plans node is missing.
            Err(WriteFail::Op(e)) => {
                return Err(StoreError::Corrupt {
                    node: self.paths.plans(),
                    detail: e.to_string(),
                })
            }
            Err(f) => return Err(f.into_store_error(&prefix)),
        };
        let dir = dir.rsplit('/').next().unwrap_or_default().to_string();
        for (i, chunk) in chunks.iter().enumerate() {
            let path = self.paths.plan_chunk(&dir, i);
            let ops = [Op::Create(&path, chunk, zk::CreateMode::Persistent)];
            self.multi(writer_epoch, &ops, None)
                .map_err(|f| f.into_store_error(&path))?;
        }
        Ok(PlanRef {
            dir,
            entries: plan.len(),
            chunks: chunks.len(),
            crc32: crc32(&all),
        })
    }

    /// Reads the plan `r` refers to and verifies its size and checksum.
    fn read_plan(&mut self, r: &PlanRef) -> Result<Plan, StoreError> {
        let mut all = Vec::new();
        let mut entries: Vec<_> = Vec::with_capacity(r.entries);
        for i in 0..r.chunks {
            let path = self.paths.plan_chunk(&r.dir, i);
            let data = match self.call(|c| c.get_data(&path)) {
                Ok((data, _)) => data,
                Err(Fail::Zk(zk::Error::NoNode)) => {
                    return Err(StoreError::Corrupt {
                        node: path,
                        detail: "plan chunk missing".into(),
                    })
                }
                Err(e) => return Err(self.fail(e, "reading the plan")),
            };
            let chunk: PlanChunk = decode(&path, &data)?;
            entries.extend(chunk);
            all.extend_from_slice(&data);
        }
        let task = self.paths.task();
        if crc32(&all) != r.crc32 || entries.len() != r.entries {
            return Err(StoreError::Corrupt {
                node: task,
                detail: format!(
                    "plan {} does not verify ({} entries, {} expected, or checksum)",
                    r.dir,
                    entries.len(),
                    r.entries
                ),
            });
        }
        Ok(Plan::new(entries))
    }

    /// Reads the task node (and its plan) into the cache.
    fn load_task(&mut self) -> Result<(), StoreError> {
        let path = self.paths.task();
        let (data, stat) = match self.call(|c| c.get_data(&path)) {
            Ok(r) => r,
            Err(Fail::Zk(zk::Error::NoNode)) => {
                self.task = TaskCache::Absent;
                return Ok(());
            }
            Err(e) => return Err(self.fail(e, "reading the task")),
        };
        let header: TaskHeader = decode(&path, &data)?;
        let plan = Arc::new(self.read_plan(&header.plan)?);
        self.task = TaskCache::Present {
            known: Known {
                version: stat.version,
                data,
            },
            header,
            plan,
        };
        Ok(())
    }

    /// Removes plan directories other than `keep` (best effort: orphans of failed or replaced
    /// writes; fenced like every write).
    fn collect_plans(&mut self, writer_epoch: Epoch, keep: &str) {
        let plans = self.paths.plans();
        let Ok(dirs) = self.call(|c| c.list_children(&plans)) else {
            return;
        };
        for dir in dirs.into_iter().filter(|d| d != keep) {
            let dir_path = format!("{plans}/{dir}");
            let Ok(chunks) = self.call(|c| c.list_children(&dir_path)) else {
                continue;
            };
            let paths: Vec<String> = chunks.iter().map(|c| format!("{dir_path}/{c}")).collect();
            let mut ops: Vec<Op<'_>> = paths.iter().map(|p| Op::Delete(p, -1)).collect();
            ops.push(Op::Delete(&dir_path, -1));
            let _ = self.multi(writer_epoch, &ops, None);
        }
    }
}

fn read_root_header(root: &str, data: &[u8]) -> Result<RootHeader, ZkStoreError> {
    let corrupt = |detail: String| ZkStoreError::Corrupt {
        node: root.to_string(),
        detail,
    };
    if data.is_empty() {
        return Err(corrupt(
            "no layout header (an interrupted create, or not a rebalance store)".into(),
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(data).map_err(|e| corrupt(format!("header is not JSON: {e}")))?;
    match check_header(&value, FORMAT, VERSION) {
        Ok(()) => {}
        Err(HeaderFault::NotOurs) => {
            return Err(corrupt("not a rebalance store (format field)".into()))
        }
        Err(HeaderFault::NoVersion) => return Err(corrupt("header has no version".into())),
        Err(HeaderFault::Unsupported(version)) => {
            return Err(ZkStoreError::UnsupportedVersion {
                node: root.to_string(),
                version,
            })
        }
    }
    let h: RootHeader =
        serde_json::from_value(value).map_err(|e| corrupt(format!("header: {e}")))?;
    if h.bucket_page == 0 {
        return Err(corrupt("bucket_page is 0".into()));
    }
    Ok(h)
}

impl Store for ZkStore {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.prepare()?;
        let path = self.paths.epoch();
        // A conditional increment: set at the version just read; a concurrent election makes
        // it fail with BadVersion, and the next try reads the new epoch.
        for _ in 0..3 {
            let (epoch, version) = self.read_epoch()?;
            let next = epoch + 1;
            if i32::try_from(next - self.epoch_base).is_err() {
                return Err(StoreError::Corrupt {
                    node: path,
                    detail: "epoch overflows the node's data version".into(),
                });
            }
            let data = encode(&EpochNode { epoch: next });
            match self.call(|c| c.set_data(&path, &data, Some(version))) {
                Ok(_) => {
                    self.acknowledged_writes += 1;
                    return Ok(next);
                }
                Err(Fail::Zk(zk::Error::BadVersion)) => continue,
                Err(e) => return Err(self.fail(e, "electing a coordinator")),
            }
        }
        Err(StoreError::Unavailable(
            "coordinator election raced three times; retry".into(),
        ))
    }

    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.prepare()?;
        let buckets_dir = self.paths.buckets();
        let mut pages: Vec<(u32, String)> = Vec::new();
        let names = match self.call(|c| c.list_children(&buckets_dir)) {
            Ok(n) => n,
            Err(e) => return Err(self.fail(e, "listing bucket pages")),
        };
        for name in names {
            match name.strip_prefix('p').and_then(|n| n.parse().ok()) {
                Some(p) => pages.push((p, name)),
                None => {
                    return Err(StoreError::Corrupt {
                        node: format!("{buckets_dir}/{name}"),
                        detail: "not a page node".into(),
                    })
                }
            }
        }
        pages.sort();
        let mut cluster = ClusterState::default();
        let mut known = BTreeMap::new();
        let mut deleted = BTreeSet::new();
        for (_, page) in pages {
            let dir = format!("{buckets_dir}/{page}");
            for (name, data, version) in self.read_children(&dir)? {
                let node = format!("{dir}/{name}");
                match page_child(&name) {
                    Some(PageChild::Bucket(b)) => {
                        let rec: BucketRecord = decode(&node, &data)?;
                        cluster.buckets.insert(b, rec);
                        known.insert(b, Known { version, data });
                    }
                    Some(PageChild::Deleted(b)) => {
                        let _: DeletedMarker = decode(&node, &data)?;
                        cluster.deleted.insert(b);
                        deleted.insert(b);
                    }
                    None => {
                        return Err(StoreError::Corrupt {
                            node,
                            detail: "not a bucket or deleted-marker node".into(),
                        })
                    }
                }
            }
        }
        self.buckets = known;
        self.deleted = deleted;
        Ok(cluster)
    }

    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        self.prepare()?;
        self.load_task()?;
        Ok(match &self.task {
            TaskCache::Present { header, plan, .. } => Some(TaskNode {
                id: header.id,
                status: header.status,
                cancel_requested: header.cancel_requested,
                plan: Arc::clone(plan),
            }),
            _ => None,
        })
    }

    fn write_task(&mut self, writer_epoch: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        self.prepare()?;
        if matches!(self.task, TaskCache::Unknown) {
            self.load_task()?;
        }
        let (before, same_plan) = match &self.task {
            TaskCache::Present {
                known,
                header,
                plan,
            } => (
                Some(known.clone()),
                (header.id == task.id && Arc::ptr_eq(plan, &task.plan))
                    .then(|| header.plan.clone()),
            ),
            _ => (None, None),
        };
        let new_plan = same_plan.is_none();
        let plan_ref = match same_plan {
            Some(r) => r,
            None => self.write_plan(writer_epoch, &task.plan)?,
        };
        let header = TaskHeader {
            id: task.id,
            status: task.status,
            cancel_requested: task.cancel_requested,
            plan: plan_ref,
        };
        let data = encode(&header);
        let path = self.paths.task();
        let doubt = InDoubt {
            target: Target::Task,
            path: path.clone(),
            wrote: data.clone(),
            before: before.clone(),
            epoch: writer_epoch,
        };
        let op = match &before {
            Some(k) => Op::Set(&path, &data, k.version),
            None => Op::Create(&path, &data, zk::CreateMode::Persistent),
        };
        if let Err(f) = self.multi(writer_epoch, &[op], Some(doubt)) {
            if matches!(f, WriteFail::Op(_)) {
                // The task node is not as cached: read it again on next use.
                self.task = TaskCache::Unknown;
            }
            return Err(f.into_store_error(&path));
        }
        self.acknowledged_writes += 1;
        let keep = header.plan.dir.clone();
        self.task = TaskCache::Present {
            known: Known {
                version: before.map_or(0, |k| k.version + 1),
                data,
            },
            header,
            plan: Arc::clone(&task.plan),
        };
        if new_plan {
            self.collect_plans(writer_epoch, &keep);
        }
        Ok(())
    }

    fn write_bucket(
        &mut self,
        writer_epoch: Epoch,
        bucket: BucketId,
        record: &BucketRecord,
    ) -> Result<(), StoreError> {
        self.prepare()?;
        self.ensure_bucket_known(bucket)?;
        let path = self.paths.bucket(bucket);
        let data = encode(record);
        let version = match self.buckets.get(&bucket).cloned() {
            Some(before) => {
                let doubt = InDoubt {
                    target: Target::Bucket(bucket),
                    path: path.clone(),
                    wrote: data.clone(),
                    before: Some(before.clone()),
                    epoch: writer_epoch,
                };
                let ops = [Op::Set(&path, &data, before.version)];
                match self.multi(writer_epoch, &ops, Some(doubt)) {
                    Ok(_) => before.version + 1,
                    Err(f) => {
                        if matches!(f, WriteFail::Op(_)) {
                            // The node is not as cached: read it again on next use.
                            self.buckets.remove(&bucket);
                        }
                        return Err(f.into_store_error(&path));
                    }
                }
            }
            None => {
                self.create_in_page(writer_epoch, bucket, &path, &data, Target::Bucket(bucket))?
            }
        };
        self.buckets.insert(bucket, Known { version, data });
        self.acknowledged_writes += 1;
        Ok(())
    }

    fn mark_deleted(&mut self, writer_epoch: Epoch, bucket: BucketId) -> Result<(), StoreError> {
        self.prepare()?;
        let path = self.paths.deleted(bucket);
        let data = encode(&DeletedMarker {});
        if self.deleted.contains(&bucket) {
            // Already set: still a fenced operation, so a deposed coordinator learns it.
            self.multi(writer_epoch, &[], None)
                .map_err(|f| f.into_store_error(&path))?;
            self.acknowledged_writes += 1;
            return Ok(());
        }
        match self.create_in_page(writer_epoch, bucket, &path, &data, Target::Deleted(bucket)) {
            Ok(_) => {}
            Err(StoreError::Conflict(_)) => {
                // NodeExists: the marker was set by an earlier incarnation; the epoch check of
                // the same request passed, so this is the current coordinator's answer.
                self.deleted.insert(bucket);
                return self.mark_deleted(writer_epoch, bucket);
            }
            Err(e) => return Err(e),
        }
        self.deleted.insert(bucket);
        Ok(())
    }
}
