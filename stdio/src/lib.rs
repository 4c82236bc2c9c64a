//! `rebalance-manager-stdio`: the production manager behind the driver protocol of
//! `spec/driver-protocol.md`, our own implementation under test for
//! `rebalance-conformance replay --sut` and `exhaustive --sut`.
//!
//! - [`wire`]: the protocol's lines as types (shared with the harness, which speaks the other
//!   end); [`decode`]: decoding with field paths;
//! - [`convert`]: the manager's types to the wire and back;
//! - [`server`]: the request loop.
//!
//! This crate depends on the manager only, never on the model.

#![forbid(unsafe_code)]

pub mod server;
// The encodings are the `rebalance-wire` crate, so that every host (this driver, the `cluster`
// example's log recorder) writes with the definition the harness reads.
pub use rebalance_wire as wire;
pub use rebalance_wire::{convert, decode};
