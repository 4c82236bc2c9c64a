//! JSON traces (documented in `spec/trace-format.md`): a configuration, the bug switches and the
//! steps. Version 1 lists explicit actions; version 2 adds steps by pattern, counted ticks and
//! `expect` blocks. Loading resolves every step against the model, so a loaded [`Trace`] holds
//! explicit actions only, with its expectations beside them.
//!
//! Beside the trace itself: [`pattern`] (steps named by pattern, resolved against the model),
//! [`expect`] (a step's `expect` block, checked on the model or on another implementation
//! through [`expect::Observation`]) and [`suite`] (conformance suites generated from a preset).

pub mod expect;
pub mod pattern;
pub mod suite;

use crate::config::presets;
use crate::config::{Config, ConfigError, PlanTarget};
use crate::state::message::Message;
use crate::state::SystemState;
use crate::step::action::{Action, ActionKind, StepOutput};
use crate::step::model::RebalanceModel;
use crate::verdict::bug::{Bug, BugSet};
use crate::view::render;
use expect::{ExpectFailure, Expectation, Observation};
use pattern::{Limits, Shape, ShapeError};
use serde_json::{Map, Value};
use std::fmt;
use std::path::Path;

/// The newest format version; [`Trace::to_json`] writes it.
pub const VERSION: u32 = 2;
/// The most ticks one `{"kind": "tick", "count": n}` step may take.
pub const MAX_TICK_COUNT: u64 = 10_000;

/// A loaded trace: explicit actions and the expectations checked along them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trace {
    /// 1 or 2.
    pub version: u32,
    pub config: Config,
    pub bugs: Vec<Bug>,
    pub steps: Vec<Action>,
    /// In trace order; each covers a range of `steps` (see [`Expectation`]).
    pub expectations: Vec<Expectation>,
    /// Version 2, a lasso (spec/trace-format.md, "Lassos"): the steps from this index on are
    /// a cycle, back to the state the first `cycle_start` steps reach.
    pub cycle_start: Option<usize>,
}

/// Why a trace could not be read or replayed. Every variant but `Io` names where in the trace
/// the problem is.
#[derive(Debug, Clone, PartialEq)]
pub enum TraceError {
    /// The file could not be read or written.
    Io(String),
    /// A field is missing, unknown or malformed, or the text is not JSON. `path` is the field's
    /// path in the trace (`steps[2].msg.to`; empty for the whole text).
    Invalid { path: String, message: String },
    /// `version` is neither 1 nor 2.
    Version(u64),
    /// Action `index` (0-based, of the resolved actions) is not enabled in the state the steps
    /// before it reach. `at` says where it is in the file (`step 3`, `step 3 (tick 2 of 5)`);
    /// `enabled` lists every action that is, `exhausted` the budgets it needs that are used up.
    NotEnabled {
        index: usize,
        at: String,
        action: Action,
        enabled: Vec<Action>,
        exhausted: Vec<&'static str>,
        /// Why, where the model can say more than the budgets: a tick that would change
        /// nothing, a store failure beyond the step's operations.
        why: Option<Box<str>>,
    },
    /// An expectation failed, and a later step then could not be resolved or taken: the
    /// expectation is the first failure (`failure`, rendered), the step's error comes after.
    ExpectationFailed {
        failure: String,
        then: Box<TraceError>,
    },
    /// A step's pattern matches no candidate (`matching` empty) or several. `candidates` are
    /// every action of the step's kind the pattern was tried on.
    Unresolved {
        path: String,
        pattern: Value,
        candidates: Vec<Action>,
        matching: Vec<Action>,
    },
}

