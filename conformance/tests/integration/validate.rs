//! Trace validation (spec/log-format.md): the log the manager writes along a model path is
//! explained by the model; the same log spoiled in one record is rejected at that record.

use rebalance_conformance::validate::{self, record, Limits, Verdict};
use rebalance_model::{Action, Bug, BugSet, Config, RebalanceModel, Trace};
use serde_json::Value;

use crate::common;
use common::cluster_binary;

/// The model a log is validated against: the configuration without the search reductions,
/// which merge deliveries a log shows one by one (as `validate` does).
fn unreduced(c: Config) -> RebalanceModel {
    validate::model_for(c, BugSet::none())
}

fn traces() -> Vec<(String, Trace)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/traces");
    let mut out: Vec<(String, Trace)> = std::fs::read_dir(dir)
        .expect("conformance/traces")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let t = Trace::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p.file_name().unwrap().to_string_lossy().into_owned(), t)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn log_of(model: &RebalanceModel, steps: &[Action]) -> String {
    record::log_of(model, steps).expect("the manager follows the trace")
}

fn verdict(model: &RebalanceModel, text: &str) -> Verdict {
    let log = validate::parse(text).expect("a well-formed log");
    validate::validate(model, &log, Limits::default()).0
}

/// The line no path explains, or a panic naming what came back instead.
fn rejected_at(model: &RebalanceModel, text: &str) -> usize {
    match verdict(model, text) {
        Verdict::Unexplained(u) => u.line,
        other => panic!("expected a rejection, got {other:?}\n{text}"),
    }
}

#[test]
fn the_managers_log_along_every_kept_trace_is_valid() {
    let mut checked = 0;
    for (name, trace) in traces() {
        if !trace.bugs.is_empty() {
            continue; // a trace of a bug switch diverges from the manager on purpose
        }
        let model = unreduced(trace.config.clone());
        let text = log_of(&model, &trace.steps);
        match verdict(&model, &text) {
            Verdict::Valid => checked += 1,
            other => panic!("{name}: {other:#?}\n{text}"),
        }
    }
    assert!(checked >= 10, "only {checked} traces validated");
}

/// A log with several kinds of record: a coordinator crash, a store failure, responses.
fn sample() -> (RebalanceModel, String, Vec<Value>) {
    let (_, trace) = traces()
        .into_iter()
        .find(|(n, _)| n == "timeout-then-late-completion.json")
        .expect("kept trace");
    let model = unreduced(trace.config.clone());
    let text = log_of(&model, &trace.steps);
    let lines = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    (model, text, lines)
}

/// `steps`, then at most `max` more fault-free steps of `model` from where they end: at each
/// step the first enabled one by the order of `wanted` (its kinds, most wanted first), with no
/// store failure, until none is enabled.
fn extended(
    model: &RebalanceModel,
    steps: &[Action],
    wanted: &[rebalance_model::ActionKind],
    max: usize,
) -> Vec<Action> {
    let mut s = model.init_state();
    for a in steps {
        s = model.step(&s, a).expect("enabled").0;
    }
    let mut out = steps.to_vec();
    for _ in 0..max {
        let mut next = None;
        model.successors(&s, |a, post, _| {
            let Some(rank) = wanted.iter().position(|k| *k == a.kind()) else {
                return;
            };
            if a.fail_store_op().is_none() && next.as_ref().is_none_or(|(r, _, _)| rank < *r) {
                next = Some((rank, a, post));
            }
        });
        let Some((_, a, post)) = next else { break };
        out.push(a);
        s = post;
    }
    out
}

/// A run without faults or time from the start: the register, events and deliveries, until
/// none is left (at most 300 steps).
fn fault_free_run(model: &RebalanceModel) -> Vec<Action> {
    use rebalance_model::ActionKind as K;
    let wanted = [
        K::Register,
        K::ProcessEvent,
        K::DeliverNliResponse,
        K::DeliverAdjustIsr,
        K::DeliverAdjustIsrResponse,
        K::ProposeIsr,
        K::DeliverNli,
    ];
    extended(model, &[], &wanted, 300)
}

fn join(lines: &[Value]) -> String {
    lines.iter().map(|v| format!("{v}\n")).collect()
}

/// The 1-based line of the first record satisfying `want`.
fn first(lines: &[Value], want: impl Fn(&Value) -> bool) -> usize {
    lines.iter().position(want).expect("such a record") + 1
}

fn has_effect(v: &Value, kind: &str) -> bool {
    v["effects"]
        .as_array()
        .is_some_and(|e| e.iter().any(|x| x["type"] == kind))
}

