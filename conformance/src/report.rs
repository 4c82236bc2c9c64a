//! Divergence reports a person can act on: the step, the action, both views side by side, the
//! trace on disk and the command that replays it.

use std::path::{Path, PathBuf};

use rebalance_model::view::describe;
use rebalance_model::{Action, Bug, BugSet, Config, Trace};

use crate::diff;
use crate::exhaustive::Divergence;
use crate::harness::Mismatch;

/// Writes the diverging trace (steps up to and including the diverging one) and renders the
/// report. `step` is 1-based; 0 means the initial state already differed.
pub fn divergence(
    config: &Config,
    bugs: &[Bug],
    steps: &[Action],
    step: usize,
    mismatch: &Mismatch,
    trace_path: &Path,
) -> String {
    let trace = Trace::new(
        config.clone(),
        BugSet::of(bugs),
        steps[..step.min(steps.len())].to_vec(),
    );
    let written = match trace.write(trace_path) {
        Ok(()) => format!("trace written to {}", trace_path.display()),
        Err(e) => format!("could not write the trace to {}: {e}", trace_path.display()),
    };
    let mut out = String::new();
    if step == 0 {
        out.push_str("DIVERGENCE in the initial state\n");
    } else {
        out.push_str(&format!(
            "DIVERGENCE at step {step}: {}\n",
            describe::action(&steps[step - 1])
        ));
    }
    out.push_str(&format!("  {}\n\n", mismatch.summary));
    if step > 0 {
        out.push_str("steps:\n");
        let from = step.saturating_sub(8);
        if from > 0 {
            out.push_str("  ...\n");
        }
        for (i, a) in steps.iter().enumerate().take(step).skip(from) {
            out.push_str(&format!("  {:>3}. {}\n", i + 1, describe::action(a)));
        }
        out.push('\n');
    }
    out.push_str(&diff::render(&diff::side_by_side(
        &mismatch.model,
        &mismatch.manager,
    )));
    out.push_str(&format!(
        "\n{written}\nreplay with: cargo run --release -p rebalance-conformance -- replay {}\n",
        trace_path.display()
    ));
    out
}

/// Where a divergence trace goes: `dir/divergence-<label>.json`.
pub fn trace_path(dir: &Path, label: &str) -> PathBuf {
    let safe: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    dir.join(format!("divergence-{safe}.json"))
}

/// [`divergence`] for a walk's divergence, whose last step is the diverging one.
pub fn walk_divergence(config: &Config, bugs: &[Bug], d: &Divergence, trace_path: &Path) -> String {
    divergence(
        config,
        bugs,
        &d.steps,
        d.steps.len(),
        &d.mismatch,
        trace_path,
    )
}
