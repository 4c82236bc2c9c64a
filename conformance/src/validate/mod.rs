//! Trace validation (spec/log-format.md): does some behaviour of the model explain a running
//! coordinator's own log?
//!
//! The log shows what the coordinator saw and did: each incarnation's start, each input with its
//! effects and store operations. What it cannot see (a server adopting a request, a leader
//! proposing an ISR change, a message lost or duplicated, a deposed coordinator's steps) is the
//! model's *hidden* steps. The validator keeps the set of model states that explain the log so
//! far (the frontier); for each record it closes the frontier under hidden steps, breadth-first
//! and bounded, and keeps every state reached by a visible step whose input, effects and store
//! operations are the record's. An empty frontier means no path of the model explains the record.
//!
//! The comparison is the lockstep harness's (`crate::projection`): the same effects projection,
//! the same store-operation count. The manager's internal state is not in a log, so unlike the
//! lockstep, states are not compared: a log is explained by what it shows.

mod focused;
pub mod log;
pub mod model_log;
mod product;
pub mod record;
pub mod spoil;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};

use rebalance_manager as mgr;
use rebalance_model::{Action, ActionKind, Message, RebalanceModel, StepOutput, SystemState};

use crate::projection;
use crate::translate;
pub use log::{parse, Line, Log, LogError, Record};

/// The model a log is validated against: `config` without what merges steps a real network
/// takes one by one: dead and superseded messages are kept, a redundant resend is not absorbed
/// (spec 3.4, "redundant requests": a real server answers it a second time), and there is no
/// search bound.
pub fn model_for(
    mut config: rebalance_model::Config,
    bugs: rebalance_model::BugSet,
) -> RebalanceModel {
    config.collect_dead_messages = false;
    config.collect_superseded_nli = false;
    config.absorb_redundant_nli = false;
    config.max_network = None;
    RebalanceModel::new(config, bugs)
}

/// Bounds of the hidden-step search between two records.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Hidden steps between two records, at most.
    pub max_hidden: usize,
    /// States in one record's hidden closure, at most.
    pub max_states: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_hidden: 12,
            max_states: 200_000,
        }
    }
}

/// The validator's answer.
#[derive(Debug)]
pub enum Verdict {
    /// Some path of the model explains every record.
    Valid,
    /// No path explains `line`.
    Unexplained(Unexplained),
    /// No path found for `line`, but the hidden-step search hit a bound, so a longer one may
    /// exist: the log is neither valid nor shown invalid.
    Undecided { line: usize, why: String },
}

/// Where the log and the model part.
#[derive(Debug)]
pub struct Unexplained {
    /// The record's line.
    pub line: usize,
    /// What no model step matched, in one sentence.
    pub summary: String,
    /// Candidate states the record was tried from (the hidden closure).
    pub candidates: usize,
    /// The states that explained the log up to the record before (at most 16 kept), for a
    /// report or a debugger.
    pub before: Vec<SystemState>,
    /// The closest candidate: its step and the keyed diff of its effects against the log's, if
    /// any candidate enabled a step for this input.
    pub closest: Option<String>,
}

/// What a run did, for the report.
#[derive(Debug, Default)]
pub struct Stats {
    pub records: usize,
    /// Model states examined (every hidden closure, summed).
    pub states: usize,
    /// The largest frontier after a record.
    pub max_frontier: usize,
    /// The lazy search missed at this line, and the full search ran.
    pub lazy_miss: Option<usize>,
    /// The first line whose search reached a bound and still found explanations: the set after
    /// it may lack states beyond the bound, so no later record is rejected, only undecided.
    pub cut_at: Option<usize>,
    /// With [`search_digested`], a digest of the set of explaining states after every record.
    pub sets: Option<u64>,
    /// Records explained from a set kept as a product (`product.rs`), by the focused search.
    pub by_product: usize,
    /// Set by a record's search that reached a bound and found explanations.
    cut_now: bool,
}

/// A state's fingerprint without the last-step ghost: every step clears that ghost before it
/// acts and none reads it, so two states that differ only there have the same futures, and the
/// search keeps one of them.
fn fingerprint(s: &SystemState) -> u64 {
    let mut h = Buffered::default();
    let SystemState {
        store,
        coordinator,
        servers,
        views,
        network,
        budgets,
        ghost,
        zombie,
    } = s;
    store.hash(&mut h);
    coordinator.hash(&mut h);
    servers.hash(&mut h);
    views.hash(&mut h);
    network.hash(&mut h);
    budgets.hash(&mut h);
    ghost.restored.hash(&mut h);
    ghost.final_recovered.hash(&mut h);
    ghost.drained_after_cancel.hash(&mut h);
    ghost.violations.hash(&mut h);
    zombie.hash(&mut h);
    h.finish()
}