#[test]
fn a_dropped_effect_is_rejected_at_its_record() {
    let (model, _, mut lines) = sample();
    let at = first(&lines, |v| {
        v["type"] == "input" && has_effect(v, "send_nli")
    });
    let effects = lines[at - 1]["effects"].as_array_mut().unwrap();
    let i = effects
        .iter()
        .position(|e| e["type"] == "send_nli")
        .unwrap();
    effects.remove(i);
    assert_eq!(rejected_at(&model, &join(&lines)), at);
}

#[test]
fn a_changed_epoch_is_rejected_at_its_record() {
    let (model, _, mut lines) = sample();
    let at = first(&lines, |v| {
        v["type"] == "input" && has_effect(v, "send_nli")
    });
    let effects = lines[at - 1]["effects"].as_array_mut().unwrap();
    let nli = effects
        .iter_mut()
        .find(|e| e["type"] == "send_nli")
        .unwrap();
    let epoch = nli["leader_epoch"].as_u64().unwrap();
    nli["leader_epoch"] = Value::from(epoch + 1);
    assert_eq!(rejected_at(&model, &join(&lines)), at);
}

#[test]
fn a_changed_request_context_is_rejected_at_its_record() {
    let (model, _, mut lines) = sample();
    let at = first(&lines, |v| v["input"]["type"] == "nli_response");
    let ctx = &mut lines[at - 1]["input"]["context"];
    let epoch = ctx["bucket_epoch"].as_u64().unwrap();
    ctx["bucket_epoch"] = Value::from(epoch + 7);
    assert_eq!(rejected_at(&model, &join(&lines)), at);
}

#[test]
fn a_completion_without_its_acknowledgement_is_rejected() {
    // In every kept trace and a fault-free run of three multi-bucket presets, each response
    // that made the manager write (a completion, a phase) and is followed by another record:
    // without it, that next record is not explained.
    let mut checked = 0;
    let mut paths: Vec<(String, RebalanceModel, Vec<Action>)> = traces()
        .into_iter()
        .filter(|(_, t)| t.bugs.is_empty())
        .map(|(n, t)| (n, unreduced(t.config.clone()), t.steps))
        .collect();
    // One-replica moves only: with several replicas another one's acknowledgement can do the
    // same work with the same effects, and a log without the first is then rightly explained.
    for preset in ["ci-two-buckets", "ci-tracked2", "ci-inflight2"] {
        let model = unreduced(rebalance_model::preset(preset).unwrap());
        let steps = fault_free_run(&model);
        paths.push((preset.to_string(), model, steps));
    }
    for (name, model, steps) in paths {
        let lines: Vec<Value> = log_of(&model, &steps)
            .lines()
            .map(|l| serde_json::from_str(l).expect("json"))
            .collect();
        for at in 1..lines.len() {
            let v = &lines[at - 1];
            let acts = v["input"]["type"] == "nli_response" && v["store"]["ops"].as_u64() > Some(0);
            // A record just before a restart, left out, is rightly explained as an input the
            // crash cut short after its store operations ("Crashes" in spec/log-format.md;
            // `canceled-copy-hides-a-drained-move.json` ends so).
            let before_a_restart = lines.get(at).is_some_and(|n| n["type"] == "start");
            if !acts || at == lines.len() || before_a_restart {
                continue;
            }
            let mut spoiled = lines.clone();
            spoiled.remove(at - 1);
            let line = rejected_at(&model, &join(&spoiled));
            assert_eq!(line, at, "{name}: the acknowledgement at line {at} removed");
            checked += 1;
        }
    }
    assert!(checked > 0, "no acknowledgement followed by another record");
}

#[test]
fn two_swapped_records_are_rejected() {
    let (model, _, mut lines) = sample();
    // A response and the record before it, at the same time: the response then answers a
    // request not yet sent.
    let at = first(&lines, |v| v["input"]["type"] == "nli_response");
    assert_eq!(lines[at - 1]["now_ms"], lines[at - 2]["now_ms"]);
    lines.swap(at - 2, at - 1);
    assert_eq!(rejected_at(&model, &join(&lines)), at - 1);
}

