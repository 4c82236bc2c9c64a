//! `rebalance-model bench`: throughput and memory of the exhaustive DFS check per
//! configuration, and a single-threaded profile of where one transition's time goes.

use rebalance_model::check::checker::{self, CheckOptions};
use rebalance_model::config::presets::{self, ci_preset_names, preset_names};
use rebalance_model::state::SystemState;
use rebalance_model::step::model::RebalanceModel;
use rebalance_model::verdict::bug::BugSet;
use rebalance_model::verdict::properties;
use serde::Serialize;
use std::collections::HashSet;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

/// The configurations benchmarked when none is named: `tiny` and every `ci-*` preset, in the
/// order of the preset list.
pub fn default_configs() -> Vec<&'static str> {
    let ci = ci_preset_names();
    preset_names()
        .into_iter()
        .filter(|n| *n == "tiny" || ci.contains(n))
        .collect()
}

/// The measurements of one configuration.
#[derive(Clone, Debug, Serialize)]
pub struct ConfigBench {
    pub config: String,
    pub threads: usize,
    pub unique_states: usize,
    /// Stateright's total state count: every generated successor, new or not (plus the
    /// initial state, which Stateright counts too).
    pub transitions: usize,
    pub seconds: f64,
    pub unique_states_per_second: f64,
    pub transitions_per_second: f64,
    /// `size_of::<SystemState>()`: what one state takes on the DFS stack.
    pub state_size_bytes: usize,
    /// The process's resident-set high-water mark (VmHWM) right after this check; cumulative
    /// over every configuration run so far in this process.
    pub peak_rss_bytes: Option<u64>,
    /// (highest VmRSS sampled during the check - VmRSS before it) / unique states.
    pub rss_growth_bytes_per_state: Option<f64>,
    /// None when `--profile-states 0`.
    pub profile: Option<Profile>,
}