/// A hasher that gathers the bytes written to it and hashes them in one write at the end. The
/// derived `Hash` of a state makes hundreds of writes of a few bytes each, and 44% of a
/// validation's samples were in SipHash's `write` (perf, 6 December 2026). SipHash is a
/// streaming hash, so the result is the one the separate writes give
/// (`the_buffered_fingerprint_is_the_unbuffered_one`).
#[derive(Default)]
struct Buffered {
    bytes: Vec<u8>,
}

impl Hasher for Buffered {
    fn write(&mut self, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
    }

    fn finish(&self) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        h.write(&self.bytes);
        h.finish()
    }
}

/// The model steps a coordinator cannot see, and that a log may need. A message loss is one of
/// them, but needed only for the messages some rule reads without taking them: R21 proposes
/// only while no AdjustIsr of the leader, and no answer to one, is in flight, so losing either
/// lets the leader propose again. Every other loss explains a log exactly as well with the
/// message left in flight, never delivered, since no other rule reads the network but to take
/// the message it handles. (The first version left every loss out; a ZooKeeper-outage run of
/// `cluster` whose lost AdjustIsr answer let a leader propose again was rejected for it.)
/// Leaving those losses out is what keeps the hidden closure small.
fn hidden(action: &Action) -> bool {
    if let Action::DropMessage { msg } = action {
        return matches!(msg, Message::AdjustIsr(_) | Message::AdjustIsrResponse(_));
    }
    matches!(
        action.kind(),
        ActionKind::DeliverNli
            | ActionKind::DeliverAdjustIsrResponse
            | ActionKind::DuplicateMessage
            | ActionKind::ProposeIsr
            | ActionKind::ZombieProcessEvent
            | ActionKind::ZombieDeliverNliResponse
            | ActionKind::ZombieCancel
    )
}

/// The successors of `s` by the actions `keep` accepts, each stepped only if accepted. The
/// model's `successors` steps every enabled action (a clone of the state and the transition
/// check each), and the searches here want only hidden steps, often only at one server.
fn successors_where(
    model: &RebalanceModel,
    s: &SystemState,
    keep: impl Fn(&Action) -> bool,
    mut visit: impl FnMut(Action, SystemState, StepOutput),
) {
    let mut actions = Vec::new();
    model.candidate_actions(s, &mut actions);
    for a in actions {
        if keep(&a) {
            if let Some((n, out)) = model.step(s, &a) {
                visit(a, n, out);
            }
        }
    }
}

/// Validates `log` against `model`. The model must not collect dead or superseded messages
/// (spec 9): those reductions merge or drop deliveries a real log shows one by one.
///
/// First lazily (hidden steps only when a record needs them, `explain_record`); a valid
/// verdict then stands, since every path found is a path of the model. A lazy miss is checked
/// again with the focused search ([`Search::Focused`]), complete within the bounds, whose
/// verdict is returned.
pub fn validate(model: &RebalanceModel, log: &Log, limits: Limits) -> (Verdict, Stats) {
    validate_with(model, log, limits, |_| {})
}

/// [`validate`], calling `on_lazy_miss` with the line where the lazy search missed before the
/// focused search starts (a long search shows what it is doing).
pub fn validate_with(
    model: &RebalanceModel,
    log: &Log,
    limits: Limits,
    on_lazy_miss: impl FnOnce(usize),
) -> (Verdict, Stats) {
    let lazy_limits = Limits {
        max_states: limits.max_states.min(LAZY_MAX_STATES),
        ..limits
    };
    let (verdict, lazy) = search(model, log, lazy_limits, Search::Lazy);
    let line = match &verdict {
        Verdict::Valid => return (verdict, lazy),
        Verdict::Unexplained(u) => u.line,
        Verdict::Undecided { line, .. } => *line,
    };
    on_lazy_miss(line);
    let (verdict, mut full) = search(model, log, limits, Search::Focused);
    full.states += lazy.states;
    full.lazy_miss = Some(line);
    (verdict, full)
}

/// The lazy search's bound on one record's hidden closure, below the user's `max_states`. Only
/// its valid verdict is reported; at a record it cannot explain it searches every hidden step of
/// every server until a bound, and that search, always repeated by the focused one, took about
/// 39 s of a 90 s rejection (a 16-bucket log killed twice, 6 December 2026).
/// A valid log whose lazy search reaches this bound is found by the focused search instead.
const LAZY_MAX_STATES: usize = 20_000;

/// The lazy search's bound at a `start`, lower: there every state of the closure is also tried
/// after each input the crash may have cut short, with each of its store operations failed,
/// and a start no path explains took 9 s of lazy search before the focused search rejected it
/// in 10 ms (the log killed twice at seed 1, a write lost from its third start's read).
const LAZY_START_MAX_STATES: usize = 2_000;

