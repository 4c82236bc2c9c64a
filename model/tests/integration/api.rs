//! Traces, configuration errors, the step API, fair cycles and acyclicity, and the Explorer.

use crate::common;

use rebalance_model::step::action::{ClientReply, RegisterReply};
use rebalance_model::{preset, Action, BugSet, Config, RebalanceModel, Trace};

fn example_from_spec() -> String {
    let doc = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../spec/trace-format.md"
    ))
    .expect("spec/trace-format.md");
    let start = doc.find("```json\n").expect("json block") + 8;
    let end = start + doc[start..].find("```").expect("end of block");
    doc[start..end].to_string()
}

#[test]
fn example_trace_in_spec_replays_to_completion() {
    let trace = Trace::from_json(&example_from_spec()).expect("example parses");
    let replay = trace.replay().expect("every step enabled");
    let last = replay.states.last().unwrap();
    let task = last.store.task.as_ref().unwrap();
    assert_eq!(task.status, rebalance_model::TaskStatus::Completed);
}

#[test]
fn trace_round_trip_and_replay() {
    let model = RebalanceModel::new(preset("ci-store").unwrap(), BugSet::none());
    let cx = rebalance_model::check::shortest::first_discoveries(&model, &["SOME-CANCEL-DRAINS"]);
    let trace = Trace::new(model.config.clone(), BugSet::none(), cx[0].actions.clone());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    trace.write(&path).unwrap();
    let back = Trace::read(&path).unwrap();
    assert_eq!(back, trace);
    let mut state = model.init_state();
    for a in &trace.steps {
        state = model.step(&state, a).unwrap().0;
    }
    assert_eq!(back.replay().unwrap().states.last().unwrap(), &state);
}

#[test]
fn replay_reports_first_disabled_step() {
    let mut trace = Trace::from_json(&example_from_spec()).unwrap();
    trace.steps.insert(1, Action::CrashCoordinator); // no coordinator_crash budget
    match trace.replay() {
        Err(rebalance_model::trace::TraceError::NotEnabled { index, .. }) => assert_eq!(index, 1),
        _ => panic!("expected step 2 to be disabled"),
    }
}

/// A lasso's `cycle_start` (spec/trace-format.md, "Lassos") is checked when the trace loads: it
/// needs version 2, a step after it, and steps after it that lead back to the state before them.
#[test]
fn a_lasso_that_does_not_close_is_refused() {
    let model = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
    let register = Action::Register {
        plan: None,
        fail_store_op: None,
    };
    let deliver = {
        let s1 = model.step(&model.init_state(), &register).unwrap().0;
        let mut enabled = Vec::new();
        model.enabled_actions(&s1, &mut enabled);
        *enabled
            .iter()
            .find(|a| matches!(a, Action::DeliverNli { .. }))
            .unwrap()
    };
    let json = |start: usize, version: u32| {
        let mut t = Trace::lasso(
            model.config.clone(),
            BugSet::none(),
            &[register],
            &[deliver],
        );
        t.cycle_start = Some(start);
        t.version = version;
        t.to_json()
    };
    let field = |text: &str| match Trace::from_json(text) {
        Err(rebalance_model::trace::TraceError::Invalid { path, message }) => {
            format!("{path}: {message}")
        }
        other => panic!("expected an invalid cycle_start, got {other:?}"),
    };
    assert!(field(&json(1, 2)).starts_with("cycle_start: the steps after step 1 do not lead back"));
    assert!(field(&json(2, 2)).starts_with("cycle_start: 2 leaves no step"));
    assert!(field(&json(1, 1)).starts_with("cycle_start: needs \"version\": 2"));
    // Without the field, the same steps are an ordinary trace.
    let plain = Trace::new(
        model.config.clone(),
        BugSet::none(),
        vec![register, deliver],
    );
    assert_eq!(Trace::from_json(&plain.to_json()).unwrap(), plain);
}

fn field_of(json: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, json).unwrap();
    let err = Config::from_json_file(&path).unwrap_err();
    err.field().unwrap_or("").to_string() + " | " + &err.to_string()
}