impl TraceError {
    fn invalid(path: impl Into<String>, message: impl Into<String>) -> TraceError {
        TraceError::Invalid {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl From<ShapeError> for TraceError {
    fn from(e: ShapeError) -> TraceError {
        TraceError::invalid(e.path, e.message)
    }
}

fn list(f: &mut fmt::Formatter<'_>, actions: &[Action]) -> fmt::Result {
    for a in actions {
        write!(f, "\n    {}", render::action(a))?;
    }
    Ok(())
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceError::Io(m) => f.write_str(m),
            TraceError::Invalid { path, message } if path.is_empty() => f.write_str(message),
            TraceError::Invalid { path, message } => write!(f, "field `{path}`: {message}"),
            TraceError::Version(v) => {
                write!(
                    f,
                    "field `version`: unsupported trace version {v} (expected 1 or 2)"
                )
            }
            TraceError::ExpectationFailed { failure, then } => {
                write!(f, "{failure}after it, {then}")
            }
            TraceError::NotEnabled {
                at,
                action,
                enabled,
                exhausted,
                why,
                ..
            } => {
                write!(
                    f,
                    "{at} is not enabled: {}\n  the step: {}",
                    crate::view::describe::action(action),
                    render::action(action)
                )?;
                for b in exhausted {
                    write!(f, "\n  budget `{b}` is exhausted")?;
                }
                if let Some(why) = why {
                    write!(f, "\n  {why}")?;
                }
                if enabled.is_empty() {
                    write!(f, "\n  no action is enabled")
                } else {
                    write!(f, "\n  enabled actions (paste one as the step):")?;
                    list(f, enabled)
                }
            }
            TraceError::Unresolved {
                path,
                pattern,
                candidates,
                matching,
            } => {
                if matching.is_empty() {
                    write!(f, "field `{path}`: the pattern {pattern} matches nothing")?;
                    if candidates.is_empty() {
                        write!(f, "; there is no candidate of this kind")
                    } else {
                        write!(f, "; candidates (paste one as the step):")?;
                        list(f, candidates)
                    }
                } else {
                    write!(
                        f,
                        "field `{path}`: the pattern {pattern} is ambiguous: it matches {} \
                         (paste one as the step, or add fields to the pattern):",
                        matching.len()
                    )?;
                    list(f, matching)
                }
            }
        }
    }
}

impl std::error::Error for TraceError {}

/// The states and outputs of a replayed trace: `states[0]` is the initial state,
/// `states[i + 1]` the state after step `i`.
pub struct Replay {
    pub states: Vec<SystemState>,
    pub outputs: Vec<StepOutput>,
}

/// The budgets `action` draws on that `state` has used up.
pub fn exhausted_budgets(state: &SystemState, action: &Action) -> Vec<&'static str> {
    let b = &state.budgets;
    let mut needed: Vec<(&'static str, u8)> = match action {
        Action::Register { .. } => vec![("register", b.register)],
        Action::Cancel { .. } => vec![("cancel", b.cancel)],
        Action::DropMessage { .. } => vec![("message_loss", b.message_loss)],
        Action::DuplicateMessage { .. } => vec![("message_duplication", b.message_duplication)],
        Action::CrashServer { .. } => vec![("server_crash", b.server_crash)],
        Action::CrashCoordinator => vec![("coordinator_crash", b.coordinator_crash)],
        Action::DeleteBucket { .. } => vec![("bucket_deletion", b.bucket_deletion)],
        Action::ZombieCancel => vec![("cancel", b.cancel), ("zombie_steps", b.zombie_steps)],
        Action::ZombieProcessEvent { .. } | Action::ZombieDeliverNliResponse { .. } => {
            vec![("zombie_steps", b.zombie_steps)]
        }
        _ => Vec::new(),
    };
    if action.fail_store_op().is_some() {
        needed.push(("store_failure", b.store_failure));
    }
    needed
        .into_iter()
        .filter(|(_, left)| *left == 0)
        .map(|(n, _)| n)
        .collect()
}

fn not_enabled(
    model: &RebalanceModel,
    state: &SystemState,
    index: usize,
    at: String,
    action: Action,
) -> TraceError {
    let mut enabled = Vec::new();
    model.enabled_actions(state, &mut enabled);
    TraceError::NotEnabled {
        index,
        at,
        action,
        enabled,
        exhausted: exhausted_budgets(state, &action),
        why: why_not(model, state, &action).map(String::into_boxed_str),
    }
}

/// What the model can say about a step that is not enabled, beyond its budgets.
fn why_not(model: &RebalanceModel, state: &SystemState, action: &Action) -> Option<String> {
    if let Some(k) = action.fail_store_op() {
        match model.step(state, &action.with_fail_store_op(None)) {
            Some((_, out)) if out.store_ops < k => {
                return Some(format!(
                    "the step makes {} store operations, so its operation {k} cannot fail",
                    out.store_ops
                ))
            }
            _ => {}
        }
    }
    if matches!(
        action,
        Action::Tick {
            fail_store_op: None
        }
    ) {
        return Some(
            "a tick here would change nothing (no timer due, no age or backoff that still \
             counts), and the model leaves such a tick out (spec 7.3); take the step that \
             comes first instead, or drop the tick"
                .into(),
        );
    }
    None
}

