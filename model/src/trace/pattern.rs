//! Partial JSON values of a known shape: the message patterns of trace steps and the `expect`
//! blocks of `spec/trace-format.md` (version 2).
//!
//! A pattern is validated once against its [`Shape`] (every field named, every value of the
//! right kind, server and bucket ids in range; errors name the field path) and normalized (server
//! sets ascending). It then matches an actual value, written in the same JSON, when every field it
//! gives matches: objects field by field, lists element by element with equal lengths, scalars by
//! equality. Fields it leaves out are not checked.

use serde_json::{Map, Value};
use std::fmt;

/// The shape a pattern may take.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    /// A server id, `0..servers`.
    Server,
    /// A bucket id, `0..buckets`.
    Bucket,
    /// An epoch, a rebalance id: an integer in `0..=255`.
    Small,
    /// An integer in `1..=max`.
    Positive(u64),
    Bool,
    /// An ordered list of distinct servers (an assignment, a replica list).
    Replicas,
    /// A set of servers written as a list; normalized to ascending order.
    ServerSet,
    /// `null` or the inner shape.
    Nullable(&'static Shape),
    /// One of these strings.
    Name(&'static [&'static str]),
    /// A client reply: `Accepted`, `Accepted(<id>)`, `Rejected(InProgress)`,
    /// `Rejected(InvalidPlan)`, `StoreError`, `NothingToCancel`.
    Reply,
    /// An object with these fields, any of them given.
    Object(&'static [(&'static str, Shape)]),
    /// An object keyed by bucket id (`"0"`, `"1"`, ...).
    PerBucket(&'static Shape),
    /// A list; matched with equal length, element by element.
    List(&'static Shape),
    /// A message tagged with `type` (`nli`, `nli_response`, `adjust_isr`,
    /// `adjust_isr_response`); without `type`, its fields must belong to some message.
    Message,
    /// An AdjustIsrResponse's result: `"err"` or `{"ok": {LeaderAndIsr}}`.
    AdjustIsrResult,
}

pub const KEY: &[(&str, Shape)] = &[("rid", Shape::Small), ("bucket", Shape::Bucket)];
/// An event of the coordinator's queue, as a `process_event` step and an `expect` block's
/// `events` write it.
pub const EVENT: &[(&str, Shape)] = &[
    (
        "type",
        Shape::Name(&["timeout", "reconcile", "finalize", "recover"]),
    ),
    ("key", Shape::Object(KEY)),
    ("rid", Shape::Small),
];
const OPT_SERVER: Shape = Shape::Nullable(&Shape::Server);
const OPT_KEY: Shape = Shape::Nullable(&Shape::Object(KEY));

pub const NLI: &[(&str, Shape)] = &[
    ("to", Shape::Server),
    ("bucket", Shape::Bucket),
    ("replicas", Shape::Replicas),
    ("leader", OPT_SERVER),
    ("leader_epoch", Shape::Small),
    ("isr", Shape::ServerSet),
    ("bucket_epoch", Shape::Small),
    ("coordinator_epoch", Shape::Small),
    ("exec_key", OPT_KEY),
];
pub const CONTEXT: &[(&str, Shape)] = &[
    ("coordinator_epoch", Shape::Small),
    ("leader", OPT_SERVER),
    ("leader_epoch", Shape::Small),
    ("bucket_epoch", Shape::Small),
    ("exec_key", OPT_KEY),
];
pub const NLI_RESPONSE: &[(&str, Shape)] = &[
    ("from", Shape::Server),
    ("bucket", Shape::Bucket),
    ("ok", Shape::Bool),
    ("context", Shape::Object(CONTEXT)),
];
pub const ADJUST_ISR: &[(&str, Shape)] = &[
    ("from", Shape::Server),
    ("bucket", Shape::Bucket),
    ("leader_epoch", Shape::Small),
    ("bucket_epoch", Shape::Small),
    ("isr", Shape::ServerSet),
];
pub const LAI: &[(&str, Shape)] = &[
    ("leader", OPT_SERVER),
    ("leader_epoch", Shape::Small),
    ("isr", Shape::ServerSet),
    ("bucket_epoch", Shape::Small),
    ("coordinator_epoch", Shape::Small),
];
pub const ADJUST_ISR_RESPONSE: &[(&str, Shape)] = &[
    ("to", Shape::Server),
    ("bucket", Shape::Bucket),
    ("result", Shape::AdjustIsrResult),
];
/// The message types by their `type` tag.
pub const MESSAGE_TYPES: &[(&str, &[(&str, Shape)])] = &[
    ("nli", NLI),
    ("nli_response", NLI_RESPONSE),
    ("adjust_isr", ADJUST_ISR),
    ("adjust_isr_response", ADJUST_ISR_RESPONSE),
];

/// A malformed pattern or expectation: the field path and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError {
    pub path: String,
    pub message: String,
}

