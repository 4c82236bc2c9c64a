#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, text, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The trace loader (spec/trace-format.md): version 1 and 2 traces, resolved against the model.
// Seeds: conformance/traces, model/traces and the suites of conformance/suite.
fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let _ = rebalance_model::Trace::from_json(&text(b));
    })
});
