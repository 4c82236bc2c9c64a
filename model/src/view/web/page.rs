//! The Explorer's pages, rendered on the server: a path reads like a model checker's error
//! trace (the steps from the initial state, each a link), then what every property says of the
//! state reached, what the last step did, the state's text with the lines it changed marked,
//! the picture, and the actions enabled next. The page needs no script: a link is an address,
//! and the address is what `check` prints.

use super::diff;
use super::path::{self, Kind, Mark, PropertyMark, Walked};
use super::verdicts::Status;
use crate::check::checker::Verdict;
use crate::step::model::RebalanceModel;
use crate::view::describe;
use crate::view::explorer::{self, route};
use std::fmt::Write;

/// Text made safe inside HTML elements and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The document's head; `refresh` reloads the page every two seconds (the check's page while
/// the check runs).
fn head(title: &str, refresh: bool, out: &mut String) {
    let _ = write!(
        out,
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>{}\
         <title>{}</title><link rel='stylesheet' href='/explorer.css'></head><body>",
        if refresh {
            "<meta http-equiv='refresh' content='2'>"
        } else {
            ""
        },
        escape(title)
    );
}

fn banner(title: &str, out: &mut String) {
    let _ = write!(
        out,
        "<header><a href='/steps/0'>rebalance-model Explorer</a> <span class='model'>{}</span> \
         <a class='verdicts' href='/check'>check verdicts</a></header>",
        escape(title)
    );
}

/// The global verdicts in one line: the check's, if it ran.
fn global(status: &Status, out: &mut String) {
    out.push_str("<section id='global'>");
    match status {
        Status::NotRun => out.push_str(
            "Check not run. <form method='post' action='/check'><button>Run the check</button>\
             </form> (the same check as <code>rebalance-model check</code>; the marks below \
             are this state's, whatever the check finds)",
        ),
        Status::Running { since } => {
            let _ = write!(
                out,
                "Check running ({:.0} s); <a href='/check'>its page</a> refreshes until done.",
                since.elapsed().as_secs_f64()
            );
        }
        Status::Done(r) => {
            let violated = r.violations();
            let missing: Vec<&str> = r
                .verdicts
                .iter()
                .filter(|(_, v)| matches!(v, Verdict::NoExample))
                .map(|(n, _)| *n)
                .collect();
            let _ = write!(out, "Check done: {} unique states. ", r.unique_states);
            if violated.is_empty() && missing.is_empty() {
                out.push_str("<span class='ok'>Every property holds; every applicable companion has an example.</span>");
            }
            if !violated.is_empty() {
                let _ = write!(
                    out,
                    "<span class='bad'>Violated: {}.</span> ",
                    escape(&violated.join(", "))
                );
            }
            if !missing.is_empty() {
                let _ = write!(
                    out,
                    "<span class='bad'>No example: {}.</span> ",
                    escape(&missing.join(", "))
                );
            }
            out.push_str("<a href='/check'>Every verdict</a>");
        }
    }
    out.push_str("</section>");
}

/// What the finished check says of one property, with the counterexample's link; on a path's
/// page (`here`), whether that counterexample is this path.
fn check_cell(status: &Status, name: &str, here: Option<&[usize]>) -> String {
    let Status::Done(r) = status else {
        return String::new();
    };
    let Some((_, v)) = r.verdicts.iter().find(|(n, _)| *n == name) else {
        return String::new();
    };
    match v {
        Verdict::Holds => "holds".into(),
        Verdict::Violated(Some(cx)) if here == Some(cx.indices.as_slice()) => format!(
            "VIOLATED: this path is its shortest counterexample ({} steps)",
            cx.indices.len()
        ),
        Verdict::Violated(Some(cx)) => format!(
            "VIOLATED: <a href='{}'>shortest counterexample, {} steps</a>",
            route(&cx.indices),
            cx.indices.len()
        ),
        Verdict::Violated(None) => "VIOLATED".into(),
        Verdict::ExampleFound(n) => format!("example found ({n} steps)"),
        Verdict::NoExample => "NO EXAMPLE".into(),
        Verdict::NotApplicable(why) => format!("n/a ({})", escape(why)),
    }
}

