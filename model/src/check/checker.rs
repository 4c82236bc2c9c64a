//! Running a check: our DFS ([`crate::check::dfs`]), or Stateright's DFS, BFS or simulation, with
//! our own clock and progress, verdicts per property, and shortest counterexamples from
//! [`crate::check::shortest`].

use crate::check::dfs;
use crate::check::shortest::{self, Counterexample};
use crate::step::model::RebalanceModel;
use crate::verdict::properties;
use stateright::{Checker, Expectation, HasDiscoveries, Model};
use std::collections::BTreeSet;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Our depth-first search ([`crate::check::dfs`]): Stateright's graph and verdicts, faster.
    Dfs,
    /// Stateright's own depth-first checker, kept to compare against ([`crate::check::dfs`]'s
    /// tests, the speed comparison in docs/measurements.md).
    StaterightDfs,
    Bfs,
    Simulate {
        seed: u64,
        seconds: u64,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// An `always` property held in every reached state.
    Holds,
    /// An `always` property failed; the shortest counterexample, when computed.
    Violated(Option<Counterexample>),
    /// A `sometimes` property has an example (path length).
    ExampleFound(usize),
    /// A `sometimes` property has no example although the configuration allows one.
    NoExample,
    /// A `sometimes` property whose fault budget is zero in this configuration, or an `always`
    /// property this configuration does not decide (LIVE-PROGRESS with give-ups on).
    NotApplicable(&'static str),
}

impl PartialEq for Counterexample {
    fn eq(&self, other: &Self) -> bool {
        self.property == other.property && self.actions == other.actions
    }
}
impl Eq for Counterexample {}

#[derive(Clone, Debug)]
pub struct CheckReport {
    pub unique_states: usize,
    pub total_states: usize,
    pub max_depth: usize,
    pub seconds: f64,
    pub exhaustive: bool,
    /// Transitions not followed because they lead beyond `max_network` (0 without a bound):
    /// the check is exhaustive only for the bounded graph.
    pub truncated: u64,
    /// States at which the LIVE-* properties were checked: the fair end states reached (spec
    /// 7.3). Zero means every LIVE-* "holds" is vacuous.
    pub fair_end_states: u64,
    pub verdicts: Vec<(&'static str, Verdict)>,
}

impl CheckReport {
    pub fn states_per_second(&self) -> f64 {
        self.unique_states as f64 / self.seconds.max(1e-9)
    }
    pub fn violations(&self) -> Vec<&'static str> {
        self.verdicts
            .iter()
            .filter(|(_, v)| matches!(v, Verdict::Violated(_)))
            .map(|(n, _)| *n)
            .collect()
    }
    /// Every `always` holds and every applicable `sometimes` has an example.
    pub fn passed(&self) -> bool {
        self.verdicts
            .iter()
            .all(|(_, v)| !matches!(v, Verdict::Violated(_) | Verdict::NoExample))
    }
}

/// Options of one check.
pub struct CheckOptions {
    pub strategy: Strategy,
    pub threads: usize,
    /// Compute shortest counterexamples for violated properties (a second, BFS pass).
    pub shortest: bool,
    /// Print progress to stderr every this often (None: quiet).
    pub progress: Option<Duration>,
}

impl CheckOptions {
    /// The exhaustive check the tests and the bench run: depth-first (fingerprints only), on
    /// `threads` threads, quiet, without the shortest-counterexample pass.
    pub fn dfs(threads: usize) -> Self {
        CheckOptions {
            strategy: Strategy::Dfs,
            threads,
            shortest: false,
            progress: None,
        }
    }
}

/// Runs the check to completion (or the simulation for its duration).
pub fn check(model: &RebalanceModel, opts: &CheckOptions) -> CheckReport {
    model.reset_truncated();
    model.reset_fair_ends();
    let start = Instant::now();
    if opts.strategy == Strategy::Dfs {
        return own_dfs(model, start, opts);
    }
    // Never stop early: the counts must be those of the whole graph.
    let never = HasDiscoveries::AllOf(BTreeSet::from(["(never)"]));
    let builder = model
        .clone()
        .checker()
        .threads(opts.threads)
        .finish_when(never);
    match opts.strategy {
        Strategy::Dfs | Strategy::StaterightDfs => {
            finish(model, builder.spawn_dfs(), start, true, opts)
        }
        Strategy::Bfs => finish(model, builder.spawn_bfs(), start, true, opts),
        Strategy::Simulate { seed, seconds } => finish(
            model,
            builder
                .timeout(Duration::from_secs(seconds))
                .spawn_simulation(seed, stateright::UniformChooser),
            start,
            false,
            opts,
        ),
    }
}

fn own_dfs(model: &RebalanceModel, start: Instant, opts: &CheckOptions) -> CheckReport {
    let every = opts.progress.unwrap_or(Duration::from_secs(3600));
    let mut last = Instant::now();
    let search = dfs::search(model, opts.threads, every, |p| {
        if opts.progress.is_some() && last.elapsed() >= every {
            last = Instant::now();
            progress_line(
                start,
                p.unique_states.load(Ordering::Relaxed),
                p.total_states.load(Ordering::Relaxed),
                p.max_depth.load(Ordering::Relaxed),
            );
        }
    });
    let seconds = start.elapsed().as_secs_f64();
    let names: Vec<&'static str> = model.properties().iter().map(|p| p.name).collect();
    let found = |name: &str| {
        let i = names.iter().position(|n| *n == name)?;
        search.discoveries[i]
    };
    report(
        model,
        found,
        opts,
        Counts {
            unique_states: search.unique_states,
            total_states: search.total_states,
            max_depth: search.max_depth,
            seconds,
            exhaustive: true,
        },
    )
}

fn finish<C: Checker<RebalanceModel>>(
    model: &RebalanceModel,
    checker: C,
    start: Instant,
    exhaustive: bool,
    opts: &CheckOptions,
) -> CheckReport {
    let mut last = Instant::now();
    while !checker.is_done() {
        std::thread::sleep(Duration::from_millis(20));
        if let Some(every) = opts.progress {
            if last.elapsed() >= every {
                last = Instant::now();
                progress_line(
                    start,
                    checker.unique_state_count(),
                    checker.state_count(),
                    checker.max_depth(),
                );
            }
        }
    }
    let checker = checker.join();
    let seconds = start.elapsed().as_secs_f64();
    let discoveries = checker.discoveries();
    let found = |name: &str| {
        discoveries
            .get(name)
            .map(|path| path.clone().into_actions().len())
    };
    report(
        model,
        found,
        opts,
        Counts {
            unique_states: checker.unique_state_count(),
            total_states: checker.state_count(),
            max_depth: checker.max_depth(),
            seconds,
            exhaustive,
        },
    )
}

/// One line of `--progress` on stderr.
fn progress_line(start: Instant, unique: usize, total: usize, depth: usize) {
    eprintln!(
        "[{:>6.1}s] {unique} unique states, {total} total, depth {depth}",
        start.elapsed().as_secs_f64()
    );
}

/// A search's own figures, before the verdicts are added.
struct Counts {
    unique_states: usize,
    total_states: usize,
    max_depth: usize,
    seconds: f64,
    exhaustive: bool,
}

/// Each property's verdict from `found`, and the violated ones.
fn verdicts(
    model: &RebalanceModel,
    found: impl Fn(&str) -> Option<usize>,
) -> (Vec<(&'static str, Verdict)>, Vec<&'static str>) {
    let mut verdicts = Vec::new();
    let mut violated = Vec::new();
    for p in model.properties() {
        let found = found(p.name);
        let v = match p.expectation {
            Expectation::Always | Expectation::Eventually => match found {
                Some(_) => {
                    violated.push(p.name);
                    Verdict::Violated(None)
                }
                None => match properties::property_not_applicable(&p, &model.config) {
                    Some(why) => Verdict::NotApplicable(why),
                    None => Verdict::Holds,
                },
            },
            Expectation::Sometimes => match found {
                Some(steps) => Verdict::ExampleFound(steps),
                None => match properties::property_not_applicable(&p, &model.config) {
                    Some(why) => Verdict::NotApplicable(why),
                    None => Verdict::NoExample,
                },
            },
        };
        verdicts.push((p.name, v));
    }
    (verdicts, violated)
}

/// The report of a search: its counts, and each property's verdict from `found` (a discovery's
/// number of actions, by property name), with shortest counterexamples if asked for.
fn report(
    model: &RebalanceModel,
    found: impl Fn(&str) -> Option<usize>,
    opts: &CheckOptions,
    counts: Counts,
) -> CheckReport {
    let (mut verdicts, violated) = verdicts(model, found);
    if opts.shortest && !violated.is_empty() {
        // Shortest paths of the whole graph, whose action indices the Explorer opens: the
        // reduced graph holds a violation wherever the whole one does (spec 9), but not
        // always along a shortest path.
        let mut whole = model.clone();
        whole.reduction = false;
        for cx in shortest::first_discoveries(&whole, &violated) {
            if let Some((_, v)) = verdicts.iter_mut().find(|(n, _)| *n == cx.property) {
                *v = Verdict::Violated(Some(cx));
            }
        }
    }
    CheckReport {
        unique_states: counts.unique_states,
        total_states: counts.total_states,
        max_depth: counts.max_depth,
        seconds: counts.seconds,
        exhaustive: counts.exhaustive,
        truncated: model.truncated(),
        fair_end_states: model.fair_ends(),
        verdicts,
    }
}
