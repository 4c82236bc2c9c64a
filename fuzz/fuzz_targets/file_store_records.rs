#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The file store's journal records past their checksums: every line of the input gets its true
// CRC-32 (`with_record_checksums`), then the store opens it beside the intact snapshot.
// Seeds: the manager's journal (fuzz/seeds/file_store_journal/).
const SNAPSHOT: &[u8] = include_bytes!("../seeds/file_store_snapshot/snapshot.json");

fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        rebalance_fuzz::open_file_store(SNAPSHOT, &rebalance_fuzz::with_record_checksums(b))
    });
});