impl Trace {
    pub fn new(config: Config, bugs: BugSet, steps: Vec<Action>) -> Trace {
        Trace {
            version: VERSION,
            config,
            bugs: bugs.to_vec(),
            steps,
            expectations: Vec::new(),
            cycle_start: None,
        }
    }

    /// A lasso: `prefix`, then one turn of `cycle`, which must lead back to the state after
    /// `prefix` (checked when the trace is read).
    pub fn lasso(config: Config, bugs: BugSet, prefix: &[Action], cycle: &[Action]) -> Trace {
        let mut t = Trace::new(config, bugs, [prefix, cycle].concat());
        t.cycle_start = Some(prefix.len());
        t
    }

    /// Parses a version 1 or 2 trace and resolves its steps against the model.
    pub fn from_json(text: &str) -> Result<Trace, TraceError> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| TraceError::invalid("", e.to_string()))?;
        parse(&v)
    }

    pub fn read(path: impl AsRef<Path>) -> Result<Trace, TraceError> {
        let text = std::fs::read_to_string(path.as_ref())
            .map_err(|e| TraceError::Io(format!("{}: {e}", path.as_ref().display())))?;
        Trace::from_json(&text)
    }

    /// The trace with every step explicit: one line per step, an expectation on the step it
    /// follows (a counted tick stays counted where an expectation covers it), the end's at the
    /// top level.
    pub fn to_json(&self) -> String {
        let mut steps = Vec::new();
        let mut i = 0;
        while i < self.steps.len() {
            let on_step = self
                .expectations
                .iter()
                .find(|e| !e.is_end() && e.from == i && e.after > i);
            // Written by hand rather than through a JSON map, so that `kind` comes first.
            let (mut step, next) = match on_step {
                Some(e) if e.after - e.from > 1 => (
                    format!("{{\"kind\":\"tick\",\"count\":{}}}", e.after - e.from),
                    e.after,
                ),
                _ => (render::action(&self.steps[i]), i + 1),
            };
            if let Some(e) = on_step {
                step.pop();
                step.push_str(&format!(",\"expect\":{}}}", render::json(&e.expect)));
            }
            steps.push(step);
            i = next;
        }
        let config = serde_json::to_string_pretty(&self.config)
            .expect("configurations serialize")
            .replace('\n', "\n  ");
        let version = if self.expectations.is_empty() {
            self.version
        } else {
            VERSION
        };
        let mut out = format!(
            "{{\n  \"version\": {version},\n  \"config\": {config},\n  \"bugs\": {},\n  \
             \"steps\": [",
            render::json(&self.bugs)
        );
        for (n, s) in steps.iter().enumerate() {
            out.push_str(if n == 0 { "\n    " } else { ",\n    " });
            out.push_str(s);
        }
        out.push_str(if steps.is_empty() { "]" } else { "\n  ]" });
        if let Some(e) = self.expectations.iter().find(|e| e.is_end()) {
            out.push_str(&format!(",\n  \"expect\": {}", render::json(&e.expect)));
        }
        if let Some(n) = self.cycle_start {
            out.push_str(&format!(",\n  \"cycle_start\": {n}"));
        }
        out.push_str("\n}");
        out
    }

    pub fn write(&self, path: impl AsRef<Path>) -> Result<(), TraceError> {
        std::fs::write(path.as_ref(), self.to_json() + "\n")
            .map_err(|e| TraceError::Io(format!("{}: {e}", path.as_ref().display())))
    }

    pub fn model(&self) -> RebalanceModel {
        RebalanceModel::new(self.config.clone(), BugSet::of(&self.bugs))
    }

    /// Replays every step through [`RebalanceModel::step`]; reports the first step that is not
    /// enabled.
    pub fn replay(&self) -> Result<Replay, TraceError> {
        let model = self.model();
        let mut states = vec![model.init_state()];
        let mut outputs = Vec::new();
        for (index, action) in self.steps.iter().enumerate() {
            let pre = states.last().expect("init state");
            let Some((next, out)) = model.step(pre, action) else {
                return Err(not_enabled(
                    &model,
                    pre,
                    index,
                    format!("step {}", index + 1),
                    *action,
                ));
            };
            states.push(next);
            outputs.push(out);
        }
        Ok(Replay { states, outputs })
    }

    /// Every expectation that the model's replay does not meet, in trace order.
    pub fn check(&self, replay: &Replay) -> Vec<ExpectFailure> {
        self.expectations
            .iter()
            .filter_map(|e| {
                let seen = Observation::of_model(
                    &replay.states[e.after],
                    &replay.outputs[e.from..e.after],
                );
                e.check(&seen)
            })
            .collect()
    }
}

