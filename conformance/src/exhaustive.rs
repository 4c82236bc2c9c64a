//! Walks the model's whole reachable graph and checks every edge against the manager.
//!
//! Depth-first, with a clone of the harness at every branch point instead of a replay from the
//! initial state: each edge costs one model step, one manager input and one comparison. A model
//! state is expanded once (by the first path that reaches it); every action enabled in it is
//! checked, so every edge of the reachable graph is checked exactly once.
//!
//! [`walk`] runs on every core (two workers here) that share the set of seen states and hand
//! each other work; the counts of states and edges and the coverage do not depend on the
//! interleaving. A divergence is reported from a second, single-threaded walk, so the reported
//! path is the same on every run. [`walk_bounded`] (a sample) is single-threaded.
//!
//! [`walk_sut`] walks against an implementation under test in a child process
//! (`spec/driver-protocol.md`), single-threaded: the branch points are snapshots in the child,
//! which one child holds for one walker.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rebalance_manager as mgr;
use rebalance_model::{Action, RebalanceModel, SystemState};

use crate::coverage::Coverage;
use crate::harness::{Failure, Mismatch};
use crate::lockstep::{Explored, Lockstep, Position};
use crate::sut::driver::{DriverError, SutCommand};
use crate::sut::remote::Remote;
use crate::sut::ManagerSide;

/// A path as a shared linked list, so that siblings share their prefix.
struct PathNode {
    action: Action,
    parent: Option<Arc<PathNode>>,
}

fn path_to_vec(node: &Option<Arc<PathNode>>) -> Vec<Action> {
    let mut out = Vec::new();
    let mut cur = node.clone();
    while let Some(n) = cur {
        out.push(n.action);
        cur = n.parent.clone();
    }
    out.reverse();
    out
}

/// A divergence found by a walk: the path to it (its last action is the diverging step).
#[derive(Clone, Debug)]
pub struct Divergence {
    pub steps: Vec<Action>,
    pub mismatch: Mismatch,
}

/// What a completed walk saw.
#[derive(Clone, Debug, Default)]
pub struct WalkStats {
    pub states: u64,
    pub edges: u64,
    pub max_depth: usize,
    pub seconds: f64,
    pub coverage: Coverage,
    /// The whole reachable graph was walked (false when a bound stopped it).
    pub complete: bool,
}

impl WalkStats {
    pub fn edges_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.edges as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// The model's state fingerprint (`rebalance_model::check::walk`), shared by every graph search of
/// the project, so a state has one identity in the checker's own searches and in this walk.
pub use rebalance_model::check::walk::fingerprint;

/// Checks every edge of `model`'s reachable graph, on every core. `progress` is called about
/// every `progress_every` states with the running stats.
pub fn walk(
    model: &RebalanceModel,
    progress_every: u64,
    progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, Box<Divergence>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    walk_with_threads(model, threads, progress_every, progress)
}

/// [`walk`] with `threads` workers (1: the single-threaded walk).
pub fn walk_with_threads(
    model: &RebalanceModel,
    threads: usize,
    progress_every: u64,
    mut progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, Box<Divergence>> {
    if threads > 1 {
        if let Some(stats) = parallel_walk(model, threads, progress_every, &mut progress)? {
            return Ok(stats);
        }
        // Some worker diverged; the single-threaded walk reports the same first divergence
        // on every run.
    }
    walk_bounded(model, u64::MAX, progress_every, progress)
}

/// Both sides on the model's initial state; a mismatch there is a divergence before any step.
fn start(model: &RebalanceModel) -> Result<Lockstep<'_>, Box<Divergence>> {
    Lockstep::start(model).map_err(|mismatch| {
        Box::new(Divergence {
            steps: Vec::new(),
            mismatch,
        })
    })
}

/// One unit of work: a position to expand (the model's state and the manager side after the
/// path to it), the path.
struct Job {
    position: Box<Position>,
    path: Option<Arc<PathNode>>,
    depth: usize,
}

/// The seen sets hold fingerprints, which are already hashes: rehashing them with SipHash was a
/// tenth of a walk's time. A multiply spreads every bit of the key upwards, so the hash table's
/// bucket index (low bits) and tag (high bits) vary although a shard's keys share their top
/// bits.
#[derive(Default)]
struct FingerprintHasher(u64);

impl std::hash::Hasher for FingerprintHasher {
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 << 8 | u64::from(*b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, fp: u64) {
        self.0 = fp.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type SeenSet = HashSet<u64, std::hash::BuildHasherDefault<FingerprintHasher>>;

/// What the workers share: the seen set (sharded), a pool for handing work over, counters.
struct Shared {
    seen: Vec<Mutex<SeenSet>>,
    pool: Mutex<Vec<Job>>,
    idle: AtomicUsize,
    hungry: AtomicBool,
    diverged: AtomicBool,
    states: AtomicU64,
    edges: AtomicU64,
}

impl Shared {
    fn insert(&self, fp: u64) -> bool {
        // The top bits pick the shard (64 shards), so the multiply above still sees the rest.
        let shard = (fp >> 58) as usize % self.seen.len();
        self.seen[shard].lock().expect("seen shard").insert(fp)
    }
}

/// The walk on `threads` workers. `Ok(None)`: some edge diverged.
fn parallel_walk(
    model: &RebalanceModel,
    threads: usize,
    progress_every: u64,
    progress: &mut impl FnMut(&WalkStats),
) -> Result<Option<WalkStats>, Box<Divergence>> {
    let started = Instant::now();
    let init = start(model)?.position();
    let shared = Shared {
        seen: (0..64).map(|_| Mutex::new(SeenSet::default())).collect(),
        pool: Mutex::new(Vec::new()),
        idle: AtomicUsize::new(0),
        hungry: AtomicBool::new(false),
        diverged: AtomicBool::new(false),
        states: AtomicU64::new(1),
        edges: AtomicU64::new(0),
    };
    shared.insert(fingerprint(&init.state));
    shared.pool.lock().expect("pool").push(Job {
        position: init,
        path: None,
        depth: 0,
    });
    let results: Vec<(Coverage, usize)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| scope.spawn(|| worker(model, threads, &shared)))
            .collect();
        let mut reported = 0;
        while !workers.iter().all(|w| w.is_finished()) {
            std::thread::sleep(Duration::from_millis(50));
            let states = shared.states.load(Ordering::Relaxed);
            if progress_every > 0 && states / progress_every > reported {
                reported = states / progress_every;
                progress(&WalkStats {
                    states,
                    edges: shared.edges.load(Ordering::Relaxed),
                    seconds: started.elapsed().as_secs_f64(),
                    ..WalkStats::default()
                });
            }
        }
        workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect()
    });
    if shared.diverged.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let mut stats = WalkStats {
        states: shared.states.load(Ordering::Relaxed),
        edges: shared.edges.load(Ordering::Relaxed),
        seconds: started.elapsed().as_secs_f64(),
        complete: true,
        ..WalkStats::default()
    };
    for (coverage, depth) in &results {
        stats.coverage.merge(coverage);
        stats.max_depth = stats.max_depth.max(*depth);
    }
    Ok(Some(stats))
}

