//! Decisive rejection after real kills (issue 34, item 1; spec/log-format.md, "Hidden steps as
//! late as possible"): a 16-bucket `cluster` run on a file store, with message loss and slow
//! followers, killed by SIGKILL twice, so that its log holds three incarnations and the
//! deposed ones' requests are in flight at every later record. Its log is valid, and each of
//! its spoilings from the last start on is answered as `spoil` requires: rejected at
//! the record changed, or decided no earlier than it where the model may explain it; never
//! undecided. Before the focused search searched one state per class (6 December 2026), four
//! of these were undecided at `--max-hidden` 6, and at 12 the late ones took 40 to 74 s each.

use std::path::Path;
use std::process::Command;

use rebalance_conformance::validate::{self, spoil, Limits, Record, Search, Verdict};
use rebalance_model::{BugSet, Config, RebalanceModel};

use crate::common::cluster_binary;

/// The run: seed 1, and the store operations after which the host kills itself, the points
/// `scripts/validate-cluster-runs.sh --kills 2` draws for seed 1.
const SEED: u64 = 1;
const KILLS: [u64; 2] = [8, 22];

fn run(seed: u64, store: &Path, log: &Path, kill_at: Option<u64>) -> bool {
    let mut cmd = Command::new(cluster_binary());
    cmd.args(["--buckets", "16", "--seed", &seed.to_string()])
        .args([
            "--loss-per-million",
            "50000",
            "--slow-per-million",
            "300000",
        ])
        .arg("--store")
        .arg(format!("file:{}", store.display()))
        .arg("--log")
        .arg(log);
    if let Some(n) = kill_at {
        cmd.args(["--kill-at-store-op", &n.to_string()]);
    }
    let out = cmd.output().expect("cluster runs");
    if out.status.success() {
        return true;
    }
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        out.status.signal(),
        Some(9),
        "cluster failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    false
}

/// The log of the run killed twice, its starts' lines, and the model its header describes.
fn killed_log() -> (String, Vec<usize>, RebalanceModel) {
    killed_log_of(SEED, KILLS)
}

/// The log of the run of `seed` killed after the store operations `kills`, then run to its end.
fn killed_log_of(seed: u64, kills: [u64; 2]) -> (String, Vec<usize>, RebalanceModel) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = dir.path().join("store");
    let log_path = dir.path().join("coordinator.log");
    for n in kills {
        assert!(
            !run(seed, &store, &log_path, Some(n)),
            "the run ended before its kill at {n}"
        );
    }
    assert!(run(seed, &store, &log_path, None), "the last run finishes");
    let text = std::fs::read_to_string(&log_path).expect("the log");
    let log = validate::parse(&text).expect("a well-formed log");
    let starts: Vec<usize> = log
        .lines
        .iter()
        .filter(|l| matches!(l.record, Record::Start { .. }))
        .map(|l| l.number)
        .collect();
    assert_eq!(starts.len(), 3, "three incarnations: {starts:?}");
    let header = log
        .model
        .clone()
        .expect("16 buckets: the header has the model");
    let config = Config::from_json_str(&header.to_string()).expect("a model configuration");
    (text, starts, validate::model_for(config, BugSet::none()))
}

/// The classes of the focused search (one state searched per class, its steps replayed from
/// the others) against every state searched on its own: the same verdict and the same largest
/// set, over the log up to 30 records after the last start (the whole log would take the
/// search of each state some minutes), and over that prefix with one effect left out near its
/// end.
#[test]
fn the_focused_search_by_classes_and_products_finds_what_the_search_of_each_state_finds() {
    let (text, starts, model) = killed_log();
    let prefix: String = text
        .lines()
        .take(starts[2] + 30)
        .map(|l| format!("{l}\n"))
        .collect();
    let spoiled = spoil::spoilings(&prefix, &[spoil::Kind::EffectDropped], 0, 16)
        .expect("spoilings")
        .into_iter()
        .rev()
        .find(|s| s.line > starts[2])
        .expect("an effect after the last start");
    let mut sets = Vec::new();
    for (name, text) in [
        ("the prefix", &prefix),
        ("the spoiled prefix", &spoiled.text),
    ] {
        let log = validate::parse(text).expect("a well-formed log");
        let (by_class, a) =
            validate::search_digested(&model, &log, Limits::default(), Search::Focused, true);
        let (each, b) =
            validate::search_digested(&model, &log, Limits::default(), Search::FocusedEach, true);
        let (by_class, each) = (decided(&by_class), decided(&each));
        eprintln!(
            "{name}: {by_class} / {each}, at most {} / {} states",
            a.max_frontier, b.max_frontier
        );
        assert_eq!(by_class, each, "{name}");
        assert_eq!(a.max_frontier, b.max_frontier, "{name}");
        // The same states after every record, not only as many.
        assert_eq!(
            a.sets, b.sets,
            "{name}: the sets of explaining states differ"
        );
        // The first is searched as a product of the servers' parts (`product.rs`), the
        // second state by state.
        assert!(
            a.by_product > 0 && b.by_product == 0,
            "{name}: {a:?} / {b:?}"
        );
        sets.push(a.max_frontier);
    }
    // The prefix holds the product this is about, not a single state.
    assert!(
        sets[0] >= 8,
        "at most {} states explained a prefix",
        sets[0]
    );
}

