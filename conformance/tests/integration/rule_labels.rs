//! Rules as coordinates, both ways: every rule label cited in the model's and the manager's
//! code, in a trace or a suite, and by the model's `Rule` is one `spec/protocol.md` defines
//! (section 5, "Labels"), and every label the spec defines is a variant of `Rule` (so a suite
//! can target it) and is cited somewhere in the model's code and somewhere in the manager's. A
//! rule renamed, renumbered or split in the spec then fails here until the code and the traces
//! follow, and a case the spec numbers cannot be implemented without saying where.

use crate::common;
use std::collections::BTreeSet;
use std::path::Path;

use rebalance_model::Rule;

/// The rule labels in `text`: `R` and a number, with an optional `.case` and a letter (`R14.1b`).
fn labels(text: &str) -> Vec<String> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    for i in 0..b.len() {
        let starts = b[i] == b'R'
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit);
        if !starts {
            continue;
        }
        let mut j = i + 1;
        while b.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if b.get(j) == Some(&b'.') && b.get(j + 1).is_some_and(u8::is_ascii_digit) {
            j += 1;
            while b.get(j).is_some_and(u8::is_ascii_digit) {
                j += 1;
            }
            if b.get(j).is_some_and(u8::is_ascii_lowercase)
                && !b.get(j + 1).is_some_and(u8::is_ascii_alphanumeric)
            {
                j += 1;
            }
        }
        if b.get(j).is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue; // part of a longer word
        }
        out.push(text[i..j].to_string());
    }
    out
}

/// The labels spec section 5 defines: every rule's heading (`**R14 Reconcile(key).**`,
/// `**R23.5 Liveness retry**`) and the cases of the "Labels" paragraph (ranges such as
/// `R4.1`-`R4.4`, and single labels).
fn spec_labels(spec: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in spec.lines() {
        if let Some(rest) = line.trim_start().strip_prefix("- **") {
            if let Some(label) = labels(rest)
                .first()
                .filter(|l| rest.starts_with(l.as_str()))
            {
                out.insert(label.clone());
            }
        }
    }
    let start = spec
        .find("**Labels.**")
        .expect("spec 5 has a Labels paragraph");
    let paragraph = &spec[start..start + spec[start..].find("\n\n").unwrap_or(spec.len() - start)];
    let cited = labels(paragraph);
    // `R4.1`-`R4.4`: every case from the first to the last.
    for (i, _) in paragraph.match_indices("`-`") {
        let (before, after) = (labels(&paragraph[..i]), labels(&paragraph[i + 3..]));
        let (Some(first), Some(last)) = (before.last(), after.first()) else {
            continue;
        };
        let (rule, from) = first.split_once('.').expect("a range of cases");
        let (_, to) = last.split_once('.').expect("a range of cases");
        for k in from.parse::<u32>().unwrap()..=to.parse().unwrap() {
            out.insert(format!("{rule}.{k}"));
        }
    }
    out.extend(cited.into_iter().filter(|l| l.contains('.')));
    out
}

/// The labels cited in the Rust files under `dirs`: in comments (`// R14.2`), and as the model's
/// `Rule` variants (`Rule::R7_3` cites R7.3).
fn code_labels(root: &Path, dirs: &[&str]) -> BTreeSet<String> {
    let mut paths = Vec::new();
    for d in dirs {
        common::files_with_ext(&root.join(d), "rs", &mut paths);
    }
    let mut out = BTreeSet::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap();
        for line in text.lines() {
            if let Some(i) = line.find("//") {
                out.extend(labels(&line[i..]));
            }
            for (i, _) in line.match_indices("Rule::R") {
                let variant = line[i + 6..].replace('_', ".");
                out.extend(labels(&variant).into_iter().take(1));
            }
        }
    }
    out
}

/// The labels that traces and suites name as rules: JSON strings that are exactly a label.
fn trace_labels(root: &Path) -> BTreeSet<String> {
    let mut paths = Vec::new();
    for d in ["conformance/traces", "conformance/suite", "model/traces"] {
        common::files_with_ext(&root.join(d), "json", &mut paths);
    }
    assert!(!paths.is_empty(), "no traces found");
    let mut out = BTreeSet::new();
    for p in paths {
        let text = std::fs::read_to_string(&p).unwrap();
        for piece in text.split('"') {
            if labels(piece).first().is_some_and(|l| l == piece) {
                out.insert(piece.to_string());
            }
        }
    }
    out
}

fn missing(what: &str, cited: &BTreeSet<String>, defined: &BTreeSet<String>) -> Vec<String> {
    cited
        .difference(defined)
        .map(|l| format!("{l}: {what}"))
        .collect()
}

#[test]
fn every_rule_label_is_the_specs_and_every_spec_label_is_implemented() {
    let root = common::repo_root();
    let spec = spec_labels(&std::fs::read_to_string(root.join("spec/protocol.md")).unwrap());
    assert!(
        spec.len() > 30,
        "only {} spec labels found: {spec:?}",
        spec.len()
    );
    let model = code_labels(&root, &["model/src"]);
    let manager = code_labels(&root, &["impl/src"]);
    let traces = trace_labels(&root);
    let rule: BTreeSet<String> = Rule::ALL.iter().map(|r| r.label().to_string()).collect();

    let mut problems = Vec::new();
    problems.extend(missing(
        "cited in model/src, not defined by the spec",
        &model,
        &spec,
    ));
    problems.extend(missing(
        "cited in impl/src, not defined by the spec",
        &manager,
        &spec,
    ));
    problems.extend(missing(
        "in a trace or suite, not a label of Rule",
        &traces,
        &rule,
    ));
    problems.extend(missing(
        "a label of Rule, not defined by the spec",
        &rule,
        &spec,
    ));
    problems.extend(missing(
        "defined by the spec, not a label of Rule (no suite could target it)",
        &spec,
        &rule,
    ));
    problems.extend(missing(
        "defined by the spec, cited nowhere in model/src",
        &spec,
        &model,
    ));
    problems.extend(missing(
        "defined by the spec, cited nowhere in impl/src",
        &spec,
        &manager,
    ));
    assert!(problems.is_empty(), "rule labels:\n{}", problems.join("\n"));
}

#[test]
fn labels_are_read_as_the_spec_writes_them() {
    assert_eq!(
        labels("R14.1b, R7.2's write; R23 (R23.5) not R1x nor XR2 nor R3.4.5"),
        ["R14.1b", "R7.2", "R23", "R23.5", "R3.4"]
    );
    let spec = "- **R4 execute(b).** x\n- **R23.5 Liveness** y\n\n**Labels.** cases \
                (`R4.1`-`R4.3`, `R7.1`-`R7.2`), and `R14.1b`.\n\nlater R99.9";
    let want: BTreeSet<String> = [
        "R4", "R23.5", "R4.1", "R4.2", "R4.3", "R7.1", "R7.2", "R14.1b",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(spec_labels(spec), want);
}