impl ShapeError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> ShapeError {
        ShapeError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "field `{}`: {}", self.path, self.message)
    }
}

/// The ranges server and bucket ids are checked against.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub servers: u64,
    pub buckets: u64,
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn join(path: &str, field: &str) -> String {
    if path.is_empty() {
        field.to_string()
    } else {
        format!("{path}.{field}")
    }
}

fn uint(v: &Value, path: &str, what: &str, max: u64) -> Result<u64, ShapeError> {
    match v.as_u64() {
        Some(n) if n <= max => Ok(n),
        Some(n) => Err(ShapeError::new(
            path,
            format!("{what} {n} out of range (at most {max})"),
        )),
        None => Err(ShapeError::new(
            path,
            format!("expected {what} (a non-negative integer), found {v}"),
        )),
    }
}

fn id(v: &Value, path: &str, what: &str, count: u64) -> Result<u64, ShapeError> {
    let n = uint(v, path, what, u64::MAX)?;
    if n >= count {
        return Err(ShapeError::new(
            path,
            format!("{what} {n} out of range ({count} {what}s)"),
        ));
    }
    Ok(n)
}

fn servers(v: &Value, path: &str, limits: Limits) -> Result<Vec<u64>, ShapeError> {
    let Some(list) = v.as_array() else {
        return Err(ShapeError::new(
            path,
            format!("expected a list of servers, found {}", kind_of(v)),
        ));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, s) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let s = id(s, &p, "server", limits.servers)?;
        if out.contains(&s) {
            return Err(ShapeError::new(p, format!("server {s} appears twice")));
        }
        out.push(s);
    }
    Ok(out)
}

