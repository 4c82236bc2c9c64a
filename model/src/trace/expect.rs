//! `expect` blocks of version 2 traces: what a step (or the end of the trace) must show, checked
//! on the model here and on the manager by the conformance harness, both through
//! [`Observation`], the same JSON built from each side.

use crate::state::SystemState;
use crate::step::action::StepOutput;
use crate::trace::pattern::{self, FieldDiff, Limits, Shape, ShapeError};
use crate::view::render;
use serde_json::{json, Map, Value};

const TASK_STATUSES: &[&str] = &[
    "NOT_STARTED",
    "REBALANCING",
    "COMPLETED",
    "FAILED",
    "CANCELED",
];
const BUCKET_STATUSES: &[&str] = &[
    "NOT_STARTED",
    "REBALANCING",
    "TIMEOUT",
    "COMPLETED",
    "FAILED",
    "CANCELED",
    "TIMEOUT_FINAL",
];
const TASK: &[(&str, Shape)] = &[
    ("id", Shape::Small),
    ("status", Shape::Name(TASK_STATUSES)),
    ("cancel_requested", Shape::Bool),
];
/// A bucket's attempt (spec 3.2): its mode, and the counters its mode reads, in ticks.
const ATTEMPT: &[(&str, Shape)] = &[
    ("mode", Shape::Name(&["running", "tracked"])),
    ("age", Shape::Small),
    ("since_progress", Shape::Small),
    ("blocked_for", Shape::Nullable(&Shape::Small)),
    ("reconciles", Shape::Small),
    ("reconcile_in", Shape::Small),
];
/// A stored plan entry.
const PLAN_ENTRY: &[(&str, Shape)] = &[
    ("bucket", Shape::Bucket),
    ("ors", Shape::Replicas),
    ("trs", Shape::Replicas),
];
const BUCKET: &[(&str, Shape)] = &[
    ("attempt", Shape::Nullable(&Shape::Object(ATTEMPT))),
    ("status", Shape::Nullable(&Shape::Name(BUCKET_STATUSES))),
    ("assignment", Shape::Replicas),
    ("leader", Shape::Nullable(&Shape::Server)),
    ("isr", Shape::ServerSet),
    ("leader_epoch", Shape::Small),
    ("bucket_epoch", Shape::Small),
    ("deleted", Shape::Bool),
];
/// The fields of an `expect` block (spec/trace-format.md, "Expectations").
pub const EXPECT: &[(&str, Shape)] = &[
    ("overall", Shape::Nullable(&Shape::Name(TASK_STATUSES))),
    ("task", Shape::Nullable(&Shape::Object(TASK))),
    ("buckets", Shape::PerBucket(&Shape::Object(BUCKET))),
    ("sent", Shape::List(&Shape::Message)),
    ("reply", Shape::Nullable(&Shape::Reply)),
    ("events", Shape::List(&Shape::Object(pattern::EVENT))),
    ("live", Shape::ServerSet),
    ("plan", Shape::List(&Shape::Object(PLAN_ENTRY))),
];

/// One `expect` block, validated and normalized.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Expectation {
    /// Where the block is in the trace file: `steps[3].expect`, or `expect` for the end.
    pub path: String,
    /// The actions it covers: its `sent` and `reply` are those of actions `from..after` (one
    /// file step; `tick` with a `count` is several), its state the one after `after` actions.
    pub from: usize,
    pub after: usize,
    /// The block as written, normalized (server sets ascending).
    pub expect: Value,
}

/// An expectation that did not hold, with every differing field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpectFailure {
    pub path: String,
    pub after: usize,
    pub diffs: Vec<FieldDiff>,
}

impl Expectation {
    /// Validates a block at `path`.
    pub fn parse(
        v: &Value,
        path: &str,
        from: usize,
        after: usize,
        limits: Limits,
    ) -> Result<Expectation, ShapeError> {
        Ok(Expectation {
            path: path.to_string(),
            from,
            after,
            expect: pattern::object(v, EXPECT, path, limits)?,
        })
    }

