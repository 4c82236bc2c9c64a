//! One store contract, three stores: the same tests run against `MemStore`, `FileStore` and
//! `ZkStore` (spec 3.1 and D7): round trips, versioned writes, fencing of a stale epoch,
//! recovery of every acknowledged write after a reopen, batches of writes in one operation (group
//! commit: a batch lands whole, is fenced as a whole, and through the `GroupCommit` adapter is not
//! durable before its flush), and (for the stores with a stored format) refusal of an unknown data
//! version with nothing overwritten.
//!
//! The ZooKeeper instance needs a server: `scripts/with-zookeeper.sh cargo test --workspace
//! --release` (README). Without one its tests are reported as ignored, with that command as the
//! reason; they never pass without a server.

// The manager's test fixtures (a four-server cluster), shared rather than copied.
#[path = "../../impl/tests/integration/common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{lo, mv, rec};
use rebalance_manager::{
    BatchStore, BatchedWrite, BucketId, BucketRecord, MemStore, PersistedState, Plan, PlanEntry,
    Store, StoreError, TaskNode, TaskStatus,
};
use rebalance_stores::zk::{ZkStore, ZkStoreError, ZkStoreOptions};
use rebalance_stores::{FileStore, FileStoreError, FileStoreOptions, GroupCommit};

/// How one store is created, reopened and (for stored formats) damaged.
trait Subject {
    type S: BatchStore;

    /// A new store holding `initial` (environment setup).
    fn create(&mut self, initial: &PersistedState) -> Self::S;

    /// Drops `store` and opens the same storage again (a coordinator process restart).
    fn reopen(&mut self, store: Self::S) -> Self::S;
}

/// A store with a stored format that a newer build could have written.
trait Formatted: Subject {
    /// Drops `store` and rewrites one stored record as format version 2.
    fn plant_version_2(&mut self, store: Self::S);

    /// The raw bytes of the storage the plant touched (to show nothing was overwritten).
    fn raw(&mut self) -> Vec<u8>;

    /// Opens the storage and reads all of it as a new coordinator would; the typed refusal.
    fn open_and_read(&mut self) -> Result<(), Refusal>;
}

/// A store's refusal, in one vocabulary for every store.
#[derive(Debug, PartialEq, Eq)]
enum Refusal {
    UnsupportedVersion(u64),
    Other(String),
}

fn initial() -> PersistedState {
    let mut s = PersistedState::default();
    for b in 0..4 {
        s.cluster
            .buckets
            .insert(b, rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    }
    s.cluster.deleted.insert(3);
    s
}

fn task(id: u64, plan: Vec<(BucketId, PlanEntry)>) -> TaskNode {
    TaskNode {
        id,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::new(Plan::new(plan)),
    }
}

/// Everything a new coordinator reads (R17 cache load and R16 task read).
fn read_all<S: Store>(s: &mut S) -> PersistedState {
    PersistedState {
        coordinator_epoch: 0, // not readable through the port; compared separately
        task: s.read_task().expect("read_task"),
        cluster: s.load_cluster().expect("load_cluster"),
    }
}

// ---- the contract ----

fn round_trip<T: Subject>(subject: &mut T) {
    let init = initial();
    let mut s = subject.create(&init);
    let e = s.elect_coordinator().unwrap();
    assert_eq!(s.load_cluster().unwrap(), init.cluster);
    assert_eq!(s.read_task().unwrap(), None);

    let t = task(1, vec![mv(0), lo(1)]);
    s.write_task(e, &t).unwrap();
    assert_eq!(s.read_task().unwrap(), Some(t.clone()));

    let r0 = rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1);
    s.write_bucket(e, 0, &r0).unwrap();
    s.mark_deleted(e, 2).unwrap();
    // A bucket the initial cluster did not have.
    let r9 = rec(&[4, 5, 6], Some(4), &[4, 5], 2, 3);
    s.write_bucket(e, 9, &r9).unwrap();

    // A status-only rewrite of the stored plan (R2's cancel).
    let mut t2 = s.read_task().unwrap().unwrap();
    t2.cancel_requested = true;
    t2.status = TaskStatus::Rebalancing;
    s.write_task(e, &t2).unwrap();

    let mut expected = init.clone();
    expected.cluster.buckets.insert(0, r0);
    expected.cluster.buckets.insert(9, r9);
    expected.cluster.deleted.insert(2);
    expected.task = Some(t2);
    assert_eq!(read_all(&mut s), expected);
}

