#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, text, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The coordinator log parser of `rebalance-conformance validate` (spec/log-format.md).
// Seeds: the log a coordinator writes for conformance/traces/move-completes.json, whole and by line.
fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let _ = rebalance_conformance::validate::parse(&text(b));
    })
});