#[test]
fn a_store_write_missing_or_failed_in_the_log_is_rejected() {
    let (model, _, lines) = sample();
    let at = first(&lines, |v| v["input"]["type"] == "register");
    assert!(lines[at - 1]["store"]["ops"].as_u64() > Some(0));
    let mut fewer = lines.clone();
    let ops = fewer[at - 1]["store"]["ops"].as_u64().unwrap();
    fewer[at - 1]["store"]["ops"] = Value::from(ops - 1);
    assert_eq!(rejected_at(&model, &join(&fewer)), at, "a missing write");
    let mut failed = lines.clone();
    failed[at - 1]["store"]["failed"] = Value::from(1);
    failed[at - 1]["store"]["failures"] = Value::from(1);
    assert_eq!(
        rejected_at(&model, &join(&failed)),
        at,
        "a write reported failed"
    );
}

#[test]
fn a_clock_that_jumps_is_rejected() {
    let (model, _, mut lines) = sample();
    let at = first(&lines, |v| v["input"]["type"] == "tick");
    let now = lines[at - 1]["now_ms"].as_u64().unwrap();
    lines[at - 1]["now_ms"] = Value::from(now + 1);
    assert_eq!(rejected_at(&model, &join(&lines)), at);
}

#[test]
fn a_torn_last_line_is_ignored_and_the_rest_validated() {
    let (model, text, _) = sample();
    let torn = format!("{text}{{\"type\":\"input\",\"now");
    let log = validate::parse(&torn).expect("a torn last line is not an error");
    assert_eq!(log.torn, vec![text.lines().count() + 1]);
    assert!(matches!(
        validate::validate(&model, &log, Limits::default()).0,
        Verdict::Valid
    ));
}

/// Runs `cluster` with `args` and `--log`, and validates the log it wrote, which must show at
/// least `store_failures` failed store operations. Returns what the run printed.
fn cluster_log_is_valid(store: &str, extra: &[&str], store_failures: usize) -> String {
    cluster_log_is_valid_with(store, extra, store_failures, |_| {}).0
}