fn large_plan_round_trip<T: Subject>(subject: &mut T) {
    // Large enough that ZkStore needs several plan chunks (each at most 256 KiB).
    let n: BucketId = 20_000;
    let mut init = PersistedState::default();
    for b in 0..n {
        init.cluster
            .buckets
            .insert(b, rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, 0));
    }
    let mut s = subject.create(&init);
    let e = s.elect_coordinator().unwrap();
    let t = task(7, (0..n).map(mv).collect());
    s.write_task(e, &t).unwrap();
    let mut s = subject.reopen(s);
    assert_eq!(s.read_task().unwrap(), Some(t));
    assert_eq!(s.load_cluster().unwrap().buckets.len(), n as usize);
}

fn versioned_writes<T: Subject>(subject: &mut T) {
    let mut s = subject.create(&initial());
    let e1 = s.elect_coordinator().unwrap();
    // Each write replaces the record; a read sees the last acknowledged one.
    for be in 1..=5 {
        let r = rec(&[0, 1, 2], Some(be as u32 % 3), &[0, 1, 2], be, be);
        s.write_bucket(e1, 1, &r).unwrap();
        assert_eq!(s.load_cluster().unwrap().buckets[&1], r);
    }
    // A new plan under a new id replaces the old task node, plan included.
    s.write_task(e1, &task(1, vec![mv(0), mv(1)])).unwrap();
    let t2 = task(2, vec![lo(2)]);
    s.write_task(e1, &t2).unwrap();
    assert_eq!(s.read_task().unwrap(), Some(t2));
    // Elections are a strictly increasing sequence, and the new epoch's writes land.
    let e2 = s.elect_coordinator().unwrap();
    assert_eq!(e2, e1 + 1);
    let r = rec(&[2, 3, 0], Some(2), &[2, 3], 9, 9);
    s.write_bucket(e2, 1, &r).unwrap();
    assert_eq!(s.load_cluster().unwrap().buckets[&1], r);
}

fn stale_epoch_is_fenced<T: Subject>(subject: &mut T) {
    let mut s = subject.create(&initial());
    let old = s.elect_coordinator().unwrap();
    s.write_task(old, &task(1, vec![mv(0)])).unwrap();
    let new = s.elect_coordinator().unwrap();
    let before = read_all(&mut s);
    let r = rec(&[1, 2, 3, 0], Some(1), &[1, 2], 1, 1);
    assert_eq!(
        s.write_bucket(old, 0, &r),
        Err(StoreError::Fenced {
            writer_epoch: old,
            store_epoch: new
        })
    );
    let mut cancel = s.read_task().unwrap().unwrap();
    cancel.cancel_requested = true;
    assert!(matches!(
        s.write_task(old, &cancel),
        Err(StoreError::Fenced { writer_epoch, store_epoch }) if writer_epoch == old && store_epoch == new
    ));
    assert!(matches!(
        s.write_task(old, &task(2, vec![lo(1)])),
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        s.mark_deleted(old, 1),
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        s.write_bucket(old, 77, &r),
        Err(StoreError::Fenced { .. })
    ));
    assert_eq!(read_all(&mut s), before, "a fenced write changed nothing");
    // The current epoch still writes.
    s.write_bucket(new, 0, &r).unwrap();
    assert_eq!(s.load_cluster().unwrap().buckets[&0], r);
}

