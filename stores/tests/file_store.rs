//! The durable store: round trips, compaction, corruption, torn writes, versions, fencing.

// The manager's test fixtures (a four-server cluster), shared rather than copied.
#[path = "../../impl/tests/integration/common/mod.rs"]
mod common;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use common::*;
use rebalance_manager::{
    BucketStatus, Config, Effect, Event, Input, Manager, PersistedState, Plan, Store, StoreError,
    TaskNode, TaskStatus,
};
use rebalance_stores::{FileStore, FileStoreError, FileStoreOptions};

fn initial() -> PersistedState {
    store(3).state().clone()
}

fn journal_path(dir: &Path, store: &FileStore) -> std::path::PathBuf {
    dir.join(format!("journal.{}.log", store.generation()))
}

fn task(id: u64) -> TaskNode {
    TaskNode {
        id,
        status: TaskStatus::NotStarted,
        cancel_requested: false,
        plan: Arc::new(Plan::new(vec![mv(0), lo(1)])),
    }
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let epoch = s.elect_coordinator().unwrap();
    s.write_task(epoch, &task(1)).unwrap();
    s.write_bucket(epoch, 0, &rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1))
        .unwrap();
    s.mark_deleted(epoch, 2).unwrap();
    // A status-only rewrite of the same plan (cancel).
    let mut t = s.read_task().unwrap().unwrap();
    t.cancel_requested = true;
    t.status = TaskStatus::Rebalancing;
    s.write_task(epoch, &t).unwrap();
    let expected = s.inspect().unwrap().clone();
    drop(s);
    let mut reopened = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    assert_eq!(reopened.inspect().unwrap(), &expected);
    assert!(reopened.read_task().unwrap().unwrap().cancel_requested);
    assert_eq!(reopened.torn_tail_discarded(), None);
}

#[test]
fn reopen_after_many_writes_with_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let options = FileStoreOptions {
        compact_min_bytes: 2048,
        fsync: false, // compaction is under test here, not fsync latency
        ..FileStoreOptions::default()
    };
    let mut s = FileStore::create(dir.path(), initial(), options.clone()).unwrap();
    let epoch = s.elect_coordinator().unwrap();
    s.write_task(epoch, &task(1)).unwrap();
    for i in 0..800u64 {
        s.write_bucket(
            epoch,
            (i % 3) as u32,
            &rec(&[0, 1, 2], Some(0), &[0, 1, 2], 0, i + 1),
        )
        .unwrap();
    }
    assert!(
        s.generation() > 3,
        "compaction ran (generation {})",
        s.generation()
    );
    let expected = s.inspect().unwrap().clone();
    drop(s);
    let reopened = FileStore::open(dir.path(), options).unwrap();
    assert_eq!(reopened.inspect().unwrap(), &expected);
    let mut files: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let journal = format!("journal.{}.log", reopened.generation());
    assert_eq!(
        files,
        vec!["LOCK".to_string(), journal, "snapshot.json".to_string()],
        "stray files were removed"
    );
}

#[test]
fn a_corrupt_journal_record_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let epoch = s.elect_coordinator().unwrap();
    s.write_bucket(epoch, 0, &rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1))
        .unwrap();
    s.write_bucket(epoch, 1, &rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1))
        .unwrap();
    let path = journal_path(dir.path(), &s);
    drop(s);
    let mut bytes = fs::read(&path).unwrap();
    // Flip a digit inside the second record (a complete, newline-terminated one).
    let second = bytes.iter().position(|&c| c == b'\n').unwrap() + 1;
    let third = second + bytes[second..].iter().position(|&c| c == b'\n').unwrap() + 1;
    let pos = third + 20;
    bytes[pos] = if bytes[pos] == b'1' { b'2' } else { b'1' };
    fs::write(&path, &bytes).unwrap();
    let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
    assert!(matches!(err, FileStoreError::Corrupt { .. }), "{err}");
}

