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
//!
//! # Where each part is
//! One file per job, each depending only on the ones before it: `codec` (each node's data and
//! path), `error` (the setup errors, and client errors as port errors), `doubt` (the pure
//! decision whether an in-doubt write landed and what undoes it), `session` (connecting,
//! session expiry, blocking on the async client), `layout` (the root header, the epoch node,
//! paged reads, populating a new store), `fenced` (the fenced multi-op and the one mapping of its
//! failure to a port error) and `plan` (the plan's chunk nodes). This file holds the store
//! itself: its caches, the glue that records and resolves a write in doubt, and the [`Store`]
//! implementation; `batch` adds group commit (many writes in one fenced multi-op,
//! [`rebalance_manager::BatchStore`]) on top of its caches.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use zookeeper_client as zk;

use rebalance_manager::store::{ClusterState, PersistedState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Epoch, Plan, TaskNode};

mod batch;
pub mod codec;
mod doubt;
mod error;
mod fenced;
mod layout;
mod plan;
mod session;

use codec::{decode, encode, page_child, DeletedMarker, EpochNode, PageChild, Paths, TaskHeader};
use doubt::{decide, Decision, InDoubt, Known, Target, Undo};
use error::Fail;
pub use error::ZkStoreError;
use fenced::{Op, WriteFail};
use layout::{check_root, persistent, read_children, read_root_header, Layout};
pub use session::parse_addr;
use session::Session;

/// The most writes in one multi-op of group commit (`batch.rs`): a bucket node's path and data
/// are about 200 bytes, so a full batch stays near 200 KB, well inside ZooKeeper's 1 MiB request
/// bound (`jute.maxbuffer`).
pub const MAX_BATCH_WRITES: usize = 1000;

/// The default root node.
pub const DEFAULT_ROOT: &str = "/fluss-rebalance";

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

/// The store over ZooKeeper. See the module documentation.
pub struct ZkStore {
    session: Session,
    layout: Layout,
    buckets: BTreeMap<BucketId, Known>,
    deleted: BTreeSet<BucketId>,
    task: TaskCache,
    in_doubt: Option<InDoubt>,
    /// A batch whose answer was lost (`write_batch`): it may have landed, and no single-node
    /// undo can take a batch back, so the store refuses everything until it is reopened.
    batch_in_doubt: Option<String>,
    acknowledged_writes: u64,
}

impl std::fmt::Debug for ZkStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ZkStore")
            .field("addr", &self.session.addr())
            .field("root", &self.layout.paths.root)
            .field("connected", &self.session.is_connected())
            .field("in_doubt", &self.in_doubt.as_ref().map(|d| &d.path))
            .finish()
    }
}

impl ZkStore {
    fn new_unopened(addr: &str, root: &str, options: ZkStoreOptions) -> Result<Self, ZkStoreError> {
        let addr = parse_addr(addr)?;
        check_root(root)?;
        let session = Session::new(addr, options.session_timeout, options.op_timeout)?;
        let mut store = ZkStore {
            session,
            layout: Layout {
                paths: Paths {
                    root: root.to_string(),
                    bucket_page: options.bucket_page.max(1),
                },
                epoch_base: 0,
            },
            buckets: BTreeMap::new(),
            deleted: BTreeSet::new(),
            task: TaskCache::Unknown,
            in_doubt: None,
            batch_in_doubt: None,
            acknowledged_writes: 0,
        };
        store
            .session
            .connect()
            .map_err(|e| ZkStoreError::Unreachable {
                addr: store.session.addr().to_string(),
                detail: e.to_string(),
            })?;
        Ok(store)
    }

