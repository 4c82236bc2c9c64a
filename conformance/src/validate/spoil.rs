//! Spoiled logs: a real log changed in one place, the way a wrong coordinator or a wrong host
//! would have written it (spec/log-format.md, "Teeth"). Each spoiling says what validation must
//! answer: a change no model behaviour explains (an effect the step does not make, a context no
//! request carried, a store that lost a write) must be rejected at the record changed; a record
//! left out or two records swapped may be explained (a response the coordinator ignored is a
//! message that never arrived), so there validation must only decide, and reject no earlier than
//! the change. No spoiling may come back undecided.
//!
//! The positions are spread evenly over the records each kind can spoil, the first and the last
//! among them, so the same log gives the same spoilings on every run.

use rebalance_model::RebalanceModel;
use serde_json::Value;

use super::{Limits, Verdict};

/// The ways a log is spoiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// An input's record left out.
    RecordDropped,
    /// One effect of a record left out.
    EffectDropped,
    /// A request or an event sent for another bucket.
    EffectChanged,
    /// A request's leader epoch, bucket epoch or coordinator epoch one higher.
    EpochChanged,
    /// A response's request context answering a bucket epoch no request carried.
    ContextChanged,
    /// A record and the next one in the other order.
    Swapped,
    /// A record's store operations counted one fewer.
    StoreWriteHidden,
    /// A record's first store operation reported failed.
    StoreWriteFailed,
    /// A tick one millisecond off the check interval.
    ClockOffTick,
    /// A restart's read showing a bucket as the first incarnation found it, the run's writes
    /// to it lost. Required rejected at the read only where an earlier read showed the write
    /// (`lost_write_unacknowledged`).
    ReadWriteLost,
}

impl Kind {
    pub const ALL: [Kind; 10] = [
        Kind::RecordDropped,
        Kind::EffectDropped,
        Kind::EffectChanged,
        Kind::EpochChanged,
        Kind::ContextChanged,
        Kind::Swapped,
        Kind::StoreWriteHidden,
        Kind::StoreWriteFailed,
        Kind::ClockOffTick,
        Kind::ReadWriteLost,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::RecordDropped => "record-dropped",
            Kind::EffectDropped => "effect-dropped",
            Kind::EffectChanged => "effect-changed",
            Kind::EpochChanged => "epoch-changed",
            Kind::ContextChanged => "context-changed",
            Kind::Swapped => "swapped",
            Kind::StoreWriteHidden => "store-write-hidden",
            Kind::StoreWriteFailed => "store-write-failed",
            Kind::ClockOffTick => "clock-off-tick",
            Kind::ReadWriteLost => "read-write-lost",
        }
    }

    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }

    /// Whether no behaviour of the model explains a log so spoiled, so that validation must
    /// reject it at the spoiled record. A record left out or two swapped may be explained; so
    /// may a store failure the coordinator answers as it answered success (a retried write
    /// whose retry the log then shows), and the spoiling then only has to be decided.
    fn must_reject(self) -> bool {
        !matches!(
            self,
            Kind::RecordDropped | Kind::Swapped | Kind::StoreWriteFailed
        )
    }
}

/// What validation must answer for a spoiled log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Rejected, at this line.
    RejectedAt(usize),
    /// Valid, or rejected at this line or a later one.
    DecidedFrom(usize),
}

/// One spoiled log.
#[derive(Clone, Debug)]
pub struct Spoiling {
    pub kind: Kind,
    /// The 1-based line of the log changed (for a record left out, of the record after it,
    /// which now has that line).
    pub line: usize,
    pub expect: Expect,
    pub text: String,
}

/// What validation answered for a spoiled log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    Valid,
    RejectedAt(usize),
    UndecidedAt(usize),
}

impl Expect {
    /// Whether `answer` is what this spoiling requires.
    pub fn met_by(self, answer: Answer) -> bool {
        match (self, answer) {
            (_, Answer::UndecidedAt(_)) => false,
            (Expect::RejectedAt(l), a) => a == Answer::RejectedAt(l),
            (Expect::DecidedFrom(_), Answer::Valid) => true,
            (Expect::DecidedFrom(l), Answer::RejectedAt(m)) => m >= l,
        }
    }
}

/// Validates the spoiled log against `model`; an error is a spoiled log that does not parse
/// (no spoiling makes one, so it is a defect of this module).
pub fn answer(model: &RebalanceModel, s: &Spoiling, limits: Limits) -> Result<Answer, String> {
    let log = super::parse(&s.text).map_err(|e| e.to_string())?;
    Ok(match super::validate(model, &log, limits).0 {
        Verdict::Valid => Answer::Valid,
        Verdict::Unexplained(u) => Answer::RejectedAt(u.line),
        Verdict::Undecided { line, .. } => Answer::UndecidedAt(line),
    })
}

