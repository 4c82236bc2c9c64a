//! The Explorer for people: the state panel's text, the picture, the address `check` prints for
//! a counterexample, and the served Explorer opening that address on the violating state.

use rebalance_model::view::explorer::{self, state_text, ExplorerModel};
use rebalance_model::view::web::Explorer;
use rebalance_model::{preset, Action, BugSet, RebalanceModel, SystemState};
use serde_json::Value;
use std::process::Command;

fn tiny() -> RebalanceModel {
    RebalanceModel::new(preset("tiny").unwrap(), BugSet::none())
}

/// The state after `indices` (action indices in `Model::actions` order, as the Explorer has
/// them).
fn follow(model: &RebalanceModel, indices: &[usize]) -> SystemState {
    let mut s = model.init_state();
    for &i in indices {
        let mut candidates: Vec<Action> = Vec::new();
        model.candidate_actions(&s, &mut candidates);
        s = model.step(&s, &candidates[i]).expect("an enabled edge").0;
    }
    s
}

fn after_register(model: &RebalanceModel) -> SystemState {
    let s = model.init_state();
    model
        .step(
            &s,
            &Action::Register {
                plan: None,
                fail_store_op: None,
            },
        )
        .unwrap()
        .0
}

#[test]
fn the_state_panel_is_in_spec_vocabulary_and_trace_json() {
    let model = tiny();
    let text = state_text(&after_register(&model));
    let expected = [
        "store (coordinator epoch 1)",
        "  task {\"cancel_requested\":false,\"id\":1,\"status\":\"NOT_STARTED\"}",
        "  plan {\"bucket\":0,\"ors\":[0],\"trs\":[1],\"old_leader\":0,\"new_leader\":1}",
        "coordinator (epoch 1, live [0,1])",
        "  rebalance 1, overall REBALANCING, cancel_requested false, finalize pending no \
         (queued no), recovery pending no (queued no)",
        "  pending []",
        "  events []",
        "bucket 0 (plan [0] -> [1], leader 0 -> 1)",
        "  store        {\"assignment\":[1,0],\"bucket_epoch\":1,\"deleted\":false,\"isr\":[0],\
         \"leader\":0,\"leader_epoch\":0}",
    ];
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(&lines[..expected.len()], &expected[..], "{text}");
    assert!(
        lines[expected.len()]
            .starts_with("  coordinator  REBALANCING, attempt {\"key\":{\"rid\":1,\"bucket\":0}"),
        "{text}"
    );
    assert!(text.contains("  s0 (up  )    {\"leader_epoch\":0,\"bucket_epoch\":0,\"leader\":0,\"replicas\":[0],\"isr\":[0],\"isr_rejected\":false}\n"), "{text}");
    assert!(text.contains("  s1 (up  )    no view\n"), "{text}");
    assert!(
        text.contains("network (2 in flight)\n  {\"type\":\"nli\",\"to\":0,"),
        "{text}"
    );
    assert!(text.contains("budgets left {\"register\":0,"), "{text}");
    // No Rust debug form anywhere.
    for debug in ["Some(", "None", "ServerSet", "InlineVec", "{ "] {
        assert!(!text.contains(debug), "`{debug}` in:\n{text}");
    }
    // The Explorer's state is this text.
    let shown = format!("{:#?}", explorer::ExplorerState(after_register(&model)));
    assert_eq!(shown, text);
}

#[test]
fn the_picture_tells_origin_target_union_leader_and_isr_apart() {
    let model = tiny();
    let s = after_register(&model);
    let svg = explorer::svg(&model, &s);
    // The union [1, 0]: server 0 is the origin (the leader, in the ISR), server 1 the target
    // (not yet in the ISR).
    assert!(svg.contains("union, epochs 0/1, isr [0]"), "{svg}");
    assert!(svg.contains("b0 [0]→[1]"), "{svg}");
    assert!(
        svg.contains("fill='#9cf' stroke='#d95f02' stroke-width='3'"),
        "origin leader in the ISR: {svg}"
    );
    assert!(
        svg.contains("fill='white' stroke='#1b9e77' stroke-width='1'"),
        "target outside the ISR: {svg}"
    );
    assert!(svg.contains("<circle"), "leader dot: {svg}");
    // Before the register nothing is planned: the replica is neither origin nor target.
    let init = explorer::svg(&model, &model.init_state());
    assert!(!init.contains("union"), "{init}");
    assert!(init.contains("not in plan"), "{init}");
    // At the target after a complete move: one solid target box, no dashed one.
    let done = follow(&model, &completed_path(&model));
    let svg = explorer::svg(&model, &done);
    assert!(svg.contains("at target"), "{svg}");
    assert!(
        svg.contains("stroke='#d95f02' stroke-dasharray"),
        "origin dashed: {svg}"
    );
}