fn acknowledged_writes_survive_reopen<T: Subject>(subject: &mut T) {
    let init = initial();
    let mut s = subject.create(&init);
    let e = s.elect_coordinator().unwrap();
    let mut expected = init.clone();
    let t = task(3, vec![mv(0), mv(1), lo(2)]);
    s.write_task(e, &t).unwrap();
    expected.task = Some(t);
    for i in 0..60u64 {
        let b = (i % 6) as BucketId;
        let r = rec(&[0, 1, 2], Some((i % 3) as u32), &[0, 1, 2], i, i + 1);
        s.write_bucket(e, b, &r).unwrap();
        expected.cluster.buckets.insert(b, r);
        if i % 20 == 19 {
            s.mark_deleted(e, b).unwrap();
            expected.cluster.deleted.insert(b);
        }
    }
    let mut t = s.read_task().unwrap().unwrap();
    t.status = TaskStatus::Completed;
    s.write_task(e, &t).unwrap();
    expected.task = Some(t);

    let mut s = subject.reopen(s);
    assert_eq!(read_all(&mut s), expected);
    // The next incarnation's epoch is above every earlier one, and it can write at once.
    let e2 = s.elect_coordinator().unwrap();
    assert!(e2 > e, "{e2} > {e}");
    s.write_bucket(e2, 0, &rec(&[3, 2, 1], Some(3), &[3], 5, 70))
        .unwrap();
    // And an older writer is fenced after the reopen too.
    assert!(matches!(
        s.write_bucket(e, 0, &rec(&[0], Some(0), &[0], 0, 0)),
        Err(StoreError::Fenced { .. })
    ));
}

fn bucket(bucket: BucketId, record: &BucketRecord) -> BatchedWrite {
    BatchedWrite::Bucket {
        bucket,
        record: record.clone(),
    }
}

fn batch_lands_whole<T: Subject>(subject: &mut T) {
    let init = initial();
    let mut s = subject.create(&init);
    let e = s.elect_coordinator().unwrap();
    let t = task(4, vec![mv(0), mv(1)]);
    s.write_task(e, &t).unwrap();
    let mut t = s.read_task().unwrap().unwrap(); // the stored plan's Arc, as R16 hands it out
    t.status = TaskStatus::Completed;
    let (r0, r0b) = (
        rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1),
        rec(&[1, 2, 3], Some(1), &[1, 2, 3], 1, 2),
    );
    let r1 = rec(&[0, 1, 2], Some(2), &[0, 2], 1, 1);
    // Bucket 0 twice: the second write is the one that stays.
    let writes = [
        bucket(0, &r0),
        bucket(1, &r1),
        bucket(0, &r0b),
        BatchedWrite::Task(t.clone()),
    ];
    s.write_batch(e, &writes).unwrap();
    let mut expected = init.clone();
    expected.cluster.buckets.insert(0, r0b);
    expected.cluster.buckets.insert(1, r1.clone());
    expected.task = Some(t);
    assert_eq!(read_all(&mut s), expected);
    let mut s = subject.reopen(s);
    assert_eq!(read_all(&mut s), expected, "the batch survives a reopen");
    // The next single write and the next batch go on from the batch's versions.
    let e2 = s.elect_coordinator().unwrap();
    let r0c = rec(&[3, 2, 1], Some(3), &[3, 2], 2, 3);
    s.write_bucket(e2, 0, &r0c).unwrap();
    s.write_batch(e2, &[bucket(1, &r0c), bucket(0, &r1)])
        .unwrap();
    expected.cluster.buckets.insert(0, r1.clone());
    expected.cluster.buckets.insert(1, r0c);
    assert_eq!(read_all(&mut subject.reopen(s)), expected);
}

