//! The manager in this process: each input runs at once, a fork is a clone.

use std::collections::VecDeque;
use std::convert::Infallible;

use rebalance_manager as mgr;

use super::{Incarnation, ManagerSide};
use crate::projection::{self, manager::AgeCaps};

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
        self.handle_into(now_ms, input, effects);
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