    /// Whether this is the trace's final block (the top-level `expect`).
    pub fn is_end(&self) -> bool {
        self.path == "expect"
    }

    /// `None` when every field given matches `seen`.
    pub fn check(&self, seen: &Observation) -> Option<ExpectFailure> {
        let mut diffs = Vec::new();
        pattern::diff(&self.expect, &seen.to_json(), &self.path, &mut diffs);
        (!diffs.is_empty()).then(|| ExpectFailure {
            path: self.path.clone(),
            after: self.after,
            diffs,
        })
    }
}

impl ExpectFailure {
    /// A keyed diff: one line per field with its path, the expected and the actual value.
    pub fn render(&self, side: &str) -> String {
        // A list of messages (`sent`) is shown one message per line under its row, the
        // expected list and then the actual one: two lists on one line are unreadable.
        let listed = |d: &FieldDiff| {
            [&d.expected, &d.actual]
                .iter()
                .any(|v| v.as_array().is_some_and(|a| !a.is_empty()))
        };
        let rows: Vec<(String, String, String)> = self
            .diffs
            .iter()
            .map(|d| {
                if listed(d) {
                    let n = |v: &Value| match v.as_array() {
                        Some(a) => format!("{} messages", a.len()),
                        None => v.to_string(),
                    };
                    (d.path.clone(), n(&d.expected), n(&d.actual))
                } else {
                    (d.path.clone(), d.expected.to_string(), d.actual.to_string())
                }
            })
            .collect();
        let w0 = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(5);
        let w1 = rows.iter().map(|r| r.1.len()).max().unwrap_or(0).max(8);
        let mut out = format!(
            "EXPECTATION FAILED ({side}): `{}` (after action {})\n  {:<w0$}  {:<w1$}  actual\n",
            self.path, self.after, "field", "expected"
        );
        for (p, e, a) in rows {
            out.push_str(&format!("  {p:<w0$}  {e:<w1$}  {a}\n"));
        }
        for d in self.diffs.iter().filter(|d| listed(d)) {
            for (label, v) in [("expected", &d.expected), ("actual", &d.actual)] {
                out.push_str(&format!("  {} {label}:\n", d.path));
                match v.as_array() {
                    Some(list) if list.is_empty() => out.push_str("    (none)\n"),
                    Some(list) => {
                        for m in list {
                            out.push_str(&format!("    {m}\n"));
                        }
                    }
                    None => out.push_str(&format!("    {v}\n")),
                }
            }
        }
        out
    }
}

/// The stored task as an expectation sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedTask {
    pub id: u64,
    pub status: String,
    pub cancel_requested: bool,
}

/// One bucket as an expectation sees it: the coordinator's status and the stored metadata.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObservedBucket {
    pub bucket: u64,
    /// `None` when the bucket is not in the current plan.
    pub status: Option<String>,
    pub assignment: Vec<u64>,
    pub leader: Option<u64>,
    /// Ascending.
    pub isr: Vec<u64>,
    pub leader_epoch: u64,
    pub bucket_epoch: u64,
    pub deleted: bool,
    /// The bucket's attempt, if it has one, as `ATTEMPT` writes it.
    pub attempt: Option<Value>,
}

/// What an expectation is checked against, from either side, in spec vocabulary.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Observation {
    pub overall: Option<String>,
    pub task: Option<ObservedTask>,
    pub buckets: Vec<ObservedBucket>,
    /// The messages the coordinator sent, in order, as trace JSON (tagged with `type`).
    pub sent: Vec<Value>,
    /// The replies to the client, in spec vocabulary (`Accepted(1)`).
    pub replies: Vec<String>,
    /// The coordinator's event queue, front first, as trace JSON.
    pub events: Vec<Value>,
    /// The servers the coordinator holds live, ascending.
    pub live: Vec<u64>,
    /// The stored task's plan, in admission order (`bucket`, `ors`, `trs`); empty without one.
    pub plan: Vec<Value>,
}

