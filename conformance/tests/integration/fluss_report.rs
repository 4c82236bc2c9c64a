//! `docs/fluss-report.md` is checkable from itself: every trace it cites exists and replays, in
//! the model with the switches the trace names, and the spec's own traces (`conformance/traces/`)
//! with model and manager agreeing at every step.

use std::path::Path;

use rebalance_conformance::replay::replay;
use rebalance_model::Trace;

/// The `.json` trace paths the report names, in order.
fn cited() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let text = std::fs::read_to_string(root.join("docs/fluss-report.md")).expect("the report");
    let mut out = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || c == '`' || c == '(' || c == ')') {
        let word = word.trim_end_matches([',', '.', ';', ':']);
        if (word.starts_with("model/traces/") || word.starts_with("conformance/traces/"))
            && word.ends_with(".json")
            && !out.iter().any(|w| w == word)
        {
            out.push(word.to_string());
        }
    }
    out
}

#[test]
fn every_trace_the_fluss_report_cites_replays() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let traces = cited();
    assert!(traces.len() >= 9, "the report cites only {traces:?}");
    for name in &traces {
        let trace = Trace::read(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        let run = trace
            .replay()
            .unwrap_or_else(|e| panic!("{name}: not every step enabled: {e:?}"));
        assert_eq!(run.states.len(), trace.steps.len() + 1, "{name}");
        if name.starts_with("conformance/traces/") {
            let agreed = replay(&trace).unwrap_or_else(|d| panic!("{name}: diverges: {d:?}"));
            assert_eq!(agreed.steps, trace.steps.len(), "{name}");
        }
    }
}
