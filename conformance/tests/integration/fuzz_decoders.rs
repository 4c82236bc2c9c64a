//! Seeded mutation fuzzing of every decoder that reads outside input (issue 21): the trace
//! loader, the configuration loader, the driver protocol's line decoder and its server, the
//! coordinator log parser, the file store's snapshot and journal, and the ZooKeeper node codec.
//! Each target starts from the repository's own files (traces, suites, configurations, a
//! recorded log, a store the manager wrote) and applies a few byte mutations per execution
//! (bit flips, JSON punctuation, deletions, duplications, splices, truncation), a fixed number
//! of executions from a fixed seed, so a run is reproducible. A decoder may refuse anything; it
//! must not panic, and no execution may hold more than `MAX_LIVE_BYTES` at once (a counting
//! allocator below). A failing execution prints its target, seed, iteration and input.
//!
//! This is not coverage-guided: it finds what perturbing real inputs finds, in seconds, on the
//! stable toolchain CI has. FUZZ_ITERATIONS (default 20,000 per target) and FUZZ_SEED set a
//! longer or another run (scripts/scheduled-checks.sh runs 500,000).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

/// Live heap bytes, and the most seen since the last reset, of the current thread: each test runs
/// on its own thread under `cargo test`, and a process-wide count let one test's allocations
/// (the planted 256 MiB one below) fail another that ran beside it. (A block freed by another
/// thread than the one that allocated it skews both threads' counts; the decoders run on one.)
struct Counting;
thread_local! {
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn live() -> isize {
    LIVE.try_with(Cell::get).unwrap_or(0)
}

fn peak() -> isize {
    PEAK.try_with(Cell::get).unwrap_or(0)
}

fn reset_peak(to: isize) {
    let _ = PEAK.try_with(|p| p.set(to));
}

fn count(delta: isize) {
    let _ = LIVE.try_with(|live| {
        let now = live.get() + delta;
        live.set(now);
        let _ = PEAK.try_with(|p| p.set(p.get().max(now)));
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        count(-(l.size() as isize));
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

use crate::common;
use common::Rng;

/// A number in `0..n`, as the mutations index with it.
fn pick(rng: &mut Rng, n: usize) -> usize {
    rng.below(n as u64) as usize
}

/// The most heap one execution may hold above what was live before it.
const MAX_LIVE_BYTES: usize = 256 << 20;

const PUNCTUATION: &[u8] = b"{}[]\",:-09 \\\nnulltrue";

/// One to four mutations of `input`, some splicing in part of another seed.
fn mutate(rng: &mut Rng, input: &[u8], seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..1 + pick(rng, 4) {
        let at = pick(rng, out.len() + 1);
        match pick(rng, 7) {
            0 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] ^= 1 << pick(rng, 8);
            }
            1 if !out.is_empty() => {
                let i = at.min(out.len() - 1);
                out[i] = PUNCTUATION[pick(rng, PUNCTUATION.len())];
            }
            2 => {
                let end = (at + 1 + pick(rng, 16)).min(out.len());
                out.drain(at.min(end)..end);
            }
            3 => {
                let end = (at + 1 + pick(rng, 32)).min(out.len());
                let piece = out[at.min(end)..end].to_vec();
                out.splice(at.min(out.len())..at.min(out.len()), piece);
            }
            4 => {
                let other = &seeds[pick(rng, seeds.len())];
                let from = pick(rng, other.len());
                let end = (from + 1 + pick(rng, 64)).min(other.len());
                out.splice(at..at, other[from..end].iter().copied());
            }
            5 => out.truncate(at),
            _ => {
                let digits = rng.next().to_string();
                out.splice(at..at, digits.bytes());
            }
        }
    }
    out
}

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(p)
}

/// Every `.json` file under `dirs` (one level of subdirectories).
fn json_files(dirs: &[&str]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for d in dirs {
        let mut stack = vec![repo(d)];
        while let Some(dir) = stack.pop() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .map(|e| e.unwrap().path())
                .collect();
            entries.sort();
            for p in entries {
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "json") {
                    out.push(std::fs::read(&p).unwrap());
                }
            }
        }
    }
    assert!(!out.is_empty(), "no seeds in {dirs:?}");
    out
}

fn iterations() -> u64 {
    std::env::var("FUZZ_ITERATIONS").map_or(20_000, |v| v.parse().expect("FUZZ_ITERATIONS"))
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED").map_or(0xF022, |v| v.parse().expect("FUZZ_SEED"))
}