/// One step as written, validated: the action as a (possibly partial) JSON object, how many
/// times it is taken, and its expectation.
struct StepSpec {
    path: String,
    pattern: Map<String, Value>,
    count: u64,
    expect: Option<Value>,
}

const FAIL: Shape = Shape::Positive(255);

/// The message fields a `deliver_*` kind takes, or `None` for other kinds.
fn delivered(kind: &str) -> Option<&'static [(&'static str, Shape)]> {
    match kind {
        "deliver_nli" => Some(pattern::NLI),
        "deliver_nli_response" | "zombie_deliver_nli_response" => Some(pattern::NLI_RESPONSE),
        "deliver_adjust_isr" => Some(pattern::ADJUST_ISR),
        "deliver_adjust_isr_response" => Some(pattern::ADJUST_ISR_RESPONSE),
        _ => None,
    }
}

fn parse(v: &Value) -> Result<Trace, TraceError> {
    let Some(top) = v.as_object() else {
        return Err(TraceError::invalid("", "a trace is a JSON object"));
    };
    for k in top.keys() {
        if ![
            "version",
            "config",
            "bugs",
            "steps",
            "expect",
            "cycle_start",
        ]
        .contains(&k.as_str())
        {
            return Err(TraceError::invalid(
                k.as_str(),
                "unknown field; expected `version`, `config`, `bugs`, `steps`, `expect` or \
                 `cycle_start`",
            ));
        }
    }
    let version = match top.get("version") {
        None => return Err(TraceError::invalid("version", "missing (1 or 2)")),
        Some(x) => x
            .as_u64()
            .ok_or_else(|| TraceError::invalid("version", format!("expected 1 or 2, found {x}")))?,
    };
    if version != 1 && version != 2 {
        return Err(TraceError::Version(version));
    }
    let config = parse_config(top.get("config"))?;
    let bugs = parse_bugs(top.get("bugs"))?;
    let limits = Limits {
        servers: config.servers.into(),
        buckets: config.buckets.len() as u64,
    };
    let Some(raw_steps) = top.get("steps") else {
        return Err(TraceError::invalid("steps", "missing (a list of steps)"));
    };
    let Some(raw_steps) = raw_steps.as_array() else {
        return Err(TraceError::invalid("steps", "expected a list of steps"));
    };
    let specs = raw_steps
        .iter()
        .enumerate()
        .map(|(i, s)| parse_step(s, &format!("steps[{i}]"), version, &config))
        .collect::<Result<Vec<_>, _>>()?;
    let end = match top.get("expect") {
        None => None,
        Some(_) if version == 1 => {
            return Err(TraceError::invalid("expect", "needs \"version\": 2"))
        }
        Some(x) => Some(x),
    };
    // Every expectation is validated before any step is resolved.
    for s in &specs {
        if let Some(x) = &s.expect {
            Expectation::parse(x, &format!("{}.expect", s.path), 0, 0, limits)?;
        }
    }
    if let Some(x) = end {
        Expectation::parse(x, "expect", 0, 0, limits)?;
    }
    let cycle_start = match top.get("cycle_start") {
        None => None,
        Some(_) if version == 1 => {
            return Err(TraceError::invalid("cycle_start", "needs \"version\": 2"))
        }
        Some(x) => Some(x.as_u64().ok_or_else(|| {
            TraceError::invalid("cycle_start", format!("expected a step count, found {x}"))
        })? as usize),
    };
    let model = RebalanceModel::new(config.clone(), BugSet::of(&bugs));
    let mut state = model.init_state();
    let mut steps = Vec::new();
    let mut expectations = Vec::new();
    let mut last_from = 0;
    let mut cycle_from = (cycle_start == Some(0)).then(|| state.clone());
    // Each step's expectation is checked as soon as the step is taken, so that a step a failed
    // expectation made impossible reports the expectation, not only the step.
    let mut outputs = Vec::new();
    let mut failed: Option<ExpectFailure> = None;
    let first_failure = |failed: &Option<ExpectFailure>, e: TraceError| match failed {
        Some(f) => TraceError::ExpectationFailed {
            failure: f.render("model"),
            then: Box::new(e),
        },
        None => e,
    };
    for (i, spec) in specs.iter().enumerate() {
        let from = steps.len();
        last_from = from;
        for rep in 0..spec.count {
            let action = resolve(&model, &state, spec).map_err(|e| first_failure(&failed, e))?;
            let at = if spec.count > 1 {
                format!("step {} (tick {} of {})", i + 1, rep + 1, spec.count)
            } else {
                format!("step {}", i + 1)
            };
            let Some((next, out)) = model.step(&state, &action) else {
                let e = not_enabled(&model, &state, steps.len(), at, action);
                return Err(first_failure(&failed, e));
            };
            state = next;
            steps.push(action);
            outputs.push(out);
            if cycle_start == Some(steps.len()) {
                cycle_from = Some(state.clone());
            }
        }
        if let Some(x) = &spec.expect {
            let path = format!("{}.expect", spec.path);
            let e = Expectation::parse(x, &path, from, steps.len(), limits)?;
            if failed.is_none() {
                failed = e.check(&Observation::of_model(&state, &outputs[from..]));
            }
            expectations.push(e);
        }
    }
    if let Some(x) = end {
        // At the end, `sent` and `reply` are those of the last step.
        expectations.push(Expectation::parse(
            x,
            "expect",
            last_from,
            steps.len(),
            limits,
        )?);
    }
    if let Some(n) = cycle_start {
        if n >= steps.len() {
            return Err(TraceError::invalid(
                "cycle_start",
                format!("{n} leaves no step for the cycle ({} steps)", steps.len()),
            ));
        }
        if cycle_from.as_ref() != Some(&state) {
            return Err(TraceError::invalid(
                "cycle_start",
                format!("the steps after step {n} do not lead back to the state after it"),
            ));
        }
    }
    Ok(Trace {
        version: version as u32,
        config,
        bugs,
        steps,
        expectations,
        cycle_start,
    })
}