/// How the hidden steps between two records are searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Search {
    /// The fewest hidden steps with which some state explains the record; fast, but a miss
    /// proves nothing.
    Lazy,
    /// Every hidden closure kept whole: complete within the bounds, and slow after a restart.
    Full,
    /// Hidden steps only at the record's footprint, and only the minimal explaining states
    /// kept (`focused.rs`): complete within the bounds, as the full search is.
    Focused,
    /// The focused search with every state of the set searched on its own, not once per class
    /// of states that agree at the record's footprint (`focused.rs`, `explain_grouped`):
    /// slower, and kept to test the classes against.
    FocusedEach,
}

/// One search of the log; see [`validate`] and [`Search`].
pub fn search(model: &RebalanceModel, log: &Log, limits: Limits, how: Search) -> (Verdict, Stats) {
    search_digested(model, log, limits, how, false)
}

/// [`search`], and with `digest` a digest of every set of explaining states, record by record
/// ([`Stats::sets`]), to test the searches against each other: a set kept as a product is
/// spelled out for it, which is what the product saves.
pub fn search_digested(
    model: &RebalanceModel,
    log: &Log,
    limits: Limits,
    how: Search,
    digest: bool,
) -> (Verdict, Stats) {
    let mut stats = Stats {
        sets: digest.then_some(0),
        ..Stats::default()
    };
    let mut records = log.lines.iter().peekable();
    let init = model.init_state();
    // The first incarnation: the model's initial state is a coordinator that has started (R17),
    // and, without a configured store, also run its Recover, which finds no task.
    let Some(first) = records.next() else {
        return (Verdict::Valid, stats);
    };
    stats.records += 1;
    let tick_ms = model.config.tick_ms();
    let mut clock = first.record.now_ms();
    let mut frontier = Frontier::States(vec![init.clone()]);
    match &first.record {
        // Hosts that died before they wrote anything (the first one elected the model's
        // initial epoch, each one the next): the first record is then a later start, explained
        // from the initial state as any start is.
        Record::Start {
            coordinator_epoch, ..
        } if *coordinator_epoch > u64::from(init.coordinator.ce) => {
            match explain(model, &frontier, &first.record, limits, how, &mut stats) {
                Ok(next) => {
                    frontier = next;
                    if std::mem::take(&mut stats.cut_now) {
                        stats.cut_at = Some(first.number);
                    }
                }
                Err(miss) => {
                    return (
                        Verdict::Unexplained(Unexplained {
                            line: first.number,
                            summary: "no crash of the model's initial coordinator explains this \
                                      first start"
                                .into(),
                            candidates: miss.candidates,
                            before: vec![init],
                            closest: miss.closest,
                        }),
                        stats,
                    )
                }
            }
        }
        Record::Start {
            coordinator_epoch,
            effects,
            ..
        } if *coordinator_epoch == u64::from(init.coordinator.ce)
            && effects == &[mgr::Effect::Enqueue(mgr::Event::Recover)] =>
        {
            if let Record::Start { read: Some(r), .. } = &first.record {
                if let Some((_, why)) = read_differs(&init, r) {
                    return (
                        Verdict::Unexplained(Unexplained {
                            line: first.number,
                            summary: "the first incarnation's store is not the model's initial \
                                      store"
                                .into(),
                            candidates: 1,
                            before: vec![init],
                            closest: Some(why),
                        }),
                        stats,
                    );
                }
            }
            if init.coordinator.events.is_empty() {
                // Unless the host died during that Recover: the next record is then a start,
                // and the model's initial state, which has run it, explains the cut.
                let cut_short = records
                    .peek()
                    .is_some_and(|l| matches!(l.record, Record::Start { .. }));
                if !cut_short {
                    if let Some(verdict) = initial_recover(records.next(), &mut stats) {
                        return (verdict, stats);
                    }
                }
            }
        }
        other => {
            return (
                Verdict::Unexplained(Unexplained {
                    line: first.number,
                    summary: format!(
                        "the first record must be the start of coordinator epoch {} with the \
                         effect `enqueue recover`; found {other:?}",
                        init.coordinator.ce
                    ),
                    candidates: 1,
                    before: Vec::new(),
                    closest: None,
                }),
                stats,
            )
        }
    }
    for line in records {
        stats.records += 1;
        let now = line.record.now_ms();
        let is_tick = matches!(
            &line.record,
            Record::Input {
                input: mgr::Input::Tick,
                ..
            }
        );
        let want = if is_tick { clock + tick_ms } else { clock };
        if now != want {
            return (
                Verdict::Unexplained(Unexplained {
                    line: line.number,
                    summary: format!(
                        "now_ms is {now}, the model's clock {want}: the model's time moves one \
                         check interval ({tick_ms} ms) at each tick and stands still otherwise"
                    ),
                    candidates: frontier.len(),
                    before: frontier.first(16),
                    closest: None,
                }),
                stats,
            );
        }
        clock = now;
        if let Record::End { .. } = line.record {
            // The host stopped idle: some state must have nothing left for the coordinator to
            // do (no queued event, no tick that would change anything).
            let idle = frontier.any_of_shared(|s| {
                s.coordinator.events.is_empty() && model.step(s, &Action::TICK).is_none()
            });
            if !idle && stats.cut_at.is_some() {
                return (
                    Verdict::Undecided {
                        line: line.number,
                        why: format!(
                            "no state of the set has its coordinator idle, but the search at \
                             line {} reached --max-hidden or --max-states while it found \
                             explanations, so the set may lack states that would",
                            stats.cut_at.unwrap_or_default()
                        ),
                    },
                    stats,
                );
            }
            if !idle {
                return (
                    Verdict::Unexplained(Unexplained {
                        line: line.number,
                        summary: "the host stopped with its coordinator idle, but in every model \
                                  state that explains the log the coordinator still has work (an \
                                  event queued, or a tick that would act: a retry, a timeout)"
                            .into(),
                        candidates: frontier.len(),
                        before: frontier.first(16),
                        closest: None,
                    }),
                    stats,
                );
            }
            continue;
        }
        match explain(model, &frontier, &line.record, limits, how, &mut stats) {
            Ok(next) => {
                frontier = next;
                if std::mem::take(&mut stats.cut_now) && stats.cut_at.is_none() {
                    stats.cut_at = Some(line.number);
                }
            }
            Err(miss) if !miss.cut && stats.cut_at.is_some() => {
                let at = stats.cut_at.unwrap_or_default();
                return (
                    Verdict::Undecided {
                        line: line.number,
                        why: format!(
                            "no state of the set explains it, but the search at line {at} \
                             reached --max-hidden or --max-states while it found explanations, \
                             so the set may lack states that would"
                        ),
                    },
                    stats,
                );
            }
            Err(miss) if miss.cut => {
                return (
                    Verdict::Undecided {
                        line: line.number,
                        why: format!(
                            "no model path of at most {} hidden steps ({} states) explains it; the \
                             search was cut by --max-hidden or --max-states",
                            limits.max_hidden, miss.candidates
                        ),
                    },
                    stats,
                );
            }
            Err(miss) => {
                let summary = if miss.any_enabled {
                    "no model step with this input has the record's effects and store operations"
                        .to_string()
                } else {
                    "no state of the model reachable by hidden steps enables this input".to_string()
                };
                return (
                    Verdict::Unexplained(Unexplained {
                        line: line.number,
                        summary,
                        candidates: miss.candidates,
                        before: frontier.first(16),
                        closest: miss.closest,
                    }),
                    stats,
                );
            }
        }
        stats.max_frontier = stats.max_frontier.max(frontier.len());
        if let Some(d) = stats.sets {
            // Each set's states in any order (a sum of their fingerprints), the sets in order.
            let mut set = 0u64;
            frontier.any(|s| {
                set = set.wrapping_add(fingerprint(s));
                false
            });
            stats.sets = Some(d.rotate_left(7) ^ set);
        }
    }
    (Verdict::Valid, stats)
}

