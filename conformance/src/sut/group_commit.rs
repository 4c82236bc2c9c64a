//! The manager in this process inside the library's host (`rebalance_stores::Host`) on the
//! group-commit adapter (`rebalance_stores::group_commit`): the core writes through
//! [`GroupCommit`] over a [`MemStore`](mgr::MemStore), whose durable state lags the writes until
//! a flush, and the host holds every input's effects until its writes are durable, as the host
//! procedure says (spec/protocol.md, "Group commit").
//!
//! The harness still compares, on every edge, the effects the core emitted (the host's observer
//! hands them over) and the projection of the state the core sees (the store with the open batch)
//! with the model's step. What the side adds is the host: batches of at most `limit` writes,
//! flushed by the adapter when full, by a seeded schedule after any step, and before any step
//! that could need a held effect (a delivery, loss or copy of a message, the processing of a held
//! event, a coordinator crash). Whenever the host releases an effect the observer checks that it
//! is backed by the durable store (`INV-RELEASED-DURABLE`, [`released_durable`]); after every
//! flush the durable store must be the state the core sees; and an event the harness processes
//! must be the front of the host's queue (released before it is taken). A violation is reported
//! as the manager's own invariant failing.

use std::collections::VecDeque;
use std::convert::Infallible;

use rebalance_manager as mgr;
use rebalance_model::Action;
use rebalance_stores::group_commit::released_durable;
use rebalance_stores::{Flow, GroupCommit, Host, HostStore, Observer};

use super::in_process::accessors_disagree;
use super::{Incarnation, ManagerSide, Seen};
use crate::projection::{self, manager::AgeCaps};

/// How the side batches: at most `limit` writes a batch, and a flush after a step with
/// probability `flush_per_mille / 1000`, drawn from `seed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batching {
    pub limit: usize,
    pub flush_per_mille: u32,
    pub seed: u64,
}

impl Default for Batching {
    fn default() -> Self {
        Batching {
            limit: 3,
            flush_per_mille: 300,
            seed: 1,
        }
    }
}

/// The store the core writes through: the batching adapter, with the harness's fault injection
/// ("the k-th store operation of this step fails") on the core's side of it, where the model
/// counts operations.
#[derive(Clone, Debug)]
pub struct Faulty<S> {
    inner: S,
    ops: u64,
    fail_at: Option<u64>,
}

impl<S> Faulty<S> {
    fn op(&mut self) -> Result<(), mgr::StoreError> {
        self.ops += 1;
        if self.fail_at == Some(self.ops) {
            self.fail_at = None;
            return Err(mgr::StoreError::Injected);
        }
        Ok(())
    }
}

impl<S: mgr::Store> mgr::Store for Faulty<S> {
    fn elect_coordinator(&mut self) -> Result<mgr::Epoch, mgr::StoreError> {
        self.op()?;
        self.inner.elect_coordinator()
    }
    fn load_cluster(&mut self) -> Result<mgr::ClusterState, mgr::StoreError> {
        self.op()?;
        self.inner.load_cluster()
    }
    fn read_task(&mut self) -> Result<Option<mgr::TaskNode>, mgr::StoreError> {
        self.op()?;
        self.inner.read_task()
    }
    fn write_task(&mut self, e: mgr::Epoch, t: &mgr::TaskNode) -> Result<(), mgr::StoreError> {
        self.op()?;
        self.inner.write_task(e, t)
    }
    fn write_bucket(
        &mut self,
        e: mgr::Epoch,
        b: mgr::BucketId,
        r: &mgr::BucketRecord,
    ) -> Result<(), mgr::StoreError> {
        self.op()?;
        self.inner.write_bucket(e, b, r)
    }
    fn mark_deleted(&mut self, e: mgr::Epoch, b: mgr::BucketId) -> Result<(), mgr::StoreError> {
        self.op()?;
        self.inner.mark_deleted(e, b)
    }
    fn inspect(&self) -> Option<&mgr::PersistedState> {
        self.inner.inspect()
    }
}

type Adapter = Faulty<GroupCommit<mgr::MemStore>>;

impl HostStore for Adapter {
    type Durable = mgr::MemStore;

    fn adapter(&self) -> &GroupCommit<mgr::MemStore> {
        &self.inner
    }

    fn adapter_mut(&mut self) -> &mut GroupCommit<mgr::MemStore> {
        &mut self.inner
    }
}

/// What the side watches on the host: the effects each input emitted (for the harness to
/// compare with the model's step) and every released effect, checked against the durable store.
struct Watch<'a> {
    emitted: &'a mut Vec<mgr::Effect>,
    violation: &'a mut Option<String>,
}

impl Observer<()> for Watch<'_> {
    type Error = Infallible;

    fn handled(&mut self, _: &(), effects: &[mgr::Effect]) -> Result<(), Infallible> {
        self.emitted.extend(effects.iter().cloned());
        Ok(())
    }

    fn released(
        &mut self,
        _: &(),
        effects: &[mgr::Effect],
        durable: Option<&mgr::PersistedState>,
    ) -> Result<(), Infallible> {
        let durable = durable.expect("MemStore shows its durable state");
        for e in effects {
            if let Err(why) = released_durable(e, durable) {
                self.violation
                    .get_or_insert(format!("INV-RELEASED-DURABLE: {why}"));
            }
        }
        Ok(())
    }
}

/// The manager on the batching adapter, inside the host that holds its effects.
#[derive(Clone)]
pub struct GroupCommitted {
    host: Host<Adapter>,
    batching: Batching,
    rng: u64,
    /// The first violation of the host's properties, reported at the next check.
    violation: Option<String>,
}

