//! The manager crate's integration tests.
//!
//! One test binary for the crate, each former test file a module: every file linked
//! separately repeated the optimised build of the crate and its dependencies' generic code, which
//! made the release test build the longest step of CI. nextest still runs every test in its own
//! process; filter by module (`cargo nextest run -p ... 'api::'`, or `cargo test --test
//! integration -- api::`).

mod common;
mod golden_client;
mod golden_execute;
mod golden_liveness;
mod golden_recovery;
mod golden_responses;
mod golden_timers;
mod liveness_retry;
mod observe;
mod prop;
