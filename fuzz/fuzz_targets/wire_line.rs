#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, text, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The driver protocol's line decoder (spec/driver-protocol.md), for requests and responses.
// Seeds: the example session of spec/driver-protocol.md, one line per file.
use rebalance_wire::{decode, Request, Response};

fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let t = text(b);
        let _ = decode::line::<Request>(&t);
        let _ = decode::line::<Response>(&t);
    })
});
