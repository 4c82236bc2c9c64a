//! The production rebalance manager of the Fluss coordinator's bucket-rebalance protocol
//! (`spec/protocol.md`): a pure protocol core ([`Manager`]) with a narrow storage port
//! ([`Store`]) and the in-memory adapter ([`MemStore`]). The durable adapters (a file store and
//! a ZooKeeper store) are the `rebalance-stores` crate and the JSON encodings of the driver
//! protocol and the coordinator log the `rebalance-wire` crate, so this crate depends on serde
//! and thiserror only (CI checks its dependency tree) and cannot reach a clock, a file or a
//! socket through a dependency.
//!
//! The host starts a manager with [`Manager::start`], feeds [`Input`]s with the current time to
//! [`Manager::handle`], and carries out the returned [`Effect`]s in order: send messages, append
//! events to its FIFO event queue (and feed them back as [`Input::Event`]), reply to clients.
//! The core has no clock, thread, socket, randomness or file I/O.
//!
//! ```
//! use std::collections::BTreeSet;
//! use rebalance_manager::*;
//!
//! // Environment: one bucket on servers [0, 1, 2], led by 0.
//! let mut store = MemStore::new();
//! let lai = LeaderAndIsr { leader: Some(0), isr: [0, 1, 2].into(), ..LeaderAndIsr::default() };
//! store.put_bucket(7, BucketRecord { assignment: vec![0, 1, 2], lai });
//! let live: BTreeSet<ServerId> = [0, 1, 2, 3].into();
//!
//! // R17: a new incarnation; the host feeds back the Recover event it was asked to enqueue.
//! let (mut m, effects) = Manager::start(Config::default(), store, live, 0).unwrap();
//! assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
//! assert!(m.handle(0, Input::Event(Event::Recover)).is_empty());
//!
//! // R1: register a move [0, 1, 2] -> [1, 2, 3]; Phase A runs at once.
//! let entry = PlanEntry::new(vec![0, 1, 2], vec![1, 2, 3], Some(0)).unwrap();
//! let effects = m.handle(0, Input::Register { plan: Plan::new(vec![(7, entry)]) });
//! assert_eq!(effects[0], Effect::Reply(Reply::Accepted(1)));
//! assert_eq!(effects.len(), 5); // the reply and one Nli per live member of the union
//! assert_eq!(m.bucket(7).unwrap().assignment, vec![1, 2, 3, 0]);
//!
//! // Fault injection: the next store operation fails; the cancel changes nothing.
//! m.store_mut().fail_nth_op(1);
//! assert_eq!(m.handle(0, Input::Cancel), vec![Effect::Reply(Reply::StoreError)]);
//! assert!(m.check_invariants().is_ok());
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Layers: `core` (the pure protocol core) uses the storage port `store::Store`; `store` holds
// the port and the in-memory adapter. The simulated cluster is test support, not API.
pub mod core;
pub mod store;

// The simulated cluster serves this crate's tests and bench only. It sits behind the `testing`
// feature, off by default, so it is not part of the library a host links. The crate enables
// the feature for its own tests and bench through a dev-dependency on itself (Cargo.toml), so
// `cargo test` and `cargo bench` need no extra flags, while `cargo build` of a dependent (the
// conformance crate, a host) does not compile it. A dev-only location (a file under tests/
// pulled into the bench with `#[path]`) would duplicate the module in every test binary and
// lose its documentation; the feature keeps it one documented module.
#[cfg(feature = "testing")]
pub mod sim;

pub use crate::core::bucket_map::BucketMap;
pub use crate::core::config::{Config, ConfigError};
pub use crate::core::effects::{
    AdjustIsrError, Effect, Event, Input, Nli, PlanError, RejectReason, Reply, RequestContext,
};
pub use crate::core::invariants::InvariantViolation;
pub use crate::core::manager::{Manager, StartError};
#[cfg(feature = "testing")]
pub use crate::core::planted_bug::PlantedBug;
pub use crate::core::progress::{AttemptView, Flags, Progress, Snapshot, StatusCounts};
pub use crate::core::types::{
    Attempt, BucketId, BucketRecord, BucketStatus, Epoch, Key, LeaderAndIsr, Observed,
    OverallStatus, Plan, PlanEntry, PlanKind, RebalanceId, ServerId, TaskNode, TaskStatus,
};
pub use store::batch::{BatchStore, BatchedWrite};
pub use store::mem::MemStore;
pub use store::{ClusterState, PersistedState, Store, StoreError};