    /// Opens the store under `root` on the server at `addr` (`HOST:PORT`). Reads and verifies
    /// the root header and the epoch node; reads nothing else.
    pub fn open(addr: &str, root: &str, options: ZkStoreOptions) -> Result<Self, ZkStoreError> {
        let mut s = Self::new_unopened(addr, root, options)?;
        let root = s.layout.paths.root.clone();
        let data = match s.session.call(|c| c.get_data(&root)) {
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
        s.layout.paths.bucket_page = header.bucket_page;
        s.layout.epoch_base = header.epoch_base;
        s.layout
            .read_epoch(&mut s.session)
            .map_err(ZkStoreError::from)?;
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
        let root = s.layout.paths.root.clone();
        let setup = |e: Fail, what: &str| ZkStoreError::Zk {
            op: format!("creating {what}"),
            detail: e.to_string(),
        };
        match s.session.call(|c| c.create(&root, &[], &persistent())) {
            Ok(_) => {}
            Err(Fail::Zk(zk::Error::NodeExists)) => return Err(ZkStoreError::AlreadyExists(root)),
            Err(Fail::Zk(zk::Error::NoNode)) => return Err(ZkStoreError::BadRoot(root)),
            Err(e) => return Err(setup(e, &root)),
        }
        s.layout.epoch_base = initial.coordinator_epoch;
        let epoch = encode(&EpochNode {
            epoch: initial.coordinator_epoch,
        });
        for (path, data) in [
            (s.layout.paths.epoch(), epoch),
            (s.layout.paths.plans(), Vec::new()),
            (s.layout.paths.buckets(), Vec::new()),
        ] {
            s.session
                .call(|c| c.create(&path, &data, &persistent()))
                .map_err(|e| setup(e, &path))?;
        }
        s.layout.populate(&s.session, initial)?;
        if let Some(task) = &initial.task {
            s.task = TaskCache::Absent;
            s.write_task(initial.coordinator_epoch, task)?;
        }
        let header = s.layout.root_header();
        s.session
            .call(|c| c.set_data(&root, &header, Some(0)))
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
        layout::delete_recursive(&s.session, root).map_err(|e| ZkStoreError::Zk {
            op: format!("deleting {root}"),
            detail: e.to_string(),
        })
    }

    /// The server address.
    pub fn addr(&self) -> &str {
        self.session.addr()
    }

    /// The root node.
    pub fn root(&self) -> &str {
        &self.layout.paths.root
    }

    /// The node of bucket `b` (for tests and tools that inspect the layout).
    pub fn bucket_path(&self, b: BucketId) -> String {
        self.layout.paths.bucket(b)
    }

    /// The task node's path.
    pub fn task_path(&self) -> String {
        self.layout.paths.task()
    }

    /// The coordinator-epoch node's path.
    pub fn epoch_path(&self) -> String {
        self.layout.paths.epoch()
    }

    /// Writes that ZooKeeper acknowledged through this store (epoch, task, bucket, deleted).
    pub fn acknowledged_writes(&self) -> u64 {
        self.acknowledged_writes
    }

    /// Environment access for tests: a node's raw data, `None` if absent. Only with the
    /// `testing` feature.
    #[cfg(feature = "testing")]
    pub fn raw_get(&mut self, path: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.session.ensure_connected()?;
        match self.session.call(|c| c.get_data(path)) {
            Ok((data, _)) => Ok(Some(data)),
            Err(Fail::Zk(zk::Error::NoNode)) => Ok(None),
            Err(e) => Err(self.session.fail(e, "raw read")),
        }
    }

    /// Environment access for tests that damage nodes: overwrite a node's data, unfenced. Only
    /// with the `testing` feature, as it bypasses the fencing.
    #[cfg(feature = "testing")]
    pub fn raw_set(&mut self, path: &str, data: &[u8]) -> Result<(), StoreError> {
        self.session.ensure_connected()?;
        self.session
            .call(|c| c.set_data(path, data, None))
            .map(|_| ())
            .map_err(|e| self.session.fail(e, "raw write"))
    }

    /// Waits up to `limit` for this store's session to end (the client declares it expired when
    /// it could not reach the server within the session's expiry time) and says whether it did.
    /// For fault tests (only with the `testing` feature); the store's next call then reports
    /// [`StoreError::SessionExpired`].
    #[cfg(feature = "testing")]
    pub fn wait_for_session_end(&self, limit: Duration) -> bool {
        self.session.wait_for_end(limit)
    }

    /// Resolves a write in doubt now, if there is one (what every operation does first).
    pub fn settle(&mut self) -> Result<(), StoreError> {
        self.prepare()
    }

    /// Before every store operation: a session, and no write in doubt.
    fn prepare(&mut self) -> Result<(), StoreError> {
        if let Some(why) = &self.batch_in_doubt {
            return Err(StoreError::Poisoned(why.clone()));
        }
        self.session.ensure_connected()?;
        if let Some(doubt) = self.in_doubt.clone() {
            self.resolve(doubt)?;
        }
        Ok(())
    }

    /// Settles a write whose answer was lost: reads its node back and, if the write landed,
    /// undoes it (fenced by its epoch). What the node says is decided by [`doubt::decide`].
    fn resolve(&mut self, doubt: InDoubt) -> Result<(), StoreError> {
        let read_back = match self.session.call(|c| c.get_data(&doubt.path)) {
            Ok((data, stat)) => Some(Known {
                version: stat.version,
                data,
            }),
            Err(Fail::Zk(zk::Error::NoNode)) => None,
            Err(e) => return Err(self.session.fail(e, "resolving an earlier write")),
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

    /// One fenced multi-op ([`fenced::write`]). If its outcome is unknown, `doubt` is
    /// remembered and resolved before the next operation.
    fn multi(
        &mut self,
        writer_epoch: Epoch,
        ops: &[Op<'_>],
        doubt: Option<InDoubt>,
    ) -> Result<Vec<zk::MultiWriteResult>, WriteFail> {
        let r = fenced::write(&mut self.session, &self.layout, writer_epoch, ops);
        if let (Err(WriteFail::InDoubt(_)), Some(doubt)) = (&r, doubt) {
            self.in_doubt = Some(doubt);
        }
        r
    }

    /// Makes sure the cache knows whether bucket `b`'s node exists and at which version.
    fn ensure_bucket_known(&mut self, b: BucketId) -> Result<(), StoreError> {
        if self.buckets.contains_key(&b) {
            return Ok(());
        }
        let path = self.layout.paths.bucket(b);
        match self.session.call(|c| c.get_data(&path)) {
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
            Err(e) => Err(self.session.fail(e, "reading a bucket")),
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
        let page = self.layout.paths.page_of(b);
        let ops = [
            Op::Create(&page, &[], zk::CreateMode::Persistent),
            Op::Create(path, data, zk::CreateMode::Persistent),
        ];
        self.multi(writer_epoch, &ops, Some(doubt))
            .map(|_| 0)
            .map_err(|f| f.into_store_error(path))
    }

    /// Reads the task node (and its plan) into the cache.
    fn load_task(&mut self) -> Result<(), StoreError> {
        let path = self.layout.paths.task();
        let (data, stat) = match self.session.call(|c| c.get_data(&path)) {
            Ok(r) => r,
            Err(Fail::Zk(zk::Error::NoNode)) => {
                self.task = TaskCache::Absent;
                return Ok(());
            }
            Err(e) => return Err(self.session.fail(e, "reading the task")),
        };
        let header: TaskHeader = decode(&path, &data)?;
        let plan = Arc::new(plan::read_plan(
            &mut self.session,
            &self.layout.paths,
            &header.plan,
        )?);
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
}

impl Store for ZkStore {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        self.prepare()?;
        let path = self.layout.paths.epoch();
        // A conditional increment: set at the version just read; a concurrent election makes
        // it fail with BadVersion, and the next try reads the new epoch.
        for _ in 0..3 {
            let (epoch, version) = self.layout.read_epoch(&mut self.session)?;
            let next = epoch + 1;
            if i32::try_from(next - self.layout.epoch_base).is_err() {
                return Err(StoreError::Corrupt {
                    node: path,
                    detail: "epoch overflows the node's data version".into(),
                });
            }
            let data = encode(&EpochNode { epoch: next });
            match self
                .session
                .call(|c| c.set_data(&path, &data, Some(version)))
            {
                Ok(_) => {
                    self.acknowledged_writes += 1;
                    return Ok(next);
                }
                Err(Fail::Zk(zk::Error::BadVersion)) => continue,
                Err(e) => return Err(self.session.fail(e, "electing a coordinator")),
            }
        }
        Err(StoreError::Unavailable(
            "coordinator election raced three times; retry".into(),
        ))
    }

    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        self.prepare()?;
        let buckets_dir = self.layout.paths.buckets();
        let mut pages: Vec<(u32, String)> = Vec::new();
        let names = match self.session.call(|c| c.list_children(&buckets_dir)) {
            Ok(n) => n,
            Err(e) => return Err(self.session.fail(e, "listing bucket pages")),
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
            for (name, data, version) in read_children(&mut self.session, &dir)? {
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
            None => plan::write_plan(&mut self.session, &self.layout, writer_epoch, &task.plan)?,
        };
        let header = TaskHeader {
            id: task.id,
            status: task.status,
            cancel_requested: task.cancel_requested,
            plan: plan_ref,
        };
        let data = encode(&header);
        let path = self.layout.paths.task();
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
            plan::collect_plans(&mut self.session, &self.layout, writer_epoch, &keep);
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
        let path = self.layout.paths.bucket(bucket);
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
        let path = self.layout.paths.deleted(bucket);
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
