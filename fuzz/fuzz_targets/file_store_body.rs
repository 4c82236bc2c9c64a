#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The file store's snapshot body past its header's length and checksum: the input is the body,
// framed by a true header (`snapshot_of_body`), opened beside the journal the manager wrote.
// Seeds: the manager's snapshot without its header line (fuzz/seeds/file_store_snapshot/).
const JOURNAL: &[u8] = include_bytes!("../seeds/file_store_journal/journal.0.log");

fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        rebalance_fuzz::open_file_store(&rebalance_fuzz::snapshot_of_body(b), JOURNAL)
    });
});
