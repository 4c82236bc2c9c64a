//! Which combinations of faults a search reaches, by plan kind and by the phase the bucket is
//! in when the later fault strikes (spec 9, "Fault coverage"). Measured on the graph the check
//! searches (the reduced one where the reduction applies), edge by edge: a cell is reached only
//! when some explored step takes its last fault with the others already taken, on a bucket in
//! that phase. Nothing is read from a configuration's budgets but what a state says is spent.

use crate::check::walk::{edges, fingerprint};
use crate::config::Config;
use crate::state::types::{BucketStatus, PlanEntry, PlanKind, ServerSet};
use crate::state::SystemState;
use crate::step::action::{Action, StepOutput};
use crate::step::model::RebalanceModel;
use std::collections::{BTreeSet, HashSet};
use std::fmt;

/// A fault kind of spec 9's budgets, with a client's cancel and a second register counted as
/// faults: each interrupts a migration as a crash does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum FaultKind {
    /// A Register while a task is stored or after one was registered (R1 on a busy
    /// coordinator, or a new rebalance after one ended).
    SecondRegister,
    Cancel,
    CoordinatorCrash,
    ServerCrash,
    StoreFailure,
    MessageLoss,
    MessageDuplication,
    BucketDeletion,
    /// A step of the deposed coordinator (spec 9, "zombie coordinator").
    ZombieStep,
}

impl FaultKind {
    pub const ALL: [FaultKind; 9] = [
        FaultKind::SecondRegister,
        FaultKind::Cancel,
        FaultKind::CoordinatorCrash,
        FaultKind::ServerCrash,
        FaultKind::StoreFailure,
        FaultKind::MessageLoss,
        FaultKind::MessageDuplication,
        FaultKind::BucketDeletion,
        FaultKind::ZombieStep,
    ];

    pub fn name(self) -> &'static str {
        match self {
            FaultKind::SecondRegister => "register",
            FaultKind::Cancel => "cancel",
            FaultKind::CoordinatorCrash => "coordinator-crash",
            FaultKind::ServerCrash => "server-crash",
            FaultKind::StoreFailure => "store-failure",
            FaultKind::MessageLoss => "loss",
            FaultKind::MessageDuplication => "duplication",
            FaultKind::BucketDeletion => "deletion",
            FaultKind::ZombieStep => "zombie",
        }
    }

    fn bit(self) -> u16 {
        1 << (self as u16)
    }
}

/// A set of fault kinds, as a bitmask over [`FaultKind::ALL`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Faults(u16);

impl Faults {
    pub fn of(kinds: &[FaultKind]) -> Faults {
        Faults(kinds.iter().fold(0, |m, k| m | k.bit()))
    }
    pub fn contains(self, k: FaultKind) -> bool {
        self.0 & k.bit() != 0
    }
    pub fn with(self, k: FaultKind) -> Faults {
        Faults(self.0 | k.bit())
    }
    pub fn len(self) -> u32 {
        self.0.count_ones()
    }
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub fn iter(self) -> impl Iterator<Item = FaultKind> {
        FaultKind::ALL
            .into_iter()
            .filter(move |k| self.contains(*k))
    }
    /// Every set of `n` kinds, in a fixed order.
    pub fn all_of_size(n: u32) -> Vec<Faults> {
        (0..1u16 << FaultKind::ALL.len())
            .map(Faults)
            .filter(|f| f.len() == n)
            .collect()
    }
}

impl fmt::Display for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(FaultKind::name).collect();
        write!(f, "{}", names.join(" + "))
    }
}

/// Where a plan bucket is when a fault strikes it, read from the state before the step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// A move's stored assignment is still `ors`; a leader-only bucket's stored leader is not
    /// yet `new_leader`.
    AtOrigin,
    /// A move's stored assignment is the union `rs` (R9 written, R10 not yet).
    UnionWritten,
    /// Between the union and the end: R10 written (the stored assignment is `trs`, or any
    /// other replica list on the way there) while the attempt still runs, waiting for R12's
    /// acknowledgement; for a leader-only bucket, `new_leader` elected and not yet acknowledged.
    MidMove,
    /// At the target and no attempt running: completed, or ended there otherwise.
    AtTarget,
    /// The bucket's attempt timed out and is tracked (TIMEOUT, R13).
    Tracked,
}

impl Phase {
    pub const ALL: [Phase; 5] = [
        Phase::AtOrigin,
        Phase::UnionWritten,
        Phase::MidMove,
        Phase::AtTarget,
        Phase::Tracked,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Phase::AtOrigin => "at origin",
            Phase::UnionWritten => "union written",
            Phase::MidMove => "mid-move",
            Phase::AtTarget => "at target",
            Phase::Tracked => "tracked",
        }
    }
    /// Whether a bucket of this plan kind can be in this phase: a leader-only bucket never
    /// writes a union.
    pub fn exists_for(self, kind: Shape) -> bool {
        !(kind == Shape::LeaderOnly && self == Phase::UnionWritten)
    }
}