fn mark_text(m: &PropertyMark) -> String {
    match (&m.mark, m.kind) {
        (Mark::Holds, Kind::Liveness) => "holds here (checked at fair end states)".into(),
        (Mark::Holds, _) => "holds here".into(),
        (Mark::Violated { first }, Kind::Liveness) => format!(
            "VIOLATED here: a fair end state where the goal does not hold (first at step {first})"
        ),
        (Mark::Violated { first }, _) => format!("VIOLATED here (first at step {first})"),
        (Mark::ExampleHere, _) => "example: this state".into(),
        (Mark::ExampleEarlier { at }, _) => format!("example earlier on this path, at step {at}"),
        (Mark::NoExampleOnPath, _) => "no example on this path".into(),
        (Mark::NotApplicable(why), _) => format!("n/a here: {}", escape(why)),
    }
}

/// What is violated here, above everything else on the page: each violated property with
/// where it first failed on the path and the check's word on it.
fn summary(marks: &[PropertyMark], status: &Status, indices: &[usize], out: &mut String) {
    let violated: Vec<&PropertyMark> = marks
        .iter()
        .filter(|m| matches!(m.mark, Mark::Violated { .. }))
        .collect();
    out.push_str("<section id='summary'>");
    if violated.is_empty() {
        out.push_str("<p class='ok'>No invariant or liveness goal is violated here.</p>");
    } else {
        let names: Vec<&str> = violated.iter().map(|m| m.name).collect();
        let _ = write!(
            out,
            "<p class='bad'>This state violates {}.</p><ul>",
            escape(&names.join(", "))
        );
        for m in violated {
            let check = check_cell(status, m.name, Some(indices));
            let _ = write!(
                out,
                "<li class='violated' data-property='{}'>{} ({}): {}{}</li>",
                m.name,
                m.name,
                m.kind.word(),
                mark_text(m),
                if check.is_empty() {
                    String::new()
                } else {
                    format!("; check: {check}")
                }
            );
        }
        out.push_str("</ul>");
    }
    out.push_str("</section>");
}

/// Every property's mark on this state, violated ones first, each row carrying its mark as
/// `data-mark`; the check's verdict beside it once the check has run.
fn properties(marks: &[PropertyMark], status: &Status, indices: &[usize], out: &mut String) {
    let done = matches!(status, Status::Done(_));
    out.push_str(
        "<section id='properties'><h2>Every property at this state</h2><table><thead><tr>\
         <th>property</th><th>kind</th><th>at this state</th>",
    );
    if done {
        out.push_str("<th>check</th>");
    }
    out.push_str("</tr></thead><tbody>");
    let violated = |m: &&PropertyMark| matches!(m.mark, Mark::Violated { .. });
    let order = marks
        .iter()
        .filter(violated)
        .chain(marks.iter().filter(|m| !violated(m)));
    for m in order {
        let _ = write!(
            out,
            "<tr class='property {token}' data-property='{name}' data-mark='{token}'>\
             <td>{name}</td><td>{kind}</td><td>{text}</td>",
            token = m.mark.token(),
            name = m.name,
            kind = m.kind.word(),
            text = mark_text(m),
        );
        if done {
            let _ = write!(
                out,
                "<td>{}</td>",
                check_cell(status, m.name, Some(indices))
            );
        }
        out.push_str("</tr>");
    }
    out.push_str("</tbody></table></section>");
}

/// The steps from the initial state to this one, as a numbered list of links.
fn trace(model: &RebalanceModel, w: &Walked, out: &mut String) {
    out.push_str("<nav id='trace'><h2>Path</h2><ol start='0'>");
    let here = w.actions.len();
    let _ = write!(
        out,
        "<li{}><a href='/steps/0'>initial state</a></li>",
        if here == 0 { " class='here'" } else { "" }
    );
    for (i, a) in w.actions.iter().enumerate() {
        let _ = write!(
            out,
            "<li{}><a href='{}' title='{}'>{}</a></li>",
            if i + 1 == here { " class='here'" } else { "" },
            route(&w.indices[..=i]),
            escape(&describe::step(model, &w.states[i], a).unwrap_or_default()),
            escape(&describe::short_action(a))
        );
    }
    out.push_str("</ol></nav>");
}

/// The state's text, each line the last step changed in a `<mark>`.
fn state_text(w: &Walked, out: &mut String) {
    let now = explorer::state_text(w.last());
    let before = w.previous().map(explorer::state_text);
    let new_lines: Vec<&str> = now.lines().collect();
    let (changed, removed) = match &before {
        Some(b) => {
            let old: Vec<&str> = b.lines().collect();
            (
                diff::changed_lines(&old, &new_lines),
                diff::removed_lines(&old, &new_lines),
            )
        }
        None => (vec![false; new_lines.len()], 0),
    };
    let count = changed.iter().filter(|c| **c).count();
    out.push_str("<section id='state'><h2>State</h2>");
    if before.is_some() {
        let _ = write!(
            out,
            "<p class='note'>Marked: the {count} lines the last step changed or added \
             ({removed} removed).</p>"
        );
    }
    out.push_str("<pre>");
    for (line, changed) in new_lines.iter().zip(&changed) {
        if *changed {
            let _ = writeln!(out, "<mark class='changed'>{}</mark>", escape(line));
        } else {
            let _ = writeln!(out, "{}", escape(line));
        }
    }
    out.push_str("</pre></section>");
}