/// [`cluster_log_is_valid`], with `setup` adding to the host's command (its environment).
/// Returns the host's standard output and its standard error.
pub(crate) fn cluster_log_is_valid_with(
    store: &str,
    extra: &[&str],
    store_failures: usize,
    setup: impl FnOnce(&mut std::process::Command),
) -> (String, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let log = dir.path().join("coordinator.log");
    let mut cmd = std::process::Command::new(cluster_binary());
    setup(&mut cmd);
    cmd.args(["--buckets", "12", "--store", store])
        .args([
            "--loss-per-million",
            "50000",
            "--slow-per-million",
            "300000",
            "--log",
        ])
        .arg(&log)
        .args(extra);
    let out = cmd.output().expect("cluster runs");
    assert!(
        out.status.success(),
        "cluster failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log).expect("the log");
    let log = validate::parse(&text).expect("a well-formed log");
    assert!(log.torn.is_empty());
    let header = log
        .model
        .clone()
        .expect("12 buckets: the header has the model");
    let config = Config::from_json_str(&header.to_string()).expect("a model configuration");
    let model = validate::model_for(config, BugSet::none());
    let (verdict, stats) = validate::validate(&model, &log, Limits::default());
    assert!(matches!(verdict, Verdict::Valid), "{verdict:#?}");
    // A run of twelve buckets, each moved, led or left, is more than a start and a register.
    assert!(stats.records > 40, "only {} records", stats.records);
    let failed = log
        .lines
        .iter()
        .filter(
            |l| matches!(&l.record, validate::Record::Input { store, .. } if store.failures > 0),
        )
        .count();
    assert!(
        failed >= store_failures,
        "{failed} failed store operations in the log"
    );
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_cluster_run_on_a_file_store_with_a_coordinator_crash_is_valid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = format!("file:{}", dir.path().join("store").display());
    cluster_log_is_valid(&store, &["--crash-coordinator-at", "30", "--seed", "11"], 0);
}

/// Decisive rejection on a real log (spec/log-format.md, "What validation decides"): the
/// `cluster` host's log of 8 buckets with a coordinator crash, one record left out. Leaving out an
/// input that had effects or store operations is rejected (exit 1), never undecided; leaving out
/// a response the coordinator ignored (no effect, no store operation) stays valid, since the
/// model explains it as a message that never arrived. Before budgets of 255 were unbounded
/// (spec 9), every such rejection was undecided: a leader's lost proposal and its next one made
/// a new state for each unit of the loss budget, so every hidden closure ran into
/// `--max-hidden`. The first six effectful inputs after the Register are left out here, each
/// decided in under 2 s on this machine; `spec/log-format.md` gives the sweep over every record.
#[test]
fn a_real_log_with_a_record_left_out_is_rejected_or_explained_never_undecided() {
    let dir = tempfile::tempdir().expect("temp dir");
    let log_path = dir.path().join("coordinator.log");
    let store = format!("file:{}", dir.path().join("store").display());
    let out = std::process::Command::new(cluster_binary())
        .args([
            "--buckets",
            "8",
            "--store",
            &store,
            "--crash-coordinator-at",
            "40",
        ])
        .arg("--log")
        .arg(&log_path)
        .output()
        .expect("cluster runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&log_path).expect("the log");
    let lines: Vec<&str> = text.lines().collect();
    let log = validate::parse(&text).expect("a well-formed log");
    let header = log
        .model
        .clone()
        .expect("8 buckets: the header has the model");
    let config = Config::from_json_str(&header.to_string()).expect("a model configuration");
    let model = unreduced(config);
    assert!(matches!(verdict(&model, &text), Verdict::Valid));
    let without = |i: usize| {
        let mut kept: Vec<&str> = lines.clone();
        kept.remove(i);
        kept.join("\n") + "\n"
    };
    let parsed: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    // `first` is 1-based, so as an index into `lines` it is the record after the Register.
    let after_register = first(&parsed, |v| v["input"]["type"] == "register");
    let effectful: Vec<usize> = (after_register..parsed.len())
        .filter(|&i| parsed[i]["type"] == "input" && has_any_effect(&parsed[i]))
        .take(6)
        .collect();
    assert_eq!(effectful.len(), 6, "the run has fewer effectful inputs");
    for i in effectful {
        match verdict(&model, &without(i)) {
            Verdict::Unexplained(u) => {
                assert!(
                    u.line > i,
                    "line {} left out, rejected at {}",
                    i + 1,
                    u.line
                )
            }
            other => panic!("line {} left out: {other:?}", i + 1),
        }
    }
    let ignored = (after_register..parsed.len())
        .find(|&i| {
            parsed[i]["input"]["type"] == "nli_response"
                && !has_any_effect(&parsed[i])
                && parsed[i]["store"]["ops"] == 0
        })
        .expect("some response the coordinator ignored");
    assert!(
        matches!(verdict(&model, &without(ignored)), Verdict::Valid),
        "leaving out the ignored response of line {} is not explained",
        ignored + 1
    );
}

fn has_any_effect(v: &Value) -> bool {
    v["effects"].as_array().is_some_and(|e| !e.is_empty())
}

/// Group commit (spec/protocol.md, "Group commit"): the log holds the inputs whose effects were
/// released. A lost batch (the fourth flush fails) and a crash that drops the open batch and the
/// held effects leave stores that the model reaches by a crash before the unreleased inputs.
#[test]
fn a_cluster_run_with_group_commit_a_lost_batch_and_a_crash_is_valid() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = format!("file:{}", dir.path().join("store").display());
    let out = cluster_log_is_valid(
        &store,
        &[
            "--group-commit",
            "6",
            "--max-inflight",
            "3",
            "--fail-flush-at",
            "4",
            "--crash-coordinator-at",
            "50",
            "--seed",
            "11",
        ],
        0,
    );
    assert!(out.contains("lost batches      1\n"), "{out}");
    assert!(out.contains(" batches of "), "{out}");
}

/// The ZooKeeper server is killed after 25 inputs. The first write whose answer is lost there is
/// in doubt, so the incarnation stops without releasing its input (G3, spec/findings.md F25),
/// the server is started again and a new incarnation recovers; the coordinator crashes after 60.
/// (Before F25's fix the incarnation went on with the write reported failed, and the log showed
/// three failed store operations instead.) In the `zookeeper` test group of
/// .config/nextest.toml, so no other test uses the server meanwhile.
#[test]
fn a_cluster_run_on_zookeeper_with_an_outage_and_a_coordinator_crash_is_valid() {
    let addr = std::env::var("ZK_ADDR")
        .expect("ZK_ADDR unset: run the tests through scripts/with-zookeeper.sh (README)");
    let root = format!("/validate-{}", std::process::id());
    let (out, err) = cluster_log_is_valid_with(
        &format!("zk:{addr}"),
        &[
            "--root",
            &root,
            "--zk-outage-at",
            "25",
            "--crash-coordinator-at",
            "60",
        ],
        0,
        |_| {},
    );
    assert!(
        err.contains("a write left in doubt") && !out.contains("lost batches      0\n"),
        "the outage stopped no incarnation:\n{out}\n{err}"
    );
    assert!(err.contains("crashing the coordinator after"), "{err}");
}

/// Group commit on ZooKeeper: the server is killed after 25 inputs, a flush fails (or its answer
/// is lost), the incarnation stops with what it held, the server is started again and a new
/// incarnation recovers.
#[test]
fn a_cluster_run_with_group_commit_on_zookeeper_with_an_outage_is_valid() {
    let addr = std::env::var("ZK_ADDR")
        .expect("ZK_ADDR unset: run the tests through scripts/with-zookeeper.sh (README)");
    let root = format!("/validate-gc-{}", std::process::id());
    let out = cluster_log_is_valid(
        &format!("zk:{addr}"),
        &[
            "--root",
            &root,
            "--group-commit",
            "6",
            "--max-inflight",
            "3",
            "--zk-outage-at",
            "25",
        ],
        0,
    );
    assert!(out.contains("lost batches      1\n"), "{out}");
}

/// The first step of `steps` at which the model with `bugs` and the model without them part
/// (the clean one does not enable it, or it reaches another state or emits other effects), and
/// whether the parting shows in that step's record (the clean model does not enable the step,
/// or emits other effects or makes another number of store operations); a parting in internal
/// state only shows in some later record, or never.
fn where_the_switch_acts(config: &Config, bugs: BugSet, steps: &[Action]) -> Option<(usize, bool)> {
    let switched = RebalanceModel::new(config.clone(), bugs);
    let clean = RebalanceModel::new(config.clone(), BugSet::none());
    let (mut a, mut b) = (switched.init_state(), clean.init_state());
    let strip = |s: &rebalance_model::SystemState| {
        let mut s = s.clone();
        s.ghost = Default::default();
        s
    };
    for (i, step) in steps.iter().enumerate() {
        let (pa, oa) = switched
            .step(&a, step)
            .expect("the switched path is enabled");
        let Some((pb, ob)) = clean.step(&b, step) else {
            return Some((i, true));
        };
        let shown = oa.sent != ob.sent
            || oa.enqueued != ob.enqueued
            || oa.reply != ob.reply
            || oa.store_ops != ob.store_ops;
        if shown || strip(&pa) != strip(&pb) {
            return Some((i, shown));
        }
        (a, b) = (pa, pb);
    }
    None
}

/// `steps`, then at most 80 more fault-free steps (events, deliveries, ISR proposals and time,
/// in that preference), so that a parting in internal state has records in which to show.
fn continued(model: &RebalanceModel, steps: &[Action]) -> Vec<Action> {
    use rebalance_model::ActionKind as K;
    let wanted = [
        K::ProcessEvent,
        K::DeliverNliResponse,
        K::DeliverAdjustIsr,
        K::DeliverAdjustIsrResponse,
        K::ProposeIsr,
        K::DeliverNli,
        K::Tick,
    ];
    extended(model, steps, &wanted, 80)
}

/// A switch's path, continued and logged as the switched model would, validated against the
/// clean model: never rejected before the step where the switch acts, and rejected at that
/// step's record when the parting shows there (or at the first shown record after it, if that
/// step is hidden from the coordinator).
fn switched_log_is_rejected_where_it_acts(
    label: &str,
    config: &Config,
    bugs: BugSet,
    steps: &[Action],
) -> bool {
    let switched = RebalanceModel::new(config.clone(), bugs);
    let steps = continued(&switched, steps);
    let log = validate::model_log::model_log(&switched, &steps).expect("the path is enabled");
    let clean = unreduced(config.clone());
    let Some((k, shown)) = where_the_switch_acts(config, bugs, &steps) else {
        // No step of the path parts from the clean model. Either the switch changes nothing
        // here (F11's hash order alone), and the clean model explains the log; or it leaves out
        // a step (`startup-read-blocks` never ticks), which shows only when the log ends with
        // the coordinator idle where the clean one would still act: rejected at the end record.
        let last = log.text.lines().count();
        let ends = log
            .text
            .lines()
            .last()
            .is_some_and(|l| l.contains("\"type\":\"end\""));
        match verdict(&clean, &log.text) {
            Verdict::Valid => println!("{label}: changes nothing on this path; valid"),
            Verdict::Unexplained(u) if ends && u.line == last => {
                println!("{label}: no step parts; rejected at the end record, line {last}")
            }
            other => panic!("{label}: {other:#?}"),
        }
        return false;
    };
    let at = log.line_of_step[k..]
        .iter()
        .flatten()
        .next()
        .copied()
        .unwrap_or_else(|| panic!("{label}: no record at or after step {}", k + 1));
    let zombie = matches!(
        steps[k],
        Action::ZombieProcessEvent { .. }
            | Action::ZombieDeliverNliResponse { .. }
            | Action::ZombieCancel
    );
    if zombie {
        // The deposed coordinator's step is in its own log, not in this one; this log shows
        // its write only if this coordinator later reads it back. Not shown here: the clean
        // model may explain this log, and must not reject it before the step.
        match verdict(&clean, &log.text) {
            Verdict::Valid => {
                println!(
                    "{label}: acts in the deposed coordinator (step {}); this log is valid",
                    k + 1
                );
                return false;
            }
            Verdict::Unexplained(u) => {
                assert!(
                    u.line > at,
                    "{label}: rejected at line {}, before the step",
                    u.line
                );
                return false;
            }
            other => panic!("{label}: {other:#?}"),
        }
    }
    let got = rejected_at(&clean, &log.text);
    println!("{label}: the switch acts at line {at}; rejected at line {got}");
    if shown {
        assert_eq!(
            got,
            at,
            "{label}: the switch acts at step {} (line {at})",
            k + 1
        );
    } else {
        assert!(
            got > at,
            "{label}: rejected at line {got}, before the switch acts (line {at})"
        );
    }
    shown
}

#[test]
fn every_historical_switch_logged_is_rejected_where_it_acts() {
    // Each switch on the CI preset where its property is violated (as conformance/tests/teeth.rs).
    let rows = [
        (Bug::TimeoutCompletes, "tiny"),
        (Bug::FinalNotPersisted, "ci-store"),
        (Bug::CancelBestEffort, "ci-store"),
        (Bug::NoRequestFencing, "ci-messages"),
        (Bug::EpochBumpOnRetry, "tiny"),
        (Bug::UnboundedTracked, "ci-two-buckets"),
        (Bug::CancelAfterRestart, "ci-two-buckets"),
        (Bug::RecoveryOrder, "ci-two-buckets"),
        (Bug::UntouchedAfterCancel, "ci-store"),
    ];
    let mut at_once = 0;
    for (bug, name) in rows {
        let config = rebalance_model::preset(name).unwrap();
        let trace = rebalance_model::check::shortest::bug_counterexample(config.clone(), bug)
            .unwrap_or_else(|| panic!("{bug} has a counterexample on {name}"));
        let label = format!("{bug} on {name}");
        at_once += usize::from(switched_log_is_rejected_where_it_acts(
            &label,
            &config,
            BugSet::of(&[bug]),
            &trace.steps,
        ));
    }
    println!("{at_once} of 9 switches show in the record of the step where they act");
}

#[test]
fn every_kept_variant_and_switch_trace_logged_is_rejected_where_it_acts() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../model/traces");
    let mut checked = 0;
    let mut skipped = 0;
    let below_the_log = [Bug::ReferenceBeforePlan, Bug::OnePlanPath];
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("model/traces")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    for path in files {
        let trace = Trace::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let label = path.file_name().unwrap().to_string_lossy().into_owned();
        if trace.bugs.iter().any(|b| below_the_log.contains(b)) {
            // Two misreadings of apache/fluss#3868's design differ from it only in the remote
            // plan storage, which a coordinator log does not record (a restart's `read` is the
            // task node and the buckets): their Register fails the same operation, by index,
            // as the design's own failed object or reference write, so the clean model
            // explains their logs. The design's tests catch them from the state
            // (model/tests/integration/designs.rs). `cleanup-before-reference` stays here: its
            // failed reference write is a third operation, which the design never fails with.
            skipped += 1;
            continue;
        }
        switched_log_is_rejected_where_it_acts(
            &label,
            &trace.config,
            BugSet::of(&trace.bugs),
            &trace.steps,
        );
        checked += 1;
    }
    assert!(checked >= 9, "{checked} kept traces");
    assert_eq!(skipped, below_the_log.len(), "one kept trace for each");
}