fn parse_config(v: Option<&Value>) -> Result<Config, TraceError> {
    let Some(v) = v else {
        return Err(TraceError::invalid(
            "config",
            "missing (a model configuration)",
        ));
    };
    Config::from_value(v.clone()).map_err(|e| match e {
        ConfigError::Invalid { field, message } if field.is_empty() => {
            TraceError::invalid("config", message)
        }
        ConfigError::Invalid { field, message } => {
            TraceError::invalid(format!("config.{field}"), message)
        }
        ConfigError::Parse { message, .. } => TraceError::invalid("config", message),
        // A preset's name, meant or misspelt: which presets there are.
        e @ ConfigError::NotAnObject { .. } => TraceError::invalid("config", presets::explain(&e)),
        other => TraceError::invalid("config", other.to_string()),
    })
}

fn parse_bugs(v: Option<&Value>) -> Result<Vec<Bug>, TraceError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let Some(names) = v.as_array() else {
        return Err(TraceError::invalid(
            "bugs",
            "expected a list of bug switch names",
        ));
    };
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            serde_json::from_value::<Bug>(n.clone()).map_err(|_| {
                TraceError::invalid(
                    format!("bugs[{i}]"),
                    format!(
                        "unknown bug switch {n}; expected one of {}",
                        Bug::ALL.map(|b| b.name()).join(", ")
                    ),
                )
            })
        })
        .collect()
}

