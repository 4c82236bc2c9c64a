#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, text, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The configuration loaders: the model's (model/configs, `--config FILE`) and the manager's
// (`rebalance_manager::Config::from_json`). Both read the same input; each refuses what is not
// its own.
fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let t = text(b);
        let _ = rebalance_model::Config::from_json_str(&t);
        let _ = rebalance_manager::Config::from_json(&t);
    })
});
