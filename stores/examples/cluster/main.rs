//! A runnable host: drives the pure core with a clock against the simulated cluster, on a
//! durable store (a directory or a ZooKeeper server), and reports what it did.
//!
//! ```sh
//! cargo run --release -p rebalance-stores --example cluster -- --buckets 10000 --store file:/tmp/rb
//! scripts/with-zookeeper.sh sh -c 'cargo run --release -p rebalance-stores --example cluster -- \
//!     --buckets 10000 --store zk:$ZK_ADDR --crash-coordinator-at 20000'
//! ```
//!
//! `--help` says more. The files: `args` (the command line), `store` (the stores behind one
//! type, counted for the figures and for `--kill-at-store-op`), `host` (group commit's host
//! procedure around one incarnation), `run` (setup and the loop that takes inputs) and this one
//! (the summary); `failure` is why a run stopped early, which the others return and this
//! one turns into an exit code.

mod args;
#[path = "../common/cluster_plan.rs"]
mod cluster_plan;
mod failure;
mod host;
#[path = "../common/numbers.rs"]
mod numbers;
mod run;
mod store;

use std::process::ExitCode;

use rebalance_manager::OverallStatus;

use args::Args;
use failure::Failure;
use host::HostLoop;
use run::run;

/// The summary's recovery figure, or why there is none: a `--crash-coordinator-at` (or
/// `--zk-outage-at`) beyond the run's last input injected nothing, which the summary says rather
/// than reading as a run that had no crash asked for.
fn recovery(args: &Args, stats: &HostLoop<'_>) -> String {
    let mut line = match (stats.recoveries.first(), args.crash_at) {
        (Some(d), _) => format!(
            "{:.1} ms (open the store, start, Recover) after the crash",
            d.as_secs_f64() * 1e3
        ),
        (None, Some(t)) => format!(
            "no crash: the run ended after {} inputs, before --crash-coordinator-at {t}",
            stats.inputs
        ),
        (None, None) => "no crash injected (--crash-coordinator-at T)".to_string(),
    };
    if let (Some(t), false) = (args.zk_outage_at, stats.zk_outage) {
        line.push_str(&format!(
            "; no ZooKeeper outage: the run ended after {} inputs, before --zk-outage-at {t}",
            stats.inputs
        ));
    }
    if let (Some(t), false) = (args.zk_kill_leader_at, stats.zk_leader_killed) {
        line.push_str(&format!(
            "; no ZooKeeper leader killed: the run ended after {} inputs, before --zk-kill-leader-at {t}",
            stats.inputs
        ));
    }
    if stats.recoveries.len() > 1 {
        let all: Vec<String> = stats
            .recoveries
            .iter()
            .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
            .collect();
        line.push_str(&format!("; every restart (ms): {}", all.join(", ")));
    }
    line
}

/// A reader that closed our output pipe (`cluster ... | head`) ends the process as SIGPIPE
/// would, silently with status 141, instead of `println!`'s panic (Rust ignores SIGPIPE). The
/// model's binaries do the same (`rebalance_model::view::pipe`, a crate this one must not use).
fn end_quietly_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}

fn main() -> ExitCode {
    end_quietly_on_broken_pipe();
    let args = args::parse();
    let (mut host, wall) = match run(&args) {
        Ok(r) => r,
        Err(Failure::Usage(e)) => {
            eprintln!("error: {e}\n\nFor more information, try '--help'.");
            return ExitCode::from(2);
        }
        Err(Failure::Store(e)) => {
            eprintln!("\nerror: store: {e}");
            return ExitCode::from(3);
        }
        Err(Failure::Invariant(e)) => {
            eprintln!("\nerror: invariant violated: {e}");
            return ExitCode::from(1);
        }
    };
    summary(&args, &mut host, wall.as_secs_f64());
    let overall = host.m().overall();
    if overall == Some(OverallStatus::Completed) {
        ExitCode::SUCCESS
    } else {
        eprintln!("error: the rebalance did not complete: {overall:?}");
        ExitCode::from(1)
    }
}

/// What the run did, one figure a line.
fn summary(args: &Args, host: &mut HostLoop<'_>, secs: f64) {
    let m = host.m();
    let c = m.counts();
    // The spec's names (spec 3.2), as the task node stores them.
    let status = match m.overall() {
        None => "none (no rebalance registered)",
        Some(OverallStatus::Rebalancing) => "REBALANCING",
        Some(OverallStatus::Completed) => "COMPLETED",
        Some(OverallStatus::Failed) => "FAILED",
        Some(OverallStatus::Canceled) => "CANCELED",
    };
    println!("status            {status}");
    println!(
        "buckets           {} completed, {} failed, {} canceled",
        c.completed, c.failed, c.canceled
    );
    println!("time              {secs:.2} s");
    println!(
        "inputs            {} ({:.0}/s)",
        host.inputs,
        host.inputs as f64 / secs
    );
    println!(
        "store writes      {} ({:.0}/s of run time)",
        host.writes,
        host.writes as f64 / secs
    );
    let ops = host.batches + host.single_writes;
    let durable = if host.batches > 0 {
        format!(
            "{ops} ({:.0}/s): {} batches of {:.1} writes on average (the largest {}), {} writes alone",
            ops as f64 / secs,
            host.batches,
            host.batched_writes as f64 / host.batches as f64,
            host.largest_batch,
            host.single_writes
        )
    } else {
        format!("{ops} ({:.0}/s), one per write", ops as f64 / secs)
    };
    println!("durable ops       {durable}");
    let (failures, last) = m.store_failures();
    println!(
        "store failures    {failures}{}",
        last.map(|e| format!(" (last: {e})")).unwrap_or_default()
    );
    let lost = host.lost_batches;
    if let Some((mean, p99)) = host.watch.latencies.mean_p99_us() {
        println!("release latency   mean {mean:.0} us, p99 {p99:.0} us (an input taken to its effects released)");
    }
    if args.group_commit > 1 {
        println!("lost batches      {lost}");
    }
    println!("recovery          {}", recovery(args, host));
}