/// Runs `target` on mutations of `seeds`; panics (the test fails) on a panic or an allocation
/// beyond the bound, naming the input.
fn fuzz(name: &str, seeds: &[Vec<u8>], target: impl Fn(&[u8])) {
    let (n, s) = (iterations(), seed());
    let mut rng = Rng(s ^ name
        .bytes()
        .fold(0u64, |h, b| h.rotate_left(5) ^ u64::from(b)));
    for i in 0..n {
        let base = &seeds[pick(&mut rng, seeds.len())];
        let input = mutate(&mut rng, base, seeds);
        let before = live();
        reset_peak(before);
        let outcome = catch_unwind(AssertUnwindSafe(|| target(&input)));
        let held = (peak() - before).max(0) as usize;
        let show = || String::from_utf8_lossy(&input[..input.len().min(2000)]).into_owned();
        assert!(
            outcome.is_ok(),
            "{name}: a panic on iteration {i} (FUZZ_SEED={s}), input:\n{}",
            show()
        );
        assert!(
            held <= MAX_LIVE_BYTES,
            "{name}: {held} bytes held on iteration {i} (FUZZ_SEED={s}), input:\n{}",
            show()
        );
    }
    eprintln!(
        "{name}: {n} executions from {} seeds, seed {s}",
        seeds.len()
    );
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn the_trace_loader() {
    let seeds = json_files(&["conformance/traces", "model/traces"]);
    fuzz("trace", &seeds, |b| {
        let _ = rebalance_model::Trace::from_json(&text(b));
    });
}

#[test]
fn the_configuration_loader() {
    let seeds = json_files(&["model/configs"]);
    fuzz("config", &seeds, |b| {
        let _ = rebalance_model::Config::from_json_str(&text(b));
    });
}

/// Lines of the driver protocol: a recorded session of the Python example's kind.
fn driver_lines() -> Vec<Vec<u8>> {
    let spec = std::fs::read_to_string(repo("spec/driver-protocol.md")).unwrap();
    let lines: Vec<Vec<u8>> = spec
        .lines()
        .filter_map(|l| l.strip_prefix("> ").or_else(|| l.strip_prefix("< ")))
        .map(|l| l.as_bytes().to_vec())
        .collect();
    assert!(
        lines.len() > 10,
        "the example session of spec/driver-protocol.md"
    );
    lines
}

#[test]
fn the_driver_protocol_decoder() {
    use rebalance_wire::{decode, Request, Response};
    fuzz("wire", &driver_lines(), |b| {
        let t = text(b);
        let _ = decode::line::<Request>(&t);
        let _ = decode::line::<Response>(&t);
    });
}

/// The example session's requests, one per line.
fn driver_session() -> Vec<u8> {
    let spec = std::fs::read_to_string(repo("spec/driver-protocol.md")).unwrap();
    spec.lines()
        .filter_map(|l| l.strip_prefix("> "))
        .flat_map(|l| format!("{l}\n").into_bytes())
        .collect()
}

/// Whole sessions: the example session's requests, mutated, served to the end. The server
/// decodes, and the manager handles whatever decodes.
#[test]
fn the_driver_protocol_server() {
    fuzz("server", &[driver_session()], |b| {
        let _ = rebalance_manager_stdio::server::serve(std::io::BufReader::new(b), std::io::sink());
    });
}

/// The log a coordinator writes for `move-completes.json`, by line and whole.
fn coordinator_log_seeds() -> Vec<Vec<u8>> {
    use rebalance_conformance::validate::record;
    let trace =
        rebalance_model::Trace::read(repo("conformance/traces/move-completes.json")).unwrap();
    let log = record::log_of(&trace.model(), &trace.steps).expect("a log");
    let mut seeds: Vec<Vec<u8>> = log.lines().map(|l| format!("{l}\n").into_bytes()).collect();
    seeds.push(log.into_bytes());
    seeds
}

#[test]
fn the_coordinator_log_parser() {
    use rebalance_conformance::validate;
    fuzz("log", &coordinator_log_seeds(), |b| {
        let _ = validate::parse(&text(b));
    });
}

/// A store written by the manager's file adapter: its snapshot, its journal and the journal's
/// name, each file mutated in its own target and opened with the other intact. The snapshot
/// holds a task with a plan and a bucket (the initial state); the journal an epoch, a bucket
/// write, a deletion, a whole task write and a status-only one, so both files have every kind
/// of record.
fn file_store_files() -> (Vec<u8>, Vec<u8>, String) {
    use rebalance_manager::{
        BucketRecord, LeaderAndIsr, PersistedState, Plan, PlanEntry, Store, TaskNode, TaskStatus,
    };
    use rebalance_stores::{FileStore, FileStoreOptions};
    let dir = tempfile::tempdir().unwrap();
    let rec = |assignment: Vec<rebalance_manager::ServerId>| BucketRecord {
        lai: LeaderAndIsr {
            leader: Some(assignment[0]),
            isr: assignment.iter().copied().collect(),
            ..Default::default()
        },
        assignment,
    };
    let task = TaskNode {
        id: 1,
        status: TaskStatus::Rebalancing,
        cancel_requested: false,
        plan: std::sync::Arc::new(Plan {
            buckets: vec![(
                2,
                PlanEntry {
                    ors: vec![0, 1],
                    trs: vec![1, 2],
                    old_leader: Some(0),
                    new_leader: 1,
                },
            )],
        }),
    };
    let mut initial = PersistedState {
        task: Some(task.clone()),
        ..PersistedState::default()
    };
    initial.cluster.buckets.insert(2, rec(vec![0, 1]));
    let mut s = FileStore::create(dir.path(), initial, FileStoreOptions::default()).unwrap();
    let e = s.elect_coordinator().unwrap();
    s.write_bucket(e, 0, &rec(vec![0, 1])).unwrap();
    s.mark_deleted(e, 1).unwrap();
    s.write_task(
        e,
        &TaskNode {
            id: 2,
            ..task.clone()
        },
    )
    .unwrap();
    s.write_task(
        e,
        &TaskNode {
            id: 2,
            status: TaskStatus::Canceled,
            cancel_requested: true,
            ..task
        },
    )
    .unwrap();
    let journal = format!("journal.{}.log", s.generation());
    drop(s);
    (
        std::fs::read(dir.path().join("snapshot.json")).expect("snapshot file"),
        std::fs::read(dir.path().join(&journal)).unwrap(),
        journal,
    )
}

/// Where the file-store targets make their directories: in memory (`/dev/shm`) where the machine
/// has it, since each iteration creates, fills, opens and removes a directory and the metadata
/// operations of a disk-backed /tmp were most of the targets' time; the store reads the
/// same bytes either way.
fn scratch_dir() -> tempfile::TempDir {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        if let Ok(d) = tempfile::tempdir_in(shm) {
            return d;
        }
    }
    tempfile::tempdir().unwrap()
}

