//! The exhaustive depth-first search of `check` (the default strategy): the graph, the states,
//! the fingerprints and the verdicts of Stateright 0.31's DFS checker, at less cost per state.
//!
//! It follows exactly the edges Stateright's DFS follows: the model's `init_states`, `actions`
//! and `next_state` in the same order, `within_boundary` on every successor, a state expanded
//! the first time its fingerprint is seen, and every property evaluated on every state it
//! expands. The fingerprint is Stateright's own (its fixed-seed AHash), so the unique states are
//! Stateright's to the state; `model/tests/integration/dfs_engine.rs` checks counts and
//! verdicts against it.
//!
//! What it saves per state, measured in docs/measurements.md ("Our DFS against Stateright's"):
//! - no path per pending state. Stateright gives each successor a copy of its parent's action
//!   indices (a heap vector as long as the depth, 60 and more here); a discovery here needs
//!   only its length, the depth at which it was found;
//! - no shared map lookup per property and state. Stateright asks a `DashMap` keyed by the
//!   property's name, hashed with SipHash, for each of the ~50 properties on every state; here a
//!   property's first discovery is an atomic slot, and a `sometimes` already found is not
//!   evaluated again (the `sometimes` conditions have no side effects; every `always` is still
//!   evaluated on every state, since the first LIVE-* counts the fair end states);
//! - a fingerprint set of open-addressed `u64` tables, one per shard, where Stateright's
//!   `DashSet` looks up and inserts through `hashbrown`'s control bytes.
//!
//! It differs from Stateright's only where Stateright is nondeterministic or arbitrary: which
//! example a `sometimes` keeps (the first found here, the last found there, so the reported
//! length can differ) and `max_depth` (the deepest state in this run's DFS tree), both
//! depending on the order and, with threads, on timing.

use crate::check::walk::fingerprint;
use crate::state::SystemState;
use crate::step::model::RebalanceModel;
use stateright::{Expectation, Model, Property};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// What one exhaustive search found.
#[derive(Clone, Debug)]
pub struct Search {
    /// Distinct fingerprints, the initial states' included (Stateright's `unique_state_count`).
    pub unique_states: usize,
    /// States generated, revisits included: the initial states within the boundary plus every
    /// successor within it (Stateright's `state_count`).
    pub total_states: usize,
    /// The depth of the deepest state expanded, the initial states at depth 1.
    pub max_depth: usize,
    /// Per property of `Model::properties`, in its order: the number of actions to the first
    /// state found that violates it (an `always`) or satisfies it (a `sometimes`).
    pub discoveries: Vec<Option<usize>>,
}

/// Counters a caller may read while the search runs, to print progress.
#[derive(Default)]
pub struct Progress {
    pub unique_states: AtomicUsize,
    pub total_states: AtomicUsize,
    pub max_depth: AtomicUsize,
}

/// Searches `model`'s whole graph on `threads` threads (at least one), calling `tick` with the
/// running counters about every `every` until the search ends.
pub fn search(
    model: &RebalanceModel,
    threads: usize,
    every: Duration,
    mut tick: impl FnMut(&Progress),
) -> Search {
    let threads = threads.max(1);
    let properties = model.properties();
    let shared = Shared {
        model,
        seen: (0..SHARDS).map(|_| Mutex::new(Table::new())).collect(),
        found: properties
            .iter()
            .map(|_| AtomicUsize::new(usize::MAX))
            .collect(),
        properties,
        pool: Mutex::new(Pool::default()),
        wake: Condvar::new(),
        idle: AtomicUsize::new(0),
        threads,
        progress: Progress::default(),
    };
    let mut first = VecDeque::new();
    for s in model.init_states() {
        if !model.within_boundary(&s) {
            continue;
        }
        shared.progress.total_states.fetch_add(1, Ordering::Relaxed);
        if shared.insert(fingerprint(&s)) {
            first.push_back((s, 1));
        }
    }
    shared.lock_pool().batches.push(first);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| shared.work()))
            .collect();
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(every.min(Duration::from_millis(20)));
            tick(&shared.progress);
        }
    });
    Search {
        unique_states: shared.seen.iter().map(|t| lock(t).len).sum(),
        total_states: shared.progress.total_states.load(Ordering::Relaxed),
        max_depth: shared.progress.max_depth.load(Ordering::Relaxed),
        discoveries: shared
            .found
            .iter()
            .map(|f| Some(f.load(Ordering::Relaxed)).filter(|&d| d != usize::MAX))
            .collect(),
    }
}

/// A state waiting to be expanded, with its depth (the initial states at 1).
type Job = (SystemState, usize);

/// The fingerprint set's shards: the top bits of a fingerprint pick its shard, the low bits
/// its slot, so the two are independent.
const SHARDS: usize = 64;
const SHARD_SHIFT: u32 = 58;

/// How many states a worker expands between updates of the shared counters.
const FLUSH_EVERY: usize = 1024;

struct Shared<'m> {
    model: &'m RebalanceModel,
    properties: Vec<Property<RebalanceModel>>,
    seen: Vec<Mutex<Table>>,
    found: Vec<AtomicUsize>,
    pool: Mutex<Pool>,
    wake: Condvar,
    /// Workers waiting for work, read without the pool's lock to decide whether to share.
    idle: AtomicUsize,
    threads: usize,
    progress: Progress,
}

/// Work shared between the workers, and whether the search is over.
#[derive(Default)]
struct Pool {
    batches: Vec<VecDeque<Job>>,
    idle: usize,
    done: bool,
}

/// A worker's counters, added to the shared ones every [`FLUSH_EVERY`] states and at the end.
#[derive(Default)]
struct Local {
    expanded: usize,
    total: usize,
    unique: usize,
    max_depth: usize,
}