/// The log's lines as JSON values (line `i + 1` is `lines[i]`).
fn parse_lines(text: &str) -> Result<Vec<Value>, String> {
    text.lines()
        .enumerate()
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}", i + 1)))
        .collect()
}

fn join(lines: &[Value]) -> String {
    lines.iter().map(|v| format!("{v}\n")).collect()
}

fn is_input(v: &Value) -> bool {
    v["type"] == "input"
}

fn ops(v: &Value) -> u64 {
    v["store"]["ops"].as_u64().unwrap_or(0)
}

fn failures(v: &Value) -> u64 {
    v["store"]["failures"].as_u64().unwrap_or(0)
}

fn effects(v: &Value) -> &[Value] {
    v["effects"].as_array().map_or(&[], Vec::as_slice)
}

/// `n` items of `xs` spread evenly, the first and the last among them; all of them if `n` is 0
/// or at least their number.
fn spread<T: Copy>(xs: &[T], n: usize) -> Vec<T> {
    if n == 0 || xs.len() <= n {
        return xs.to_vec();
    }
    if n == 1 {
        return vec![xs[0]];
    }
    (0..n).map(|k| xs[k * (xs.len() - 1) / (n - 1)]).collect()
}

/// Every spoiling of `kinds` of the log `text`, at most `per_kind` of each (0: every position).
/// `buckets` is the number of buckets of the log's cluster (an effect changed names the next
/// bucket, modulo it). An error names a line that is not JSON.
pub fn spoilings(
    text: &str,
    kinds: &[Kind],
    per_kind: usize,
    buckets: u64,
) -> Result<Vec<Spoiling>, String> {
    let lines = parse_lines(text)?;
    let mut out = Vec::new();
    for &kind in kinds {
        let sites = sites(&lines, kind);
        for i in spread(&sites, per_kind) {
            let mut spoiled = lines.clone();
            let line = spoil(&mut spoiled, i, kind, buckets, &lines);
            let expect = if kind.must_reject() && !lost_write_unacknowledged(&lines, i, kind) {
                Expect::RejectedAt(line)
            } else {
                Expect::DecidedFrom(line)
            };
            out.push(Spoiling {
                kind,
                line,
                expect,
                text: join(&spoiled),
            });
        }
    }
    Ok(out)
}

/// The indices of the lines `kind` can spoil.
fn sites(lines: &[Value], kind: Kind) -> Vec<usize> {
    let first_read = lines.iter().position(|v| v["type"] == "start");
    (0..lines.len())
        .filter(|&i| {
            let v = &lines[i];
            match kind {
                // Not the last record: a log cut short after any record is valid.
                Kind::RecordDropped => is_input(v) && i + 1 < lines.len(),
                Kind::EffectDropped => is_input(v) && !effects(v).is_empty(),
                Kind::EffectChanged => is_input(v) && effects(v).iter().any(changeable),
                Kind::EpochChanged => {
                    is_input(v) && effects(v).iter().any(|e| e["type"] == "send_nli")
                }
                Kind::ContextChanged => v["input"]["type"] == "nli_response",
                Kind::Swapped => {
                    is_input(v)
                        && lines.get(i + 1).is_some_and(|n| is_input(n) && n != v)
                        && i + 2 < lines.len()
                }
                Kind::StoreWriteHidden | Kind::StoreWriteFailed => {
                    is_input(v) && ops(v) > 0 && failures(v) == 0
                }
                Kind::ClockOffTick => v["input"]["type"] == "tick",
                Kind::ReadWriteLost => {
                    v["type"] == "start"
                        && Some(i) != first_read
                        && first_read.is_some_and(|f| lost_bucket(&lines[f], v).is_some())
                }
            }
        })
        .collect()
}

/// Whether the write a `ReadWriteLost` spoiling of line `i` takes out was acknowledged by no
/// record: the bucket changed since the previous start's read, and that incarnation logged no
/// input but its recover (whose one operation reads the task), so the write was made by the
/// input the kill cut short, whose store operations the model may stop before that write
/// (spec/log-format.md, "Crashes"). The model may then explain the read, and the lie shows at
/// a later record if at all. Found on the log killed at store operations 7 and 13 (seed 2):
/// the second start's read lost the admission's union, written by the Register that the
/// first kill cut short, and was rejected at the next record. Where a logged input may have
/// written it, the read must be rejected (an input cut short after it would have to write the
/// bucket back to its first value, which no rule does in one input).
fn lost_write_unacknowledged(lines: &[Value], i: usize, kind: Kind) -> bool {
    if kind != Kind::ReadWriteLost {
        return false;
    }
    let Some(first) = lines.iter().position(|v| v["type"] == "start") else {
        return false;
    };
    let Some(k) = lost_bucket(&lines[first], &lines[i]) else {
        return false;
    };
    let Some(previous) = (0..i).rev().find(|&j| lines[j]["type"] == "start") else {
        return false;
    };
    let only_recover = lines[previous + 1..i]
        .iter()
        .all(|v| v["input"]["type"] == "event" && v["input"]["event"]["type"] == "recover");
    only_recover && lines[previous]["read"]["buckets"][k] != lines[i]["read"]["buckets"][k]
}

