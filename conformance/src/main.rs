//! `rebalance-conformance`: checks that the production manager does what the model does.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use rebalance_conformance::sut::driver::SutCommand;
use rebalance_conformance::sut::group_commit::{Batching, GroupCommitted};
use rebalance_conformance::{exhaustive, projection, random, replay, report, sut};
use rebalance_model::{Bug, BugSet, Config, ConfigError, RebalanceModel};

#[derive(Parser)]
#[command(
    name = "rebalance-conformance",
    version,
    // Every subcommand answers `--version` too, as a user tries it after the subcommand.
    propagate_version = true,
    about = "Replays model traces against the production rebalance manager and compares both \
             after every step",
    long_about = "Every model step is mirrored on the manager (client requests, events, \
                  responses, AdjustIsr, server liveness, coordinator restarts, store faults and \
                  time); after each step the emitted messages, events and replies and a \
                  projection of both states must be equal.\n\nExit codes: 0 agree, 1 divergence \
                  or a failed `expect` block of a trace, 2 invalid trace or bad usage; `validate` also \
                  3, undecided."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay trace files (spec/trace-format.md), written by `rebalance-model check --trace-out`
    /// or by hand, and check their `expect` blocks on the manager.
    Replay {
        /// Trace files to replay, in order.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Where a diverging trace is written.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        #[command(flatten)]
        sut: SutArgs,
        #[command(flatten)]
        group_commit: GroupCommitArgs,
    },
    /// Check every edge of a preset's whole reachable state graph against the manager.
    Exhaustive {
        /// A preset name (see `rebalance-model configs`) or a JSON configuration file.
        #[arg(long)]
        config: String,
        /// Restore a historical bug in the model (the manager is then expected to diverge).
        #[arg(long = "bug", value_name = "NAME")]
        bugs: Vec<String>,
        /// Check a Fluss-as-written variant in the model (spec section 10; the manager follows
        /// the spec, so it is expected to diverge); repeatable.
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Print the per-action and per-rule coverage table.
        #[arg(long)]
        coverage: bool,
        /// Where a diverging trace is written.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
        /// Number of workers, 1 to 256 (default: every core); 1 is the single-threaded walk,
        /// for measurements undisturbed by other work on the machine. With --sut the walk is
        /// single-threaded, so only 1 is accepted there.
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
        threads: Option<u16>,
        /// Walk the graph `rebalance-model check` searches, the partial-order reduction's (spec
        /// 9, "Partial-order reduction"), the default: it takes every kind of coordinator step
        /// the whole graph has from a state with the same coordinator side, so agreement on it
        /// is agreement on the whole graph. A configuration not in the form the reduction needs
        /// is changed as `check` changes it, each change printed.
        #[arg(long, overrides_with = "no_por")]
        por: bool,
        /// Walk the whole graph of the configuration as given (its `max_network` bound too).
        #[arg(long, overrides_with = "por")]
        no_por: bool,
        #[command(flatten)]
        sut: SutArgs,
        #[command(flatten)]
        group_commit: GroupCommitArgs,
    },
    /// Seeded random walks over a preset, shrinking a divergence to a minimal walk.
    Random {
        /// A preset name or a JSON configuration file.
        #[arg(long, default_value = "full")]
        config: String,
        /// The seed; printed so that any run can be repeated.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Number of walks (at least 1).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
        cases: u32,
        /// Maximum steps per walk (at least 1).
        #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
        steps: u32,
        /// Restore a historical bug in the model.
        #[arg(long = "bug", value_name = "NAME")]
        bugs: Vec<String>,
        /// Check a Fluss-as-written variant in the model; repeatable.
        #[arg(long = "variant", value_name = "NAME")]
        variants: Vec<String>,
        /// Where a diverging trace is written.
        #[arg(long, default_value = ".")]
        out_dir: PathBuf,
    },
    /// Trace validation: decide whether some behaviour of the model explains a coordinator's own
    /// log (spec/log-format.md), the steps the coordinator cannot see (deliveries to servers,
    /// ISR proposals, duplicates, an AdjustIsr or its answer lost) searched breadth-first
    /// between two records.
    ///
    /// Exit 0 valid, 1 a record no model path explains (with the closest candidate's keyed
    /// diff), 2 a malformed log (line and field) or bad usage, 3 undecided (no explanation
    /// within --max-hidden / --max-states; a larger bound may find one).
    // Two paragraphs rather than a verbatim comment, whose line breaks fell mid-sentence
    // ("Exit 0" / "valid") and which filled the command list of `--help` with all of it.
    Validate {
        /// The log: one JSON object per line, the header first.
        log: PathBuf,
        /// The model configuration (a preset name or a JSON file), instead of the one in the
        /// log's header. Dead and superseded messages are never collected in validation, and
        /// `max_network` is ignored: a log shows every delivery.
        #[arg(long)]
        config: Option<String>,
        /// Hidden model steps searched between two records, at most: 1 to 64.
        #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=64))]
        max_hidden: u32,
        /// Model states in one record's hidden search, at most (at least 1).
        #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
        max_states: u64,
    },
    /// Spoil a real log in each of the ways a wrong coordinator or host would (spec/log-format.md,
    /// "Teeth": a record left out, an effect left out or changed, an epoch or a context changed,
    /// two records swapped, a store write hidden or failed, the clock off the tick, a write lost
    /// in a restart's read) and validate every spoiled copy.
    ///
    /// A spoiling no model behaviour explains must be rejected at the record changed; one the
    /// model may explain (a record left out, two swapped, a write failed) must be decided, and
    /// rejected no earlier. Prints one line per spoiling and a summary. Exit 0 when every
    /// spoiling is answered as required, 1 when one is not (undecided included), 2 on a bad
    /// log or bad usage.
    Spoil {
        /// The log, valid as it is.
        log: PathBuf,
        /// The model configuration, instead of the one in the log's header.
        #[arg(long)]
        config: Option<String>,
        /// Spoilings of each kind, spread evenly over the records it can change (0: all).
        #[arg(long, default_value_t = 4)]
        per_kind: usize,
        /// Only this kind (repeatable): record-dropped, effect-dropped, effect-changed,
        /// epoch-changed, context-changed, swapped, store-write-hidden, store-write-failed,
        /// clock-off-tick, read-write-lost.
        #[arg(long = "kind", value_name = "KIND")]
        kinds: Vec<String>,
        /// Hidden model steps searched between two records, at most: 1 to 64.
        #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..=64))]
        max_hidden: u32,
        /// Model states in one record's hidden search, at most (at least 1).
        #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
        max_states: u64,
    },
}