#[test]
fn a_corrupt_or_truncated_snapshot_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap());
    let path = dir.path().join("snapshot.json");
    let good = fs::read(&path).unwrap();
    fs::write(&path, &good[..good.len() - 7]).unwrap();
    let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
    assert!(matches!(err, FileStoreError::Corrupt { .. }), "{err}");
    let mut flipped = good.clone();
    let n = flipped.len() - 10;
    flipped[n] ^= 0x01;
    fs::write(&path, &flipped).unwrap();
    let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
    assert!(matches!(err, FileStoreError::Corrupt { .. }), "{err}");
    fs::write(&path, b"").unwrap();
    assert!(matches!(
        FileStore::open(dir.path(), FileStoreOptions::default()),
        Err(FileStoreError::Corrupt { .. })
    ));
}

#[test]
fn a_torn_final_record_is_a_write_that_never_returned() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let epoch = s.elect_coordinator().unwrap();
    s.write_task(epoch, &task(1)).unwrap();
    let before_last = s.inspect().unwrap().clone();
    s.write_bucket(epoch, 0, &rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1))
        .unwrap();
    let path = journal_path(dir.path(), &s);
    drop(s);
    let bytes = fs::read(&path).unwrap();
    let last_start = bytes[..bytes.len() - 1]
        .iter()
        .rposition(|&c| c == b'\n')
        .unwrap()
        + 1;
    let cut = last_start + (bytes.len() - last_start) / 2;
    fs::write(&path, &bytes[..cut]).unwrap();

    // Strict mode reports it as a typed error and changes nothing.
    let strict = FileStoreOptions {
        strict_torn_tail: true,
        ..FileStoreOptions::default()
    };
    let err = FileStore::open(dir.path(), strict).unwrap_err();
    assert!(
        matches!(err, FileStoreError::TornTail { offset, .. } if offset == last_start as u64),
        "{err}"
    );
    assert_eq!(fs::read(&path).unwrap().len(), cut);

    // The default rule discards it: the state is the one before the torn write.
    let mut s = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    assert_eq!(s.inspect().unwrap(), &before_last);
    assert_eq!(s.torn_tail_discarded(), Some((cut - last_start) as u64));
    // Appending after the cut works and survives another reopen.
    s.write_bucket(epoch, 1, &rec(&[0, 1, 2], Some(1), &[0, 1, 2], 1, 1))
        .unwrap();
    let expected = s.inspect().unwrap().clone();
    drop(s);
    let s = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    assert_eq!(s.inspect().unwrap(), &expected);
    assert_eq!(s.torn_tail_discarded(), None);
}

#[test]
fn an_unknown_version_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap());
    let path = dir.path().join("snapshot.json");
    let text = String::from_utf8(fs::read(&path).unwrap()).unwrap();
    fs::write(&path, text.replacen("\"version\":1", "\"version\":2", 1)).unwrap();
    let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
    assert!(
        matches!(err, FileStoreError::UnsupportedVersion { version: 2, .. }),
        "{err}"
    );
}

#[test]
fn a_journal_of_an_unknown_version_is_a_typed_error() {
    let dir = tempfile::tempdir().unwrap();
    let s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let path = journal_path(dir.path(), &s);
    drop(s);
    // A well-formed header record (valid checksum) of version 2.
    let json = br#"{"op":"header","version":2,"generation":0}"#;
    let line = format!(
        "{:08x} {}\n",
        rebalance_stores::crc32::crc32(json),
        std::str::from_utf8(json).unwrap()
    );
    fs::write(&path, line).unwrap();
    let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
    assert!(
        matches!(err, FileStoreError::UnsupportedVersion { version: 2, .. }),
        "{err}"
    );
}

#[test]
fn a_write_by_a_stale_epoch_is_fenced_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let old = s.elect_coordinator().unwrap();
    let new = s.elect_coordinator().unwrap();
    let before = s.inspect().unwrap().clone();
    let bytes_before = s.journal_bytes();
    let r = rec(&[1, 2, 3, 0], Some(0), &[0, 1, 2], 0, 1);
    assert_eq!(
        s.write_bucket(old, 0, &r),
        Err(StoreError::Fenced {
            writer_epoch: old,
            store_epoch: new
        })
    );
    assert!(matches!(
        s.write_task(old, &task(1)),
        Err(StoreError::Fenced { .. })
    ));
    assert!(matches!(
        s.mark_deleted(old, 0),
        Err(StoreError::Fenced { .. })
    ));
    assert_eq!(s.inspect().unwrap(), &before);
    assert_eq!(s.journal_bytes(), bytes_before);
    s.write_bucket(new, 0, &r).unwrap();
}

