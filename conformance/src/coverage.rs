//! How often each model action kind and each spec rule was exercised against the manager.

use std::collections::BTreeMap;
use std::fmt::Write;

use rebalance_model::{Action, ActionKind, Rule, StepOutput};

/// Every action kind the model has, with and without an injected store fault where the action
/// can carry one, from the model's [`ActionKind`] table. Coverage of a set of presets must reach
/// all of them.
pub fn action_kinds() -> Vec<String> {
    let mut kinds = Vec::new();
    for k in ActionKind::ALL {
        kinds.push(k.name().to_string());
        if k.can_fail_store() {
            kinds.push(format!("{}+store_fault", k.name()));
        }
    }
    kinds
}

/// Every rule of `spec/protocol.md` section 5 (`R1`..`R24`), from the model's [`Rule`] table;
/// the conformance runs of the CI presets must exercise each at least once.
pub fn rules() -> Vec<&'static str> {
    Rule::numbers()
}

/// The kind of an action, as listed in [`action_kinds`].
pub fn kind(action: &Action) -> String {
    let base = action.kind().name();
    if action.fail_store_op().is_some() {
        format!("{base}+store_fault")
    } else {
        base.to_string()
    }
}

/// The rule a fired-rule label belongs to: `R7.4` counts for `R7`.
pub fn rule_of(label: &str) -> &str {
    label.split('.').next().unwrap_or(label)
}

/// Counters per action kind and per rule label.
#[derive(Clone, Debug, Default)]
pub struct Coverage {
    pub actions: BTreeMap<String, u64>,
    pub rules: BTreeMap<String, u64>,
}

impl Coverage {
    /// Counts one checked step. R8 (a store failure inside a step) has no rule label of its
    /// own in the model's output; it is exercised exactly when a store operation failed.
    pub fn record(&mut self, action: &Action, out: &StepOutput) {
        *self.actions.entry(kind(action)).or_default() += 1;
        for r in out.rules.iter() {
            *self.rules.entry(r.label().to_string()).or_default() += 1;
        }
        if out.store_failed {
            *self.rules.entry(Rule::R8.label().to_string()).or_default() += 1;
        }
    }

    pub fn merge(&mut self, other: &Coverage) {
        for (k, v) in &other.actions {
            *self.actions.entry(k.clone()).or_default() += v;
        }
        for (k, v) in &other.rules {
            *self.rules.entry(k.clone()).or_default() += v;
        }
    }

    /// Action kinds of [`action_kinds`] never exercised.
    pub fn missing_actions(&self) -> Vec<String> {
        action_kinds()
            .into_iter()
            .filter(|k| !self.actions.contains_key(k))
            .collect()
    }

    /// Rules of [`rules`] never exercised (any sub-rule counts).
    pub fn missing_rules(&self) -> Vec<&'static str> {
        rules()
            .into_iter()
            .filter(|r| !self.rules.keys().any(|l| rule_of(l) == *r))
            .collect()
    }

    pub fn render(&self) -> String {
        let mut out = String::from("action kinds exercised:\n");
        for k in action_kinds() {
            let count = self.actions.get(&k).copied().unwrap_or(0);
            let _ = writeln!(out, "  {k:<36} {count}");
        }
        out.push_str("rules exercised:\n");
        for (k, v) in &self.rules {
            let _ = writeln!(out, "  {k:<8} {v}");
        }
        out
    }
}
