//! Reading a coordinator log (`spec/log-format.md`): one JSON object per line, each decoded with
//! the path of every field, so that a malformed line is reported as `line 7: field
//! input.context.bucket_epoch: expected an unsigned integer, found "1"`.

use rebalance_manager as mgr;
use rebalance_wire::log::{StoreOps, VERSION};
use rebalance_wire::{self as wire, convert, decode};
use serde_json::Value;

use decode::WireError;

/// A record of the log after the header, with its inputs, effects and store in the manager's
/// types: [`wire::log::Record`] (the one definition of the record) converted once, on reading,
/// so that the checks compare it with the manager's values directly.
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
    let h: wire::log::Header = decode::line(text)?;
    if h.version != VERSION {
        return Err(WireError::Type {
            path: "version".into(),
            expected: "version 2 (the only one this validator reads)",
            found: h.version.to_string(),
        });
    }
    Ok(h.model.map(Value::Object))
}

fn record(text: &str) -> Result<Record, WireError> {
    Ok(match decode::line(text)? {
        wire::log::Record::End { now_ms } => Record::End { now_ms },
        wire::log::Record::Start {
            now_ms,
            coordinator_epoch,
            live,
            effects: e,
            read,
        } => Record::Start {
            now_ms,
            coordinator_epoch,
            live,
            effects: effects(&e)?,
            read: read.as_ref().map(convert::store_from),
        },
        wire::log::Record::Input {
            now_ms,
            input,
            effects: e,
            store,
        } => {
            if !store.consistent() {
                return Err(WireError::Type {
                    path: "store".into(),
                    expected: "failed in 1..=ops exactly when failures is in 1..=ops",
                    found: format!("{store:?}"),
                });
            }
            Record::Input {
                now_ms,
                input: convert::input_from(&input),
                effects: effects(&e)?,
                store,
            }
        }
    })
}

/// The effects of a record in the manager's types; one the manager cannot emit (a server's
/// message) is refused at its index.
fn effects(list: &[wire::Effect]) -> Result<Vec<mgr::Effect>, WireError> {
    list.iter()
        .enumerate()
        .map(|(i, e)| {
            convert::effect_from(e).ok_or_else(|| WireError::Type {
                path: format!("effects[{i}]"),
                expected: "an effect the manager can emit",
                found: format!("{e:?}"),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r#"{"log":"rebalance-coordinator-log","version":2}"#;

    #[test]
    fn a_bad_field_is_named_with_its_line() {
        let text = format!(
            "{HEAD}\n{}\n",
            r#"{"type":"input","now_ms":0,"input":{"type":"server_crashed","server":"1"},"effects":[],"store":{"ops":0,"failed":null,"failures":0}}"#
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