/// An effect whose bucket can be changed: a request, or an event keyed by a bucket.
fn changeable(e: &Value) -> bool {
    e["type"] == "send_nli" || e["event"]["key"]["bucket"].is_u64()
}

/// A bucket whose record in `later`'s read differs from `first`'s, if any: its index there.
fn lost_bucket(first: &Value, later: &Value) -> Option<usize> {
    let a = first["read"]["buckets"].as_array()?;
    let b = later["read"]["buckets"].as_array()?;
    (0..a.len().min(b.len())).find(|&k| a[k] != b[k] && !b[k].is_null())
}

/// Spoils line `i` of `lines` by `kind`; returns the 1-based line changed.
fn spoil(lines: &mut Vec<Value>, i: usize, kind: Kind, buckets: u64, orig: &[Value]) -> usize {
    let bump = |v: &mut Value, by: u64| {
        let n = v.as_u64().unwrap_or(0);
        *v = Value::from(n + by);
    };
    match kind {
        Kind::RecordDropped => {
            lines.remove(i);
        }
        Kind::EffectDropped => {
            // Alternate between the first effect and the last, so both ends of a record's
            // effects are dropped somewhere.
            let e = lines[i]["effects"].as_array_mut().expect("effects");
            let k = if i.is_multiple_of(2) { 0 } else { e.len() - 1 };
            e.remove(k);
        }
        Kind::EffectChanged => {
            let e = lines[i]["effects"].as_array_mut().expect("effects");
            let x = e
                .iter_mut()
                .find(|e| changeable(e))
                .expect("a changeable effect");
            let b = if x["type"] == "send_nli" {
                &mut x["bucket"]
            } else {
                &mut x["event"]["key"]["bucket"]
            };
            *b = Value::from((b.as_u64().unwrap_or(0) + 1) % buckets.max(2));
        }
        Kind::EpochChanged => {
            let e = lines[i]["effects"].as_array_mut().expect("effects");
            let x = e
                .iter_mut()
                .find(|e| e["type"] == "send_nli")
                .expect("a request");
            let field = ["leader_epoch", "bucket_epoch", "coordinator_epoch"][i % 3];
            bump(&mut x[field], 1);
        }
        Kind::ContextChanged => bump(&mut lines[i]["input"]["context"]["bucket_epoch"], 7),
        Kind::Swapped => lines.swap(i, i + 1),
        Kind::StoreWriteHidden => lines[i]["store"]["ops"] = Value::from(ops(&orig[i]) - 1),
        Kind::StoreWriteFailed => {
            lines[i]["store"]["failed"] = Value::from(1);
            lines[i]["store"]["failures"] = Value::from(1);
        }
        Kind::ClockOffTick => bump(&mut lines[i]["now_ms"], 1),
        Kind::ReadWriteLost => {
            let first = orig
                .iter()
                .position(|v| v["type"] == "start")
                .expect("a start");
            let k = lost_bucket(&orig[first], &orig[i]).expect("a changed bucket");
            lines[i]["read"]["buckets"][k] = orig[first]["read"]["buckets"][k].clone();
        }
    }
    i + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_write_only_an_input_cut_short_made_need_not_be_rejected_at_its_read() {
        let start = |b: u64| serde_json::json!({"type": "start", "read": {"buckets": [b, 0]}});
        let recover = serde_json::json!({"type": "input", "input": {"type": "event", "event": {"type": "recover"}}});
        let tick = serde_json::json!({"type": "input", "input": {"type": "tick"}});
        // The first incarnation logged only its recover: the change to bucket 0 is unlogged.
        let cut = vec![start(1), recover.clone(), start(2)];
        assert!(lost_write_unacknowledged(&cut, 2, Kind::ReadWriteLost));
        assert!(!lost_write_unacknowledged(&cut, 2, Kind::EffectDropped));
        // It logged another input, which may have made the write.
        let logged = vec![start(1), recover.clone(), tick, start(2)];
        assert!(!lost_write_unacknowledged(&logged, 3, Kind::ReadWriteLost));
        // The previous read already showed it.
        let shown = vec![start(1), recover.clone(), start(2), recover, start(2)];
        assert!(!lost_write_unacknowledged(&shown, 4, Kind::ReadWriteLost));
    }

    #[test]
    fn spread_takes_both_ends_and_every_item_when_asked() {
        let xs: Vec<usize> = (0..10).collect();
        assert_eq!(spread(&xs, 3), vec![0, 4, 9]);
        assert_eq!(spread(&xs, 0), xs);
        assert_eq!(spread(&xs, 20), xs);
        assert_eq!(spread(&xs, 1), vec![0]);
    }
}