/// On a store with no task, the model's initial coordinator has run its Recover, which found
/// nothing: the log's second record must be that Recover, with no effect and one store
/// operation (R16's read of the task), not failed. A verdict if it is not (or if the log ends
/// there).
fn initial_recover(second: Option<&Line>, stats: &mut Stats) -> Option<Verdict> {
    let recover = mgr::Input::Event(mgr::Event::Recover);
    match second {
        Some(Line {
            record:
                Record::Input {
                    input,
                    effects,
                    store,
                    ..
                },
            ..
        }) if *input == recover && effects.is_empty() && store.ops == 1 && store.failures == 0 => {
            stats.records += 1;
            None
        }
        Some(l) => Some(Verdict::Unexplained(Unexplained {
            line: l.number,
            summary: "on a store with no task, the second record must be the Recover event, \
                      with no effect and one store operation, its read (R16), not failed"
                .into(),
            candidates: 1,
            before: Vec::new(),
            closest: None,
        })),
        None => Some(Verdict::Valid),
    }
}

/// Why no state explained a record.
struct Miss {
    /// A bound cut the hidden search.
    cut: bool,
    /// States the record was tried from.
    candidates: usize,
    any_enabled: bool,
    closest: Option<String>,
}

/// The states that explain the log up to a record: kept whole, or, by the focused search, as
/// a product where they are one (`product.rs`).
enum Frontier {
    States(Vec<SystemState>),
    Product(Box<product::Product>),
}

impl Frontier {
    fn len(&self) -> usize {
        match self {
            Frontier::States(v) => v.len(),
            Frontier::Product(p) => p.len(),
        }
    }

