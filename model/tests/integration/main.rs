//! The model crate's integration tests.
//!
//! One test binary for most of the crate's tests, each former test file a module: every file
//! linked separately repeated the optimised build of the crate and its dependencies' generic
//! code, which made the release test build the longest step of CI. The test files beside this
//! directory stay their own binaries because the mutation runs (`.cargo/mutants*.toml`) select
//! them by name and build only them for each mutant. nextest still runs every test in its own
//! process; filter by module (`cargo nextest run -p ... 'api::'`, or `cargo test --test
//! integration -- api::`).

mod api;
mod bench;
mod bounds;
mod browser;
mod bugs;
mod catalogue;
mod cli;
#[path = "../common/mod.rs"]
mod common;
mod cycles;
mod designs;
mod dfs_engine;
mod explorer;
mod fairness;
mod fault_coverage;
mod por;
mod presets;
mod progress;
mod suite;
mod superseded;
mod traces;
mod transitions;
mod variants;