#[test]
fn a_second_handle_on_the_same_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let first = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let second = FileStore::open(dir.path(), FileStoreOptions::default());
    assert!(
        matches!(second, Err(FileStoreError::Locked(_))),
        "{second:?}"
    );
    drop(first);
    assert!(FileStore::open(dir.path(), FileStoreOptions::default()).is_ok());
}

#[test]
fn a_journal_without_its_snapshot_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap());
    fs::remove_file(dir.path().join("snapshot.json")).unwrap();
    assert!(matches!(
        FileStore::open(dir.path(), FileStoreOptions::default()),
        Err(FileStoreError::MissingSnapshot(_))
    ));
    assert!(matches!(
        FileStore::open_or_create(dir.path(), FileStoreOptions::default()),
        Err(FileStoreError::MissingSnapshot(_))
    ));
    let empty = tempfile::tempdir().unwrap();
    assert!(matches!(
        FileStore::open(empty.path(), FileStoreOptions::default()),
        Err(FileStoreError::NotFound(_))
    ));
    assert!(FileStore::open_or_create(empty.path(), FileStoreOptions::default()).is_ok());
    assert!(matches!(
        FileStore::create(
            empty.path(),
            PersistedState::default(),
            FileStoreOptions::default()
        ),
        Err(FileStoreError::AlreadyExists(_))
    ));
}

#[test]
fn a_manager_on_a_file_store_recovers_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = FileStore::create(dir.path(), initial(), FileStoreOptions::default()).unwrap();
    let (mut m, _) = Manager::start(Config::default(), s, live(), 0).unwrap();
    m.handle(0, Input::Event(Event::Recover));
    let effects = m.handle(
        0,
        Input::Register {
            plan: Plan::new(vec![mv(0), mv(1)]),
        },
    );
    assert_eq!(effects.len(), 5);
    drop(m); // crash
    let s = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    let (mut m, _) = Manager::start(Config::default(), s, live(), 1_000).unwrap();
    assert_eq!(m.coordinator_epoch(), 2);
    let effects = m.handle(1_000, Input::Event(Event::Recover));
    assert_eq!(effects[0], Effect::Enqueue(Event::Reconcile(key(1, 0))));
    assert_eq!(m.bucket_status(0), Some(BucketStatus::Timeout));
    assert_eq!(m.bucket_status(1), Some(BucketStatus::Rebalancing));
    m.check_invariants().unwrap();
}

mod durability {
    //! Random write sequences with reopens, torn tails and compactions: after every step the
    //! reopened or live store equals an in-memory reference of the acknowledged writes.

    use super::*;
    use proptest::prelude::*;
    use std::io::Write;

