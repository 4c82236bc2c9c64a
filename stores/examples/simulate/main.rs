//! The seeded simulation: a rebalance through every fault, in one process, from one seed, in
//! the manner of FoundationDB's simulator and TigerBeetle's VOPR. `--help` says what it does.
//!
//! The files: `mix` (the faults a seed draws), `store` (the simulated store and its faults on
//! both sides of the batching adapter), `world` (one run: the host, the cluster, the phases),
//! `checks` (what is checked after every input, periodically and at the end) and this one (the
//! command line, clap's, the swarm and the reproducer lines).

mod checks;
#[path = "../common/cluster_plan.rs"]
mod cluster_plan;
mod mix;
#[path = "../common/numbers.rs"]
mod numbers;
mod store;
mod world;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use clap::Parser;
use mix::Mix;
use world::{Outcome, Plant, World};

const ABOUT: &str = "\
A rebalance through every fault, from one seed, checked after every input.

One run (a seed) is the rebalance manager on the group-commit host over a simulated store,
against a simulated cluster of 8 tablet servers (replication factor 3), all in one thread. The
seed draws the fault mix (printed): execution slots, the batch bound of group commit, message
loss, duplication and reordering, store operations failing (R8), ticks while messages are in
flight, slow followers, tablet server crashes and restarts, coordinator crashes at random inputs
(the incarnation stops with its open batch and held effects), and flushes that fail with nothing,
a prefix or all of the batch landed. Each fault kind is on or off by the seed (swarm testing).

The fault phase lasts a number of inputs per bucket drawn from the seed. Then the faults stop:
every server comes back, nothing is lost, copied, reordered, slow or failed, and the rebalance must
reach a final status stored within a stated bound of simulated time and inputs (the liveness
phase), and no bucket may give up (end FAILED) after the faults stopped (LIVE-PROGRESS); then the
liveness goals of spec 7.3 are checked.

Checked after every input: every released message and reply against the durable store
(INV-RELEASED-DURABLE); every write (INV-EPOCH-ONLY-ON-CHANGE, INV-ELECTION-CLEAN); each bucket
the input wrote or was about (INV-CONTEXT-COHERENT, INV-STRUCTURE, INV-ONE-ATTEMPT,
INV-PENDING-AT-ORIGIN); the counters (INV-STRUCTURE, INV-SLOT, INV-TRACKED-BOUND,
INV-FINAL-PERSISTED). Every --full-check-every inputs, after each recovery and at the end: the
manager's whole check_invariants, store parts included.";

const AFTER_HELP: &str = "\
A failing run prints one line that reproduces it:
    FAILED seed S: ... (reproduce: cargo run --release -p rebalance-stores --example simulate -- --seed S --buckets N)

SIMULATE_PLANT=early-release|drop-write|short-give-up|hidden-doubt plants a bug (the host
releases effects before their batch is durable; a flush loses a write; the manager's no-progress
window is 1 ms, so a tracked bucket still converging when the faults stop ends FAILED; the store
hides that a write whose answer was lost landed, so the host goes on), for the self-check that
the checks catch it.

Example:
    cargo run --release -p rebalance-stores --example simulate -- --swarm 200 --buckets 500

Exit codes:
    0  every run passed
    1  a run failed (its reproducer line says which)
    2  bad usage";

#[derive(Parser)]
#[command(
    name = "simulate",
    version = concat!("(", env!("CARGO_PKG_NAME"), " ", env!("CARGO_PKG_VERSION"), ")"),
    about = ABOUT,
    after_help = AFTER_HELP
)]
struct Args {
    /// The seed, decimal or 0x-hex; with --swarm, the first.
    #[arg(long, value_name = "S", default_value = "1", value_parser = numbers::seed)]
    seed: u64,
    /// Buckets, 1 to 1000000.
    #[arg(long, value_name = "N", default_value_t = 1_000_000, value_parser = numbers::within(1u32, 1_000_000))]
    buckets: u32,
    /// K runs, seeds S to S+K-1, each with its own fault mix; prints one line per run and how
    /// many passed.
    #[arg(long, value_name = "K", value_parser = numbers::count_from_one)]
    swarm: Option<u64>,
    /// Runs at once in a swarm.
    #[arg(long, value_name = "J", default_value_t = 2, value_parser = numbers::within(1usize, 64))]
    jobs: usize,
    /// Inputs between the full checks [default: the number of buckets, at least 10000].
    #[arg(long = "full-check-every", value_name = "N", value_parser = numbers::count_from_one)]
    full_every: Option<u64>,
    /// No progress lines on stderr.
    #[arg(long)]
    quiet: bool,
}