/// Checks `v` against `shape` and returns it normalized; the error names the first bad field.
pub fn validate(v: &Value, shape: Shape, path: &str, limits: Limits) -> Result<Value, ShapeError> {
    match shape {
        Shape::Server => id(v, path, "server", limits.servers).map(Value::from),
        Shape::Bucket => id(v, path, "bucket", limits.buckets).map(Value::from),
        Shape::Small => uint(v, path, "value", 255).map(Value::from),
        Shape::Positive(max) => match uint(v, path, "value", max)? {
            0 => Err(ShapeError::new(path, "must be at least 1")),
            n => Ok(Value::from(n)),
        },
        Shape::Bool => match v {
            Value::Bool(_) => Ok(v.clone()),
            _ => Err(ShapeError::new(
                path,
                format!("expected true or false, found {v}"),
            )),
        },
        Shape::Replicas => servers(v, path, limits).map(Value::from),
        Shape::ServerSet => {
            let mut s = servers(v, path, limits)?;
            s.sort_unstable();
            Ok(Value::from(s))
        }
        Shape::Nullable(inner) => match v {
            Value::Null => Ok(Value::Null),
            _ => validate(v, *inner, path, limits),
        },
        Shape::Name(names) => match v.as_str() {
            Some(s) if names.contains(&s) => Ok(v.clone()),
            _ => Err(ShapeError::new(
                path,
                format!("expected one of {}, found {v}", names.join(", ")),
            )),
        },
        Shape::Reply => match v.as_str() {
            Some(s) if is_reply(s) => Ok(v.clone()),
            _ => Err(ShapeError::new(
                path,
                format!(
                    "expected a reply: \"Accepted(<id>)\", \"Accepted\", \"Rejected(InProgress)\", \
                     \"StoreError\" or \"NothingToCancel\", found {v}"
                ),
            )),
        },
        Shape::Object(fields) => object(v, fields, path, limits),
        Shape::PerBucket(inner) => {
            let Some(map) = v.as_object() else {
                return Err(ShapeError::new(
                    path,
                    format!(
                        "expected an object keyed by bucket id, found {}",
                        kind_of(v)
                    ),
                ));
            };
            let mut out = Map::new();
            for (k, x) in map {
                let p = join(path, k);
                let b: u64 = k.parse().map_err(|_| {
                    ShapeError::new(
                        &p,
                        format!("`{k}` is not a bucket id (use \"0\", \"1\", ...)"),
                    )
                })?;
                id(&Value::from(b), &p, "bucket", limits.buckets)?;
                out.insert(b.to_string(), validate(x, *inner, &p, limits)?);
            }
            Ok(Value::Object(out))
        }
        Shape::List(inner) => {
            let Some(list) = v.as_array() else {
                return Err(ShapeError::new(
                    path,
                    format!("expected a list, found {}", kind_of(v)),
                ));
            };
            list.iter()
                .enumerate()
                .map(|(i, x)| validate(x, *inner, &format!("{path}[{i}]"), limits))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::from)
        }
        Shape::Message => message(v, path, limits),
        Shape::AdjustIsrResult => match v {
            Value::String(s) if s == "err" => Ok(v.clone()),
            Value::Object(m) if m.len() == 1 && m.contains_key("ok") => {
                let lai = object(&m["ok"], LAI, &join(path, "ok"), limits)?;
                Ok(serde_json::json!({ "ok": lai }))
            }
            _ => Err(ShapeError::new(
                path,
                format!("expected \"err\" or {{\"ok\": {{...}}}}, found {v}"),
            )),
        },
    }
}

fn is_reply(s: &str) -> bool {
    matches!(
        s,
        "Accepted" | "Rejected(InProgress)" | "Rejected(InvalidPlan)" | "StoreError"
    ) || s == "NothingToCancel"
        || s.strip_prefix("Accepted(")
            .and_then(|r| r.strip_suffix(')'))
            .is_some_and(|n| n.parse::<u64>().is_ok())
}

fn field_names(fields: &[(&str, Shape)]) -> String {
    fields
        .iter()
        .map(|(n, _)| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// An object of which any of `fields` may be given; other fields are errors.
pub fn object(
    v: &Value,
    fields: &[(&str, Shape)],
    path: &str,
    limits: Limits,
) -> Result<Value, ShapeError> {
    let Some(map) = v.as_object() else {
        return Err(ShapeError::new(
            path,
            format!("expected an object, found {}", kind_of(v)),
        ));
    };
    let mut out = Map::new();
    for (k, x) in map {
        let p = join(path, k);
        let Some((_, shape)) = fields.iter().find(|(n, _)| n == k) else {
            return Err(ShapeError::new(
                p,
                format!("unknown field; expected one of {}", field_names(fields)),
            ));
        };
        out.insert(k.clone(), validate(x, *shape, &p, limits)?);
    }
    Ok(Value::Object(out))
}

/// A message pattern: with `type`, the fields of that message type; without, fields that some
/// message type has.
fn message(v: &Value, path: &str, limits: Limits) -> Result<Value, ShapeError> {
    let Some(map) = v.as_object() else {
        return Err(ShapeError::new(
            path,
            format!("expected a message object, found {}", kind_of(v)),
        ));
    };
    let types: Vec<&str> = MESSAGE_TYPES.iter().map(|(t, _)| *t).collect();
    let mut rest = map.clone();
    let tag = rest.remove("type");
    let fields: Vec<(&str, Shape)> = match &tag {
        Some(t) => {
            let p = join(path, "type");
            let Some(name) = t.as_str().filter(|s| types.contains(s)) else {
                return Err(ShapeError::new(
                    p,
                    format!("expected one of {}, found {t}", types.join(", ")),
                ));
            };
            message_fields(name).to_vec()
        }
        None => {
            let mut all: Vec<(&str, Shape)> = Vec::new();
            for (_, fs) in MESSAGE_TYPES {
                for f in *fs {
                    if !all.iter().any(|(n, _)| *n == f.0) {
                        all.push(*f);
                    }
                }
            }
            all
        }
    };
    let mut out = match object(&Value::Object(rest), &fields, path, limits)? {
        Value::Object(m) => m,
        _ => unreachable!("object() returns an object"),
    };
    if let Some(t) = tag {
        out.insert("type".into(), t);
    }
    Ok(Value::Object(out))
}

/// The fields of message type `name` (one of [`MESSAGE_TYPES`]).
pub fn message_fields(name: &str) -> &'static [(&'static str, Shape)] {
    MESSAGE_TYPES
        .iter()
        .find(|(t, _)| *t == name)
        .map_or(&[], |(_, f)| *f)
}

