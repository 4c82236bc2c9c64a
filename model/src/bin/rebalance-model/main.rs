//! `rebalance-model`: check, explore and list configurations of the rebalance model.

// The checker's benchmark and the churn measurement are the binary's own subcommands, not
// library API.
mod bench;
mod catalogue;
mod churn;
mod faults;

use clap::{Parser, Subcommand, ValueEnum};
use rebalance_model::check::checker::{self, CheckOptions, CheckReport, Strategy, Verdict};
use rebalance_model::check::cycle::FairCycleSearch;
use rebalance_model::check::por::{describe, reduced, Setup};
use rebalance_model::config::catalogue::Table;
use rebalance_model::view::describe;
use rebalance_model::view::explorer::{self, ExplorerModel};
use rebalance_model::view::web::Explorer;
use rebalance_model::{preset, preset_names, Bug, BugSet, Config, RebalanceModel, Trace};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(
    name = "rebalance-model",
    version,
    // Every subcommand answers `--version` too (`check --version` used to suggest `--variant`).
    propagate_version = true,
    about = "Exhaustive Stateright model of the Fluss bucket-rebalance protocol (spec/protocol.md)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum StrategyArg {
    /// Depth-first, exhaustive; keeps only fingerprints (least memory).
    Dfs,
    /// Stateright's own depth-first checker: the same graph, counts and verdicts as `dfs`, more
    /// time per state; for comparison.
    StaterightDfs,
    /// Breadth-first, exhaustive; keeps whole states.
    Bfs,
    /// Random walks from a seed for --seconds; not exhaustive.
    Simulate,
}

/// The Explorer's pages.
#[derive(Clone, Copy, ValueEnum)]
enum UiArg {
    /// Our pages: every property marked on each state, `check`'s verdicts.
    Ours,
    /// Stateright's Explorer UI over the same model.
    Stateright,
}

/// How `check` decides the LIVE-* goals (spec 7.3).
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LivenessArg {
    /// Check the LIVE-* goals only at fair end states (no obligatory action enabled), as
    /// properties of the normal check. Loops are not seen.
    FairEnds,
    /// After the normal check, also run the fair-cycle search: an iterative Tarjan search of
    /// the whole reachable graph (the edges the check follows) for a strongly connected set of
    /// states where some LIVE-* goal never holds and a fair run can stay forever. Fairness is
    /// weak fairness per action: an obligatory action (ProcessEvent, the deliveries,
    /// ProposeIsr, Tick; none with an injected store failure) that stays enabled, whatever
    /// max_network, is eventually taken; client requests, faults, RestartServer (a server may
    /// be lost for good; obligatory under --no-give-up, where the faults stop), DeleteBucket
    /// and zombie steps are optional. Single-threaded; keeps a
    /// fingerprint and an index per state (about 20-30 bytes) besides the stack.
    Cycles,
}

#[derive(clap::Args)]
struct ModelArgs {
    /// A preset name (see `configs`) or a path to a JSON configuration file. The default is the
    /// largest CI preset: one move bucket under a server crash and restart.
    #[arg(long, default_value = "ci-server-crash")]
    config: String,
    /// Restore a historical bug (spec section 10); repeatable. Also accepts the names of the
    /// Fluss-as-written variants.
    #[arg(long = "bug", value_name = "NAME")]
    bugs: Vec<Bug>,
    /// Check one of Fluss's own choices where the spec decided otherwise ("Fluss as written",
    /// spec section 10); repeatable, and variants combine.
    #[arg(long = "variant", value_name = "NAME", value_parser = Bug::parse_variant)]
    variants: Vec<Bug>,
    /// The progress check (spec 7.3, LIVE-PROGRESS): R14.3 never gives a bucket up and a
    /// crashed server's restart is obligatory, so the faults stop and every bucket must reach
    /// COMPLETED, or CANCELED after a cancel. A bucket the protocol strands shows as a fair
    /// cycle (with `--liveness cycles`) or a fair end state on which LIVE-PROGRESS fails. The
    /// configuration's `no_give_up` field says the same.
    #[arg(long)]
    no_give_up: bool,
}

impl ModelArgs {
    /// Every switch, from `--bug` and `--variant`, each once, in the order given.
    fn switches(&self) -> Vec<Bug> {
        let mut all: Vec<Bug> = Vec::new();
        for b in self.bugs.iter().chain(&self.variants) {
            if !all.contains(b) {
                all.push(*b);
            }
        }
        all
    }
}