/// The implementation under test, if not the manager in this process (spec/driver-protocol.md).
#[derive(clap::Args)]
struct SutArgs {
    /// Run against an implementation under test: a command (program and arguments, quoted as
    /// in a shell) that speaks the driver protocol on stdin/stdout, e.g.
    /// `target/release/rebalance-manager-stdio`. Walks are then single-threaded.
    #[arg(long, value_name = "COMMAND")]
    sut: Option<String>,
    /// With --sut: how long one step's requests may take before the implementation is killed,
    /// 1 to 86400000 ms (a day). 0 would kill every implementation at the handshake.
    #[arg(long, value_name = "MS", default_value_t = 10_000, requires = "sut",
          value_parser = clap::value_parser!(u64).range(1..=MAX_STEP_TIMEOUT_MS))]
    step_timeout_ms: u64,
}

/// The group-commit host between the manager and its store (spec/protocol.md, "Group commit").
#[derive(clap::Args)]
struct GroupCommitArgs {
    /// Run the manager on the group-commit host: its writes go through the batching adapter in
    /// batches of at most N writes (1 to 1000000), the durable store lags them until a flush, and
    /// every input's effects are held until its writes are durable and checked against the
    /// durable store when released. Walks are then single-threaded.
    #[arg(long, value_name = "N", conflicts_with = "sut",
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    group_commit: Option<u64>,
    /// With --group-commit: the chance, in thousandths, that the host flushes after a step
    /// (besides a full batch and a step that needs a held effect), 0 to 1000.
    #[arg(long, value_name = "PER_MILLE", default_value_t = 300, requires = "group_commit",
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    flush_per_mille: u32,
    /// With --group-commit: the seed of the flush schedule; printed.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "group_commit")]
    flush_seed: u64,
}

impl GroupCommitArgs {
    fn batching(&self) -> Option<Batching> {
        self.group_commit.map(|n| Batching {
            limit: n as usize,
            flush_per_mille: self.flush_per_mille,
            seed: self.flush_seed,
        })
    }
}

/// The longest `--step-timeout-ms`: a day, beyond any step an implementation that still answers
/// takes, however slow the machine or however closely it is being debugged.
const MAX_STEP_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