/// One worker: expands jobs depth-first from its own stack, gives half of it to the pool when
/// another worker is idle, and stops when every worker is idle and the pool is empty.
fn worker(model: &RebalanceModel, threads: usize, shared: &Shared) -> (Coverage, usize) {
    let mut lockstep: Option<Lockstep> = None;
    let mut max_depth = 0;
    let mut local: Vec<Job> = Vec::new();
    let mut actions = Vec::new();
    let done = |lockstep: Option<Lockstep>, max_depth| {
        (
            lockstep.map(Lockstep::into_coverage).unwrap_or_default(),
            max_depth,
        )
    };
    loop {
        let Some(job) = local.pop().or_else(|| next_job(threads, shared)) else {
            return done(lockstep, max_depth);
        };
        if shared.diverged.load(Ordering::Relaxed) {
            return done(lockstep, max_depth);
        }
        max_depth = max_depth.max(job.depth);
        let ls = match lockstep.take() {
            Some(mut ls) => {
                ls.goto(job.position);
                ls
            }
            None => Lockstep::at(model, job.position),
        };
        let ls = lockstep.insert(ls);
        actions.clear();
        // The reduced graph's where the model is reduced (spec 9, "Partial-order reduction").
        rebalance_model::check::por::search_actions(model, ls.state(), &mut actions);
        for action in &actions {
            // The configuration's search bound (`max_network`), as the model checker applies it:
            // a state outside it is not expanded (its incoming edge is still checked).
            let keep =
                |post: &SystemState| model.within_bound(post) && shared.insert(fingerprint(post));
            match ls.explore(action, keep) {
                Ok(Explored::Disabled) => continue,
                Ok(Explored::Checked(next)) => {
                    shared.edges.fetch_add(1, Ordering::Relaxed);
                    if let Some(position) = next {
                        shared.states.fetch_add(1, Ordering::Relaxed);
                        local.push(Job {
                            position,
                            path: Some(Arc::new(PathNode {
                                action: *action,
                                parent: job.path.clone(),
                            })),
                            depth: job.depth + 1,
                        });
                    }
                }
                Err(_) => {
                    shared.edges.fetch_add(1, Ordering::Relaxed);
                    shared.diverged.store(true, Ordering::Relaxed);
                    return done(lockstep, max_depth);
                }
            }
        }
        if shared.hungry.load(Ordering::Relaxed) && local.len() >= 2 {
            // The bottom of the stack holds the oldest, largest subtrees.
            let give: Vec<Job> = local.drain(..local.len() / 2).collect();
            shared.pool.lock().expect("pool").extend(give);
            shared.hungry.store(false, Ordering::Relaxed);
        }
    }
}