/// A table of docs/model.md that the catalogue writes.
#[derive(Clone, Copy, ValueEnum)]
enum TableArg {
    /// "The CI presets".
    CiPresets,
    /// "Larger configurations".
    LargerConfigurations,
    /// "Historical bugs as switches".
    Switches,
    /// "Fluss's own choices as variants".
    Variants,
}

#[derive(Subcommand)]
enum Command {
    /// Check every property; exit 0 if all hold and every applicable SOME-* has an example,
    /// 1 on a violation or a missing example, 2 on bad usage or configuration.
    Check {
        #[command(flatten)]
        model: ModelArgs,
        /// Search strategy.
        #[arg(long, value_enum, default_value = "dfs")]
        strategy: StrategyArg,
        /// Seed for --strategy simulate (printed; a run is replayed by passing it again).
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// How long --strategy simulate runs, in seconds: 1 to 31536000 (a year). 0 would
        /// check no state and report every property as holding; far more overflowed the
        /// checker's deadline and panicked.
        #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=MAX_SIMULATE_SECONDS))]
        seconds: u64,
        /// Checker threads (1 to 256).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// Write the shortest counterexample of the first violated property as a JSON trace.
        /// With `--liveness cycles` and a fair cycle found (and no other violation), the first
        /// lasso: its prefix and one turn of its cycle, `cycle_start` marking where the cycle
        /// begins (spec/trace-format.md, "Lassos").
        #[arg(long, value_name = "FILE")]
        trace_out: Option<String>,
        /// How the LIVE-* goals are checked: `fair-ends` (the default) checks them only at fair
        /// end states, as properties of the check; `cycles` also searches the graph for fair
        /// cycles on which a goal never holds (see the values), and a cycle found makes the
        /// exit code 1. The default is `cycles` with `--no-give-up`: a stranded bucket keeps the
        /// clock going, so it shows on a cycle, never at a fair end state.
        #[arg(long, value_enum)]
        liveness: Option<LivenessArg>,
        /// Print the report as JSON on stdout instead of text.
        #[arg(long)]
        json: bool,
        /// Search with the partial-order reduction (spec 9, "Partial-order reduction"), the
        /// default: where one server's deliveries about one bucket form a stubborn set, follow
        /// only those. A configuration not in the form it needs (the presets are) is changed:
        /// dead messages collected, superseded requests kept, redundant resends absorbed,
        /// `max_network` dropped, each change printed; the verdicts are those of that
        /// configuration's whole graph. Shortest counterexamples are searched on the whole
        /// graph.
        #[arg(long, overrides_with = "no_por")]
        por: bool,
        /// Search the whole graph of the configuration as given, without the reduction.
        /// `--liveness cycles` implies it: the reduction keeps every state property and fair end
        /// state, not fair cycles.
        #[arg(long, overrides_with = "por")]
        no_por: bool,
    },
    /// Serve the Explorer, web pages over the state graph: open the address `check` prints under
    /// a counterexample (`/steps/0/I/J...`) to see the path, every property marked on its last
    /// state, the state with what the step changed, and the actions enabled next. Stops on
    /// Ctrl-C; exit 2 on bad usage or an address it cannot bind.
    Explore {
        #[command(flatten)]
        model: ModelArgs,
        /// Address to listen on; keep it on loopback.
        #[arg(long, default_value = "127.0.0.1:3000")]
        addr: String,
        /// Which pages: `ours` (the default) marks every property on every state and shows
        /// `check`'s own verdicts; `stateright` is Stateright's Explorer UI, whose state panel
        /// can say "holds" on the counterexample `check` prints (docs/model.md says why).
        #[arg(long, value_enum, default_value = "ours")]
        ui: UiArg,
        /// Threads of the check the page runs when asked (1 to 256; `ours` only).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
    },
    /// Count leader elections per completed bucket (the churn of spec 10's
    /// `reelect-on-reconcile`) over seeded random walks, each to a terminal state. An election
    /// is a step in which R5 ran and raised a bucket's stored epochs; a completion is a step that
    /// made a plan bucket COMPLETED. Prints the seed; the same seed gives the same walks. Exit
    /// 0, or 2 on bad usage or configuration.
    Churn {
        #[command(flatten)]
        model: ModelArgs,
        /// Seed of the walks.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Number of walks (at least 1).
        #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
        walks: u32,
        /// Longest walk, in steps, at least 1 (the graph is acyclic, so walks end well before
        /// on presets).
        #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..))]
        max_steps: u32,
    },
    /// Measure which combinations of fault kinds each configuration's graph reaches (spec 9,
    /// "Fault coverage"): for every pair and triple of fault kinds (a cancel and a second
    /// register count as faults), every plan kind (move, leader-only) and every phase of an
    /// RF >= 2 bucket (at origin, union written, mid-move, at target, tracked), which
    /// configurations take the last fault of the combination with the others already taken,
    /// on a bucket in that phase. Walks the graph `check` searches (the reduced one), one
    /// configuration after another, with a line per configuration on stderr; prints the
    /// tables as Markdown (docs/fault-coverage-family.md is this output for the pairs of the
    /// fault-combination family, `scripts/fault-coverage-family.sh`). Exit 0, or 2 on bad
    /// usage or configuration.
    Faults {
        /// A preset name or a path to a JSON configuration file; repeatable. The default is
        /// every `ci-*` preset.
        #[arg(long = "config", value_name = "NAME|FILE")]
        configs: Vec<String>,
        /// Stop a configuration's walk after this many states; the cells it reached are
        /// reached, and its row says it stopped.
        #[arg(long, default_value_t = 100_000_000, value_parser = clap::value_parser!(u64).range(1..))]
        max_states: u64,
        /// Write the Markdown to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// List the presets with a one-line description.
    Configs,
    /// The catalogue of every configuration the project runs (model/src/config/catalogue.rs):
    /// by default one line each, with where it runs (CI, the scheduled checks), the state
    /// counts CI pins, the fair-cycle search's bound, and what each bug switch and variant
    /// violates on it. The other forms are what scripts and documents read; a new
    /// configuration is one entry in the catalogue and one `--update-docs docs/model.md`.
    Catalogue {
        /// Print what scripts/scheduled-checks.sh checks, one --config argument a line.
        #[arg(long, conflicts_with_all = ["bounded", "table", "update_docs"])]
        scheduled: bool,
        /// Print the presets whose fair-cycle search CI keeps within a bound, one a line (the
        /// scheduled checks search them unbounded).
        #[arg(long, conflicts_with_all = ["table", "update_docs"])]
        bounded: bool,
        /// Print one of docs/model.md's tables in Markdown.
        #[arg(long, value_enum, conflicts_with = "update_docs")]
        table: Option<TableArg>,
        /// Rewrite the catalogue's tables in FILE (docs/model.md) between their markers.
        #[arg(long, value_name = "FILE")]
        update_docs: Option<std::path::PathBuf>,
    },
    /// Write a conformance suite: a few version 2 traces, with `expect` blocks from the model's
    /// own states, that together reach every rule, every action kind (with and without a store
    /// fault) and every SOME-* companion reachable on the configuration; print the count and
    /// the coverage, naming what the configuration cannot reach. DIR gets one file per trace
    /// and `suite.json` (what each trace covers). Exit 0, or 2 on bad usage, an unknown
    /// configuration, or a DIR that holds anything but a suite.
    Suite {
        /// A preset name (see `configs`) or a path to a JSON configuration file.
        #[arg(long)]
        config: String,
        /// The directory to write; created if missing, a previous suite in it replaced.
        #[arg(long, value_name = "DIR")]
        out: std::path::PathBuf,
    },
    /// Replay a JSON trace (spec/trace-format.md): print every step with the messages the
    /// coordinator sent (as trace JSON) and check every `expect` block. Exit 0 when every
    /// expectation holds, 1 with a keyed diff when one does not, 2 on an invalid trace (a
    /// malformed field, a step that is not enabled, a pattern that matches no message or several).
    Replay {
        /// The trace file.
        trace: String,
        /// Also write the trace with every step explicit (patterns resolved) to this file.
        #[arg(long, value_name = "OUT")]
        write_resolved: Option<String>,
    },
    /// Measure the model checker per configuration: an exhaustive DFS check for unique
    /// states/s, transitions/s and memory, then a single-threaded profile of where one
    /// transition's time goes. Exit 0, or 2 on bad usage or configuration.
    ///
    /// Peak RSS is the process's high-water mark (VmHWM), cumulative over the configurations
    /// run so far; run one --config per process for a clean figure. "RSS B/st" is the growth
    /// of VmRSS during the check (highest sample minus the value before) per unique state, a
    /// rough figure for the bytes per stored state (DFS stores fingerprints only); memory
    /// freed by an earlier configuration is reused, so it too is cleanest one per process.
    /// "state B" is size_of::<SystemState>(), what one state takes on the DFS stack.
    ///
    /// The profile times, per expanded state: enumerate (candidate actions), step (every
    /// candidate, less its clone), clone (of the state, once per candidate), hash (the
    /// fingerprint of every successor, Stateright's AHash) and properties
    /// (every condition on the state). Shares are of the sum of these phases.
    Bench {
        /// A preset name or a path to a JSON configuration file; repeatable. The default is
        /// `tiny` and every `ci-*` preset, in the order of `configs`.
        #[arg(long = "config", value_name = "NAME|FILE")]
        configs: Vec<String>,
        /// Checker threads for the DFS check, 1 to 256 (the profile is single-threaded).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: u16,
        /// States the profile expands (its own DFS over the same graph); 0 skips the profile.
        #[arg(long, default_value_t = 200000)]
        profile_states: usize,
        /// Print one JSON object per configuration (one per line) instead of the table.
        #[arg(long)]
        json: bool,
        /// Check the whole graph, as `check --no-por` does, instead of the partial-order
        /// reduction's (the default, as `check`'s): the per-state speed of the search without
        /// the reduction.
        #[arg(long)]
        no_por: bool,
    },
}

/// The longest `--seconds`: a year, far beyond any useful run and far from the overflow of
/// the checker's deadline (`Instant::now() + seconds`).
const MAX_SIMULATE_SECONDS: u64 = 365 * 24 * 60 * 60;

fn load_config(name: &str) -> Result<Config, String> {
    rebalance_model::config::presets::load(name)
}

fn model_from(args: &ModelArgs) -> Result<RebalanceModel, String> {
    let mut config = load_config(&args.config)?;
    config.no_give_up |= args.no_give_up;
    Ok(RebalanceModel::new(config, BugSet::of(&args.switches())))
}

fn main() -> ExitCode {
    rebalance_model::view::pipe::end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    match cli.command {
        Command::Faults {
            configs,
            max_states,
            out,
        } => {
            let names: Vec<String> = if configs.is_empty() {
                rebalance_model::config::presets::ci_preset_names()
                    .into_iter()
                    .map(String::from)
                    .collect()
            } else {
                configs
            };
            let measured = match faults::measure(&names, max_states as usize) {
                Ok(m) => m,
                Err(e) => return usage(&e),
            };
            let mut command = String::from("rebalance-model faults");
            for n in &names {
                command.push_str(&format!(" --config {n}"));
            }
            let text = faults::markdown(&measured, &command);
            match out {
                None => print!("{text}"),
                Some(path) => {
                    if let Err(e) = std::fs::write(&path, text) {
                        return usage(&format!("cannot write {}: {e}", path.display()));
                    }
                }
            }
            ExitCode::SUCCESS
        }
        Command::Catalogue {
            scheduled,
            bounded,
            table,
            update_docs,
        } => {
            if scheduled {
                catalogue::scheduled();
            } else if bounded {
                catalogue::bounded();
            } else if let Some(t) = table {
                catalogue::table(match t {
                    TableArg::CiPresets => Table::CiPresets,
                    TableArg::LargerConfigurations => Table::Larger,
                    TableArg::Switches => Table::Switches,
                    TableArg::Variants => Table::Variants,
                });
            } else if let Some(path) = update_docs {
                return catalogue::update_docs(&path);
            } else {
                catalogue::list();
            }
            ExitCode::SUCCESS
        }
        Command::Configs => {
            for name in preset_names() {
                let c = preset(name).expect("listed preset");
                println!("{name:<12} {}", c.description);
            }
            ExitCode::SUCCESS
        }
        Command::Churn {
            model: args,
            seed,
            walks,
            max_steps,
        } => {
            let c = match model_from(&args) {
                Ok(model) => crate::churn::churn(&model, seed, walks, max_steps as usize),
                Err(e) => return usage(&e),
            };
            println!("{}", switches_line(&args.config, &args.switches()));
            println!(
                "seed {seed}, {walks} walks, {} steps: {} elections, {} completed buckets",
                c.steps, c.elections, c.completed
            );
            println!(
                "elections per completed bucket, over the {} walks that completed one: mean {:.3}, max {:.3}",
                c.completing_walks,
                c.mean_per_completed(),
                c.max_per_completed
            );
            ExitCode::SUCCESS
        }
        Command::Explore {
            model: args,
            addr,
            ui,
            threads,
        } => {
            let model = match model_from(&args) {
                Ok(m) => m,
                Err(e) => return usage(&e),
            };
            // Stateright's server panics on an address it cannot bind; say why and exit 2.
            if let Err(e) = std::net::TcpListener::bind(addr.as_str()) {
                return usage(&format!("--addr {addr}: {e}"));
            }
            eprintln!("Explorer on http://{addr}/");
            match ui {
                UiArg::Ours => {
                    let title = switches_line(&args.config, &args.switches());
                    let explorer = Explorer::new(model, title, threads as usize);
                    match explorer.serve(&addr) {
                        Ok(()) => ExitCode::SUCCESS,
                        Err(e) => usage(&e),
                    }
                }
                UiArg::Stateright => {
                    use stateright::Model;
                    ExplorerModel(model).checker().serve(addr.as_str());
                    ExitCode::SUCCESS
                }
            }
        }
        Command::Replay {
            trace,
            write_resolved,
        } => replay(&trace, write_resolved.as_deref()),
        Command::Suite { config, out } => {
            let c = match load_config(&config) {
                Ok(c) => c,
                Err(e) => return usage(&e),
            };
            let suite = rebalance_model::trace::suite::build(&config, &c);
            if let Err(e) = suite.write(&out) {
                return usage(&e);
            }
            print!("{}", suite.render());
            eprintln!(
                "wrote {} traces and suite.json to {}",
                suite.traces.len(),
                out.display()
            );
            ExitCode::SUCCESS
        }
        Command::Bench {
            configs,
            threads,
            profile_states,
            json,
            no_por,
        } => {
            let threads = threads as usize;
            match crate::bench::run_cli(&configs, threads, profile_states, json, !no_por) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => usage(&e),
            }
        }
        Command::Check {
            model,
            strategy,
            seed,
            seconds,
            threads,
            trace_out,
            liveness,
            json,
            por,
            no_por,
        } => {
            let config_name = model.config.clone();
            let bugs = model.switches();
            let model = match model_from(&model) {
                Ok(m) => m,
                Err(e) => return usage(&e),
            };
            let liveness = liveness.unwrap_or(if model.config.no_give_up {
                LivenessArg::Cycles
            } else {
                LivenessArg::FairEnds
            });
            // The fair-cycle search reads the whole graph: the reduction keeps every state
            // property and fair end state, not fair cycles (spec 9).
            let cycles_wanted = liveness == LivenessArg::Cycles;
            if por && cycles_wanted {
                return usage(
                    "--por cannot be combined with --liveness cycles: the partial-order reduction \
                     preserves every state property and the fair end states, not fair cycles \
                     (spec 9); --liveness cycles searches the whole graph",
                );
            }
            let (model, setup) = if !no_por && !cycles_wanted {
                let (m, setup) = reduced(model.config, model.bugs);
                (m, Some(setup))
            } else {
                (model, None)
            };
            let reduction = match &setup {
                Some(setup) => describe(setup),
                None if cycles_wanted => {
                    "reduction: off (--liveness cycles searches the whole graph)".to_string()
                }
                None => "reduction: off (--no-por: the whole graph)".to_string(),
            };
            let strategy = match strategy {
                StrategyArg::Dfs => Strategy::Dfs,
                StrategyArg::StaterightDfs => Strategy::StaterightDfs,
                StrategyArg::Bfs => Strategy::Bfs,
                StrategyArg::Simulate => {
                    eprintln!("simulation seed: {seed}");
                    Strategy::Simulate { seed, seconds }
                }
            };
            let report = checker::check(
                &model,
                &CheckOptions {
                    strategy,
                    threads: threads.into(),
                    shortest: true,
                    progress: Some(Duration::from_secs(5)),
                },
            );
            if let Some(path) = &trace_out {
                // Prefer the property the (first) bug switch is known to violate.
                let preferred = bugs.first().map(|b| b.violated_property());
                let violated = |want: Option<&str>| {
                    report.verdicts.iter().find_map(|(n, v)| match v {
                        Verdict::Violated(Some(cx)) if want.is_none_or(|w| w == *n) => Some(cx),
                        _ => None,
                    })
                };
                let first = violated(preferred).or_else(|| violated(None));
                if let Some(cx) = first {
                    let t = Trace::new(model.config.clone(), model.bugs, cx.actions.clone());
                    if let Err(e) = t.write(path) {
                        return usage(&e.to_string());
                    }
                    eprintln!("wrote {path} ({})", cx.property);
                }
            }
            let cycles = (liveness == LivenessArg::Cycles)
                .then(|| rebalance_model::check::cycle::fair_cycles_for_goals(&model));
            // The lasso goes to --trace-out when the check itself had no counterexample to write.
            let state_cx = report
                .verdicts
                .iter()
                .any(|(_, v)| matches!(v, Verdict::Violated(Some(_))));
            if let (Some(search), Some(path), false) = (&cycles, &trace_out, state_cx) {
                // As for a state counterexample: the goal the (first) switch is known to
                // violate, else the first.
                let preferred = bugs.first().map(|b| b.violated_property());
                let lasso = search
                    .violations
                    .iter()
                    .find(|l| Some(l.goal) == preferred)
                    .or(search.violations.first());
                if let Some(lasso) = lasso {
                    if let Err(e) = lasso.trace(&model).write(path) {
                        return usage(&e.to_string());
                    }
                    eprintln!("wrote {path} ({}, a lasso)", lasso.goal);
                }
            }
            if json {
                let mut v: serde_json::Value =
                    serde_json::from_str(&to_json(&model, &report, &config_name, &bugs))
                        .expect("json");
                v["cycle_search"] = cycles.as_ref().map_or(serde_json::Value::Null, cycles_json);
                let adjustments = match &setup {
                    Some(Setup::On { adjustments }) => adjustments.clone(),
                    _ => Vec::new(),
                };
                v["reduction"] = serde_json::json!({
                    "on": matches!(setup, Some(Setup::On { .. })),
                    "summary": reduction,
                    "adjustments": adjustments,
                });
                println!("{}", serde_json::to_string_pretty(&v).expect("json"));
            } else {
                print_text(&model, &report, &config_name, &bugs, &reduction);
                match &cycles {
                    Some(search) => print_cycles(&model, search),
                    None => println!(
                        "fair-cycle search: not run (--liveness cycles searches the graph for \
                         fair cycles)"
                    ),
                }
            }
            let fair_cycle = cycles.as_ref().is_some_and(|c| !c.violations.is_empty());
            if report.passed() && !fair_cycle {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(1)
            }
        }
    }
}