fn open_with(snapshot: &[u8], journal: &[u8], journal_name: &str) {
    use rebalance_stores::{FileStore, FileStoreOptions};
    let dir = scratch_dir();
    std::fs::write(dir.path().join("snapshot.json"), snapshot).unwrap();
    std::fs::write(dir.path().join(journal_name), journal).unwrap();
    let options = FileStoreOptions {
        fsync: false,
        ..FileStoreOptions::default()
    };
    let _ = FileStore::open(dir.path(), options);
}

#[test]
fn the_file_store_journal() {
    let (snapshot, journal, name) = file_store_files();
    fuzz("journal", &[journal], |b| open_with(&snapshot, b, &name));
}

#[test]
fn the_file_store_snapshot() {
    let (snapshot, journal, name) = file_store_files();
    fuzz("snapshot", &[snapshot], |b| open_with(b, &journal, &name));
}

/// One node of each kind ZkStore reads, as it encodes them.
fn zk_nodes() -> Vec<(&'static str, Vec<u8>)> {
    use rebalance_manager::{BucketRecord, PlanEntry};
    use rebalance_stores::zk::codec::{
        self, DeletedMarker, EpochNode, PlanChunk, PlanRef, RootHeader, TaskHeader,
    };
    let chunk: PlanChunk = vec![(
        2,
        PlanEntry {
            ors: vec![0, 1],
            trs: vec![1, 2],
            old_leader: Some(0),
            new_leader: 1,
        },
    )];
    vec![
        (
            "root",
            codec::encode(&RootHeader {
                format: codec::FORMAT.into(),
                version: codec::VERSION,
                bucket_page: 64,
                epoch_base: 0,
            }),
        ),
        ("epoch", codec::encode(&EpochNode { epoch: 3 })),
        (
            "task",
            codec::encode(&TaskHeader {
                id: 1,
                status: rebalance_manager::TaskStatus::Rebalancing,
                cancel_requested: false,
                plan: PlanRef {
                    dir: "plan0000000001".into(),
                    entries: 10,
                    chunks: 2,
                    crc32: 0xDEAD_BEEF,
                },
            }),
        ),
        (
            "bucket",
            codec::encode(&BucketRecord {
                assignment: vec![0, 1],
                ..Default::default()
            }),
        ),
        ("deleted", codec::encode(&DeletedMarker {})),
        ("chunk", codec::encode(&chunk)),
    ]
}

