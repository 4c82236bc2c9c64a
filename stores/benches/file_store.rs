//! `cargo bench -p rebalance-stores`: the FileStore under the manager, for 1k..1M buckets:
//! opening a store that holds a mid-migration rebalance and recovering from it (open, journal
//! replay, start, Recover), and one fsynced bucket write at that size. The states are the
//! manager's bench's (`impl/benches/fixtures/`), so the figures sit beside its in-memory
//! recovery. Set `BENCH_MAX_BUCKETS` to stop earlier.

// The bench measures wall-clock time.
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

#[path = "../../impl/benches/fixtures/mod.rs"]
mod fixtures;

use std::time::{Duration, Instant};

use rebalance_manager::{Effect, Input};
use rebalance_stores::{FileStore, FileStoreOptions};

use fixtures::{mid_migration_state, recover};

/// (open + start + Recover time, average write_bucket time with fsync)
fn file_recovery(n: u32) -> (Duration, Duration) {
    let dir = tempfile::tempdir().expect("temp dir");
    drop(
        FileStore::create(
            dir.path(),
            mid_migration_state(n),
            FileStoreOptions::default(),
        )
        .expect("create"),
    );
    let t = Instant::now();
    let store = FileStore::open(dir.path(), FileStoreOptions::default()).expect("open");
    let (d, mut m) = recover(store);
    let total = t.elapsed();
    let _ = d;
    assert!(m.counts().timeout >= 1);
    // Per-write cost at this size: R18 AdjustIsr writes (one journal record each).
    let writes = 100u32;
    let t = Instant::now();
    for i in 0..writes {
        let b = n - 1 - i;
        let rec = m.bucket(b).expect("bucket").clone();
        let isr = rec.lai.isr.iter().copied().take(2).collect();
        let effects = m.handle(
            0,
            Input::AdjustIsr {
                from: rec.lai.leader.expect("leader"),
                bucket: b,
                leader_epoch: 0,
                bucket_epoch: 0,
                isr,
            },
        );
        assert!(
            matches!(
                &effects[0],
                Effect::SendAdjustIsrResponse { result: Ok(_), .. }
            ),
            "{effects:?}"
        );
    }
    (total, t.elapsed() / writes)
}

fn main() {
    // `cargo bench` passes `--bench`; ignore arguments.
    let max: u32 = std::env::var("BENCH_MAX_BUCKETS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    println!(
        "rebalance-stores FileStore bench, seed {:#x}, {} servers, RF 3",
        fixtures::SEED,
        fixtures::SERVERS
    );
    println!(
        "{:>9} | {:>12} {:>10}",
        "buckets", "recover file", "file wr us"
    );
    for n in [1_000u32, 10_000, 100_000, 1_000_000] {
        if n > max {
            break;
        }
        let (rec_file, write) = file_recovery(n);
        println!(
            "{:>9} | {:>10.1}ms {:>10.1}",
            n,
            rec_file.as_secs_f64() * 1e3,
            write.as_secs_f64() * 1e6,
        );
    }
    println!(
        "recover file: open + journal replay + start + Recover of a persisted mid-migration plan"
    );
    println!("(40% at target, one bucket in the union); file wr us: one fsynced R18 bucket write at that size.");
}