fn stale_batch_is_fenced<T: Subject>(subject: &mut T) {
    let mut s = subject.create(&initial());
    let old = s.elect_coordinator().unwrap();
    s.write_task(old, &task(1, vec![mv(0)])).unwrap();
    let mut t = s.read_task().unwrap().unwrap();
    let new = s.elect_coordinator().unwrap();
    let before = read_all(&mut s);
    t.cancel_requested = true;
    let r = rec(&[1, 2, 3, 0], Some(1), &[1, 2], 1, 1);
    let writes = [bucket(0, &r), bucket(1, &r), BatchedWrite::Task(t)];
    assert!(matches!(
        s.write_batch(old, &writes),
        Err(StoreError::Fenced { writer_epoch, store_epoch }) if writer_epoch == old && store_epoch == new
    ));
    assert_eq!(read_all(&mut s), before, "a fenced batch changed nothing");
}

/// Through the adapter: the core's writes are acknowledged at once and reach the store only at
/// the flush (or when the batch fills), in one operation; a limit of 1 is the store itself.
fn group_commit_defers_to_flush<T: Subject>(subject: &mut T) {
    let init = initial();
    let mut gc = GroupCommit::new(subject.create(&init), 3);
    let e = gc.elect_coordinator().unwrap();
    let durable = |gc: &mut GroupCommit<T::S>| gc.inner_mut().load_cluster().unwrap();
    let r = |be| rec(&[0, 1, 2], Some(1), &[0, 1], be, be);
    gc.write_bucket(e, 0, &r(1)).unwrap();
    gc.write_bucket(e, 1, &r(1)).unwrap();
    assert_eq!(gc.pending(), 2);
    assert_eq!(
        durable(&mut gc),
        init.cluster,
        "nothing durable before the flush"
    );
    // The third write fills the batch: the adapter flushes it there and then.
    gc.write_bucket(e, 0, &r(2)).unwrap();
    assert_eq!(gc.pending(), 0);
    let mut expected = init.clone();
    expected.cluster.buckets.insert(0, r(2));
    expected.cluster.buckets.insert(1, r(1));
    assert_eq!(durable(&mut gc), expected.cluster);
    gc.write_bucket(e, 2, &r(3)).unwrap();
    assert_eq!(gc.flush(), Ok(1));
    expected.cluster.buckets.insert(2, r(3));
    assert_eq!(durable(&mut gc), expected.cluster);
    let stats = gc.stats();
    assert_eq!(
        (stats.flushes, stats.batched_writes, stats.largest),
        (2, 4, 3)
    );
    // A deletion goes by itself, after what was queued before it.
    gc.write_bucket(e, 1, &r(4)).unwrap();
    gc.mark_deleted(e, 0).unwrap();
    expected.cluster.buckets.insert(1, r(4));
    expected.cluster.deleted.insert(0);
    assert_eq!(durable(&mut gc), expected.cluster);
    assert_eq!(read_all(&mut subject.reopen(gc.into_inner())), expected);
}

fn group_commit_of_one_is_the_store<T: Subject>(subject: &mut T) {
    let r = |be| rec(&[0, 1, 2], Some(1), &[0, 1], be, be);
    let mut single = GroupCommit::new(subject.create(&initial()), 1);
    let e = single.elect_coordinator().unwrap();
    single.write_bucket(e, 0, &r(5)).unwrap();
    assert_eq!(single.pending(), 0, "limit 1: every write goes at once");
    assert_eq!(single.inner_mut().load_cluster().unwrap().buckets[&0], r(5));
    assert_eq!(single.stats().flushes, 0);
}

fn unknown_version_is_refused<T: Formatted>(subject: &mut T) {
    let mut s = subject.create(&initial());
    let e = s.elect_coordinator().unwrap();
    s.write_task(e, &task(1, vec![mv(0)])).unwrap();
    subject.plant_version_2(s);
    let raw = subject.raw();
    assert_eq!(subject.open_and_read(), Err(Refusal::UnsupportedVersion(2)));
    assert_eq!(subject.raw(), raw, "the refused record was left as found");
}