/// The manager's log of a fault-free run of `ci-rf2-recovery` cut by a coordinator crash after
/// `prefix` steps and then run to its end; and the index of the start record after the crash.
fn crashed_at(prefix: usize) -> (RebalanceModel, Vec<Value>, usize) {
    let model =
        unreduced(rebalance_model::config::presets::load("ci-rf2-recovery").expect("preset"));
    let mut steps = fault_free_run(&model);
    steps.truncate(prefix);
    steps.push(Action::CrashCoordinator);
    let steps = continued(&model, &steps);
    let lines: Vec<Value> = log_of(&model, &steps)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let start = (2..lines.len())
        .find(|i| lines[*i]["type"] == "start")
        .expect("the crash's start");
    (model, lines, start)
}

/// A crash right after an input that wrote the store: the log, the start's index, and a bucket
/// whose stored record the run changed before the crash.
fn crashed_after_a_write() -> (RebalanceModel, Vec<Value>, usize, usize) {
    for prefix in (4..30).rev() {
        let (model, lines, start) = crashed_at(prefix);
        let before = &lines[start - 1];
        let first = &lines[1]["read"]["buckets"];
        let read = &lines[start]["read"]["buckets"];
        let changed = (0..16).find(|b| !read[b].is_null() && read[b] != first[b]);
        if before["type"] == "input" && before["store"]["ops"].as_u64() > Some(1) {
            if let Some(b) = changed {
                return (model, lines, start, b);
            }
        }
    }
    panic!("no prefix of the fault-free run ends with a write after a change");
}