/// The plan kinds the table distinguishes (a no-op entry has no migration to interrupt).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Shape {
    Move,
    LeaderOnly,
}

impl Shape {
    pub const ALL: [Shape; 2] = [Shape::Move, Shape::LeaderOnly];
    pub fn name(self) -> &'static str {
        match self {
            Shape::Move => "move",
            Shape::LeaderOnly => "leader-only",
        }
    }
}

/// One cell of the table: a set of fault kinds, the last of which struck a bucket of `shape`
/// in `phase` with the others already taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cell {
    pub faults: Faults,
    pub shape: Shape,
    pub phase: Phase,
}

/// Every cell with `n` fault kinds that a bucket can be in, in a fixed order.
pub fn possible_cells(n: u32) -> Vec<Cell> {
    let mut cells = Vec::new();
    for faults in Faults::all_of_size(n) {
        for shape in Shape::ALL {
            for phase in Phase::ALL.into_iter().filter(|p| p.exists_for(shape)) {
                cells.push(Cell {
                    faults,
                    shape,
                    phase,
                });
            }
        }
    }
    cells
}

/// What one graph reached.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coverage {
    pub states: usize,
    pub edges: usize,
    /// Whether the walk saw every state (false: stopped at its state limit; what it reached
    /// is reached all the same).
    pub complete: bool,
    /// Pairs and triples reached; a single kind is not a combination.
    pub cells: BTreeSet<Cell>,
}

/// The plan buckets the table counts: RF 2 or more (with one replica a move has no overlap
/// and an election no choice), a move or a leader-only change, as the initial state's plan
/// gives them (the stored task's, or the plan R1 would derive from the configuration's
/// targets).
pub fn counted_entries(model: &RebalanceModel) -> Vec<PlanEntry> {
    let init = model.init_state();
    let plan = match &init.store.task {
        Some(task) => task.plan.clone(),
        None => model.register_plan(&init, &model.config.plan),
    };
    plan.iter()
        .filter(|e| e.kind() != PlanKind::NoOp && e.trs.len() >= 2)
        .copied()
        .collect()
}

fn shape(e: &PlanEntry) -> Shape {
    if e.kind() == PlanKind::Move {
        Shape::Move
    } else {
        Shape::LeaderOnly
    }
}

/// The phase of `e`'s bucket in `s`; none once the bucket is deleted.
pub fn phase(s: &SystemState, e: &PlanEntry) -> Option<Phase> {
    let b = e.bucket as usize;
    if s.store.buckets.deleted[b] {
        return None;
    }
    let status = s.coordinator.status_of(e.bucket);
    if status == Some(BucketStatus::Timeout) {
        return Some(Phase::Tracked);
    }
    let running = status == Some(BucketStatus::Rebalancing);
    Some(match shape(e) {
        Shape::Move => {
            let a = ServerSet::from_servers(&s.store.buckets.assignment[b]);
            let ors = ServerSet::from_servers(&e.ors);
            let trs = e.trs_set();
            if a == ors {
                Phase::AtOrigin
            } else if a == ors.union(trs) {
                Phase::UnionWritten
            } else if a == trs && !running {
                Phase::AtTarget
            } else {
                Phase::MidMove
            }
        }
        Shape::LeaderOnly => {
            if s.store.buckets.lai[b].leader != Some(e.new_leader) {
                Phase::AtOrigin
            } else if running {
                Phase::MidMove
            } else {
                Phase::AtTarget
            }
        }
    })
}

/// The fault kinds spent before `s`, read from what is left of the configuration's budgets (a
/// register counts from the second on, or from the first where the store starts with a task).
/// An unbounded budget never counts down, so its kind never shows as spent.
pub fn spent(config: &Config, s: &SystemState) -> Faults {
    let (c, l) = (&config.budgets, &s.budgets);
    let registers = c.register - l.register;
    let preloaded = config.store.as_ref().is_some_and(|st| st.task.is_some());
    let mut f = Faults::default();
    for (kind, spent) in [
        (
            FaultKind::SecondRegister,
            registers >= 2 || (registers == 1 && preloaded),
        ),
        (FaultKind::Cancel, c.cancel > l.cancel),
        (
            FaultKind::CoordinatorCrash,
            c.coordinator_crash > l.coordinator_crash,
        ),
        (FaultKind::ServerCrash, c.server_crash > l.server_crash),
        (FaultKind::StoreFailure, c.store_failure > l.store_failure),
        (FaultKind::MessageLoss, c.message_loss > l.message_loss),
        (
            FaultKind::MessageDuplication,
            c.message_duplication > l.message_duplication,
        ),
        (
            FaultKind::BucketDeletion,
            c.bucket_deletion > l.bucket_deletion,
        ),
        (FaultKind::ZombieStep, c.zombie_steps > l.zombie_steps),
    ] {
        if spent {
            f = f.with(kind);
        }
    }
    f
}

