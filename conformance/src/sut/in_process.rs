//! The manager in this process: each input runs at once, a fork is a clone.

use std::collections::VecDeque;
use std::convert::Infallible;

use rebalance_manager as mgr;

use super::{Incarnation, ManagerSide, Seen};
use crate::projection::{self, manager::AgeCaps};
use crate::translate;

impl ManagerSide for mgr::Manager<mgr::MemStore> {
    type Launcher = ();
    type Error = Infallible;

    fn start(
        _: &(),
        store: mgr::MemStore,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<Self, String>, Infallible> {
        Ok(incarnate(store, at, effects))
    }

    fn restart(
        &mut self,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, Infallible> {
        Ok(incarnate(self.store().clone(), at, effects).map(|m| *self = m))
    }

    fn fail_nth_store_op(&mut self, k: u64) -> Result<(), Infallible> {
        self.store_mut().fail_nth_op(k);
        Ok(())
    }

    #[inline]
    fn input(
        &mut self,
        now_ms: u64,
        input: mgr::Input,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<(), Infallible> {
        // `handle`, not `handle_into`: the entry point most hosts call is the one conformance
        // must see (a buffer-reusing host gets the same effects from `handle_into`, which
        // `handle` wraps).
        effects.append(&mut self.handle(now_ms, input));
        Ok(())
    }

    #[inline]
    fn settle(&mut self, _: &mut Vec<mgr::Effect>) -> Result<(), Infallible> {
        Ok(())
    }

    fn store_ops(&self) -> u64 {
        self.store().op_count()
    }

    fn fault_pending(&self) -> bool {
        self.store().fault_pending()
    }

    fn project(&self, queue: &VecDeque<mgr::Event>, caps: AgeCaps, o: &mut projection::State) {
        projection::manager::state(self.store().state(), &self.snapshot(), queue, caps, o);
    }

    fn invariant_violation(&self) -> Option<String> {
        self.check_invariants().err().map(|v| v.to_string())
    }

    fn progress(&self) -> mgr::Progress {
        mgr::Manager::progress(self)
    }

    /// The read accessors a host uses between steps, each against the model or the harness:
    /// the projection reads the snapshot and the store, so without this a wrong accessor would
    /// pass every walk.
    fn accessors_disagree(&self, seen: &Seen<'_>) -> Option<String> {
        accessors_disagree(self, self.store().state(), seen)
    }

    #[inline]
    fn fork(&mut self) -> Result<Self, Infallible> {
        Ok(self.clone())
    }

    #[inline]
    fn preserve(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

/// R17 on `store`: a new manager, its start's effects appended to `effects`.
fn incarnate(
    store: mgr::MemStore,
    at: Incarnation<'_>,
    effects: &mut Vec<mgr::Effect>,
) -> Result<mgr::Manager<mgr::MemStore>, String> {
    let (m, emitted) = mgr::Manager::start(at.config.clone(), store, at.live, at.now_ms)
        .map_err(|e| e.to_string())?;
    effects.extend(emitted);
    Ok(m)
}

/// Where the manager's read accessors disagree with `seen` and with `stored`, the store's state
/// as the core sees it (a batching adapter's included its open batch), if anywhere.
pub(super) fn accessors_disagree<S: mgr::Store>(
    m: &mgr::Manager<S>,
    stored: &mgr::PersistedState,
    seen: &Seen<'_>,
) -> Option<String> {
    let c = &seen.post.coordinator;
    if m.config() != seen.config {
        return Some(format!("config() is {:?}", m.config()));
    }
    if m.coordinator_epoch() != u64::from(c.ce) {
        return Some(format!(
            "coordinator_epoch() is {}, the model's ce {}",
            m.coordinator_epoch(),
            c.ce
        ));
    }
    if m.now_ms() != seen.now_ms {
        return Some(format!(
            "now_ms() is {}, the host's clock {}",
            m.now_ms(),
            seen.now_ms
        ));
    }
    if !m
        .live()
        .iter()
        .copied()
        .eq(c.live.iter().map(mgr::ServerId::from))
    {
        return Some(format!(
            "live() is {:?}, the model's live {:?}",
            m.live(),
            c.live
        ));
    }
    let (failures, last) = m.store_failures();
    if failures != seen.store_failures || last.is_some() != (failures > 0) {
        return Some(format!(
            "store_failures() is ({failures}, {last:?}); {} injected failures happened in this incarnation",
            seen.store_failures
        ));
    }
    let store = &stored.cluster.buckets;
    for (b, rec) in store {
        if m.bucket(*b) != Some(rec) {
            return Some(format!(
                "bucket({b}) is {:?}, the store's {rec:?}",
                m.bucket(*b)
            ));
        }
    }
    let absent = store.keys().next_back().map_or(0, |b| b + 1);
    if let Some(rec) = m.bucket(absent) {
        return Some(format!("bucket({absent}) of no bucket is {rec:?}"));
    }
    if !translate::same_plan(m.plan(), &c.plan) {
        return Some(format!(
            "plan() is {:?}, the model's plan {:?}",
            m.plan(),
            c.plan
        ));
    }
    None
}
