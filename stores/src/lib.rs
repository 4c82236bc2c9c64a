//! The durable adapters of the rebalance manager's storage port ([`rebalance_manager::Store`]):
//! [`FileStore`], an embedded store of one directory (a checksummed snapshot and journal, each
//! write fsynced before it returns), and [`ZkStore`], the port over Apache ZooKeeper, where Fluss
//! keeps its coordinator state.
//!
//! This crate is where the manager meets the disk and the network; the manager's own crate,
//! the pure protocol core with the port and the in-memory store, does no I/O and depends on
//! neither (CI checks its dependency tree).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod crc32;
pub mod file;
mod header;
pub mod zk;

pub use file::{FileStore, FileStoreError, FileStoreOptions};
pub use zk::{ZkStore, ZkStoreError, ZkStoreOptions};