    /// Every state, by fingerprint for a product.
    fn states(&self) -> std::borrow::Cow<'_, [SystemState]> {
        match self {
            Frontier::States(v) => std::borrow::Cow::Borrowed(v),
            Frontier::Product(p) => std::borrow::Cow::Owned(p.states()),
        }
    }

    /// The first `n` states, for a report (of a product, the first combinations).
    fn first(&self, n: usize) -> Vec<SystemState> {
        match self {
            Frontier::States(v) => v.iter().take(n).cloned().collect(),
            Frontier::Product(p) => {
                let mut out = Vec::new();
                p.each(|s| {
                    out.push(s);
                    out.len() < n
                });
                out
            }
        }
    }

    /// Whether some state has `f`, where `f` reads only what the states of a product share
    /// (the idle test at the end of a log: the queue, and a tick, which reads and writes only
    /// the coordinator, R23). For a product it is asked of one state per part of each server
    /// and, if they all answer alike, that is the answer (it took 16 s to ask it of each of
    /// 4,194,304 states, seed 4); if they do not, `f` reads a part after all, and every state
    /// is asked.
    fn any_of_shared(&self, mut f: impl FnMut(&SystemState) -> bool) -> bool {
        let Frontier::Product(p) = self else {
            return self.any(f);
        };
        let answers: Vec<bool> = p.one_per_part().iter().map(&mut f).collect();
        if answers.iter().all(|&a| a == answers[0]) {
            return answers[0];
        }
        self.any(f)
    }

    /// Whether some state has `f`, one state at a time.
    fn any(&self, mut f: impl FnMut(&SystemState) -> bool) -> bool {
        match self {
            Frontier::States(v) => v.iter().any(f),
            Frontier::Product(p) => {
                let mut found = false;
                p.each(|s| {
                    found = f(&s);
                    !found
                });
                found
            }
        }
    }
}

impl Miss {
    /// No state tried yet.
    fn none() -> Miss {
        Miss {
            cut: false,
            candidates: 0,
            any_enabled: false,
            closest: None,
        }
    }
}

fn explain(
    model: &RebalanceModel,
    frontier: &Frontier,
    record: &Record,
    limits: Limits,
    how: Search,
    stats: &mut Stats,
) -> Result<Frontier, Miss> {
    if let (Search::Focused, Frontier::Product(p)) = (how, frontier) {
        if matches!(record, Record::Start { .. }) {
            if let Some(answer) = focused::explain_product_start(model, p, record, limits, stats) {
                stats.by_product += 1;
                return answer.map(|next| match product::Product::factor(&next) {
                    Some(p) => Frontier::Product(Box::new(p)),
                    None => Frontier::States(next),
                });
            }
        } else if let Some(answer) = focused::explain_product(model, p, record, limits, stats) {
            stats.by_product += 1;
            return answer.map(|p| Frontier::Product(Box::new(p)));
        }
    }
    let states = frontier.states();
    let next = match how {
        Search::Lazy => explain_record(model, &states, record, limits, true, stats),
        Search::Full => explain_record(model, &states, record, limits, false, stats),
        Search::Focused => focused::explain(model, &states, record, limits, true, stats),
        Search::FocusedEach => focused::explain(model, &states, record, limits, false, stats),
    }?;
    Ok(match (how, product::Product::factor(&next)) {
        (Search::Focused, Some(p)) => Frontier::Product(Box::new(p)),
        _ => Frontier::States(next),
    })
}

/// The states that explain `record` from `frontier`: the hidden closure is searched level by
/// level (level k: k hidden steps), and each level's states are tried with the record's
/// candidate steps. With `lazy`, the search stops at the first level with a match: a hidden
/// step not needed yet stays possible later, since its message stays in flight. That keeps the
/// frontier small, but is complete only where hidden steps commute with the coordinator's, so a
/// lazy miss is confirmed by a full search (see [`validate`]).
fn explain_record(
    model: &RebalanceModel,
    frontier: &[SystemState],
    record: &Record,
    limits: Limits,
    lazy: bool,
    stats: &mut Stats,
) -> Result<Vec<SystemState>, Miss> {
    let mut seen: HashMap<u64, ()> = HashMap::new();
    let mut level: Vec<SystemState> = Vec::new();
    for s in frontier {
        if seen.insert(fingerprint(s), ()).is_none() {
            level.push(s.clone());
        }
    }
    let mut matched: HashMap<u64, SystemState> = HashMap::new();
    let mut miss = Miss::none();
    let mut best: Option<usize> = None;
    let mut depth = 0;
    loop {
        for s in &level {
            // A start may follow an input the crash cut short: its record never written, its
            // effects never released, some of its store operations done (see [`interrupted`]).
            let mut tried = vec![(None, s.clone())];
            if matches!(record, Record::Start { .. }) {
                tried.extend(interrupted(model, s).map(|(a, n)| (Some(a), n)));
            }
            for (cut, s) in &tried {
                stats.states += 1;
                miss.candidates += 1;
                for (action, stutter) in candidates(model, s, record) {
                    if stutter {
                        matched.entry(fingerprint(s)).or_insert_with(|| s.clone());
                        continue;
                    }
                    let Some((post, out)) = step(model, s, &action, record) else {
                        continue;
                    };
                    miss.any_enabled = true;
                    match explains(&action, &out, &post, record) {
                        Ok(()) => {
                            matched.entry(fingerprint(&post)).or_insert(post);
                        }
                        Err((score, why)) => {
                            if best.is_none_or(|b| score < b) {
                                best = Some(score);
                                miss.closest = Some(match cut {
                                    Some(a) => format!(
                                        "after the input cut short by the crash, {}: {why}",
                                        rebalance_model::view::describe::action(a)
                                    ),
                                    None => why,
                                });
                            }
                        }
                    }
                }
            }
        }
        if lazy && !matched.is_empty() {
            break;
        }
        let mut next = Vec::new();
        for s in &level {
            successors_where(model, s, hidden, |_, n, _| {
                if seen.insert(fingerprint(&n), ()).is_none() {
                    next.push(n);
                }
            });
        }
        if next.is_empty() {
            break;
        }
        let max_states = if lazy && matches!(record, Record::Start { .. }) {
            limits.max_states.min(LAZY_START_MAX_STATES)
        } else {
            limits.max_states
        };
        if depth == limits.max_hidden || seen.len() > max_states {
            miss.cut = true;
            break;
        }
        level = next;
        depth += 1;
    }
    if matched.is_empty() {
        return Err(miss);
    }
    stats.cut_now |= miss.cut;
    let mut out: Vec<SystemState> = matched.into_values().collect();
    // The same states in the same order on every run (a HashMap's order is not).
    out.sort_by_key(fingerprint);
    Ok(out)
}

