#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The file store's snapshot, opened from disk beside the intact journal the manager wrote
// (fuzz/seeds/file_store_journal/, kept current by fuzz_decoders).
const JOURNAL: &[u8] = include_bytes!("../seeds/file_store_journal/journal.0.log");

fuzz_target!(|data: &[u8]| {
    execute(data, |b| rebalance_fuzz::open_file_store(b, JOURNAL));
});