/// Where the time of the single-threaded profiling pass went.
#[derive(Clone, Debug, Serialize)]
pub struct Profile {
    /// States expanded (popped from the stack and given their successors).
    pub states: usize,
    /// Successors generated (enabled and within the search bound).
    pub transitions: usize,
    /// Candidate actions enumerated (each was stepped once).
    pub candidates: usize,
    /// Sum of the phases' times.
    pub seconds: f64,
    pub phases: Vec<Phase>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Phase {
    pub name: &'static str,
    pub nanos: u128,
    /// Fraction of the profile's total; the phases' shares sum to 1.
    pub share: f64,
    pub ns_per_transition: f64,
}

/// Parses `--config` values up front (so a bad name fails before anything runs), then
/// benchmarks each and prints a table or one JSON object per line. `Err` is a usage error.
pub fn run_cli(
    configs: &[String],
    threads: usize,
    profile_states: usize,
    json: bool,
    reduced: bool,
) -> Result<(), String> {
    let names: Vec<String> = if configs.is_empty() {
        default_configs().into_iter().map(String::from).collect()
    } else {
        configs.to_vec()
    };
    let mut models = Vec::new();
    for name in &names {
        let config = presets::load(name)?;
        let model = if reduced {
            rebalance_model::check::por::reduced(config, BugSet::none()).0
        } else {
            RebalanceModel::new(config, BugSet::none())
        };
        models.push((name.clone(), model));
    }
    let mut results = Vec::new();
    for (name, model) in &models {
        eprintln!("bench: {name} ...");
        let r = bench(name, model, threads, profile_states);
        if json {
            println!("{}", serde_json::to_string(&r).expect("json"));
        }
        results.push(r);
    }
    if !json {
        print_table(&results);
    }
    Ok(())
}

/// The exhaustive DFS check (for throughput and memory), then the profiling pass.
pub fn bench(
    name: &str,
    model: &RebalanceModel,
    threads: usize,
    profile_states: usize,
) -> ConfigBench {
    let rss_before = rss_bytes();
    let sampler = RssSampler::start();
    let report = checker::check(model, &CheckOptions::dfs(threads));
    let rss_max = sampler.stop();
    let peak_rss_bytes = status_bytes("VmHWM:");
    let rss_growth_bytes_per_state = match (rss_before, rss_max) {
        (Some(b), Some(a)) => Some(a.saturating_sub(b) as f64 / report.unique_states.max(1) as f64),
        _ => None,
    };
    let seconds = report.seconds.max(1e-9);
    ConfigBench {
        config: name.to_string(),
        threads,
        unique_states: report.unique_states,
        transitions: report.total_states,
        seconds: report.seconds,
        unique_states_per_second: report.unique_states as f64 / seconds,
        transitions_per_second: report.total_states as f64 / seconds,
        state_size_bytes: std::mem::size_of::<SystemState>(),
        peak_rss_bytes,
        rss_growth_bytes_per_state,
        profile: (profile_states > 0).then(|| profile(model, profile_states)),
    }
}

use rebalance_model::check::walk::fingerprint;

/// A plain DFS over the first `max_states` states, timing each phase in one batch per expanded
/// state: enumerate the candidates, step every candidate (the step includes its clone of the
/// state), clone the state once per candidate (apportioned out of the step), fingerprint every
/// successor, and evaluate every property on the expanded state (as Stateright's DFS does on
/// each state it pops). The seen-set and stack bookkeeping is not timed: it is this loop's own,
/// not Stateright's.
pub fn profile(model: &RebalanceModel, max_states: usize) -> Profile {
    let props = properties::all();
    let init = model.init_state();
    let mut seen: HashSet<u64> = HashSet::new();
    seen.insert(fingerprint(&init));
    let mut stack = vec![init];
    let (mut enumerate, mut step, mut clone, mut hash, mut check) =
        (0u128, 0u128, 0u128, 0u128, 0u128);
    let (mut states, mut transitions, mut candidates) = (0usize, 0usize, 0usize);
    let mut actions = Vec::new();
    let mut successors = Vec::new();
    let mut fingerprints = Vec::new();
    let mut holding = 0usize;
    while states < max_states {
        let Some(state) = stack.pop() else { break };
        states += 1;

        let t = Instant::now();
        for p in &props {
            holding += (p.condition)(model, &state) as usize;
        }
        check += t.elapsed().as_nanos();

        actions.clear();
        let t = Instant::now();
        rebalance_model::check::por::search_actions(model, &state, &mut actions);
        enumerate += t.elapsed().as_nanos();
        candidates += actions.len();

        successors.clear();
        let t = Instant::now();
        for a in &actions {
            if let Some((next, _)) = model.step(&state, a) {
                if model.within_bound(&next) {
                    successors.push(next);
                }
            }
        }
        step += t.elapsed().as_nanos();
        transitions += successors.len();

        let t = Instant::now();
        for _ in 0..actions.len() {
            black_box(black_box(&state).clone());
        }
        clone += t.elapsed().as_nanos();

        fingerprints.clear();
        let t = Instant::now();
        for s in &successors {
            fingerprints.push(fingerprint(s));
        }
        hash += t.elapsed().as_nanos();

        for (s, fp) in successors.drain(..).zip(&fingerprints) {
            if seen.insert(*fp) {
                stack.push(s);
            }
        }
    }
    black_box(holding);
    // The step's time includes its clone; report the step without it.
    let step_only = step.saturating_sub(clone);
    let parts = [
        ("enumerate", enumerate),
        ("step", step_only),
        ("clone", clone),
        ("hash", hash),
        ("properties", check),
    ];
    let total: u128 = parts.iter().map(|(_, n)| n).sum();
    let phases = parts
        .iter()
        .map(|&(name, nanos)| Phase {
            name,
            nanos,
            share: if total == 0 {
                0.0
            } else {
                nanos as f64 / total as f64
            },
            ns_per_transition: nanos as f64 / transitions.max(1) as f64,
        })
        .collect();
    Profile {
        states,
        transitions,
        candidates,
        seconds: total as f64 / 1e9,
        phases,
    }
}

fn print_table(results: &[ConfigBench]) {
    let width = results
        .iter()
        .map(|r| r.config.len())
        .max()
        .unwrap_or(0)
        .max("config".len());
    println!(
        "{:<width$} {:>10} {:>12} {:>8} {:>10} {:>12} {:>8} {:>10} {:>10}",
        "config",
        "unique",
        "transitions",
        "seconds",
        "unique/s",
        "trans/s",
        "state B",
        "RSS B/st",
        "peak RSS",
    );
    for r in results {
        println!(
            "{:<width$} {:>10} {:>12} {:>8.2} {:>10.0} {:>12.0} {:>8} {:>10} {:>10}",
            r.config,
            r.unique_states,
            r.transitions,
            r.seconds,
            r.unique_states_per_second,
            r.transitions_per_second,
            r.state_size_bytes,
            r.rss_growth_bytes_per_state
                .map_or("n/a".to_string(), |b| format!("{b:.1}")),
            r.peak_rss_bytes
                .map_or("n/a".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6)),
        );
    }
    for r in results {
        let Some(p) = &r.profile else { continue };
        println!();
        println!(
            "profile {}: {} states, {} transitions, {} candidates, {:.3} s",
            r.config, p.states, p.transitions, p.candidates, p.seconds
        );
        for ph in &p.phases {
            println!(
                "  {:<10} {:>5.1}% {:>9.1} ns/transition",
                ph.name,
                ph.share * 100.0,
                ph.ns_per_transition
            );
        }
    }
}

/// A field of /proc/self/status given in kB (`VmRSS:`, `VmHWM:`), in bytes; None off Linux.
fn status_bytes(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

fn rss_bytes() -> Option<u64> {
    status_bytes("VmRSS:")
}

/// Samples VmRSS every few milliseconds on its own thread and keeps the highest value: the
/// checker frees its fingerprint set when it finishes, so VmRSS afterwards says little.
struct RssSampler {
    stop: Arc<AtomicBool>,
    handle: thread::JoinHandle<Option<u64>>,
}

impl RssSampler {
    fn start() -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || {
            let mut max = rss_bytes();
            loop {
                let done = flag.load(Ordering::Relaxed);
                max = max.max(rss_bytes());
                if done {
                    return max;
                }
                thread::sleep(Duration::from_millis(5));
            }
        });
        RssSampler { stop, handle }
    }

    fn stop(self) -> Option<u64> {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().expect("sampler")
    }
}
