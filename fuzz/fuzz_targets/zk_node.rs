#![no_main]
//! A cargo-fuzz target (docs/testing.md, "Fuzzing"); the allocation bound is fuzz/src/lib.rs's.

use libfuzzer_sys::fuzz_target;
use rebalance_fuzz::{execute, Bounded};

#[global_allocator]
static ALLOC: Bounded = Bounded;

// The ZooKeeper node codec: the versioned envelope and the data of every node ZkStore reads.
use rebalance_manager::BucketRecord;
use rebalance_stores::zk::codec::{
    decode, DeletedMarker, EpochNode, PlanChunk, RootHeader, TaskHeader,
};

fuzz_target!(|data: &[u8]| {
    execute(data, |b| {
        let _ = decode::<RootHeader>("root", b);
        let _ = decode::<EpochNode>("epoch", b);
        let _ = decode::<TaskHeader>("task", b);
        let _ = decode::<BucketRecord>("bucket", b);
        let _ = decode::<DeletedMarker>("deleted", b);
        let _ = decode::<PlanChunk>("chunk", b);
    })
});