/// The actions of this state: a link for each enabled one, with what it would do.
fn next(model: &RebalanceModel, w: &Walked, out: &mut String) {
    let s = w.last();
    let mut actions = Vec::new();
    model.candidate_actions(s, &mut actions);
    let enabled = actions
        .iter()
        .filter(|a| model.step(s, a).is_some())
        .count();
    let _ = write!(
        out,
        "<section id='next'><h2>Next ({enabled} enabled of {} actions)</h2><ul>",
        actions.len()
    );
    for (i, a) in actions.iter().enumerate() {
        let label = escape(&describe::short_action(a));
        match model.step(s, a) {
            Some((t, _)) => {
                let mut indices = w.indices.clone();
                indices.push(i);
                let beyond = if model.within_bound(&t) {
                    ""
                } else {
                    " <span class='note'>(beyond max_network: the check does not follow it)</span>"
                };
                let _ = write!(
                    out,
                    "<li><a href='{}'>{label}</a>{beyond}<br><span class='outcome'>{}</span></li>",
                    route(&indices),
                    escape(&describe::step(model, s, a).unwrap_or_default())
                );
            }
            None => {
                let _ = write!(out, "<li class='disabled'>{label} (not enabled)</li>");
            }
        }
    }
    out.push_str("</ul></section>");
}

/// The page of one path.
pub fn path_page(model: &RebalanceModel, title: &str, w: &Walked, status: &Status) -> String {
    let mut out = String::new();
    let n = w.actions.len();
    head(&format!("step {n} - {title}"), false, &mut out);
    banner(title, &mut out);
    global(status, &mut out);
    out.push_str("<main><div class='left'>");
    trace(model, w, &mut out);
    next(model, w, &mut out);
    out.push_str("</div><div class='right'>");
    let marks = path::marks(model, w);
    summary(&marks, status, &w.indices, &mut out);
    if let (Some(prev), Some(a)) = (w.previous(), w.actions.last()) {
        let _ = write!(
            out,
            "<section id='step'><h2>Step {n}</h2><p>{}</p></section>",
            escape(&describe::step(model, prev, a).unwrap_or_default())
        );
    }
    if model.is_fair_end(w.last()) {
        out.push_str(
            "<p class='note' id='fair-end'>A fair end state: no obligatory action is enabled \
             (the LIVE-* goals are judged here).</p>",
        );
    }
    out.push_str("<section id='picture'>");
    out.push_str(&explorer::svg_step(model, w.previous(), w.last()));
    out.push_str("</section>");
    state_text(w, &mut out);
    properties(&marks, status, &w.indices, &mut out);
    out.push_str("</div></main></body></html>");
    out
}

/// The page of the check's verdicts, refreshing itself while the check runs.
pub fn check_page(title: &str, status: &Status) -> String {
    let mut out = String::new();
    let running = matches!(status, Status::Running { .. });
    head(&format!("check - {title}"), running, &mut out);
    banner(title, &mut out);
    global(status, &mut out);
    if let Status::Done(r) = status {
        let _ = write!(
            out,
            "<section id='verdicts'><p>{} unique states, {} total, depth {}, {:.2} s; LIVE-* \
             judged at {} fair end states.</p><table><thead><tr><th>property</th>\
             <th>verdict</th></tr></thead><tbody>",
            r.unique_states, r.total_states, r.max_depth, r.seconds, r.fair_end_states
        );
        for (name, _) in &r.verdicts {
            let _ = write!(
                out,
                "<tr data-property='{name}'><td>{name}</td><td>{}</td></tr>",
                check_cell(status, name, None)
            );
        }
        out.push_str("</tbody></table></section>");
    }
    out.push_str("</body></html>");
    out
}

/// A page saying what was wrong with a request.
pub fn error_page(title: &str, message: &str) -> String {
    let mut out = String::new();
    head(&format!("error - {title}"), false, &mut out);
    banner(title, &mut out);
    let _ = write!(
        out,
        "<section id='error'><p class='bad'>{}</p><p><a href='/steps/0'>the initial state</a></p>\
         </section></body></html>",
        escape(message)
    );
    out
}
