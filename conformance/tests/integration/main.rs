//! The conformance crate's integration tests.
//!
//! One test binary for most of the crate's tests, each former test file a module: every file
//! linked separately repeated the optimised build of the crate and its dependencies' generic
//! code, which made the release test build the longest step of CI. The test files beside this
//! directory stay their own binaries because the mutation runs (`.cargo/mutants*.toml`) select
//! them by name and build only them for each mutant. nextest still runs every test in its own
//! process; filter by module (`cargo nextest run -p ... 'api::'`, or `cargo test --test
//! integration -- api::`).

mod cluster_cli;
#[path = "../common/mod.rs"]
mod common;
mod design_suites;
mod doc_paths;
mod failed_responses;
mod fluss_report;
mod fuzz_decoders;
mod group_commit;
mod import_cycles;
mod killed_log;
mod parallel_walk;
mod process_kill;
mod relay;
mod rule_labels;
mod suite;
mod sut;
mod trace_v2;
mod validate;
mod zk_ensemble;