#[test]
fn the_zookeeper_node_codec() {
    use rebalance_manager::BucketRecord;
    use rebalance_stores::zk::codec::{
        self, DeletedMarker, EpochNode, PlanChunk, RootHeader, TaskHeader,
    };
    let seeds: Vec<Vec<u8>> = zk_nodes().into_iter().map(|(_, b)| b).collect();
    fuzz("zk-node", &seeds, |b| {
        let _ = codec::decode::<RootHeader>("root", b);
        let _ = codec::decode::<EpochNode>("epoch", b);
        let _ = codec::decode::<TaskHeader>("task", b);
        let _ = codec::decode::<BucketRecord>("bucket", b);
        let _ = codec::decode::<DeletedMarker>("deleted", b);
        let _ = codec::decode::<PlanChunk>("chunk", b);
    });
}

/// The seeds of the cargo-fuzz targets that the repository has no file for (fuzz/seeds/, read
/// by scripts/fuzz.sh; docs/testing.md, "Fuzzing"): the ones this file makes, so that both
/// fuzzers start from the same inputs. The committed files must be what this writes now;
/// `FUZZ_SEEDS_BLESS=1` rewrites them after a format change.
#[test]
fn the_cargo_fuzz_seeds_are_current() {
    let mut want: Vec<(String, Vec<u8>)> = Vec::new();
    let (snapshot, journal, name) = file_store_files();
    assert_eq!(
        name, "journal.0.log",
        "fuzz/fuzz_targets/file_store_snapshot.rs names it"
    );
    want.push(("file_store_snapshot/snapshot.json".into(), snapshot));
    want.push((format!("file_store_journal/{name}"), journal));
    for (node, bytes) in zk_nodes() {
        want.push((format!("zk_node/{node}.json"), bytes));
    }
    for (i, line) in driver_lines().into_iter().enumerate() {
        want.push((format!("wire_line/{i:02}.jsonl"), line));
    }
    want.push(("driver_server/session.jsonl".into(), driver_session()));
    for (i, line) in coordinator_log_seeds().into_iter().enumerate() {
        want.push((format!("coordinator_log/{i:02}.log"), line));
    }
    let manager_config = serde_json::to_vec_pretty(&rebalance_manager::Config::default()).unwrap();
    want.push(("config_loader/manager-default.json".into(), manager_config));

    let root = repo("fuzz/seeds");
    if std::env::var_os("FUZZ_SEEDS_BLESS").is_some() {
        let _ = std::fs::remove_dir_all(&root);
        for (path, bytes) in &want {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, bytes).unwrap();
        }
    }
    let mut have = Vec::new();
    for dir in std::fs::read_dir(&root).expect("fuzz/seeds (FUZZ_SEEDS_BLESS=1 writes it)") {
        let dir = dir.unwrap().path();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            have.push(
                f.strip_prefix(&root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    have.sort();
    let mut names: Vec<String> = want.iter().map(|(p, _)| p.clone()).collect();
    names.sort();
    assert_eq!(
        have, names,
        "fuzz/seeds/ is stale: rerun with FUZZ_SEEDS_BLESS=1"
    );
    for (path, bytes) in &want {
        let got = std::fs::read(root.join(path)).unwrap();
        assert!(
            &got == bytes,
            "fuzz/seeds/{path} is stale: rerun with FUZZ_SEEDS_BLESS=1"
        );
    }
}

/// The harness itself: a panic that mutation reaches, and an allocation beyond the bound, each
/// fail the run.
#[test]
fn the_fuzzer_reports_a_panic_and_an_allocation_beyond_the_bound() {
    let seeds = vec![b"{\"a\": [1, 2, 3]}".to_vec()];
    let panicked = catch_unwind(|| {
        fuzz("planted-panic", &seeds, |b| {
            assert!(!b.contains(&b'9'), "a planted panic");
        })
    });
    let message = panicked.expect_err("the planted panic is found");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("planted-panic: a panic on iteration"),
        "{text}"
    );
    let hoarded = catch_unwind(|| {
        fuzz("planted-hoard", &seeds, |b| {
            if b.len() < 8 {
                let v = vec![1u8; MAX_LIVE_BYTES + 1];
                std::hint::black_box(&v);
            }
        })
    });
    let message = hoarded.expect_err("the allocation is found");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(text.contains("bytes held on iteration"), "{text}");
}