    #[derive(Clone, Debug)]
    enum Op {
        Elect,
        NewTask(u8),
        TaskStatus(u8, bool),
        Bucket(u32, u8),
        Deleted(u32),
        StaleWrite(u32),
        Reopen,
        /// A torn write: the journal's last record line, cut after this many bytes (modulo
        /// its length).
        TornReopen(u16),
        Compact,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            1 => Just(Op::Elect),
            1 => any::<u8>().prop_map(Op::NewTask),
            2 => (any::<u8>(), any::<bool>()).prop_map(|(s, c)| Op::TaskStatus(s, c)),
            6 => (0..3u32, any::<u8>()).prop_map(|(b, e)| Op::Bucket(b, e)),
            1 => (0..5u32).prop_map(Op::Deleted),
            1 => (0..3u32).prop_map(Op::StaleWrite),
            2 => Just(Op::Reopen),
            2 => any::<u16>().prop_map(Op::TornReopen),
            1 => Just(Op::Compact),
        ]
    }

    fn options() -> FileStoreOptions {
        FileStoreOptions {
            fsync: false,
            compact_min_bytes: 700,
            strict_torn_tail: false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x5EED_0004),
            failure_persistence: None,
            ..ProptestConfig::default()
        })]

        #[test]
        fn the_store_holds_exactly_the_acknowledged_writes(ops in prop::collection::vec(op(), 1..40)) {
            let dir = tempfile::tempdir().unwrap();
            let mut reference = initial();
            let mut s = FileStore::create(dir.path(), reference.clone(), options()).unwrap();
            for op in ops {
                let epoch = reference.coordinator_epoch;
                match op {
                    Op::Elect => {
                        reference.coordinator_epoch = s.elect_coordinator().unwrap();
                    }
                    Op::NewTask(id) => {
                        let t = task(u64::from(id));
                        s.write_task(epoch, &t).unwrap();
                        reference.task = Some(t);
                    }
                    Op::TaskStatus(st, cancel) => {
                        if let Some(mut t) = s.read_task().unwrap() {
                            t.status = [TaskStatus::NotStarted, TaskStatus::Rebalancing, TaskStatus::Completed][st as usize % 3];
                            t.cancel_requested = cancel;
                            s.write_task(epoch, &t).unwrap();
                            reference.task = Some(t);
                        }
                    }
                    Op::Bucket(b, e) => {
                        let r = rec(&[0, 1, 2, 3][..3 + (e as usize % 2)], Some(u32::from(e % 3)), &[0, 1], 0, u64::from(e));
                        s.write_bucket(epoch, b, &r).unwrap();
                        reference.cluster.buckets.insert(b, r);
                    }
                    Op::Deleted(b) => {
                        s.mark_deleted(epoch, b).unwrap();
                        reference.cluster.deleted.insert(b);
                    }
                    Op::StaleWrite(b) => {
                        let r = rec(&[9], None, &[9], 9, 9);
                        let stale = epoch.wrapping_sub(1);
                        let fenced = matches!(s.write_bucket(stale, b, &r), Err(StoreError::Fenced { .. }));
                        prop_assert!(fenced, "a stale epoch must be fenced");
                    }
                    Op::Reopen => {
                        drop(s);
                        s = FileStore::open(dir.path(), options()).unwrap();
                    }
                    Op::TornReopen(cut) => {
                        let path = journal_path(dir.path(), &s);
                        drop(s);
                        let bytes = fs::read(&path).unwrap();
                        let body = &bytes[..bytes.len() - 1];
                        let last = &body[body.iter().rposition(|c| *c == b'\n').map_or(0, |i| i + 1)..];
                        // Cut short anywhere, or whole but for its newline.
                        let garbage = &last[..1 + usize::from(cut) % last.len()];
                        let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
                        f.write_all(garbage).unwrap();
                        drop(f);
                        s = FileStore::open(dir.path(), options()).unwrap();
                        prop_assert_eq!(s.torn_tail_discarded(), Some(garbage.len() as u64));
                    }
                    Op::Compact => s.compact().unwrap(),
                }
                prop_assert_eq!(s.inspect().unwrap(), &reference);
            }
            drop(s);
            let s = FileStore::open(dir.path(), options()).unwrap();
            prop_assert_eq!(s.inspect().unwrap(), &reference);
        }
    }
}