#[test]
fn a_restart_that_finds_a_write_lost_or_invented_is_rejected_at_its_start() {
    let (model, lines, start, b) = crashed_after_a_write();
    assert!(matches!(verdict(&model, &join(&lines)), Verdict::Valid));
    let mut lost = lines.clone();
    lost[start]["read"]["buckets"][b] = lines[1]["read"]["buckets"][b].clone();
    assert_eq!(rejected_at(&model, &join(&lost)), start + 1, "a lost write");
    let mut invented = lines.clone();
    let lai = &mut invented[start]["read"]["buckets"][b]["lai"];
    lai["leader_epoch"] = Value::from(lai["leader_epoch"].as_u64().unwrap() + 7);
    assert_eq!(
        rejected_at(&model, &join(&invented)),
        start + 1,
        "an invented write"
    );
    let mut no_task = lines.clone();
    no_task[start]["read"]["task"] = Value::Null;
    assert_eq!(
        rejected_at(&model, &join(&no_task)),
        start + 1,
        "a lost task"
    );
}

/// A host killed after an input's store operations but before its record leaves the record
/// out: the restart's read shows the input's writes, and the model explains them as that input,
/// cut short by the crash. Only the last input before a start may be missing so: with an
/// earlier one left out, the records after it are unexplained.
#[test]
fn an_input_cut_short_by_a_crash_is_explained_only_just_before_the_start() {
    let (model, lines, start, _) = crashed_after_a_write();
    let mut cut = lines.clone();
    cut.remove(start - 1);
    assert!(
        matches!(verdict(&model, &join(&cut)), Verdict::Valid),
        "the last input before the start, left out"
    );
    let earlier = (2..start - 1)
        .rev()
        .find(|i| lines[*i]["type"] == "input" && lines[*i]["store"]["ops"].as_u64() > Some(1))
        .expect("an earlier input that wrote");
    let mut gap = lines.clone();
    gap.remove(earlier);
    assert!(
        rejected_at(&model, &join(&gap)) <= start,
        "an earlier input left out"
    );
}