impl SutArgs {
    fn command(&self) -> Result<Option<SutCommand>, String> {
        self.sut
            .as_deref()
            .map(|c| {
                SutCommand::parse(c, Duration::from_millis(self.step_timeout_ms))
                    .map_err(|e| e.to_string())
            })
            .transpose()
    }
}

/// The group-commit host's settings, in one line.
fn describe_batching(b: &Batching) -> String {
    format!(
        "group commit: batches of at most {} writes, a flush after a step with chance {}/1000, \
         flush seed {}",
        b.limit, b.flush_per_mille, b.seed
    )
}

/// A walk against an implementation under test is single-threaded (one child, one walk), so a
/// `--threads` above 1 with `--sut` would be silently ignored: refused instead.
fn single_threaded_with_sut(sut: Option<&SutCommand>, threads: Option<u16>) -> Result<(), String> {
    match (sut, threads) {
        (Some(_), Some(n)) if n > 1 => Err(format!(
            "--threads {n}: a walk with --sut is single-threaded (one implementation process); \
             leave --threads out"
        )),
        _ => Ok(()),
    }
}

/// `validate`: reads the log, takes its configuration, and reports the verdict.
fn validate_log(
    path: &std::path::Path,
    config: Option<&str>,
    max_hidden: u32,
    max_states: u64,
) -> Result<ExitCode, String> {
    use rebalance_conformance::validate::{self, Verdict};
    let (_, log, model) = log_and_model(path, config)?;
    for n in &log.torn {
        eprintln!("warning: line {n} is torn (its writer died mid-line); it is ignored");
    }
    let limits = limits(max_hidden, max_states);
    let started = std::time::Instant::now();
    let (verdict, stats) = validate::validate_with(&model, &log, limits, |line| {
        eprintln!(
            "the lazy search explains no path at line {line}; deciding with the focused search \
             (spec/log-format.md, \"Hidden steps as late as possible\")"
        )
    });
    let secs = started.elapsed().as_secs_f64();
    let seen = format!(
        "{} records, {} model states explored, at most {} states explaining a prefix, {secs:.2} s",
        stats.records, stats.states, stats.max_frontier
    );
    match verdict {
        Verdict::Valid => {
            println!("valid: the model explains every record ({seen})");
            Ok(ExitCode::SUCCESS)
        }
        Verdict::Unexplained(u) => {
            println!("not explained: line {}: {}", u.line, u.summary);
            println!(
                "  tried from {} candidate model states ({seen})",
                u.candidates
            );
            if let Some(c) = u.closest {
                println!("  closest candidate: {c}");
            }
            if let Some(first) = u.before.first() {
                // What the coordinator's state was, as the model has it, in the lockstep's
                // projection (one of the states that explained the log up to here).
                let mut o = rebalance_conformance::projection::State::default();
                rebalance_conformance::projection::model::state(first, &mut o);
                println!(
                    "  the model's coordinator before this record (one of the states that explain \
                     the log so far):"
                );
                for l in o.render().lines() {
                    println!("    {l}");
                }
            }
            Ok(ExitCode::from(1))
        }
        Verdict::Undecided { line, why } => {
            println!("undecided: line {line}: {why} ({seen})");
            Ok(ExitCode::from(3))
        }
    }
}

/// The search's bounds from the command line.
fn limits(max_hidden: u32, max_states: u64) -> rebalance_conformance::validate::Limits {
    rebalance_conformance::validate::Limits {
        max_hidden: max_hidden as usize,
        max_states: usize::try_from(max_states).unwrap_or(usize::MAX),
    }
}

/// A log's text, the log, and the model it is validated against: `config` if given, else the
/// one in its header.
fn log_and_model(
    path: &std::path::Path,
    config: Option<&str>,
) -> Result<
    (
        String,
        rebalance_conformance::validate::Log,
        rebalance_model::RebalanceModel,
    ),
    String,
> {
    use rebalance_conformance::validate;
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let log = validate::parse(&text).map_err(|e| format!("invalid log {}: {e}", path.display()))?;
    let cfg = match (config, &log.model) {
        (Some(name), _) => load_config(name)?,
        (None, Some(v)) => Config::from_json_str(&v.to_string()).map_err(|e| {
            format!(
                "invalid log {}: line 1: {}",
                path.display(),
                header_model(&e)
            )
        })?,
        (None, None) => {
            return Err(format!(
                "{}: the log's header has no model configuration; give one with --config",
                path.display()
            ))
        }
    };
    let model = validate::model_for(cfg, BugSet::none());
    Ok((text, log, model))
}