/// A manager on a FileStore, driven through the simulated cluster with coordinator restarts
/// that reopen the directory from disk: every incarnation's cache equals what it reopened
/// (checked after every input in debug builds), and the rebalance completes.
#[test]
fn seeded_runs_with_restarts_that_reopen_the_directory_complete() {
    use rebalance_manager::sim::{Cluster, Rng};
    use rebalance_manager::OverallStatus;
    use std::collections::VecDeque;

    let options = FileStoreOptions {
        fsync: false,
        compact_min_bytes: 2048,
        ..FileStoreOptions::default()
    };
    for seed in 0..20u64 {
        let dir = tempfile::tempdir().unwrap();
        let initial = store(3).state().clone();
        let mut cluster = Cluster::new(0..4);
        for (b, r) in &initial.cluster.buckets {
            cluster.init_bucket(*b, r);
        }
        let s = FileStore::create(dir.path(), initial, options.clone()).unwrap();
        let (mut m, effects) = Manager::start(Config::default(), s, cluster.live(), 0).unwrap();
        let (mut events, mut replies) = (VecDeque::new(), Vec::new());
        cluster.absorb(effects, &mut events, &mut replies);
        let mut rng = Rng::new(seed);
        let mut now = 0u64;
        let mut registered = false;
        for _ in 0..5_000 {
            let input = if rng.chance(20_000) {
                // Crash and restart: reopen the directory; the event queue is lost.
                drop(m);
                let s = FileStore::open(dir.path(), options.clone()).unwrap();
                let (m2, effects) =
                    Manager::start(Config::default(), s, cluster.live(), now).unwrap();
                m = m2;
                events.clear();
                cluster.absorb(effects, &mut events, &mut replies);
                continue;
            } else if !registered && m.rid().is_none() && !m.has_in_progress() {
                registered = true;
                Input::Register {
                    plan: Plan::new(vec![mv(0), lo(1), mv(2)]),
                }
            } else if !cluster.net.is_empty() && rng.chance(900_000) {
                let i = rng.below(cluster.net.len() as u64) as usize;
                match cluster.deliver(i, now) {
                    Some(input) => input,
                    None => continue,
                }
            } else if let Some(ev) = events.pop_front() {
                Input::Event(ev)
            } else if m.has_in_progress() || !registered {
                now += 30_000;
                cluster.retry_deferred(now);
                Input::Tick
            } else {
                break;
            };
            let effects = m.handle(now, input);
            cluster.absorb(effects, &mut events, &mut replies);
        }
        assert_eq!(m.overall(), Some(OverallStatus::Completed), "seed {seed}");
        m.check_invariants().unwrap();
        let s = FileStore::open_or_create(dir.path(), options.clone());
        assert!(
            matches!(s, Err(FileStoreError::Locked(_))),
            "the manager still holds the store"
        );
        drop(m);
        let s = FileStore::open(dir.path(), options.clone()).unwrap();
        assert_eq!(
            s.inspect().unwrap().task.as_ref().unwrap().status,
            TaskStatus::Completed
        );
    }
}

/// Bytes after the last record that no write of this store could have left (not the start of a
/// record line) are corruption, reported with their offset, not a torn tail to discard.
#[test]
fn a_journal_tail_that_is_not_a_record_cut_short_is_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(
        dir.path(),
        PersistedState::default(),
        FileStoreOptions::default(),
    )
    .unwrap();
    let epoch = s.elect_coordinator().unwrap();
    s.write_task(epoch, &task(1)).unwrap();
    let path = journal_path(dir.path(), &s);
    drop(s);
    let len = fs::read(&path).unwrap().len();
    for garbage in [
        &b"hello"[..],
        b"0000000z {",
        b"00000000x",
        b"00000000 [1,2",
        b"00000000 {}x",
    ] {
        let mut bytes = fs::read(&path).unwrap();
        bytes.truncate(len);
        bytes.extend_from_slice(garbage);
        fs::write(&path, &bytes).unwrap();
        let err = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap_err();
        assert!(
            matches!(&err, FileStoreError::Corrupt { detail, .. } if detail.contains(&format!("at offset {len}"))),
            "{garbage:?}: {err}"
        );
    }
    // The start of a record, cut short, is a torn tail.
    let mut bytes = fs::read(&path).unwrap();
    bytes.truncate(len);
    let torn = b"0a1b2c3d {\"op\":\"ta";
    bytes.extend_from_slice(torn);
    fs::write(&path, &bytes).unwrap();
    let s = FileStore::open(dir.path(), FileStoreOptions::default()).unwrap();
    assert_eq!(s.torn_tail_discarded(), Some(torn.len() as u64));
}

#[test]
fn a_store_path_that_is_a_file_is_not_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain");
    fs::write(&file, b"x").unwrap();
    for err in [
        FileStore::open(&file, FileStoreOptions::default()).unwrap_err(),
        FileStore::create(
            &file,
            PersistedState::default(),
            FileStoreOptions::default(),
        )
        .unwrap_err(),
    ] {
        assert!(matches!(err, FileStoreError::NotADirectory(_)), "{err}");
        assert!(err.to_string().contains("is not a directory"), "{err}");
    }
}