/// Validates one step: its kind, its fields (by pattern or whole), `count` and `expect`.
fn parse_step(
    v: &Value,
    path: &str,
    version: u64,
    config: &Config,
) -> Result<StepSpec, TraceError> {
    let limits = Limits {
        servers: config.servers.into(),
        buckets: config.buckets.len() as u64,
    };
    let Some(obj) = v.as_object() else {
        return Err(TraceError::invalid(
            path,
            "a step is a JSON object with a `kind`",
        ));
    };
    let kind_path = format!("{path}.kind");
    let kind = match obj.get("kind") {
        None => return Err(TraceError::invalid(&kind_path, "missing")),
        Some(k) => match k
            .as_str()
            .filter(|k| ActionKind::ALL.iter().any(|a| a.name() == *k))
        {
            Some(k) => k,
            None => {
                return Err(TraceError::invalid(
                    kind_path,
                    format!(
                        "unknown step kind {k}; expected one of {}",
                        ActionKind::ALL.map(ActionKind::name).join(", ")
                    ),
                ))
            }
        },
    };
    let mut rest = obj.clone();
    rest.remove("kind");
    let v2 = |field: &str| -> Result<(), TraceError> {
        if version < 2 {
            Err(TraceError::invalid(
                format!("{path}.{field}"),
                "needs \"version\": 2",
            ))
        } else {
            Ok(())
        }
    };
    let expect = rest.remove("expect");
    if expect.is_some() {
        v2("expect")?;
    }
    let mut count = 1;
    if let Some(c) = rest.remove("count") {
        if kind != "tick" {
            return Err(TraceError::invalid(
                format!("{path}.count"),
                "only a `tick` step takes a count",
            ));
        }
        v2("count")?;
        count = pattern::validate(
            &c,
            Shape::Positive(MAX_TICK_COUNT),
            &format!("{path}.count"),
            limits,
        )?
        .as_u64()
        .expect("validated");
    }
    let mut pat = Map::new();
    pat.insert("kind".into(), Value::from(kind));
    let failable = ActionKind::ALL
        .iter()
        .any(|a| a.name() == kind && a.can_fail_store());
    if failable {
        if let Some(k) = rest.remove("fail_store_op") {
            let p = format!("{path}.fail_store_op");
            if count > 1 {
                return Err(TraceError::invalid(
                    p,
                    "a counted tick fails no store operation; give the failing tick alone",
                ));
            }
            pat.insert(
                "fail_store_op".into(),
                pattern::validate(&k, FAIL, &p, limits)?,
            );
        }
    }
    if kind == "register" {
        if let Some(plan) = rest.remove("plan") {
            v2("plan")?;
            pat.insert(
                "plan".into(),
                register_plan(&plan, &format!("{path}.plan"), config)?,
            );
        }
    }
    let is_message = matches!(kind, "drop_message" | "duplicate_message");
    if delivered(kind).is_some() || is_message {
        // The message, whole under `msg` or by pattern at the top level.
        let (msg, msg_path) = match rest.remove("msg") {
            Some(_) if !rest.is_empty() => {
                let extra = rest.keys().next().expect("non-empty");
                return Err(TraceError::invalid(
                    format!("{path}.{extra}"),
                    "give the message either under `msg` or as fields of the step, not both",
                ));
            }
            Some(m) => (m, format!("{path}.msg")),
            None => (Value::Object(std::mem::take(&mut rest)), path.to_string()),
        };
        let checked = match delivered(kind) {
            Some(fields) => pattern::object(&msg, fields, &msg_path, limits)?,
            None => pattern::validate(&msg, Shape::Message, &msg_path, limits)?,
        };
        pat.insert("msg".into(), checked);
    } else {
        let fields: &[(&str, Shape)] = match kind {
            "process_event" | "zombie_process_event" => &[("event", Shape::Object(pattern::EVENT))],
            "propose_isr" => &[("server", Shape::Server), ("bucket", Shape::Bucket)],
            "crash_server" | "restart_server" => &[("server", Shape::Server)],
            "delete_bucket" => &[("bucket", Shape::Bucket)],
            _ => &[],
        };
        // An unknown field is named with every field this kind of step takes, not only the
        // kind's own (which a register or a tick does not have).
        if let Some(k) = rest.keys().find(|k| !fields.iter().any(|(n, _)| n == k)) {
            let mut valid = vec!["kind"];
            valid.extend(fields.iter().map(|(n, _)| *n));
            if failable {
                valid.push("fail_store_op");
            }
            match kind {
                "register" => valid.push("plan"),
                "tick" => valid.push("count"),
                _ => {}
            }
            valid.push("expect");
            return Err(TraceError::invalid(
                format!("{path}.{k}"),
                format!(
                    "unknown field of a `{kind}` step; expected one of {}",
                    valid.join(", ")
                ),
            ));
        }
        if let Value::Object(m) = pattern::object(&Value::Object(rest), fields, path, limits)? {
            pat.extend(m);
        }
    }
    if version < 2 {
        if let Err(e) = serde_json::from_value::<Action>(Value::Object(pat.clone())) {
            return Err(TraceError::invalid(
                path,
                format!(
                    "{e} (a version 1 step names its action whole; patterns need \"version\": 2)"
                ),
            ));
        }
    }
    Ok(StepSpec {
        path: path.to_string(),
        pattern: pat,
        count,
        expect,
    })
}

