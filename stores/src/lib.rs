//! The durable adapters of the rebalance manager's storage port ([`rebalance_manager::Store`]):
//! [`FileStore`], an embedded store of one directory (a checksummed snapshot and journal, each
//! write fsynced before it returns), and [`ZkStore`], the port over Apache ZooKeeper, where Fluss
//! keeps its coordinator state. Both make a batch of writes durable in one operation
//! ([`rebalance_manager::BatchStore`]), and [`GroupCommit`] is the host's batching adapter that
//! uses it: group commit, with the procedure that keeps effects back until their writes are
//! durable.
//!
//! This crate is where the manager meets the disk and the network; the manager's own crate,
//! the pure protocol core with the port and the in-memory store, does no I/O and depends on
//! neither (CI checks its dependency tree).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod crc32;
pub mod file;
pub mod group_commit;
mod header;
pub mod host;
pub mod zk;

pub use file::{FileStore, FileStoreError, FileStoreOptions};
pub use group_commit::{GroupCommit, Outbox};
pub use host::{Flow, Host, HostStore, Observer, Stopped};
pub use zk::{ZkStore, ZkStoreError, ZkStoreOptions};

// The embedding example of docs/manager.md ("Embedding the manager: the host") compiles and
// runs as a doc test of this crate, so the documentation cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../docs/manager.md")]
struct ManagerDoc;
