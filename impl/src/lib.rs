//! The production rebalance manager of the Fluss coordinator's bucket-rebalance protocol
//! (`spec/protocol.md`): a pure protocol core ([`Manager`]) with a narrow storage port
//! ([`Store`]) and two adapters ([`MemStore`], [`FileStore`]).
//!
//! The host starts a manager with [`Manager::start`], feeds [`Input`]s with the current time to
//! [`Manager::handle`], and carries out the returned [`Effect`]s in order: send messages, append
//! events to its FIFO event queue (and feed them back as [`Input::Event`]), reply to clients.
//! The core has no clock, thread, socket, randomness or file I/O.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod config;
pub mod effects;
pub mod invariants;
pub mod manager;
pub mod progress;
pub mod sim;
pub mod store;
pub mod types;

pub use config::{Config, ConfigError};
pub use effects::{
    AdjustIsrError, Effect, Event, Input, Nli, PlanError, RejectReason, Reply, RequestContext,
};
pub use invariants::InvariantViolation;
pub use manager::{Manager, StartError};
pub use progress::{AttemptView, Flags, Progress, Snapshot, StatusCounts};
pub use store::file::{FileStore, FileStoreError, FileStoreOptions};
pub use store::mem::MemStore;
pub use store::{ClusterState, PersistedState, Store, StoreError};
pub use types::{
    Attempt, BucketId, BucketRecord, BucketStatus, Epoch, Key, Kind, LeaderAndIsr, Observed,
    OverallStatus, Plan, PlanEntry, RebalanceId, ServerId, TaskNode, TaskStatus,
};