/// A host killed during its first Recover: the log goes from the first start to the second.
#[test]
fn a_first_recover_cut_short_is_explained() {
    let model =
        unreduced(rebalance_model::config::presets::load("ci-rf2-recovery").expect("preset"));
    use rebalance_model::ActionKind as K;
    let wanted = [
        K::Register,
        K::ProcessEvent,
        K::DeliverNliResponse,
        K::DeliverNli,
    ];
    let steps = extended(&model, &[Action::CrashCoordinator], &wanted, 60);
    let mut lines: Vec<Value> = log_of(&model, &steps)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(lines[2]["input"]["event"]["type"], "recover");
    assert_eq!(lines[3]["type"], "start");
    lines.remove(2);
    assert!(matches!(verdict(&model, &join(&lines)), Verdict::Valid));
    // Not so for a record other than a start after the first start.
    lines.remove(2);
    assert_eq!(rejected_at(&model, &join(&lines)), 3);
}

/// A process killed after its election and before its start record leaves only a gap in the
/// epochs: the next start is explained by as many crashes in a row. A gap the log's other
/// records contradict is not.
#[test]
fn an_incarnation_that_logged_nothing_is_explained_by_its_epoch_gap() {
    use rebalance_model::ActionKind as K;
    let model =
        unreduced(rebalance_model::config::presets::load("ci-coordinator-crash").expect("preset"));
    let mut budgets = model.config.clone();
    budgets.budgets.coordinator_crash = 2;
    let model = unreduced(budgets);
    let wanted = [
        K::Register,
        K::ProcessEvent,
        K::DeliverNliResponse,
        K::DeliverNli,
    ];
    let prefix = extended(&model, &[], &wanted, 3);
    let mut steps = prefix.clone();
    steps.extend([Action::CrashCoordinator, Action::CrashCoordinator]);
    let steps = extended(&model, &steps, &wanted, 40);
    let mut lines: Vec<Value> = log_of(&model, &steps)
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    let starts: Vec<usize> = (2..lines.len())
        .filter(|i| lines[*i]["type"] == "start")
        .collect();
    assert_eq!(starts.len(), 2, "two crashes, two starts after the first");
    assert_eq!(
        starts[1],
        starts[0] + 1,
        "the first restart did nothing before the second"
    );
    assert!(matches!(verdict(&model, &join(&lines)), Verdict::Valid));
    // The first restart's start record never written: epochs 1, then 3.
    lines.remove(starts[0]);
    assert!(matches!(verdict(&model, &join(&lines)), Verdict::Valid));
    // A start whose epoch jumps further than the crash budget allows is not.
    let mut beyond = lines.clone();
    beyond[starts[0]]["coordinator_epoch"] = Value::from(9);
    assert_eq!(rejected_at(&model, &join(&beyond)), starts[0] + 1);
}