macro_rules! contract {
    ($module:ident, $subject:path $(, #[$attr:meta])*) => {
        mod $module {
            use super::*;

            $(#[$attr])*
            #[test]
            fn round_trip() {
                super::round_trip(&mut $subject("round-trip"));
            }

            $(#[$attr])*
            #[test]
            fn large_plan_round_trip() {
                super::large_plan_round_trip(&mut $subject("large-plan"));
            }

            $(#[$attr])*
            #[test]
            fn versioned_writes() {
                super::versioned_writes(&mut $subject("versioned"));
            }

            $(#[$attr])*
            #[test]
            fn stale_epoch_is_fenced() {
                super::stale_epoch_is_fenced(&mut $subject("fenced"));
            }

            $(#[$attr])*
            #[test]
            fn acknowledged_writes_survive_reopen() {
                super::acknowledged_writes_survive_reopen(&mut $subject("reopen"));
            }

            $(#[$attr])*
            #[test]
            fn batch_lands_whole() {
                super::batch_lands_whole(&mut $subject("batch"));
            }

            $(#[$attr])*
            #[test]
            fn stale_batch_is_fenced() {
                super::stale_batch_is_fenced(&mut $subject("batch-fenced"));
            }

            $(#[$attr])*
            #[test]
            fn group_commit_defers_to_flush() {
                super::group_commit_defers_to_flush(&mut $subject("group-commit"));
            }

            $(#[$attr])*
            #[test]
            fn group_commit_of_one_is_the_store() {
                super::group_commit_of_one_is_the_store(&mut $subject("group-commit-1"));
            }
        }
    };
}

macro_rules! format_contract {
    ($module:ident, $subject:path $(, #[$attr:meta])*) => {
        mod $module {
            use super::*;

            $(#[$attr])*
            #[test]
            fn unknown_version_is_refused() {
                super::unknown_version_is_refused(&mut $subject("version"));
            }
        }
    };
}

// ---- MemStore: in memory; "reopen" hands the state to a new instance ----

struct Mem;

impl Mem {
    fn new(_name: &str) -> Self {
        Mem
    }
}

impl Subject for Mem {
    type S = MemStore;

    fn create(&mut self, initial: &PersistedState) -> MemStore {
        MemStore::with_state(initial.clone())
    }

    fn reopen(&mut self, store: MemStore) -> MemStore {
        MemStore::with_state(store.state().clone())
    }
}

contract!(mem, Mem::new);
// MemStore has no stored format, so the unknown-version contract does not apply to it.

// ---- FileStore ----

struct File {
    dir: tempfile::TempDir,
}

impl File {
    fn new(_name: &str) -> Self {
        File {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn snapshot(&self) -> PathBuf {
        self.dir.path().join("snapshot.json")
    }
}

impl Subject for File {
    type S = FileStore;

    fn create(&mut self, initial: &PersistedState) -> FileStore {
        FileStore::create(
            self.dir.path(),
            initial.clone(),
            FileStoreOptions::default(),
        )
        .unwrap()
    }

    fn reopen(&mut self, store: FileStore) -> FileStore {
        drop(store);
        FileStore::open(self.dir.path(), FileStoreOptions::default()).unwrap()
    }
}

impl Formatted for File {
    fn plant_version_2(&mut self, mut store: FileStore) {
        store.compact().unwrap(); // the task is in the snapshot now
        drop(store);
        let text = std::fs::read_to_string(self.snapshot()).unwrap();
        let planted = text.replacen("\"version\":1", "\"version\":2", 1);
        assert_ne!(planted, text);
        std::fs::write(self.snapshot(), planted).unwrap();
    }

    fn raw(&mut self) -> Vec<u8> {
        std::fs::read(self.snapshot()).unwrap()
    }

    fn open_and_read(&mut self) -> Result<(), Refusal> {
        match FileStore::open(self.dir.path(), FileStoreOptions::default()) {
            Err(FileStoreError::UnsupportedVersion { version, .. }) => {
                Err(Refusal::UnsupportedVersion(version))
            }
            Err(e) => Err(Refusal::Other(e.to_string())),
            Ok(mut s) => {
                read_all(&mut s);
                Ok(())
            }
        }
    }
}

contract!(file, File::new);
format_contract!(file_format, File::new);

// ---- ZkStore, against the server of scripts/with-zookeeper.sh ----

fn zk_addr() -> String {
    std::env::var("ZK_ADDR")
        .expect("ZK_ADDR unset: run the tests through scripts/with-zookeeper.sh (README)")
}

struct Zk {
    addr: String,
    root: String,
}

impl Zk {
    fn new(name: &str) -> Self {
        let addr = zk_addr();
        let root = format!("/contract-{name}-{}", std::process::id());
        ZkStore::delete_tree(&addr, &root).unwrap();
        Zk { addr, root }
    }

    fn open(&self) -> Result<ZkStore, ZkStoreError> {
        ZkStore::open(&self.addr, &self.root, ZkStoreOptions::default())
    }
}

impl Drop for Zk {
    fn drop(&mut self) {
        let _ = ZkStore::delete_tree(&self.addr, &self.root);
    }
}

impl Subject for Zk {
    type S = ZkStore;

    fn create(&mut self, initial: &PersistedState) -> ZkStore {
        ZkStore::create(&self.addr, &self.root, initial, ZkStoreOptions::default()).unwrap()
    }

    fn reopen(&mut self, store: ZkStore) -> ZkStore {
        drop(store);
        self.open().unwrap()
    }
}

impl Formatted for Zk {
    fn plant_version_2(&mut self, mut store: ZkStore) {
        let path = store.bucket_path(1);
        let data = store.raw_get(&path).unwrap().unwrap();
        let text = String::from_utf8(data).unwrap();
        let planted = text.replacen("\"version\":1", "\"version\":2", 1);
        assert_ne!(planted, text);
        store.raw_set(&path, planted.as_bytes()).unwrap();
    }

    fn raw(&mut self) -> Vec<u8> {
        let mut s = self.open().unwrap();
        let path = s.bucket_path(1);
        s.raw_get(&path).unwrap().unwrap()
    }

    fn open_and_read(&mut self) -> Result<(), Refusal> {
        let mut s = match self.open() {
            Err(ZkStoreError::UnsupportedVersion { version, .. }) => {
                return Err(Refusal::UnsupportedVersion(version))
            }
            Err(e) => return Err(Refusal::Other(e.to_string())),
            Ok(s) => s,
        };
        let epoch = s
            .elect_coordinator()
            .map_err(|e| Refusal::Other(e.to_string()))?;
        let read = s.load_cluster().and_then(|_| s.read_task());
        let refusal = match read {
            Err(StoreError::UnsupportedVersion { version, .. }) => {
                Refusal::UnsupportedVersion(version)
            }
            Err(e) => Refusal::Other(e.to_string()),
            Ok(_) => return Ok(()),
        };
        // Nor may a write overwrite the record it cannot read (`raw` is compared afterwards).
        let write = s.write_bucket(epoch, 1, &rec(&[0, 1, 2], Some(1), &[0, 1, 2], 1, 1));
        assert!(
            matches!(
                write,
                Err(StoreError::UnsupportedVersion { version: 2, .. })
            ),
            "{write:?}"
        );
        Err(refusal)
    }
}

contract!(
    zk,
    Zk::new,
    #[cfg_attr(
        not(zk_server),
        ignore = "needs a ZooKeeper server: scripts/with-zookeeper.sh cargo test --workspace --release (README)"
    )]
);
format_contract!(
    zk_format,
    Zk::new,
    #[cfg_attr(
        not(zk_server),
        ignore = "needs a ZooKeeper server: scripts/with-zookeeper.sh cargo test --workspace --release (README)"
    )]
);