/// Whether `actual` has every field `pattern` gives, with matching values.
pub fn matches(pattern: &Value, actual: &Value) -> bool {
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => p
            .iter()
            .all(|(k, pv)| a.get(k).is_some_and(|av| matches(pv, av))),
        (Value::Array(p), Value::Array(a)) => {
            p.len() == a.len() && p.iter().zip(a).all(|(x, y)| matches(x, y))
        }
        _ => pattern == actual,
    }
}

/// One field an expectation gives that the actual value does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldDiff {
    /// The field's path in the trace file (`steps[3].expect.buckets.0.status`).
    pub path: String,
    pub expected: Value,
    /// `null` also when the field is absent.
    pub actual: Value,
}

/// Every field of `pattern` that `actual` does not match, by path. Lists of scalars (server
/// lists) are compared whole; other lists of equal length element by element.
pub fn diff(pattern: &Value, actual: &Value, path: &str, out: &mut Vec<FieldDiff>) {
    let whole = |out: &mut Vec<FieldDiff>| {
        out.push(FieldDiff {
            path: path.to_string(),
            expected: pattern.clone(),
            actual: actual.clone(),
        })
    };
    match (pattern, actual) {
        (Value::Object(p), Value::Object(a)) => {
            for (k, pv) in p {
                diff(pv, a.get(k).unwrap_or(&Value::Null), &join(path, k), out);
            }
        }
        (Value::Array(p), Value::Array(a))
            if p.len() == a.len() && p.iter().any(|x| x.is_object() || x.is_array()) =>
        {
            for (i, (x, y)) in p.iter().zip(a).enumerate() {
                diff(x, y, &format!("{path}[{i}]"), out);
            }
        }
        _ => {
            if !matches(pattern, actual) {
                whole(out)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const L: Limits = Limits {
        servers: 3,
        buckets: 2,
    };

    #[test]
    fn a_partial_pattern_matches_on_the_fields_it_gives() {
        let p = validate(&json!({"to": 2, "bucket": 0}), Shape::Message, "m", L).unwrap();
        assert!(matches(
            &p,
            &json!({"type": "nli", "to": 2, "bucket": 0, "leader": 1})
        ));
        assert!(!matches(&p, &json!({"type": "nli", "to": 1, "bucket": 0})));
    }

    #[test]
    fn server_sets_are_normalized_and_ids_range_checked() {
        let p = validate(&json!([2, 0]), Shape::ServerSet, "isr", L).unwrap();
        assert_eq!(p, json!([0, 2]));
        let e = validate(&json!([3]), Shape::ServerSet, "isr", L).unwrap_err();
        assert_eq!(e.path, "isr[0]");
        let e = validate(&json!({"to": 1, "bogus": 1}), Shape::Message, "m", L).unwrap_err();
        assert_eq!(e.path, "m.bogus");
        let e = validate(&json!({"type": "nope"}), Shape::Message, "m", L).unwrap_err();
        assert_eq!(e.path, "m.type");
    }

    #[test]
    fn diff_names_each_differing_field() {
        let mut out = Vec::new();
        diff(
            &json!({"a": {"b": 1, "c": [0, 1]}}),
            &json!({"a": {"b": 2, "c": [0, 1]}}),
            "expect",
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].path, "expect.a.b");
        assert_eq!(out[0].actual, json!(2));
    }
}
