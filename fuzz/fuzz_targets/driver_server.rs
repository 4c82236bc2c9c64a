#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The driver protocol's server: a whole session of requests served to its end, so the manager
// handles whatever decodes. Seed: the example session's requests.
fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let _ = rebalance_manager_stdio::server::serve(std::io::BufReader::new(b), std::io::sink());
    })
});