/// A real bug found from a log alone (spec/log-format.md, "What validation decides"): the
/// `cluster` host runs a manager with an old bug put back (`--plant leader-only-any-ack`: R12
/// completes a leader-only bucket on any replica's ack, as Fluss did before apache/fluss#3556),
/// with message loss, slow followers and a coordinator crash. The validator, given only the log,
/// rejects it at the first record where the manager's behaviour leaves the model's: the first
/// follower's ack of a leader-only bucket that the log shows taking effect. The same run without
/// the bug validates, so it is the bug that is rejected, not the run.
#[test]
fn a_manager_bug_put_back_is_rejected_from_its_log_at_the_first_record_it_shows_in() {
    let run = |plant: bool| {
        let dir = tempfile::tempdir().expect("temp dir");
        let log = dir.path().join("coordinator.log");
        let store = format!("file:{}", dir.path().join("store").display());
        let mut cmd = std::process::Command::new(cluster_binary());
        cmd.args(["--buckets", "12", "--store", &store, "--seed", "12"])
            .args([
                "--loss-per-million",
                "50000",
                "--slow-per-million",
                "300000",
            ])
            .args(["--crash-coordinator-at", "30", "--log"])
            .arg(&log);
        if plant {
            cmd.args(["--plant", "leader-only-any-ack"]);
        }
        let out = cmd.output().expect("cluster runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::read_to_string(&log).expect("the log")
    };
    let validated = |text: &str| {
        let log = validate::parse(text).expect("a well-formed log");
        let header = log
            .model
            .clone()
            .expect("12 buckets: the header has the model");
        let config = Config::from_json_str(&header.to_string()).expect("a model configuration");
        let model = validate::model_for(config.clone(), BugSet::none());
        (
            validate::validate(&model, &log, Limits::default()).0,
            config,
        )
    };
    let (clean, _) = validated(&run(false));
    assert!(matches!(clean, Verdict::Valid), "{clean:#?}");

    let text = run(true);
    let (verdict, config) = validated(&text);
    let Verdict::Unexplained(u) = verdict else {
        panic!("the planted bug's log is not rejected: {verdict:#?}");
    };
    // The first record at which the bug shows: an ack of a leader-only bucket from a replica that
    // is not its new leader, with effects (the next bucket admitted) where R12 ignores it.
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let shows = first(&lines, |v| {
        let i = &v["input"];
        let new_leader = i["bucket"].as_u64().and_then(|b| leader_only(&config, b));
        i["type"] == "nli_response"
            && has_any_effect(v)
            && new_leader.is_some_and(|l| i["from"].as_u64() != Some(u64::from(l)))
    });
    assert_eq!(u.line, shows, "rejected at line {}: {}", u.line, u.summary);
    let closest = u.closest.expect("a candidate handled the response");
    assert!(
        closest.contains("effects differ, first at `sent.0`"),
        "{closest}"
    );
}

/// The new leader of bucket `b` if the plan changes only its leader: the same replicas, another
/// first one (`target[0]` is the new leader).
fn leader_only(config: &Config, b: u64) -> Option<u8> {
    let target = &config
        .plan
        .iter()
        .find(|e| u64::from(e.bucket) == b)?
        .target;
    let origin = &config.buckets[b as usize];
    let (mut t, mut o) = (target.clone(), origin.assignment.clone());
    t.sort_unstable();
    o.sort_unstable();
    (t == o && target[0] != origin.leader).then_some(target[0])
}
