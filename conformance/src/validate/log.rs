//! Reading a coordinator log (`spec/log-format.md`): one JSON object per line, each decoded with
//! the path of every field, so that a malformed line is reported as `line 7: field
//! input.context.bucket_epoch: expected an unsigned integer, found "1"`.

use rebalance_manager as mgr;
use rebalance_wire::log::{StoreOps, FORMAT, VERSION};
use rebalance_wire::{self as wire, convert, decode};
use serde_json::Value;

use decode::{get, object, tag, Decode, Path, WireError};

/// A record of the log, after the header.
#[derive(Clone, Debug, PartialEq)]
pub enum Record {
    /// An incarnation started (R17), with the store as it found it if the host read it back.
    Start {
        now_ms: u64,
        coordinator_epoch: u64,
        live: Vec<u32>,
        effects: Vec<mgr::Effect>,
        read: Option<mgr::PersistedState>,
    },
    /// One input handled.
    Input {
        now_ms: u64,
        input: mgr::Input,
        effects: Vec<mgr::Effect>,
        store: StoreOps,
    },
    /// The host stopped, its coordinator idle; the last record.
    End { now_ms: u64 },
}

impl Record {
    pub fn now_ms(&self) -> u64 {
        match self {
            Record::Start { now_ms, .. }
            | Record::Input { now_ms, .. }
            | Record::End { now_ms } => *now_ms,
        }
    }
}

/// A record and the line it came from (1-based).
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    pub number: usize,
    pub record: Record,
}

/// A whole log.
#[derive(Clone, Debug)]
pub struct Log {
    /// The header's model configuration, if it carried one (the configuration file format).
    pub model: Option<Value>,
    pub lines: Vec<Line>,
    /// Torn lines, by number: a host died while writing each. Only the last line (with no
    /// newline after it), or a line just before a `start` (the next process ended it), may be
    /// torn, and a torn line is the start of a JSON value cut short. They are ignored.
    pub torn: Vec<usize>,
}

/// A log that cannot be read: the line and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct LogError {
    pub line: usize,
    pub message: String,
}

fn at(line: usize) -> impl Fn(WireError) -> LogError {
    move |e| LogError {
        line,
        message: e.to_string(),
    }
}

/// Parses a log. The last line may be torn (no final newline and not valid JSON), and so may a
/// line just before a `start`, which the restarted host ended with a newline: each is a JSON
/// value cut short, reported in [`Log::torn`] and skipped. Any other bad line is an error.
pub fn parse(text: &str) -> Result<Log, LogError> {
    let complete = text.ends_with('\n');
    let lines: Vec<&str> = text.lines().collect();
    let Some(first) = lines.first() else {
        return Err(LogError {
            line: 1,
            message: "empty log: the first line must be the header".into(),
        });
    };
    let model = header(first).map_err(at(1))?;
    let mut log = Log {
        model,
        lines: Vec::new(),
        torn: Vec::new(),
    };
    for (i, text) in lines.iter().enumerate().skip(1) {
        let number = i + 1;
        if text.trim().is_empty() {
            return Err(LogError {
                line: number,
                message: "empty line".into(),
            });
        }
        if let Some(Line {
            record: Record::End { .. },
            number: end,
        }) = log.lines.last()
        {
            return Err(LogError {
                line: number,
                message: format!("a record after the end record of line {end}"),
            });
        }
        match record(text) {
            Ok(record) => log.lines.push(Line { number, record }),
            Err(WireError::NotJson(_)) if !complete && number == lines.len() => {
                log.torn.push(number);
            }
            Err(WireError::NotJson(_)) if cut_short(text) && before_start(lines.get(i + 1)) => {
                log.torn.push(number);
            }
            Err(e) => return Err(at(number)(e)),
        }
    }
    Ok(log)
}

/// Whether `text` is the start of a JSON value cut short (what a write that died leaves), not
/// JSON that is wrong.
fn cut_short(text: &str) -> bool {
    serde_json::from_str::<Value>(text).is_err_and(|e| e.is_eof())
}

/// Whether `next` is a `start` record: a new process began after the one that tore the line.
fn before_start(next: Option<&&str>) -> bool {
    next.is_some_and(|t| matches!(record(t), Ok(Record::Start { .. })))
}

fn header(text: &str) -> Result<Option<Value>, WireError> {
    let v: Value = serde_json::from_str(text).map_err(|e| WireError::NotJson(e.to_string()))?;
    let root = Path::Root;
    let m = object(&v, &root, &["log", "version", "model"])?;
    tag(m, "log", &root, &[FORMAT])?;
    let version: u64 = get(m, "version", &root)?;
    if version != VERSION {
        return Err(WireError::Type {
            path: "version".into(),
            expected: "version 1 (the only one this validator reads)",
            found: version.to_string(),
        });
    }
    match m.get("model") {
        None | Some(Value::Null) => Ok(None),
        Some(c @ Value::Object(_)) => Ok(Some(c.clone())),
        Some(other) => Err(decode::type_error(&root.field("model"), "an object", other)),
    }
}