/// `rebalance-model replay`: every step, the coordinator's sends, and the expectations.
fn replay(path: &str, write_resolved: Option<&str>) -> ExitCode {
    let t = match Trace::read(path) {
        Ok(t) => t,
        // An expectation failed first: that is the trace's verdict (exit 1), and the step it
        // made impossible comes after it in the message.
        Err(e @ rebalance_model::trace::TraceError::ExpectationFailed { .. }) => {
            eprint!("{path}: {e}");
            return ExitCode::from(1);
        }
        Err(e) => return usage(&format!("invalid trace {path}: {e}")),
    };
    let replay = match t.replay() {
        Ok(r) => r,
        Err(e) => return usage(&format!("invalid trace {path}: {e}")),
    };
    if let Some(out) = write_resolved {
        if let Err(e) = t.write(out) {
            return usage(&e.to_string());
        }
        eprintln!("wrote {out} (every step explicit)");
    }
    let model = t.model();
    let failures = t.check(&replay);
    let report = |after: usize| {
        for e in t.expectations.iter().filter(|e| e.after == after) {
            match failures.iter().find(|f| f.path == e.path) {
                None => println!("   expect `{}`: holds", e.path),
                Some(f) => print!("{}", f.render("model")),
            }
        }
    };
    report(0);
    for (i, a) in t.steps.iter().enumerate() {
        if t.cycle_start == Some(i) {
            println!(
                "   cycle (a lasso): the steps from here lead back to the state after step {i}"
            );
        }
        let text = describe::step(&model, &replay.states[i], a).unwrap_or_default();
        println!("{}. {text}", i + 1);
        for m in &replay.outputs[i].sent {
            println!("   sent {}", rebalance_model::view::render::message(m));
        }
        report(i + 1);
    }
    if failures.is_empty() {
        println!(
            "{path}: {} steps, {} expectations hold",
            t.steps.len(),
            t.expectations.len()
        );
        ExitCode::SUCCESS
    } else {
        println!(
            "{path}: {} of {} expectations failed",
            failures.len(),
            t.expectations.len()
        );
        ExitCode::from(1)
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// The names of the switches of one kind: historical bugs, or Fluss-as-written variants.
fn names(bugs: &[Bug], variants: bool) -> Vec<&'static str> {
    bugs.iter()
        .filter(|b| b.is_variant() == variants)
        .map(|b| b.name())
        .collect()
}

/// `config NAME, bugs A,B, variants C,D`: every active switch is named, each under its kind,
/// so a verdict on a combination of Fluss's variants says which combination it is.
fn switches_line(config: &str, bugs: &[Bug]) -> String {
    let mut head = format!("config {config}");
    for (label, list) in [
        ("bugs", names(bugs, false)),
        ("variants", names(bugs, true)),
    ] {
        if !list.is_empty() {
            head.push_str(&format!(", {label} {}", list.join(",")));
        }
    }
    head
}

fn print_text(
    model: &RebalanceModel,
    r: &CheckReport,
    config: &str,
    bugs: &[Bug],
    reduction: &str,
) {
    println!("{}", switches_line(config, bugs));
    println!("{reduction}");
    println!(
        "unique states {}, total states {}, max depth {}, {:.2} s, {:.0} states/s{}",
        r.unique_states,
        r.total_states,
        r.max_depth,
        r.seconds,
        r.states_per_second(),
        if r.exhaustive {
            ""
        } else {
            " (not exhaustive)"
        }
    );
    if let Some(n) = model.config.max_network {
        println!(
            "search bound max_network = {n}: {} transitions into states beyond it not followed",
            r.truncated
        );
    }
    println!("{}", liveness_line(r));
    if model.config.no_give_up {
        println!(
            "progress check (spec 7.3): R14.3 never gives up, a crashed server's restart is \
             obligatory; LIVE-PROGRESS needs every bucket COMPLETED, or CANCELED after a cancel"
        );
    }
    for (name, v) in &r.verdicts {
        match v {
            Verdict::Holds if name.starts_with("LIVE-") => println!(
                "  {name:<30} holds at {} fair end states",
                r.fair_end_states
            ),
            Verdict::Holds => println!("  {name:<30} holds"),
            Verdict::ExampleFound(n) => println!("  {name:<30} example found ({n} steps)"),
            Verdict::NoExample => println!("  {name:<30} NO EXAMPLE"),
            Verdict::NotApplicable(why) => println!("  {name:<30} n/a ({why})"),
            Verdict::Violated(None) => println!("  {name:<30} VIOLATED"),
            Verdict::Violated(Some(cx)) => {
                println!(
                    "  {name:<30} VIOLATED, shortest counterexample {} steps:",
                    cx.actions.len()
                );
                let mut state = model.init_state();
                for (i, a) in cx.actions.iter().enumerate() {
                    let text = describe::step(model, &state, a).unwrap_or_default();
                    println!("      {}. {text}", i + 1);
                    state = model.step(&state, a).expect("recorded").0;
                }
                println!(
                    "      Explorer: {} (serve it with: {})",
                    explorer::address(EXPLORER_ADDR, &cx.indices),
                    explore_command(config, bugs)
                );
            }
        }
    }
}

/// What bounded the LIVE-* verdicts: the fair end states they were checked at (spec 7.3).
fn liveness_line(r: &CheckReport) -> String {
    let vacuous = if r.fair_end_states == 0 {
        " (none reached: every LIVE-* verdict below is vacuous)"
    } else {
        ""
    };
    format!(
        "liveness: LIVE-* checked at {} fair end states{vacuous}",
        r.fair_end_states
    )
}

/// Where `explore` listens by default, and so the address `check` prints.
const EXPLORER_ADDR: &str = "127.0.0.1:3000";

/// The command that serves the Explorer on the same model as a check.
fn explore_command(config: &str, bugs: &[Bug]) -> String {
    let mut cmd = format!("rebalance-model explore --config {config}");
    for b in bugs {
        let flag = if b.is_variant() { "variant" } else { "bug" };
        cmd.push_str(&format!(" --{flag} {}", b.name()));
    }
    cmd
}

/// The fair-cycle search's verdict: none, or each lasso in the spec's words.
fn print_cycles(model: &RebalanceModel, search: &FairCycleSearch) {
    if search.violations.is_empty() {
        println!(
            "fair-cycle search: no fair cycle ({} states, {} edges, {} non-trivial SCCs)",
            search.states, search.edges, search.nontrivial_sccs
        );
        return;
    }
    println!(
        "fair-cycle search: {} states, {} edges, {} non-trivial SCCs",
        search.states, search.edges, search.nontrivial_sccs
    );
    for lasso in &search.violations {
        println!(
            "  {:<30} VIOLATED on a fair cycle: a prefix of {} steps, then a cycle of {} steps \
             ({} states where it never holds):",
            lasso.goal,
            lasso.prefix.len(),
            lasso.cycle.len(),
            lasso.component_states
        );
        let mut state = model.init_state();
        for (i, a) in lasso.prefix.iter().chain(&lasso.cycle).enumerate() {
            if i == lasso.prefix.len() {
                println!("      cycle (back to the state after step {i}, forever):");
            }
            let text = describe::step(model, &state, a).unwrap_or_default();
            println!("      {}. {text}", i + 1);
            state = model.step(&state, a).expect("recorded").0;
        }
    }
}

fn cycles_json(search: &FairCycleSearch) -> serde_json::Value {
    let violations: Vec<_> = search
        .violations
        .iter()
        .map(|l| {
            serde_json::json!({
                "property": l.goal,
                "prefix_steps": l.prefix.len(),
                "cycle_steps": l.cycle.len(),
                "component_states": l.component_states,
                // The lasso itself, as actions in the trace format: the prefix, then one turn
                // of the cycle (`--trace-out` writes it as a trace with `cycle_start`).
                "prefix": l.prefix,
                "cycle": l.cycle,
            })
        })
        .collect();
    serde_json::json!({
        "states": search.states,
        "edges": search.edges,
        "nontrivial_sccs": search.nontrivial_sccs,
        "violations": violations,
    })
}

fn to_json(model: &RebalanceModel, r: &CheckReport, config: &str, bugs: &[Bug]) -> String {
    let verdicts: Vec<_> = r
        .verdicts
        .iter()
        .map(|(name, v)| {
            let (verdict, detail) = match v {
                Verdict::Holds => ("holds", serde_json::Value::Null),
                Verdict::ExampleFound(n) => ("example_found", serde_json::json!({ "steps": n })),
                Verdict::NoExample => ("no_example", serde_json::Value::Null),
                Verdict::NotApplicable(why) => ("not_applicable", serde_json::json!(why)),
                Verdict::Violated(None) => ("violated", serde_json::Value::Null),
                Verdict::Violated(Some(cx)) => (
                    "violated",
                    serde_json::json!({
                        "steps": cx.actions.len(),
                        "explorer_path": cx.encoded(),
                        "explorer_url": explorer::address(EXPLORER_ADDR, &cx.indices),
                        "actions": cx.actions,
                    }),
                ),
            };
            serde_json::json!({ "property": name, "verdict": verdict, "detail": detail })
        })
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({
        "config": config,
        "bugs": names(bugs, false),
        "variants": names(bugs, true),
        "unique_states": r.unique_states,
        "total_states": r.total_states,
        "max_depth": r.max_depth,
        "seconds": r.seconds,
        "states_per_second": r.states_per_second(),
        "exhaustive": r.exhaustive,
        "max_network": model.config.max_network,
        "truncated_transitions": r.truncated,
        "fair_end_states": r.fair_end_states,
        "passed": r.passed(),
        "properties": verdicts,
        // What was proven, exactly: the configuration as checked, every default filled in, in
        // the configuration file format (`rebalance-model check --config FILE` reads it back).
        "config_resolved": model.config,
    }))
    .expect("json")
}