/// The model's step `action` from `s` as `record` needs it. A start whose coordinator epoch is
/// more than one above the model's follows incarnations that died before they logged anything:
/// each elected its epoch (its one durable change) and was killed before its start record, so
/// the crash is repeated up to the record's epoch; only the last one's output is compared.
fn step(
    model: &RebalanceModel,
    s: &SystemState,
    action: &Action,
    record: &Record,
) -> Option<(SystemState, StepOutput)> {
    let (mut post, mut out) = model.step(s, action)?;
    if let (
        Action::CrashCoordinator,
        Record::Start {
            coordinator_epoch, ..
        },
    ) = (action, record)
    {
        while u64::from(post.coordinator.ce) < *coordinator_epoch {
            (post, out) = model.step(&post, action)?;
        }
    }
    Some((post, out))
}

/// The inputs a crash may have cut short in `s`, each with the state after it: every step of
/// the coordinator's own code (an input of the host: a request, a tick, an event, a response, an
/// AdjustIsr, a server or deletion notice), with any one of its store operations failed or none.
/// A host killed in the middle of an input has written no record of it and released none of its
/// effects, and the store operations it finished are durable. The model's step that fails its
/// k-th operation has done the ones before k and, where a failure aborts the step (R8: every
/// rule but R19, R20 and R23.5), none after it; the crash then discards the incarnation's
/// memory, so what remains of the step is exactly the store operations before k: a kill after
/// k-1 operations, or, with none failed, a kill after the last. The messages it sends stay in the
/// model's network; the real host never sent them, which the model explains as messages never
/// delivered (spec/log-format.md, "Crashes").
fn interrupted(
    model: &RebalanceModel,
    s: &SystemState,
) -> impl Iterator<Item = (Action, SystemState)> {
    let mut out = Vec::new();
    successors_where(model, s, Action::can_fail_store, |a, n, _| out.push((a, n)));
    out.into_iter()
}