impl Shared<'_> {
    fn lock_pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        lock(&self.pool)
    }

    fn insert(&self, fp: u64) -> bool {
        lock(&self.seen[(fp >> SHARD_SHIFT) as usize]).insert(fp)
    }

    /// One worker: expands states from its own stack, last pushed first, takes a batch from
    /// the pool when its stack is empty, and gives half of its stack (the oldest, shallowest
    /// states, whose subtrees are the largest) when another worker waits for work.
    fn work(&self) {
        let _ends = EndOnPanic(self);
        let mut stack = VecDeque::new();
        let mut actions = Vec::new();
        let mut local = Local::default();
        loop {
            let Some((state, depth)) = stack.pop_back() else {
                match self.take() {
                    Some(batch) => {
                        stack = batch;
                        continue;
                    }
                    None => break,
                }
            };
            self.expand(&state, depth, &mut stack, &mut actions, &mut local);
            if stack.len() > 1 && self.idle.load(Ordering::Relaxed) > 0 {
                self.give(&mut stack);
            }
            if local.expanded % FLUSH_EVERY == 0 {
                self.flush(&mut local);
            }
        }
        self.flush(&mut local);
    }

    fn expand(
        &self,
        state: &SystemState,
        depth: usize,
        stack: &mut VecDeque<Job>,
        actions: &mut Vec<crate::step::action::Action>,
        local: &mut Local,
    ) {
        local.expanded += 1;
        local.max_depth = local.max_depth.max(depth);
        for (p, found) in self.properties.iter().zip(&self.found) {
            let discovered = match p.expectation {
                Expectation::Always => !(p.condition)(self.model, state),
                Expectation::Sometimes => {
                    found.load(Ordering::Relaxed) == usize::MAX && (p.condition)(self.model, state)
                }
                Expectation::Eventually => {
                    unreachable!("the model has no eventually property")
                }
            };
            if discovered {
                let _ = found.compare_exchange(
                    usize::MAX,
                    depth - 1,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                );
            }
        }
        self.model.actions(state, actions);
        for action in actions.drain(..) {
            let Some(next) = self.model.next_state(state, action) else {
                continue;
            };
            if !self.model.within_boundary(&next) {
                continue;
            }
            local.total += 1;
            if self.insert(fingerprint(&next)) {
                local.unique += 1;
                stack.push_back((next, depth + 1));
            }
        }
    }

    fn flush(&self, local: &mut Local) {
        let p = &self.progress;
        p.total_states.fetch_add(local.total, Ordering::Relaxed);
        p.unique_states.fetch_add(local.unique, Ordering::Relaxed);
        p.max_depth.fetch_max(local.max_depth, Ordering::Relaxed);
        local.total = 0;
        local.unique = 0;
    }

    /// A batch from the pool; None once every worker waits and the pool is empty (the end).
    fn take(&self) -> Option<VecDeque<Job>> {
        let mut pool = self.lock_pool();
        loop {
            if let Some(batch) = pool.batches.pop() {
                return Some(batch);
            }
            if pool.done {
                return None;
            }
            pool.idle += 1;
            self.idle.store(pool.idle, Ordering::Relaxed);
            if pool.idle == self.threads {
                pool.done = true;
                self.wake.notify_all();
                return None;
            }
            pool = self.wake.wait(pool).unwrap_or_else(|e| e.into_inner());
            pool.idle -= 1;
            self.idle.store(pool.idle, Ordering::Relaxed);
        }
    }

    fn give(&self, stack: &mut VecDeque<Job>) {
        let mut pool = self.lock_pool();
        if pool.batches.is_empty() && pool.idle > 0 {
            let half = stack.len() / 2;
            pool.batches.push(stack.drain(..half).collect());
            self.wake.notify_one();
        }
    }
}

/// Ends the search when a worker panics (a model step that panics, as a mutant may make it): the
/// workers waiting for work would otherwise wait for it forever, and the search would hang where
/// it should fail. The panic reaches the caller through the thread scope.
struct EndOnPanic<'a, 'm>(&'a Shared<'m>);

impl Drop for EndOnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.lock_pool().done = true;
            self.0.wake.notify_all();
        }
    }
}

/// A lock that a panicking worker poisoned still holds consistent data (each update under it is
/// one step), and the panic itself reaches the caller through the thread scope.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// An open-addressed set of nonzero fingerprints (0 marks an empty slot), probed linearly and
/// kept at most three quarters full.
struct Table {
    slots: Vec<u64>,
    len: usize,
}

impl Table {
    fn new() -> Table {
        Table {
            slots: vec![0; 1024],
            len: 0,
        }
    }

    /// Adds `fp`; false if it was there.
    fn insert(&mut self, fp: u64) -> bool {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let mut i = fp as usize & mask;
        loop {
            match self.slots[i] {
                0 => {
                    self.slots[i] = fp;
                    self.len += 1;
                    return true;
                }
                s if s == fp => return false,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn grow(&mut self) {
        let doubled = vec![0; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, doubled);
        let mask = self.slots.len() - 1;
        for fp in old.into_iter().filter(|&f| f != 0) {
            let mut i = fp as usize & mask;
            while self.slots[i] != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = fp;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_keeps_each_fingerprint_once_across_growth() {
        let mut t = Table::new();
        // Fingerprints that share their low bits probe into each other's slots.
        let fps: Vec<u64> = (1..5000u64).map(|i| i << 20 | 7).collect();
        for &f in &fps {
            assert!(t.insert(f), "{f} was new");
        }
        for &f in &fps {
            assert!(!t.insert(f), "{f} was there");
        }
        assert_eq!(t.len, fps.len());
        assert!(t.slots.len() >= 4 * fps.len() / 3);
    }
}
