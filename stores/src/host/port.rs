//! How a [`super::Host`] reaches the group-commit adapter inside the core's store.

use rebalance_manager::{BatchStore, Store};

use crate::GroupCommit;

/// The core's store in a host: the [`GroupCommit`] adapter itself, or a program's wrapper around
/// it (one that counts operations for a log, or injects faults on the core's side), which says
/// where the adapter is.
pub trait HostStore: Store {
    /// The durable store under the adapter.
    type Durable: BatchStore;

    /// The adapter, to read its counts.
    fn adapter(&self) -> &GroupCommit<Self::Durable>;

    /// The adapter, to flush it.
    fn adapter_mut(&mut self) -> &mut GroupCommit<Self::Durable>;
}

impl<S: BatchStore> HostStore for GroupCommit<S> {
    type Durable = S;

    fn adapter(&self) -> &GroupCommit<S> {
        self
    }

    fn adapter_mut(&mut self) -> &mut GroupCommit<S> {
        self
    }
}