/// The model actions that could be `record` from `s`, each with whether it is the stutter of a
/// tick (the model leaves out a Tick that changes nothing, spec 7.3, so such a logged tick is
/// explained by no step at all).
fn candidates(model: &RebalanceModel, s: &SystemState, record: &Record) -> Vec<(Action, bool)> {
    let (input, k) = match record {
        Record::Start { .. } => return vec![(Action::CrashCoordinator, false)],
        Record::End { .. } => return Vec::new(),
        Record::Input { input, store, .. } => {
            if store.failures > 1 {
                return Vec::new(); // the model fails at most one store operation per step
            }
            (
                input,
                store.failed.map(|k| u8::try_from(k).unwrap_or(u8::MAX)),
            )
        }
    };
    let one = |a: Action| vec![(a, false)];
    match input {
        mgr::Input::Register { plan } => {
            // The configuration's plan, or the one the log names (a later rebalance, such as a
            // cleanup after a give-up); either way the model derives the origins from its own
            // store, so a plan whose origins are not the model's is not explained.
            let ours = translate::plan(&model.register_plan(s, &model.config.plan));
            let targets = if *plan == ours {
                None
            } else {
                match logged_targets(plan) {
                    Some(t) => Some(t),
                    None => return Vec::new(),
                }
            };
            if let Some(t) = targets {
                if translate::plan(&model.register_plan(s, t)) != *plan {
                    return Vec::new();
                }
            }
            one(Action::Register {
                plan: targets,
                fail_store_op: k,
            })
        }
        mgr::Input::Cancel => one(Action::Cancel { fail_store_op: k }),
        mgr::Input::Tick => {
            let tick = Action::Tick { fail_store_op: k };
            if k.is_none() && model.step(s, &tick).is_none() {
                vec![(tick, true)]
            } else {
                one(tick)
            }
        }
        mgr::Input::Event(e) => match s.coordinator.events.first() {
            Some(front) if translate::event(front) == *e => one(Action::ProcessEvent {
                event: *front,
                fail_store_op: k,
            }),
            _ => Vec::new(),
        },
        mgr::Input::NliResponse { .. } | mgr::Input::AdjustIsr { .. } => {
            let mut out: Vec<(Action, bool)> = Vec::new();
            for m in s.network.iter() {
                let a = match m {
                    Message::NliResponse(r) if translate::nli_response(r) == *input => {
                        Action::DeliverNliResponse {
                            msg: *r,
                            fail_store_op: k,
                        }
                    }
                    Message::AdjustIsr(r) if translate::adjust_isr(r) == *input => {
                        Action::DeliverAdjustIsr {
                            msg: *r,
                            fail_store_op: k,
                        }
                    }
                    _ => continue,
                };
                if !out.iter().any(|(b, _)| *b == a) {
                    out.push((a, false));
                }
            }
            out
        }
        mgr::Input::ServerCrashed(x) => server(*x).map_or_else(Vec::new, |server| {
            one(Action::CrashServer {
                server,
                fail_store_op: k,
            })
        }),
        mgr::Input::ServerRestarted(x) => server(*x).map_or_else(Vec::new, |server| {
            one(Action::RestartServer {
                server,
                fail_store_op: k,
            })
        }),
        mgr::Input::BucketDeleted(b) => match u8::try_from(*b) {
            Ok(bucket) => one(Action::DeleteBucket {
                bucket,
                fail_store_op: k,
            }),
            Err(_) => Vec::new(),
        },
    }
}

/// A logged plan's targets as a register step carries them (interned by the model's trace
/// loader, so that the action stays `Copy`).
fn logged_targets(plan: &mgr::Plan) -> Option<&'static [rebalance_model::PlanTarget]> {
    let targets: Vec<serde_json::Value> = plan
        .buckets
        .iter()
        .map(|(b, e)| serde_json::json!({"bucket": b, "target": e.trs}))
        .collect();
    let step = serde_json::json!({"kind": "register", "plan": targets});
    match serde_json::from_value::<Action>(step) {
        Ok(Action::Register { plan, .. }) => plan,
        _ => None,
    }
}

fn server(x: mgr::ServerId) -> Option<rebalance_model::ServerId> {
    rebalance_model::ServerId::try_from(x).ok()
}

/// How the store a new incarnation `read` differs from the model's store in `post`, if it does:
/// a score (differing lines) and the keyed diff. Every write acknowledged before a crash must
/// be in it, and no write the model did not make.
fn read_differs(post: &SystemState, read: &mgr::PersistedState) -> Option<(usize, String)> {
    let (ours, theirs) = projection::with_states(|p| {
        p.model.clear();
        p.manager.clear();
        projection::model::store(post, &mut p.model);
        projection::manager::store(read, &mut p.manager);
        (p.model != p.manager).then(|| (p.model.render(), p.manager.render()))
    })?;
    let lines = crate::diff::side_by_side(&ours, &theirs);
    let score = lines.iter().filter(|l| l.model != l.manager).count();
    Some((
        score,
        format!(
            "the store the new incarnation read differs from the model's, first at `{}` \
             (model | log)\n{}",
            projection::first_differing_key(&ours, &theirs),
            crate::diff::render_as(&lines, "log")
        ),
    ))
}