/// The same at seed 2 (kills after store operations 7 and 13), whose prefix to 20 records after
/// its last start is explained by sets of up to 512 states, 35 records of it from a product:
/// the same set after every record. (At seed 3 the same check, up to 16,384 states, took 167 s
/// for the search of each state against 2.4 s: not for CI; equal as well, 7 December 2026.)
#[test]
fn at_seed_2_the_product_keeps_the_states_the_search_of_each_state_keeps() {
    let (text, starts, model) = killed_log_of(2, [7, 13]);
    let prefix: String = text
        .lines()
        .take(starts[2] + 20)
        .map(|l| format!("{l}\n"))
        .collect();
    let log = validate::parse(&prefix).expect("a well-formed log");
    let (v, a) = validate::search_digested(&model, &log, Limits::default(), Search::Focused, true);
    let (w, b) =
        validate::search_digested(&model, &log, Limits::default(), Search::FocusedEach, true);
    assert_eq!((decided(&v), decided(&w)), ("valid".into(), "valid".into()));
    assert!(a.by_product >= 10 && a.max_frontier >= 256, "{a:?}");
    assert_eq!(a.max_frontier, b.max_frontier);
    assert_eq!(a.sets, b.sets, "the sets of explaining states differ");
}

/// A verdict's kind and line.
fn decided(v: &Verdict) -> String {
    match v {
        Verdict::Valid => "valid".into(),
        Verdict::Unexplained(u) => format!("rejected at line {}", u.line),
        Verdict::Undecided { line, .. } => format!("undecided at line {line}"),
    }
}

#[test]
fn every_spoiling_after_the_second_kill_of_a_16_bucket_log_is_decided() {
    let (text, starts, model) = killed_log();
    let log = validate::parse(&text).expect("a well-formed log");
    assert!(matches!(
        validate::validate(&model, &log, Limits::default()).0,
        Verdict::Valid
    ));

    let all = spoil::spoilings(&text, &spoil::Kind::ALL, 2, 16).expect("spoilings");
    let late: Vec<_> = all.iter().filter(|s| s.line >= starts[2]).collect();
    assert!(
        late.len() >= 8,
        "{} spoilings after the last start",
        late.len()
    );
    let mut wrong = Vec::new();
    for s in &late {
        let a = spoil::answer(&model, s, Limits::default()).expect("a spoiled log parses");
        eprintln!("{} at line {}: {a:?}", s.kind.name(), s.line);
        if !s.expect.met_by(a) {
            wrong.push(format!(
                "{} at line {}: {a:?}, required {:?}",
                s.kind.name(),
                s.line,
                s.expect
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "not answered as required:\n{}",
        wrong.join("\n")
    );
}

/// Seed 4, killed after store operations 14 and 17 (the points of `scripts/validate-cluster-runs.sh
/// --kills 2`'s generator for seed 4, as in spec/log-format.md): after its third start the set
/// that explains its records is a product of 4,194,304 states. Kept as its parts
/// (`product.rs`), it is never spelled out: an effect left out of its last effectful record is
/// rejected there, the largest set reported as that product, and the last spoilings of the
/// kinds that reach the end, a start and the record search, are answered as `spoil` requires.
/// Spelled out, the set took 24 GB before the search was killed (7 December 2026).
#[test]
fn a_log_explained_by_four_million_states_is_decided_at_its_last_records() {
    let (text, starts, model) = killed_log_of(4, [14, 17]);
    let kinds = [
        spoil::Kind::EffectDropped,
        spoil::Kind::StoreWriteFailed,
        spoil::Kind::ReadWriteLost,
    ];
    let late: Vec<_> = spoil::spoilings(&text, &kinds, 2, 16)
        .expect("spoilings")
        .into_iter()
        .filter(|s| s.line >= starts[2])
        .collect();
    assert_eq!(late.len(), 3, "one late spoiling of each kind");
    for s in &late {
        let log = validate::parse(&s.text).expect("a well-formed log");
        let (v, stats) = validate::validate(&model, &log, Limits::default());
        let a = match &v {
            Verdict::Valid => spoil::Answer::Valid,
            Verdict::Unexplained(u) => spoil::Answer::RejectedAt(u.line),
            Verdict::Undecided { line, .. } => spoil::Answer::UndecidedAt(*line),
        };
        eprintln!(
            "{} at line {}: {a:?}, at most {} states",
            s.kind.name(),
            s.line,
            stats.max_frontier
        );
        assert!(
            s.expect.met_by(a),
            "{} at line {}: {a:?}",
            s.kind.name(),
            s.line
        );
        if s.kind == spoil::Kind::EffectDropped {
            assert!(
                stats.max_frontier >= 4_000_000,
                "at most {} states explained a prefix",
                stats.max_frontier
            );
        }
    }
}

/// A search cut by a bound while it found explanations leaves a set that may lack states, so a
/// later miss is undecided, never a rejection: at `--max-hidden` 2 the search at an early record
/// of the killed log is cut so, and no effect left out after the last start (each rejected at
/// the default bounds) may then be rejected; some must name the cut as the reason.
#[test]
fn after_a_search_cut_while_it_found_explanations_a_miss_is_undecided() {
    let (text, starts, model) = killed_log();
    let tight = Limits {
        max_hidden: 2,
        ..Limits::default()
    };
    let mut named = 0;
    for s in spoil::spoilings(&text, &[spoil::Kind::EffectDropped], 0, 16).expect("spoilings") {
        if s.line <= starts[2] {
            continue;
        }
        let log = validate::parse(&s.text).expect("a well-formed log");
        let (verdict, stats) = validate::validate(&model, &log, tight);
        match verdict {
            Verdict::Unexplained(u) => panic!(
                "rejected at line {} although the search at line {:?} was cut",
                u.line, stats.cut_at
            ),
            Verdict::Undecided { why, .. } if why.contains("while it found explanations") => {
                named += 1
            }
            _ => {}
        }
    }
    assert!(
        named > 0,
        "no miss after a cut while explanations were found"
    );
}
