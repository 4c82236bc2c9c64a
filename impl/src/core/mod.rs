//! The pure protocol core: the manager's rules as a state machine, `handle(now_ms, input) ->
//! effects` (spec/protocol.md section 5), and the data it speaks in. Time and randomness are
//! inputs; there is no clock, thread, socket, randomness or file I/O in here. `impl/clippy.toml`
//! bans them for the whole crate, and the crate depends on no I/O crate
//! (`scripts/check-core-deps.sh`); the durable adapters live in `rebalance-stores`
//! (`stores/src/file.rs`, `stores/src/zk/mod.rs`), and only the bench and the tests that need
//! the clock or files opt out, each with a reasoned `allow`. The core reaches storage only
//! through the port, [`crate::store::Store`].
//!
//! Dependencies go one way: `types` <- `config`, `effects`, `progress` <- `manager` <-
//! `invariants` (which checks the manager's state).

// The bans of clippy.toml are errors here even without `-D warnings`, and an `allow` further up
// (at the crate root) cannot lift them for the core.
#![deny(clippy::disallowed_methods, clippy::disallowed_types)]

pub mod bucket_map;
pub mod config;
pub mod effects;
pub mod invariants;
pub mod manager;
#[cfg(feature = "testing")]
pub mod planted_bug;
pub mod progress;
pub mod types;