/// Which buckets a fault strikes: every one (the coordinator's and the client's faults, and a
/// store failure, which stops the step's rule), or only those it touches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    Every,
    /// A message about this bucket lost or duplicated, or this bucket deleted.
    Bucket(u8),
    /// A server crash: the buckets it holds or is planned to hold.
    Server(u8),
}

/// The faults a step takes, in the order they strike: the action's own, then a store failure
/// it injects.
pub fn faults_of(
    config: &Config,
    pre: &SystemState,
    action: &Action,
    out: &StepOutput,
) -> Vec<(FaultKind, Reach)> {
    let mut faults = Vec::new();
    let kind = match action {
        Action::Register { .. } => {
            let registered = config.budgets.register > pre.budgets.register;
            let preloaded = config.store.as_ref().is_some_and(|st| st.task.is_some());
            (registered || preloaded).then_some((FaultKind::SecondRegister, Reach::Every))
        }
        Action::Cancel { .. } => Some((FaultKind::Cancel, Reach::Every)),
        Action::CrashCoordinator => Some((FaultKind::CoordinatorCrash, Reach::Every)),
        Action::CrashServer { server, .. } => {
            Some((FaultKind::ServerCrash, Reach::Server(*server)))
        }
        Action::DropMessage { msg } => Some((FaultKind::MessageLoss, Reach::Bucket(msg.bucket()))),
        Action::DuplicateMessage { msg } => {
            Some((FaultKind::MessageDuplication, Reach::Bucket(msg.bucket())))
        }
        Action::DeleteBucket { bucket, .. } => {
            Some((FaultKind::BucketDeletion, Reach::Bucket(*bucket)))
        }
        Action::ZombieProcessEvent { .. }
        | Action::ZombieDeliverNliResponse { .. }
        | Action::ZombieCancel => Some((FaultKind::ZombieStep, Reach::Every)),
        _ => None,
    };
    faults.extend(kind);
    if out.store_failed {
        faults.push((FaultKind::StoreFailure, Reach::Every));
    }
    faults
}

fn strikes(reach: Reach, pre: &SystemState, e: &PlanEntry) -> bool {
    match reach {
        Reach::Every => true,
        Reach::Bucket(b) => b == e.bucket,
        Reach::Server(s) => {
            let stored = ServerSet::from_servers(&pre.store.buckets.assignment[e.bucket as usize]);
            stored
                .union(ServerSet::from_servers(&e.ors))
                .union(e.trs_set())
                .contains(s)
        }
    }
}

/// Adds to `cells` what one edge reaches: for each fault of the step, each counted bucket it
/// strikes, and each pair and triple of kinds it completes with the kinds spent before it.
pub fn record_edge(
    config: &Config,
    entries: &[PlanEntry],
    pre: &SystemState,
    action: &Action,
    out: &StepOutput,
    cells: &mut BTreeSet<Cell>,
) {
    let faults = faults_of(config, pre, action, out);
    if faults.is_empty() {
        return;
    }
    let mut before = spent(config, pre);
    for (last, reach) in faults {
        let others: Vec<FaultKind> = before.iter().filter(|k| *k != last).collect();
        for e in entries.iter().filter(|e| strikes(reach, pre, e)) {
            let Some(phase) = phase(pre, e) else { continue };
            let shape = shape(e);
            let mut add = |kinds: &[FaultKind]| {
                cells.insert(Cell {
                    faults: Faults::of(kinds).with(last),
                    shape,
                    phase,
                });
            };
            for (i, a) in others.iter().enumerate() {
                add(&[*a]);
                for b in &others[i + 1..] {
                    add(&[*a, *b]);
                }
            }
        }
        before = before.with(last);
    }
}

/// Walks the whole graph `model` searches (depth-first, one fingerprint per state, the
/// reduction's stubborn sets where the model is reduced) and records every edge, stopping
/// after `limit` states. `progress` is called every 2^20 states with the count so far.
pub fn measure(model: &RebalanceModel, limit: usize, mut progress: impl FnMut(usize)) -> Coverage {
    let entries = counted_entries(model);
    let init = model.init_state();
    let mut seen = HashSet::from([fingerprint(&init)]);
    let mut stack = vec![init];
    let mut cov = Coverage::default();
    while let Some(s) = stack.pop() {
        if cov.states == limit {
            return cov;
        }
        cov.states += 1;
        if cov.states % (1 << 20) == 0 {
            progress(cov.states);
        }
        edges(model, &s, |_, a, next, out| {
            cov.edges += 1;
            record_edge(&model.config, &entries, &s, &a, &out, &mut cov.cells);
            if seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
    cov.complete = true;
    cov
}