/// A job from the pool, waiting while another worker may still hand one over; `None` once all
/// workers are idle with the pool empty (the walk is complete) or a worker diverged.
fn next_job(threads: usize, shared: &Shared) -> Option<Job> {
    let mut waiting = false;
    loop {
        {
            let mut pool = shared.pool.lock().expect("pool");
            if let Some(job) = pool.pop() {
                if waiting {
                    shared.idle.fetch_sub(1, Ordering::SeqCst);
                }
                return Some(job);
            }
            if !waiting {
                waiting = true;
                shared.idle.fetch_add(1, Ordering::SeqCst);
            }
            if shared.idle.load(Ordering::SeqCst) == threads {
                return None;
            }
        }
        if shared.diverged.load(Ordering::Relaxed) {
            return None;
        }
        shared.hungry.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_micros(50));
    }
}

/// [`walk`], stopping once `max_states` states have been seen (a depth-first sample of the
/// graph, for quick gates such as mutation testing; `stats.complete` says whether it finished).
pub fn walk_bounded(
    model: &RebalanceModel,
    max_states: u64,
    progress_every: u64,
    progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, Box<Divergence>> {
    walk_side::<mgr::Manager<mgr::MemStore>>(model, &(), max_states, progress_every, progress)
        .map_err(|e| match e {
            WalkError::Diverged(d) => d,
            WalkError::Sut { error, .. } => match *error {},
        })
}

/// Why a walk against an implementation under test stopped.
#[derive(Debug)]
pub enum WalkError<E> {
    /// Model and implementation differ.
    Diverged(Box<Divergence>),
    /// The implementation itself failed (crashed, hung, sent a malformed line) on the last
    /// step of `steps`.
    Sut { steps: Vec<Action>, error: Box<E> },
}

/// Checks every edge of `model`'s reachable graph against the implementation under test that
/// `sut` starts, single-threaded (one child process; its snapshots are the branch points).
pub fn walk_sut(
    model: &RebalanceModel,
    sut: &SutCommand,
    progress_every: u64,
    progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, WalkError<DriverError>> {
    walk_side::<Remote>(model, sut, u64::MAX, progress_every, progress)
}

/// A position still to expand, the path to it and its depth.
type Frame<S> = (Box<Position<S>>, Option<Arc<PathNode>>, usize);

/// The single-threaded walk on any manager side, stopping after `max_states` states.
pub fn walk_side<S: ManagerSide>(
    model: &RebalanceModel,
    launcher: &S::Launcher,
    max_states: u64,
    progress_every: u64,
    mut progress: impl FnMut(&WalkStats),
) -> Result<WalkStats, WalkError<S::Error>> {
    let started = Instant::now();
    let mut stats = WalkStats::default();
    let fail = |steps: Vec<Action>, f: Failure<S::Error>| match f {
        Failure::Diverged(mismatch) => {
            WalkError::Diverged(Box::new(Divergence { steps, mismatch }))
        }
        Failure::Sut(error) => WalkError::Sut {
            steps,
            error: Box::new(error),
        },
    };
    let mut lockstep: Lockstep<S> =
        Lockstep::launch(model, launcher).map_err(|f| fail(Vec::new(), f))?;
    let mut seen = SeenSet::default();
    seen.insert(fingerprint(lockstep.state()));
    stats.states = 1;
    let init = lockstep
        .try_position()
        .map_err(|e| fail(Vec::new(), Failure::Sut(e)))?;
    let mut stack: Vec<Frame<S>> = vec![(init, None, 0)];
    let mut actions = Vec::new();
    while let Some((position, path, depth)) = stack.pop() {
        if stats.states >= max_states {
            stats.seconds = started.elapsed().as_secs_f64();
            stats.coverage = lockstep.into_coverage();
            return Ok(stats);
        }
        stats.max_depth = stats.max_depth.max(depth);
        lockstep.goto(position);
        actions.clear();
        // Candidates (a stubborn set's where the model is reduced, spec 9): `explore` drops
        // the disabled ones, so each edge is stepped once.
        rebalance_model::check::por::search_actions(model, lockstep.state(), &mut actions);
        for action in &actions {
            // The configuration's search bound (`max_network`), as the model checker applies it:
            // a state outside it is not expanded (its incoming edge is still checked).
            let keep =
                |post: &SystemState| model.within_bound(post) && seen.insert(fingerprint(post));
            let next = match lockstep.try_explore(action, keep) {
                Ok(Explored::Disabled) => continue,
                Ok(Explored::Checked(next)) => next,
                Err(f) => {
                    stats.edges += 1;
                    let node = Some(Arc::new(PathNode {
                        action: *action,
                        parent: path.clone(),
                    }));
                    return Err(fail(path_to_vec(&node), f));
                }
            };
            stats.edges += 1;
            if let Some(position) = next {
                stats.states += 1;
                if progress_every > 0 && stats.states % progress_every == 0 {
                    stats.seconds = started.elapsed().as_secs_f64();
                    stats.coverage = lockstep.coverage().clone();
                    progress(&stats);
                }
                let node = Some(Arc::new(PathNode {
                    action: *action,
                    parent: path.clone(),
                }));
                stack.push((position, node, depth + 1));
            }
        }
    }
    stats.seconds = started.elapsed().as_secs_f64();
    stats.coverage = lockstep.into_coverage();
    stats.complete = true;
    Ok(stats)
}