/// A register step's plan: a list of targets as the configuration's `plan` gives them, checked
/// against the configuration (a plan R1 refuses is allowed: that is the step's point).
fn register_plan(v: &Value, path: &str, config: &Config) -> Result<Value, TraceError> {
    // Through serde_path_to_error, so that a type error names its target and field
    // (`steps[0].plan[1].bucket`), not only the plan.
    let targets: Vec<PlanTarget> = serde_path_to_error::deserialize(v.clone()).map_err(|e| {
        let inner = e.path().to_string();
        let at = if inner == "." {
            path.to_string()
        } else {
            format!(
                "{path}{}{inner}",
                if inner.starts_with('[') { "" } else { "." }
            )
        };
        TraceError::invalid(
            at,
            format!(
                "{} (a plan is a list of {{\"bucket\": b, \"target\": [servers]}})",
                e.into_inner()
            ),
        )
    })?;
    config
        .check_register_targets(path, &targets)
        .map_err(|e| match e {
            ConfigError::Invalid { field, message } => TraceError::invalid(field, message),
            other => TraceError::invalid(path, other.to_string()),
        })?;
    Ok(serde_json::to_value(&targets).expect("targets serialize"))
}

/// The one action `spec` names in `state`: the step itself when it is whole, else the one
/// candidate of its kind its pattern matches.
fn resolve(
    model: &RebalanceModel,
    state: &SystemState,
    spec: &StepSpec,
) -> Result<Action, TraceError> {
    let whole = Value::Object(spec.pattern.clone());
    if let Ok(action) = serde_json::from_value::<Action>(whole) {
        return Ok(action);
    }
    let kind = spec.pattern["kind"].as_str().expect("validated kind");
    let fail = spec
        .pattern
        .get("fail_store_op")
        .and_then(Value::as_u64)
        .map(|k| k as u8);
    let mut pat = spec.pattern.clone();
    pat.remove("fail_store_op");
    let pat = Value::Object(pat);
    let mut distinct: Vec<Message> = state.network.to_vec();
    distinct.dedup();
    let candidates: Vec<Action> = match kind {
        "deliver_nli"
        | "deliver_nli_response"
        | "deliver_adjust_isr"
        | "deliver_adjust_isr_response" => distinct.iter().map(|m| Action::deliver(*m)).collect(),
        "drop_message" => distinct
            .iter()
            .map(|m| Action::DropMessage { msg: *m })
            .collect(),
        "duplicate_message" => distinct
            .iter()
            .map(|m| Action::DuplicateMessage { msg: *m })
            .collect(),
        "process_event" => state
            .coordinator
            .events
            .first()
            .map(|e| Action::ProcessEvent {
                event: *e,
                fail_store_op: None,
            })
            .into_iter()
            .collect(),
        _ => {
            let mut enabled = Vec::new();
            model.enabled_actions(state, &mut enabled);
            enabled
                .into_iter()
                .filter(|a| a.fail_store_op().is_none())
                .collect()
        }
    };
    let candidates: Vec<Action> = candidates
        .into_iter()
        .filter(|a| serde_json::to_value(a).expect("actions")["kind"] == kind)
        .collect();
    let matching: Vec<Action> = candidates
        .iter()
        .filter(|a| pattern::matches(&pat, &serde_json::to_value(a).expect("actions")))
        .copied()
        .collect();
    match matching.as_slice() {
        [one] => Ok(one.with_fail_store_op(fail)),
        _ => Err(TraceError::Unresolved {
            path: spec.path.clone(),
            pattern: pat,
            candidates: candidates
                .iter()
                .map(|a| a.with_fail_store_op(fail))
                .collect(),
            matching: matching
                .iter()
                .map(|a| a.with_fail_store_op(fail))
                .collect(),
        }),
    }
}