/// Whether the model's step `action` (output `out`, state `post`) is the record: the same
/// effects (as the lockstep compares them), the same number of store operations where the
/// action can fail the store, and for a start the same epoch and live servers. Otherwise a
/// score (differing lines; lower is closer) and the report of the difference.
fn explains(
    action: &Action,
    out: &StepOutput,
    post: &SystemState,
    record: &Record,
) -> Result<(), (usize, String)> {
    let step = rebalance_model::view::describe::action(action);
    let (effects, ops) = match record {
        Record::Start {
            coordinator_epoch,
            live,
            effects,
            read,
            ..
        } => {
            let model_live: Vec<u32> = post.coordinator.live.iter().map(u32::from).collect();
            if *coordinator_epoch != u64::from(post.coordinator.ce) || *live != model_live {
                return Err((
                    1,
                    format!(
                        "{step}: the model's new incarnation has coordinator epoch {} and live \
                         servers {model_live:?}; the log's has {coordinator_epoch} and {live:?}",
                        post.coordinator.ce
                    ),
                ));
            }
            if let Some((score, why)) = read.as_ref().and_then(|r| read_differs(post, r)) {
                return Err((score, format!("{step}: {why}")));
            }
            (effects, None)
        }
        Record::Input { effects, store, .. } => (effects, Some(store.ops)),
        Record::End { .. } => return Err((usize::MAX, "the end record is no step".into())),
    };
    let differs = projection::with_effects(|p| {
        projection::model::effects(action, out, &mut p.model);
        projection::manager::effects(action, effects, &mut p.manager);
        (p.model != p.manager).then(|| (p.model.render(), p.manager.render()))
    });
    if let Some((ours, theirs)) = differs {
        let lines = crate::diff::side_by_side(&ours, &theirs);
        let score = lines.iter().filter(|l| l.model != l.manager).count();
        return Err((
            score,
            format!(
                "{step}: effects differ, first at `{}` (model | log)\n{}",
                projection::first_differing_key(&ours, &theirs),
                crate::diff::render_as(&lines, "log")
            ),
        ));
    }
    if let Some(ops) = ops {
        if action.can_fail_store() && ops != u64::from(out.store_ops) {
            return Err((
                1,
                format!(
                    "{step}: the model made {} store operations, the log {ops}",
                    out.store_ops
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_of_what_a_products_states_share_is_answered_as_of_every_state() {
        let states = product::tests::product_states();
        let p = Frontier::Product(Box::new(
            product::Product::factor(&states).expect("a product"),
        ));
        let whole = Frontier::States(states.clone());
        let shared = |s: &SystemState| s.coordinator.events.is_empty();
        // Reads one server's part: only some states have this message in flight.
        // Whether it differs from the first combination there, which the first state alone
        // would answer wrongly.
        let first = p.first(1).remove(0);
        let m = states
            .iter()
            .flat_map(|s| s.network.iter().copied())
            .find(|m| states.iter().any(|s| !s.network.contains(m)))
            .expect("a message not always in flight");
        let parts = |s: &SystemState| s.network.contains(&m) != first.network.contains(&m);
        let neither = |s: &SystemState| s.network.len() > 2;
        for f in [&shared as &dyn Fn(&SystemState) -> bool, &parts, &neither] {
            assert_eq!(p.any_of_shared(f), whole.any(f));
        }
        assert!(p.any_of_shared(parts) && !p.any_of_shared(neither));
        assert_eq!(p.first(3).len(), 3);
    }

    /// The fingerprint as it was computed before the buffer: each field hashed straight into
    /// SipHash.
    fn unbuffered(s: &SystemState) -> u64 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        s.store.hash(&mut h);
        s.coordinator.hash(&mut h);
        s.servers.hash(&mut h);
        s.views.hash(&mut h);
        s.network.hash(&mut h);
        s.budgets.hash(&mut h);
        s.ghost.restored.hash(&mut h);
        s.ghost.final_recovered.hash(&mut h);
        s.ghost.drained_after_cancel.hash(&mut h);
        s.ghost.violations.hash(&mut h);
        s.zombie.hash(&mut h);
        h.finish()
    }

    #[test]
    fn the_buffered_fingerprint_is_the_unbuffered_one() {
        let config =
            rebalance_model::config::presets::preset("ci-rf2-recovery").expect("a CI preset");
        let model = model_for(config, rebalance_model::BugSet::default());
        let mut states = vec![model.init_state()];
        // Two levels of successors: messages in flight, views changed, a crash.
        for _ in 0..2 {
            let mut next = Vec::new();
            for s in &states {
                model.successors(s, |_, n, _| next.push(n));
            }
            states.extend(next);
        }
        assert!(states.len() > 10, "{} states", states.len());
        for s in &states {
            assert_eq!(fingerprint(s), unbuffered(s));
        }
    }

    #[test]
    fn the_filtered_successors_are_the_models_own() {
        let config =
            rebalance_model::config::presets::preset("ci-rf2-recovery").expect("a CI preset");
        let model = model_for(config, rebalance_model::BugSet::default());
        let mut states = vec![model.init_state()];
        let mut hidden_seen = 0;
        for _ in 0..4 {
            let mut next = Vec::new();
            for s in &states {
                let mut all = Vec::new();
                model.successors(s, |a, n, _| {
                    if hidden(&a) {
                        all.push((a, fingerprint(&n)));
                    }
                    next.push(n);
                });
                let mut filtered = Vec::new();
                successors_where(&model, s, hidden, |a, n, _| {
                    filtered.push((a, fingerprint(&n)))
                });
                assert_eq!(all, filtered);
                hidden_seen += all.len();
            }
            states = next;
        }
        assert!(
            hidden_seen > 0,
            "no hidden step met: the comparison was empty"
        );
    }
}