fn plant() -> Result<Plant, String> {
    match std::env::var("SIMULATE_PLANT").as_deref() {
        Err(_) | Ok("") => Ok(Plant::None),
        Ok("early-release") => Ok(Plant::EarlyRelease),
        Ok("drop-write") => Ok(Plant::DropWrite),
        Ok("short-give-up") => Ok(Plant::ShortGiveUp),
        Ok("hidden-doubt") => Ok(Plant::HiddenDoubt),
        Ok(other) => Err(format!(
            "SIMULATE_PLANT={other}: expected early-release, drop-write, short-give-up or \
             hidden-doubt"
        )),
    }
}

/// One run; its line (or its reproducer line) and whether it passed.
fn run_one(seed: u64, args: &Args, plant: Plant) -> (bool, String) {
    let mix = Mix::of(seed, args.buckets);
    let full_every = args
        .full_every
        .unwrap_or(u64::from(args.buckets).max(10_000));
    let described = mix.describe();
    if !args.quiet {
        eprintln!(
            "simulate: seed {seed:#x}, {} buckets: {described}",
            args.buckets
        );
    }
    let mut world = World::new(seed, args.buckets, mix, plant, full_every);
    let quiet = args.quiet;
    let result = world.run(|phase, w| {
        if !quiet {
            eprintln!("  seed {seed:#x} {phase}: {}", w.progress_line());
        }
    });
    match result {
        Ok(o) => (true, passed(seed, &o)),
        Err(f) => (
            false,
            format!(
                "FAILED seed {seed:#x}: {} at input {} [{described}] (reproduce: cargo run \
                 --release -p rebalance-stores --example simulate -- --seed {seed:#x} --buckets {})",
                f.what, f.input, args.buckets
            ),
        ),
    }
}

fn passed(seed: u64, o: &Outcome) -> String {
    format!(
        "passed seed {seed:#x}: {:?}, {} completed, {} failed ({} after the faults stopped); {} \
         inputs ({} with faults, {} and {} ticks after), {} incarnations, {} lost batches {:?}, {} \
         writes in doubt, {} server crashes, {} store failures, {} full checks; {:.1} s ({:.0} \
         inputs/s)",
        o.status,
        o.completed,
        o.failed,
        o.failed_after_faults,
        o.inputs,
        o.fault_inputs,
        o.liveness_inputs,
        o.liveness_ticks,
        o.incarnations,
        o.lost_batches.len(),
        o.lost_batches,
        o.doubtful_writes,
        o.server_crashes,
        o.store_failures,
        o.full_checks,
        o.seconds,
        o.inputs as f64 / o.seconds.max(1e-9)
    )
}

fn main() -> ExitCode {
    let args = Args::parse();
    let plant = match plant() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
    };
    let Some(runs) = args.swarm else {
        let (ok, line) = run_one(args.seed, &args, plant);
        println!("{line}");
        return if ok {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        };
    };
    // The swarm: seeds taken in order by `jobs` threads; each line printed as its run ends.
    let next = AtomicU64::new(0);
    let failed: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..args.jobs.min(runs as usize) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= runs {
                    break;
                }
                let seed = args.seed.wrapping_add(i);
                let (ok, line) = run_one(seed, &args, plant);
                println!("{line}");
                if !ok {
                    failed.lock().expect("no panic holds it").push(seed);
                }
            });
        }
    });
    let mut failed = failed.into_inner().expect("no panic holds it");
    failed.sort_unstable();
    println!(
        "swarm: {} of {runs} runs passed ({} buckets, seeds {:#x} to {:#x}){}",
        runs - failed.len() as u64,
        args.buckets,
        args.seed,
        args.seed.wrapping_add(runs - 1),
        if failed.is_empty() {
            String::new()
        } else {
            let seeds: Vec<String> = failed.iter().map(|s| format!("{s:#x}")).collect();
            format!("; failed: {}", seeds.join(", "))
        }
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