/// `spoil`: every spoiling of the log, validated, one line each.
fn spoil_log(
    path: &std::path::Path,
    config: Option<&str>,
    per_kind: usize,
    kinds: &[String],
    max_hidden: u32,
    max_states: u64,
) -> Result<ExitCode, String> {
    use rebalance_conformance::validate::{self, spoil};
    let kinds: Vec<spoil::Kind> = if kinds.is_empty() {
        spoil::Kind::ALL.to_vec()
    } else {
        kinds
            .iter()
            .map(|k| {
                spoil::Kind::from_name(k).ok_or_else(|| {
                    let names: Vec<&str> = spoil::Kind::ALL.iter().map(|k| k.name()).collect();
                    format!("unknown --kind {k:?}; the kinds are {}", names.join(", "))
                })
            })
            .collect::<Result<_, _>>()?
    };
    let (text, log, model) = log_and_model(path, config)?;
    if !log.torn.is_empty() {
        return Err(format!(
            "{}: line {} is torn; spoil a log with no torn line",
            path.display(),
            log.torn[0]
        ));
    }
    let limits = limits(max_hidden, max_states);
    if !matches!(
        validate::validate(&model, &log, limits).0,
        validate::Verdict::Valid
    ) {
        return Err(format!(
            "{}: the log itself is not valid (run `validate` on it); spoil a valid log",
            path.display()
        ));
    }
    let buckets = model.config.buckets.len() as u64;
    let all = spoil::spoilings(&text, &kinds, per_kind, buckets)
        .map_err(|e| format!("invalid log {}: {e}", path.display()))?;
    let (mut wrong, mut slowest) = (0, 0.0f64);
    for s in &all {
        let started = std::time::Instant::now();
        let answer = spoil::answer(&model, s, limits)?;
        let secs = started.elapsed().as_secs_f64();
        slowest = slowest.max(secs);
        let said = match answer {
            spoil::Answer::Valid => "valid".to_string(),
            spoil::Answer::RejectedAt(l) => format!("rejected at line {l}"),
            spoil::Answer::UndecidedAt(l) => format!("undecided at line {l}"),
        };
        let want = match s.expect {
            spoil::Expect::RejectedAt(l) => format!("rejected at line {l}"),
            spoil::Expect::DecidedFrom(l) => format!("valid or rejected from line {l}"),
        };
        let ok = s.expect.met_by(answer);
        wrong += usize::from(!ok);
        println!(
            "{} {:<18} line {:>4}: {said} ({secs:.2} s){}",
            if ok { "ok   " } else { "WRONG" },
            s.kind.name(),
            s.line,
            if ok {
                String::new()
            } else {
                format!("; required: {want}")
            }
        );
    }
    println!(
        "{} spoilings of {}: {} answered as required, {wrong} not; slowest {slowest:.2} s",
        all.len(),
        path.display(),
        all.len() - wrong
    );
    Ok(if wrong == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A configuration error in the log header's `model`, its field path under `model` as one path
/// (`field `model.buckets[0].leader``, not `field `model`: field `buckets[0].leader``).
fn header_model(e: &ConfigError) -> String {
    match e {
        ConfigError::Invalid { field, message } if !field.is_empty() => {
            let dot = if field.starts_with('[') { "" } else { "." };
            format!("field `model{dot}{field}`: {message}")
        }
        other => format!("field `model`: {other}"),
    }
}

fn load_config(name: &str) -> Result<Config, String> {
    let config = rebalance_model::config::presets::load(name)?;
    if config.planned_leader {
        // A design Fluss proposes, in the model only: the manager follows the spec's R10, so
        // every walk would diverge at the first Phase B that keeps the old leader.
        return Err(format!(
            "{name}: `planned_leader` is a design the manager does not implement \
             (spec/fluss-designs.md); check it with rebalance-model"
        ));
    }
    if config.session_lost_on_store_failure {
        // A failure Fluss met, in the model only: R17 inside a coordinator step is the host's
        // restart, which a walk of the manager alone cannot take.
        return Err(format!(
            "{name}: `session_lost_on_store_failure` ends a step in a coordinator crash, which \
             the manager alone cannot take (spec/fluss-designs.md); check it with rebalance-model"
        ));
    }
    if config.remote_plan {
        // A design Fluss proposes, in the model only: the manager's task node holds the plan
        // (our ZooKeeper adapter chunks it below the store port, which the model does not see).
        return Err(format!(
            "{name}: `remote_plan` is a design the manager does not implement \
             (spec/fluss-designs.md); check it with rebalance-model"
        ));
    }
    if !config.abstract_buckets.is_empty() {
        // The abstract rest of a plan is the model's argument, not a cluster: its buckets send
        // nothing, and the manager has no counterpart of a Rest step.
        return Err(format!(
            "{name}: `abstract_buckets` models the rest of a plan abstractly (spec 9, \"One \
             bucket against the rest of the plan\"); check it with rebalance-model"
        ));
    }
    Ok(config)
}

/// The switches of `--bug` and `--variant`; an unknown variant's error lists the valid names.
fn parse_bugs(names: &[String], variants: &[String]) -> Result<Vec<Bug>, String> {
    let bugs = names.iter().map(|n| {
        n.parse::<Bug>()
            .map_err(|_| format!("unknown bug switch `{n}`"))
    });
    let variants = variants.iter().map(|n| Bug::parse_variant(n));
    bugs.chain(variants).collect()
}

fn main() -> ExitCode {
    rebalance_model::view::pipe::end_quietly_on_broken_pipe();
    let cli = Cli::parse();
    match run(cli.command) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<ExitCode, String> {
    match command {
        Command::Replay {
            files,
            out_dir,
            sut,
            group_commit,
        } => {
            let sut = sut.command()?;
            let batching = group_commit.batching();
            if let Some(b) = &batching {
                println!("{}", describe_batching(b));
            }
            let mut failed = false;
            for file in &files {
                let trace = rebalance_model::Trace::read(file)
                    .map_err(|e| format!("invalid trace {}: {e}", file.display()))?;
                let result = match (&sut, &batching) {
                    (None, None) => replay::replay(&trace),
                    (None, Some(b)) => match replay::replay_on::<GroupCommitted>(&trace, b) {
                        Ok(ok) => Ok(ok),
                        Err(replay::SideReplayError::Replay(e)) => Err(e),
                        Err(replay::SideReplayError::Sut { error, .. }) => match *error {},
                    },
                    (Some(command), _) => match sut::replay::replay(&trace, command) {
                        Ok(ok) => Ok(ok),
                        Err(sut::replay::SutReplayError::Replay(e)) => Err(e),
                        Err(sut::replay::SutReplayError::Sut { step, error }) => {
                            return Err(format!(
                                "{}: {}",
                                file.display(),
                                sut::failure_message(step, &trace.steps, &error)
                            ));
                        }
                    },
                };
                match result {
                    Ok(ok) => {
                        println!(
                            "{}: model and manager agree at all {} steps",
                            file.display(),
                            ok.steps
                        );
                        let p = &ok.progress;
                        println!(
                            "  overall: {}  rebalance: {}",
                            p.overall
                                .map_or("-", |s| projection::manager::overall(s).name()),
                            p.rid.map_or("-".into(), |r| r.to_string())
                        );
                        for (b, st) in &p.buckets {
                            println!(
                                "  bucket {b}: {}",
                                projection::manager::bucket_status(*st).name()
                            );
                        }
                        let checked = trace.expectations.len();
                        if ok.failures.is_empty() {
                            if checked > 0 {
                                println!("  the manager meets all {checked} expectations");
                            }
                        } else {
                            for f in &ok.failures {
                                print!("{}", f.render("manager"));
                            }
                            println!(
                                "  the manager fails {} of {checked} expectations",
                                ok.failures.len()
                            );
                            failed = true;
                        }
                    }
                    Err(replay::ReplayError::Invalid(e)) => {
                        return Err(format!("invalid trace {}: {e}", file.display()));
                    }
                    Err(replay::ReplayError::Divergence { step, mismatch }) => {
                        let stem = file
                            .file_stem()
                            .map_or("trace".into(), |s| s.to_string_lossy().to_string());
                        let path = report::trace_path(&out_dir, &format!("{stem}-replay"));
                        print!(
                            "{}",
                            report::divergence(
                                &trace.config,
                                &trace.bugs,
                                &trace.steps,
                                step,
                                &mismatch,
                                &path
                            )
                        );
                        failed = true;
                    }
                }
            }
            Ok(if failed {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        Command::Exhaustive {
            config,
            bugs,
            variants,
            coverage,
            out_dir,
            threads,
            por: _,
            no_por,
            sut,
            group_commit,
        } => {
            let sut = sut.command()?;
            single_threaded_with_sut(sut.as_ref(), threads)?;
            let batching = group_commit.batching();
            if let (Some(_), Some(n)) = (&batching, threads) {
                if n > 1 {
                    return Err(format!(
                        "--threads {n}: a walk with --group-commit is single-threaded; leave \
                         --threads out"
                    ));
                }
            }
            let bugs = parse_bugs(&bugs, &variants)?;
            let model = RebalanceModel::new(load_config(&config)?, BugSet::of(&bugs));
            let model = if !no_por {
                let (model, setup) = rebalance_model::check::por::reduced(model.config, model.bugs);
                eprintln!("{}", rebalance_model::check::por::describe(&setup));
                model
            } else {
                model
            };
            let cfg = model.config.clone();
            eprintln!("walking every edge of `{config}` against the manager ...");
            let progress = |s: &exhaustive::WalkStats| {
                eprintln!(
                    "  {} states, {} edges, {:.0} edges/s",
                    s.states,
                    s.edges,
                    s.edges_per_second()
                )
            };
            if let Some(b) = &batching {
                eprintln!("{}", describe_batching(b));
            }
            let result = match (&sut, threads) {
                (None, _) if batching.is_some() => {
                    let b = batching.as_ref().expect("checked");
                    match exhaustive::walk_side::<GroupCommitted>(
                        &model,
                        b,
                        u64::MAX,
                        100_000,
                        progress,
                    ) {
                        Ok(stats) => Ok(stats),
                        Err(exhaustive::WalkError::Diverged(d)) => Err(d),
                        Err(exhaustive::WalkError::Sut { error, .. }) => match *error {},
                    }
                }
                (Some(command), _) => {
                    match exhaustive::walk_sut(&model, command, 100_000, progress) {
                        Ok(stats) => Ok(stats),
                        Err(exhaustive::WalkError::Diverged(d)) => Err(d),
                        Err(exhaustive::WalkError::Sut { steps, error }) => {
                            return Err(sut::failure_message(steps.len(), &steps, &error));
                        }
                    }
                }
                (None, Some(n)) => {
                    exhaustive::walk_with_threads(&model, usize::from(n), 100_000, progress)
                }
                (None, None) => exhaustive::walk(&model, 100_000, progress),
            };
            match result {
                Ok(stats) => {
                    println!(
                        "{config}: model and manager agree on every edge: {} states, {} edges, \
                         max depth {}, {:.2} s, {:.0} edges/s",
                        stats.states,
                        stats.edges,
                        stats.max_depth,
                        stats.seconds,
                        stats.edges_per_second()
                    );
                    if coverage {
                        print!("{}", stats.coverage.render());
                    }
                    Ok(ExitCode::SUCCESS)
                }
                Err(d) => {
                    let path = report::trace_path(&out_dir, &format!("{config}-exhaustive"));
                    print!("{}", report::walk_divergence(&cfg, &bugs, &d, &path));
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Random {
            config,
            seed,
            cases,
            steps,
            bugs,
            variants,
            out_dir,
        } => {
            let cfg = load_config(&config)?;
            let bugs = parse_bugs(&bugs, &variants)?;
            let model = RebalanceModel::new(cfg.clone(), BugSet::of(&bugs));
            println!("random walks on `{config}`: seed {seed}, {cases} cases, up to {steps} steps");
            match random::run(&model, seed, cases, steps as usize) {
                Ok(stats) => {
                    println!(
                        "model and manager agree: {} walks, {} steps (seed {seed})",
                        stats.cases, stats.steps
                    );
                    Ok(ExitCode::SUCCESS)
                }
                Err(d) => {
                    let path = report::trace_path(&out_dir, &format!("{config}-seed{seed}"));
                    print!("{}", report::walk_divergence(&cfg, &bugs, &d, &path));
                    println!("(seed {seed})");
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Validate {
            log,
            config,
            max_hidden,
            max_states,
        } => validate_log(&log, config.as_deref(), max_hidden, max_states),
        Command::Spoil {
            log,
            config,
            per_kind,
            kinds,
            max_hidden,
            max_states,
        } => spoil_log(
            &log,
            config.as_deref(),
            per_kind,
            &kinds,
            max_hidden,
            max_states,
        ),
    }
}