#[test]
fn invalid_configs_name_the_field() {
    let good = serde_json::to_value(preset("tiny").unwrap()).unwrap();
    let with = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = good.clone();
        f(&mut v);
        field_of(&v.to_string())
    };
    assert!(with(&|v| v["plan"][0]["target"] = serde_json::json!([7]))
        .starts_with("plan[0].target[0] |"));
    assert!(
        with(&|v| v["plan"][0]["target"] = serde_json::json!([0, 1]))
            .starts_with("plan[0].target |")
    );
    assert!(with(&|v| v["buckets"] = serde_json::json!([])).starts_with("buckets |"));
    assert!(with(&|v| v["max_tracked_timed_out"] = serde_json::json!(0))
        .starts_with("max_tracked_timed_out |"));
    assert!(with(&|v| v["buckets"][0]["leader"] = serde_json::json!(1))
        .starts_with("buckets[0].leader |"));
    // Type errors name the field's path, as range errors do.
    assert!(
        with(&|v| v["buckets"][0]["leader"] = serde_json::json!("zero"))
            .starts_with("buckets[0].leader | ")
    );
    assert!(
        with(&|v| v["budgets"]["message_loss"] = serde_json::json!(-1))
            .starts_with("budgets.message_loss | ")
    );
    // A preset's name where a configuration object belongs says so.
    let named = field_of("\"ci-stor\"");
    assert!(named.contains("expected a configuration object, found the string \"ci-stor\""));
    // Unknown and missing fields are parse errors that name the field.
    assert!(with(&|v| v["bogus"] = serde_json::json!(1)).contains("bogus"));
    assert!(with(&|v| {
        v.as_object_mut().unwrap().remove("servers");
    })
    .contains("servers"));
}

/// `--config` (presets::load): a misspelt preset name, on its own or as a file's whole content,
/// names the preset meant and lists them all; a correct one in a file says how to write it out.
#[test]
fn a_misspelt_preset_name_says_which_presets_exist() {
    let e = rebalance_model::config::presets::load("ci-stor").unwrap_err();
    assert!(
        e.starts_with("unknown configuration `ci-stor` (did you mean `ci-store`?): "),
        "{e}"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("named.json");
    std::fs::write(&path, "\"ci-stor\"").unwrap();
    let e = rebalance_model::config::presets::load(path.to_str().unwrap()).unwrap_err();
    assert!(e.starts_with(&format!("{}: ", path.display())), "{e}");
    assert!(
        e.contains("expected a configuration object, found the string \"ci-stor\""),
        "{e}"
    );
    assert!(e.contains("did you mean `ci-store`?"), "{e}");
    for name in rebalance_model::preset_names() {
        assert!(e.contains(name), "{name} not listed: {e}");
    }
    std::fs::write(&path, "\"tiny\"").unwrap();
    let e = rebalance_model::config::presets::load(path.to_str().unwrap()).unwrap_err();
    assert!(e.contains("`tiny` is a preset"), "{e}");
    // A name far from every preset guesses none.
    let e = rebalance_model::config::presets::load("zzzz").unwrap_err();
    assert!(!e.contains("did you mean"), "{e}");
}

/// The configuration files the findings cite must keep loading as the format evolves; the two
/// `failed-responses-*` files are their presets with only the switch added (under which dead
/// messages are not collected, whatever `collect_dead_messages` says).
#[test]
fn the_configuration_files_load() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "configs missing from {}", dir.display());
    for path in &names {
        let config = Config::from_json_file(path).unwrap_or_else(|e| panic!("{e}"));
        let stem = path.file_stem().unwrap().to_str().unwrap();
        if let Some(base) = stem.strip_prefix("failed-responses-") {
            let mut expected = preset(&format!("ci-{base}")).unwrap();
            expected.failed_responses_in_flight = true;
            expected.description = config.description.clone();
            assert_eq!(config, expected, "{stem}");
        }
    }
}

/// The pieces `full`'s size is projected from (docs/measurements.md) are `full` itself cut to
/// bucket 0's move, with no fault or exactly one of its faults, and to buckets 0 and 1 with no
/// fault: if `full` changes, they must too.
#[test]
fn the_pieces_of_full_are_full_cut_down() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs/full-pieces");
    let full = preset("full").unwrap();
    type Budget = fn(&mut rebalance_model::Budgets) -> &mut u8;
    let faults: [(&str, Budget); 7] = [
        ("cancel", |b| &mut b.cancel),
        ("coordinator-crash", |b| &mut b.coordinator_crash),
        ("server-crash", |b| &mut b.server_crash),
        ("store-failure", |b| &mut b.store_failure),
        ("message-loss", |b| &mut b.message_loss),
        ("message-duplication", |b| &mut b.message_duplication),
        ("bucket-deletion", |b| &mut b.bucket_deletion),
    ];
    // `full` with its first `buckets` buckets, no fault but `fault` (which it has once).
    let cut = |buckets: usize, fault: Option<&str>| {
        let mut c = full.clone();
        c.buckets.truncate(buckets);
        c.plan.retain(|t| usize::from(t.bucket) < buckets);
        for (name, budget) in &faults {
            let once = Some(*name) == fault;
            if once {
                assert_eq!(*budget(&mut c.budgets), 1, "`full` has each fault once");
            }
            *budget(&mut c.budgets) = u8::from(once);
        }
        c
    };
    let pieces = faults
        .iter()
        .map(|&(name, _)| (format!("bucket0-{name}.json"), cut(1, Some(name))))
        .chain([
            ("bucket0-none.json".to_string(), cut(1, None)),
            ("buckets01-none.json".to_string(), cut(2, None)),
        ]);
    for (file, mut expected) in pieces {
        let path = dir.join(file);
        let piece = Config::from_json_file(&path).unwrap_or_else(|e| panic!("{e}"));
        expected.description = piece.description.clone();
        assert_eq!(piece, expected, "{}", path.display());
    }
}