fn record(text: &str) -> Result<Record, WireError> {
    let v: Value = serde_json::from_str(text).map_err(|e| WireError::NotJson(e.to_string()))?;
    let root = Path::Root;
    let m = v
        .as_object()
        .ok_or_else(|| decode::type_error(&root, "an object", &v))?;
    match tag(m, "type", &root, &["start", "input", "end"])? {
        "end" => {
            let m = object(&v, &root, &["type", "now_ms"])?;
            Ok(Record::End {
                now_ms: get(m, "now_ms", &root)?,
            })
        }
        "start" => {
            let m = object(
                &v,
                &root,
                &[
                    "type",
                    "now_ms",
                    "coordinator_epoch",
                    "live",
                    "effects",
                    "read",
                ],
            )?;
            let read = match m.get("read") {
                None | Some(Value::Null) => None,
                Some(_) => Some(convert::store_from(&get::<wire::Store>(m, "read", &root)?)),
            };
            Ok(Record::Start {
                now_ms: get(m, "now_ms", &root)?,
                coordinator_epoch: get(m, "coordinator_epoch", &root)?,
                live: get(m, "live", &root)?,
                effects: effects(m, &root)?,
                read,
            })
        }
        _ => {
            let m = object(&v, &root, &["type", "now_ms", "input", "effects", "store"])?;
            let input: wire::Input = get(m, "input", &root)?;
            Ok(Record::Input {
                now_ms: get(m, "now_ms", &root)?,
                input: convert::input_from(&input),
                effects: effects(m, &root)?,
                store: get::<Ops>(m, "store", &root)?.0,
            })
        }
    }
}

fn effects(m: &serde_json::Map<String, Value>, p: &Path) -> Result<Vec<mgr::Effect>, WireError> {
    let list: Vec<wire::Effect> = get(m, "effects", p)?;
    let at = p.field("effects");
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            convert::effect_from(e).ok_or_else(|| WireError::Type {
                path: Path::Index(&at, i).to_string(),
                expected: "an effect the manager can emit",
                found: format!("{e:?}"),
            })
        })
        .collect()
}

/// `store`: `{"ops": n, "failed": k|null, "failures": f}`.
struct Ops(StoreOps);

impl Decode for Ops {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let m = object(v, p, &["ops", "failed", "failures"])?;
        let ops = StoreOps {
            ops: get(m, "ops", p)?,
            failed: get(m, "failed", p)?,
            failures: get(m, "failures", p)?,
        };
        let consistent = match ops.failed {
            None => ops.failures == 0,
            Some(k) => k >= 1 && k <= ops.ops && ops.failures >= 1 && ops.failures <= ops.ops,
        };
        if !consistent {
            return Err(WireError::Type {
                path: p.to_string(),
                expected: "failed in 1..=ops exactly when failures > 0",
                found: format!("{ops:?}"),
            });
        }
        Ok(Ops(ops))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"log":"rebalance-coordinator-log","version":1}"#;

    #[test]
    fn a_bad_field_is_named_with_its_line() {
        let text = format!(
            "{HEAD}\n{}\n",
            r#"{"type":"input","now_ms":0,"input":{"type":"server_down","server":"1"},"effects":[],"store":{"ops":0,"failed":null,"failures":0}}"#
        );
        let e = parse(&text).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("input.server"), "{}", e.message);
    }

    #[test]
    fn a_torn_last_line_is_skipped_and_reported() {
        let text = format!("{HEAD}\n{{\"type\":\"inp");
        let log = parse(&text).unwrap();
        assert_eq!(log.torn, vec![2]);
        assert!(log.lines.is_empty());
        // The same line with its newline was written whole: it is an error, not a tear.
        let e = parse(&format!("{text}\n")).unwrap_err();
        assert_eq!(e.line, 2);
    }

    const START: &str =
        r#"{"type":"start","now_ms":0,"coordinator_epoch":2,"live":[0],"effects":[]}"#;

    #[test]
    fn a_torn_line_before_a_start_is_skipped_and_reported() {
        let log = parse(&format!("{HEAD}\n{{\"type\":\"inp\n{START}\n")).unwrap();
        assert_eq!(log.torn, vec![2]);
        assert_eq!(log.lines.len(), 1);
        // Before anything but a start, or when it is not JSON cut short, it is an error.
        let tick = r#"{"type":"input","now_ms":0,"input":{"type":"tick"},"effects":[],"store":{"ops":0,"failed":null,"failures":0}}"#;
        assert_eq!(
            parse(&format!("{HEAD}\n{{\"type\":\"inp\n{tick}\n"))
                .unwrap_err()
                .line,
            2
        );
        assert_eq!(
            parse(&format!("{HEAD}\n{{\"type\"}}\n{START}\n"))
                .unwrap_err()
                .line,
            2
        );
    }

    #[test]
    fn a_failed_index_beyond_the_operations_is_refused() {
        let text = format!(
            "{HEAD}\n{}\n",
            r#"{"type":"input","now_ms":0,"input":{"type":"tick"},"effects":[],"store":{"ops":1,"failed":2,"failures":1}}"#
        );
        let e = parse(&text).unwrap_err();
        assert!(e.message.contains("field `store`"), "{}", e.message);
    }
}