/// An attempt as an `expect` block writes it: a running one by its age, a tracked one by the
/// counters of R14 (spec 3.2).
pub fn attempt_json(
    tracked: bool,
    age: u64,
    since_progress: u64,
    blocked_for: Option<u64>,
    reconciles: u64,
    reconcile_in: u64,
) -> Value {
    if tracked {
        json!({"mode": "tracked", "since_progress": since_progress, "blocked_for": blocked_for,
               "reconciles": reconciles, "reconcile_in": reconcile_in})
    } else {
        json!({"mode": "running", "age": age})
    }
}

impl Observation {
    /// The model's state after a step, and the outputs of the actions the step took.
    pub fn of_model(s: &SystemState, outputs: &[StepOutput]) -> Observation {
        let c = &s.coordinator;
        let meta = &s.store.buckets;
        Observation {
            overall: c.overall.as_ref().map(render::status),
            task: s.store.task.as_ref().map(|t| ObservedTask {
                id: t.id.into(),
                status: render::status(&t.status),
                cancel_requested: t.cancel_requested,
            }),
            buckets: (0..meta.assignment.len())
                .map(|b| ObservedBucket {
                    bucket: b as u64,
                    status: c.status_of(b as u8).as_ref().map(render::status),
                    assignment: meta.assignment[b].iter().map(|x| u64::from(*x)).collect(),
                    leader: meta.lai[b].leader.map(u64::from),
                    isr: meta.lai[b].isr.iter().map(u64::from).collect(),
                    leader_epoch: meta.lai[b].leader_epoch.into(),
                    bucket_epoch: meta.lai[b].bucket_epoch.into(),
                    deleted: meta.deleted[b],
                    attempt: c
                        .attempts
                        .iter()
                        .find(|(x, _)| usize::from(*x) == b)
                        .map(|(x, a)| {
                            let tracked =
                                c.status_of(*x) == Some(crate::state::types::BucketStatus::Timeout);
                            attempt_json(
                                tracked,
                                a.age.into(),
                                a.since_progress.into(),
                                a.blocked_for.map(u64::from),
                                a.reconciles.into(),
                                a.reconcile_in.into(),
                            )
                        }),
                })
                .collect(),
            sent: outputs
                .iter()
                .flat_map(|o| o.sent.iter())
                .map(|m| serde_json::to_value(m).expect("messages serialize"))
                .collect(),
            replies: outputs
                .iter()
                .filter_map(|o| o.reply.as_ref().map(render::reply))
                .collect(),
            events: c
                .events
                .iter()
                .map(|e| serde_json::to_value(e).expect("events serialize"))
                .collect(),
            live: c.live.iter().map(u64::from).collect(),
            plan: s.store.task.as_ref().map_or_else(Vec::new, |t| {
                t.plan
                    .iter()
                    .map(|e| {
                        json!({"bucket": e.bucket, "ors": e.ors.iter().collect::<Vec<_>>(),
                               "trs": e.trs.iter().collect::<Vec<_>>()})
                    })
                    .collect()
            }),
        }
    }

    /// The JSON an `expect` block is matched against. `reply` is `null` without a reply, the
    /// reply itself with one, and a list with several.
    pub fn to_json(&self) -> Value {
        let mut buckets = Map::new();
        for b in &self.buckets {
            buckets.insert(
                b.bucket.to_string(),
                json!({
                    "status": b.status,
                    "assignment": b.assignment,
                    "leader": b.leader,
                    "isr": b.isr,
                    "leader_epoch": b.leader_epoch,
                    "bucket_epoch": b.bucket_epoch,
                    "deleted": b.deleted,
                    "attempt": b.attempt,
                }),
            );
        }
        let reply = match self.replies.as_slice() {
            [] => Value::Null,
            [one] => Value::from(one.as_str()),
            many => Value::from(many.to_vec()),
        };
        json!({
            "overall": self.overall,
            "task": self.task.as_ref().map(|t| json!({
                "id": t.id,
                "status": t.status,
                "cancel_requested": t.cancel_requested,
            })),
            "buckets": buckets,
            "sent": self.sent,
            "reply": reply,
            "events": self.events,
            "live": self.live,
            "plan": self.plan,
        })
    }
}