/// A shortest path to SOME-COMPLETED on `tiny`.
fn completed_path(model: &RebalanceModel) -> Vec<usize> {
    let cx = rebalance_model::check::shortest::first_discoveries(model, &["SOME-COMPLETED"]);
    cx[0].indices.clone()
}

fn free_addr() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("127.0.0.1:{}", l.local_addr().unwrap().port())
}

fn serve(model: RebalanceModel) -> String {
    let addr = free_addr();
    let serve_addr = addr.clone();
    std::thread::spawn(move || {
        use stateright::Model;
        ExplorerModel(model).checker().serve(serve_addr.as_str());
    });
    for _ in 0..100 {
        if ureq::get(&format!("http://{addr}/.status")).call().is_ok() {
            return addr;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the Explorer did not answer on {addr}");
}

fn get(addr: &str, path: &str) -> String {
    ureq::get(&format!("http://{addr}{path}"))
        .call()
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .into_string()
        .unwrap()
}

#[test]
fn check_prints_an_explorer_address_that_opens_the_counterexample() {
    let out = Command::new(env!("CARGO_BIN_EXE_rebalance-model"))
        .args([
            "check",
            "--config",
            "tiny",
            "--bug",
            "timeout-completes",
            "--threads",
            "1",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8(out.stdout).unwrap();
    // The address printed under INV-COMPLETED-AT-TARGET's counterexample.
    let line = stdout
        .lines()
        .skip_while(|l| !l.starts_with("  INV-COMPLETED-AT-TARGET "))
        .find(|l| l.trim_start().starts_with("Explorer: "))
        .unwrap_or_else(|| panic!("no Explorer address:\n{stdout}"));
    let url = line.trim_start()["Explorer: ".len()..]
        .split(' ')
        .next()
        .unwrap();
    assert!(
        line.ends_with(
            "(serve it with: rebalance-model explore --config tiny --bug timeout-completes)"
        ),
        "{line}"
    );
    let route = url
        .strip_prefix("http://127.0.0.1:3000/steps/0")
        .unwrap_or_else(|| panic!("{url}"));
    let indices: Vec<usize> = route
        .split('/')
        .skip(1)
        .map(|i| i.parse().unwrap())
        .collect();
    assert!(!indices.is_empty(), "{url}");

    // Our page at that address marks the violation on the state (the browser test renders it
    // in Chromium; here the server's answer).
    let ours = Explorer::new(
        RebalanceModel::new(
            preset("tiny").unwrap(),
            BugSet::of(&[rebalance_model::Bug::TimeoutCompletes]),
        ),
        "tiny".into(),
        1,
    );
    let page = ours.respond(false, &url["http://127.0.0.1:3000".len()..]);
    assert_eq!(page.status, 200);
    assert!(
        page.body
            .contains("data-property='INV-COMPLETED-AT-TARGET' data-mark='violated'"),
        "{}",
        page.body
    );

    // The same path, opened in Stateright's Explorer (`--ui stateright`) the way its UI does:
    // `/.states` lists the initial state, `/.states/0/i/j` the steps out of the state `i, j`
    // reaches.
    let model = RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::of(&[rebalance_model::Bug::TimeoutCompletes]),
    );
    let violating = follow(&model, &indices);
    use stateright::Model;
    let prop = model
        .properties()
        .into_iter()
        .find(|p| p.name == "INV-COMPLETED-AT-TARGET")
        .unwrap();
    assert!(
        !(prop.condition)(&model, &violating),
        "the address must reach the violation"
    );
    let addr = serve(model);
    let init: Value = serde_json::from_str(&get(&addr, "/.states")).unwrap();
    assert_eq!(init[0]["actionIndex"], 0);
    let mut prefix = "/.states/0".to_string();
    let mut last = Value::Null;
    for i in &indices {
        let steps: Value = serde_json::from_str(&get(&addr, &prefix)).unwrap();
        last = steps
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["actionIndex"] == *i)
            .unwrap_or_else(|| panic!("no action {i} at {prefix}"))
            .clone();
        assert!(
            last.get("state").is_some(),
            "action {i} at {prefix} is ignored"
        );
        prefix.push_str(&format!("/{i}"));
    }
    assert_eq!(last["state"].as_str().unwrap(), state_text(&violating));
    assert!(last["svg"].as_str().unwrap().starts_with("<svg"));
    assert!(last["action"].is_string() && last["outcome"].is_string());
}

#[test]
fn the_explorer_serves_its_page_and_states_in_spec_vocabulary() {
    let addr = serve(tiny());
    let page = get(&addr, "/");
    assert!(
        page.contains("<html") || page.contains("<!DOCTYPE"),
        "{page}"
    );
    assert!(get(&addr, "/app.js").contains("steps"));
    let status: Value = serde_json::from_str(&get(&addr, "/.status")).unwrap();
    let names: Vec<&str> = status["properties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p[1].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"INV-SLOT") && names.contains(&"SOME-COMPLETED"),
        "{names:?}"
    );
    let steps: Value = serde_json::from_str(&get(&addr, "/.states/0")).unwrap();
    let register = steps
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["action"] == "client: Register")
        .expect("a register step");
    assert_eq!(
        register["state"].as_str().unwrap(),
        state_text(&after_register(&tiny()))
    );
}

/// The picture marks what the last step changed: the register changes bucket 0 (its stored
/// assignment, status and attempt), and a state drawn against itself marks nothing.
#[test]
fn the_picture_marks_what_the_last_step_changed() {
    let model = tiny();
    let init = model.init_state();
    let s = after_register(&model);
    let step = explorer::svg_step(&model, Some(&init), &s);
    assert!(step.contains("class='changed'"), "{step}");
    assert!(step.contains(">changed</text>"), "{step}");
    let same = explorer::svg_step(&model, Some(&s), &s);
    assert!(!same.contains("class='changed'"), "{same}");
    assert_eq!(
        explorer::svg(&model, &s),
        explorer::svg_step(&model, None, &s)
    );
}

/// Our pages: a bad address says what is wrong; the check started from the page gives
/// `check`'s verdicts, and its counterexample link is the path `check` prints.
#[test]
fn the_pages_refuse_bad_addresses_and_show_the_checks_own_verdicts() {
    let model = RebalanceModel::new(
        preset("tiny").unwrap(),
        BugSet::of(&[rebalance_model::Bug::TimeoutCompletes]),
    );
    let ex = Explorer::new(model.clone(), "tiny".into(), 1);
    for (url, status, says) in [
        ("/steps/0/999", 404, "step 1: the state has"),
        ("/steps/1", 400, "one initial state"),
        ("/steps/0/x", 400, "not an action index"),
        ("/nowhere", 404, "no page at /nowhere"),
    ] {
        let r = ex.respond(false, url);
        assert_eq!(r.status, status, "{url}");
        assert!(r.body.contains(says), "{url}: {}", r.body);
    }
    assert!(ex.respond(false, "/").body.contains("location.hash"));
    assert!(ex.respond(false, "/check").body.contains("Check not run"));
    let started = ex.respond(true, "/check");
    assert_eq!(
        (started.status, started.location.as_deref()),
        (303, Some("/check"))
    );
    let mut page = String::new();
    for _ in 0..600 {
        page = ex.respond(false, "/check").body;
        if page.contains("Check done") {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(page.contains("Check done"), "{page}");
    let cx =
        rebalance_model::check::shortest::first_discoveries(&model, &["INV-COMPLETED-AT-TARGET"]);
    let link = format!(
        "VIOLATED: <a href='{}'>",
        rebalance_model::view::explorer::route(&cx[0].indices)
    );
    assert!(page.contains(&link), "{link} not in {page}");
    // On the counterexample's own page, the check's column says it is this path.
    let here = ex.respond(
        false,
        &rebalance_model::view::explorer::route(&cx[0].indices),
    );
    assert!(
        here.body
            .contains("this path is its shortest counterexample"),
        "{}",
        here.body
    );
}