/// The graph docs/measurements.md compares with Stateright's `2pc` is `ci-server-crash` with
/// dead messages kept, and nothing else changed.
#[test]
fn ci_server_crash_dead_kept_is_ci_server_crash_with_dead_messages_kept() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("configs/ci-server-crash-dead-kept.json");
    let file = Config::from_json_file(&path).unwrap_or_else(|e| panic!("{e}"));
    let mut expected = preset("ci-server-crash").unwrap();
    assert!(expected.collect_dead_messages, "the preset collects them");
    expected.collect_dead_messages = false;
    expected.description = file.description.clone();
    assert_eq!(file, expected);
}

#[test]
fn step_reports_reply_store_ops_and_rules() {
    let model = RebalanceModel::new(preset("ci-store").unwrap(), BugSet::none());
    let init = model.init_state();
    let (s1, out) = model
        .step(
            &init,
            &Action::Register {
                plan: None,
                fail_store_op: None,
            },
        )
        .unwrap();
    assert_eq!(
        out.reply,
        Some(ClientReply::Register(RegisterReply::Accepted(1)))
    );
    assert_eq!(out.store_ops, 2, "R1's task write and R9's Phase A write");
    assert!(out.rules.contains(rebalance_model::Rule::R9));
    assert_eq!(out.sent.len(), 2, "Nli to both live members of the union");
    assert_eq!(s1.store.buckets.assignment[0].as_slice(), [1, 0]);
    // The third store operation does not exist in this step.
    assert!(model
        .step(
            &init,
            &Action::Register {
                plan: None,
                fail_store_op: Some(3)
            }
        )
        .is_none());
    let (s2, out) = model
        .step(
            &init,
            &Action::Register {
                plan: None,
                fail_store_op: Some(2),
            },
        )
        .unwrap();
    assert!(out.store_failed);
    assert_eq!(
        s2.store.buckets.assignment[0].as_slice(),
        [0],
        "Phase A aborted"
    );
    assert_eq!(s2.budgets.store_failure, 1);
}

/// Spec 7.3: no CI preset has a fair cycle on which a liveness goal never holds (the fair-cycle
/// search), and, as the bounds of 7.3 argue, none has a cycle at all: every strongly connected
/// component is a single state without a self-loop. The search reads the whole graph (the
/// partial-order reduction does not keep fair cycles, spec 9), within the bound of
/// `common::cycle_bound` on the five presets whose whole graph is too large for CI. The state
/// counts are the pinned whole ones. Each search is single-threaded, so the presets are shared
/// out over the cores, largest first.
#[test]
fn no_fair_cycle_in_ci_presets() {
    let mut names: Vec<&str> = std::iter::once("tiny")
        .chain(rebalance_model::config::presets::ci_preset_names())
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(common::pinned_whole(n)));
    let failures = common::on_every_core(names, no_fair_cycle_with_pinned_count);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn no_fair_cycle_with_pinned_count(name: &str) -> Result<(), String> {
    let mut config = preset(name).unwrap();
    config.max_network = common::cycle_bound(name);
    let model = RebalanceModel::new(config, BugSet::none());
    let started = std::time::Instant::now();
    let search = rebalance_model::check::cycle::fair_cycles_for_goals(&model);
    println!(
        "{name}: {} states, {} edges, {} non-trivial SCCs, {:.1} s",
        search.states,
        search.edges,
        search.nontrivial_sccs,
        started.elapsed().as_secs_f64()
    );
    if let Some(lasso) = search.violations.first() {
        let steps = |actions: &[Action]| -> Vec<String> {
            actions
                .iter()
                .map(rebalance_model::view::describe::action)
                .collect()
        };
        return Err(format!(
            "{name}: {} violated on a fair cycle: prefix {:#?}, cycle {:#?}",
            lasso.goal,
            steps(&lasso.prefix),
            steps(&lasso.cycle)
        ));
    }
    if search.nontrivial_sccs != 0 {
        return Err(format!(
            "{name}: {} non-trivial SCCs ({} states); spec 7.3 argues the graph is acyclic",
            search.nontrivial_sccs, search.cyclic_states
        ));
    }
    let pinned = common::pinned_whole(name);
    if search.states != pinned {
        return Err(format!("{name}: {} states, pinned {pinned}", search.states));
    }
    Ok(())
}