impl GroupCommitted {
    fn durable(&self) -> &mgr::PersistedState {
        self.host.adapter().inner().state()
    }

    /// The store as the core sees it: the durable state with the open batch applied.
    fn logical(&self) -> mgr::PersistedState {
        self.host
            .adapter()
            .logical_state()
            .expect("MemStore shows its state")
    }

    fn chance(&mut self, per_mille: u32) -> bool {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % 1000 < u64::from(per_mille)
    }

    fn note(&mut self, violation: String) {
        self.violation.get_or_insert(violation);
    }

    /// Step 3 then 4; afterwards the durable store must be what the core sees. The released
    /// messages are the harness's already (it routes what the core emitted): dropped here.
    fn flush(&mut self) {
        let mut emitted = Vec::new();
        let mut watch = Watch {
            emitted: &mut emitted,
            violation: &mut self.violation,
        };
        let Ok(flow) = self.host.flush(&mut watch);
        if let Flow::Stopped(e) = flow {
            self.note(format!("a flush of the in-memory store failed: {e}"));
            return;
        }
        self.host.take_outgoing();
        if self.durable() != &self.logical() {
            self.note("after a flush the durable store is not the store the core sees".into());
        }
    }

    fn start_on(
        store: mgr::MemStore,
        batching: Batching,
        rng: u64,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Self, String> {
        let adapter = Faulty {
            inner: GroupCommit::new(store, batching.limit),
            ops: 0,
            fail_at: None,
        };
        let (mut host, emitted) = Host::start(at.config.clone(), adapter, at.live, at.now_ms)
            .map_err(|e| e.to_string())?;
        host.take_outgoing();
        effects.extend(emitted);
        Ok(GroupCommitted {
            host,
            batching,
            rng,
            violation: None,
        })
    }

    /// Whether the model's step `action` could need an effect that is still held.
    fn needs_release(&self, action: &Action) -> bool {
        match action {
            Action::DeliverNli { .. }
            | Action::DeliverAdjustIsrResponse { .. }
            | Action::DropMessage { .. }
            | Action::DuplicateMessage { .. }
            | Action::CrashCoordinator => self.host.holding(),
            Action::ProcessEvent { .. } => self
                .host
                .held_effects()
                .any(|e| matches!(e, mgr::Effect::Enqueue(_))),
            _ => false,
        }
    }
}

impl ManagerSide for GroupCommitted {
    type Launcher = Batching;
    type Error = Infallible;

    fn start(
        batching: &Batching,
        store: mgr::MemStore,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<Self, String>, Infallible> {
        Ok(Self::start_on(store, *batching, batching.seed, at, effects))
    }

    /// R17 on the durable store: the side flushed before the crash (see `before_step`), so the
    /// durable store is the one the model's crash keeps.
    fn restart(
        &mut self,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, Infallible> {
        let store = self.host.adapter().inner().clone();
        let violation = self.violation.take();
        Ok(
            Self::start_on(store, self.batching, self.rng, at, effects).map(|mut side| {
                side.violation = violation;
                *self = side;
            }),
        )
    }

    fn fail_nth_store_op(&mut self, k: u64) -> Result<(), Infallible> {
        let store = self.host.store_mut();
        store.fail_at = (k > 0).then_some(store.ops + k);
        Ok(())
    }

    fn input(
        &mut self,
        now_ms: u64,
        input: mgr::Input,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<(), Infallible> {
        // The event the harness processes is the front of the host's queue: released before it
        // is taken (G1 for events).
        if let mgr::Input::Event(ev) = &input {
            let front = self.host.next_event();
            if front.as_ref() != Some(ev) {
                self.note(format!(
                    "the event {ev:?} is processed while the host's queue front is {front:?}"
                ));
            }
        }
        let mut watch = Watch {
            emitted: effects,
            violation: &mut self.violation,
        };
        let Ok(flow) = self.host.offer(now_ms, input, &mut watch, |_| ());
        if let Flow::Stopped(e) = flow {
            self.note(format!("a batch of the in-memory store was lost: {e}"));
        }
        self.host.take_outgoing();
        Ok(())
    }

    /// The end of a step: a flush by the seeded schedule.
    fn settle(&mut self, _: &mut Vec<mgr::Effect>) -> Result<(), Infallible> {
        if self.chance(self.batching.flush_per_mille) {
            self.flush();
        }
        Ok(())
    }

    fn before_step(&mut self, action: &Action) -> Result<(), Infallible> {
        if self.needs_release(action) {
            self.flush();
        }
        Ok(())
    }

    fn store_ops(&self) -> u64 {
        self.host.store().ops
    }

    fn fault_pending(&self) -> bool {
        self.host.store().fail_at.is_some()
    }

    fn project(&self, queue: &VecDeque<mgr::Event>, caps: AgeCaps, o: &mut projection::State) {
        projection::manager::state(
            &self.logical(),
            &self.host.manager().snapshot(),
            queue,
            caps,
            o,
        );
    }

    fn invariant_violation(&self) -> Option<String> {
        if let Some(v) = &self.violation {
            return Some(format!("group commit: {v}"));
        }
        self.host
            .manager()
            .check_invariants()
            .err()
            .map(|v| v.to_string())
    }

    fn progress(&self) -> mgr::Progress {
        self.host.manager().progress()
    }

    fn accessors_disagree(&self, seen: &Seen<'_>) -> Option<String> {
        accessors_disagree(self.host.manager(), &self.logical(), seen)
    }

    fn fork(&mut self) -> Result<Self, Infallible> {
        Ok(self.clone())
    }

    fn preserve(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}
