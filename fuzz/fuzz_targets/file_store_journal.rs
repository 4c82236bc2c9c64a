#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The file store's journal, opened from disk beside the intact snapshot the manager wrote
// (fuzz/seeds/file_store_snapshot/, kept current by fuzz_decoders).
const SNAPSHOT: &[u8] = include_bytes!("../seeds/file_store_snapshot/snapshot.json");

fuzz_target!(|data: &[u8]| {
    execute(data, |b| rebalance_fuzz::open_file_store(SNAPSHOT, b));
});