#[test]
fn explorer_answers_status() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let addr = format!("127.0.0.1:{port}");
    let serve_addr = addr.clone();
    std::thread::spawn(move || {
        use stateright::Model;
        let model = RebalanceModel::new(preset("tiny").unwrap(), BugSet::none());
        model.checker().serve(serve_addr.as_str());
    });
    let url = format!("http://{addr}/.status");
    for _ in 0..100 {
        if let Ok(resp) = ureq::get(&url).call() {
            let body = resp.into_string().unwrap();
            assert!(body.contains("INV-SLOT"), "{body}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("Explorer did not answer on {url}");
}

/// A 1 ms tick with Fluss's 30-minute limits does not fit the model's counters; the error says
/// which tick would (spec/trace-format.md, "Durations in milliseconds").
#[test]
fn durations_beyond_the_tick_limit_name_a_tick_that_fits() {
    let mut v = serde_json::to_value(preset("tiny").unwrap()).unwrap();
    let m = v.as_object_mut().unwrap();
    for k in [
        "task_timeout_ticks",
        "max_reconcile_backoff_ticks",
        "target_unavailable_timeout_ticks",
        "no_progress_timeout_ticks",
    ] {
        m.remove(k);
    }
    m.insert("check_interval_ms".into(), 1.into());
    m.insert("task_timeout_ms".into(), 1_800_000.into());
    m.insert("max_reconcile_backoff_ms".into(), 600_000.into());
    m.insert("target_unavailable_timeout_ms".into(), 1_800_000.into());
    m.insert("no_progress_timeout_ms".into(), 3_600_000.into());
    let e = field_of(&v.to_string());
    assert!(e.starts_with("task_timeout_ms | "), "{e}");
    assert!(e.contains("a check_interval_ms of 600000 keeps"), "{e}");
    // That tick is accepted.
    v["check_interval_ms"] = 600_000.into();
    let c = Config::from_json_str(&v.to_string()).unwrap();
    assert_eq!(c.task_timeout_ticks, 3);
    assert_eq!(c.no_progress_timeout_ticks, 6);
}

/// The files docs/model.md and `scripts/scheduled-checks.sh` call "the same graph as" a preset
/// or another file once the reduction has put them in the form P0 needs (spec 9): they are not
/// run twice, which is only right while this holds.
#[test]
fn older_files_in_reduction_form_are_the_configurations_they_are_said_to_be() {
    use rebalance_model::check::por;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("configs");
    let file = |name: &str| {
        Config::from_json_file(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let reduction_form = |mut c: Config| {
        c.description = String::new();
        por::reduced(c, BugSet::none()).0.config
    };
    let same = [
        (
            "rf3-overlap-crash-loss.json",
            preset("ci-rf3-crash-loss").unwrap(),
        ),
        (
            "rf2-isr-cancel-crash-net4.json",
            preset("ci-rf2-isr-cancel-crash").unwrap(),
        ),
        (
            "rf2-crash-cancel-coordinator-crash.json",
            preset("ci-rf2-isr-cancel-crash").unwrap(),
        ),
        (
            "rf2-move-server-crash.json",
            preset("ci-rf2-server-crash").unwrap(),
        ),
        (
            "tracked2-inflight2-net4.json",
            file("three-buckets-tracked2-inflight2.json"),
        ),
    ];
    for (name, is) in same {
        assert_eq!(reduction_form(file(name)), reduction_form(is), "{name}");
    }
    // And the files still run on their own are not one of those.
    let presets = [
        "ci-rf3-crash-loss",
        "ci-rf2-isr-cancel-crash",
        "ci-rf2-server-crash",
    ];
    for name in [
        "rf3-overlap-server-crash.json",
        "three-buckets-tracked2-inflight2.json",
    ] {
        for p in presets {
            assert_ne!(
                reduction_form(file(name)),
                reduction_form(preset(p).unwrap()),
                "{name}"
            );
        }
    }
}
