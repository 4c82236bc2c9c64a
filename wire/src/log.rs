//! The coordinator log of `spec/log-format.md`, written by a host (never by the core, whose
//! effects are already data): one JSON object per line, flushed line by line, so a host that
//! dies mid-write leaves at most a torn last line, which `rebalance-conformance validate`
//! reports and ignores.
//!
//! A host wraps its store in [`Recorded`], which counts the store operations an input makes and
//! remembers which one failed, and calls [`LogWriter::start`] after each `Manager::start` and
//! [`LogWriter::input`] after each `Manager::handle`. Inputs and effects are encoded as the
//! driver protocol encodes them ([`crate`]).

use std::collections::BTreeSet;
use std::io::{self, Write};

use serde_json::{json, Value};

use rebalance_manager::store::{ClusterState, PersistedState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Effect, Epoch, Input, ServerId, TaskNode};

use crate::convert;

/// The log format's name and version, in the header line.
pub const FORMAT: &str = "rebalance-coordinator-log";
/// The version [`LogWriter`] writes and the validator reads.
pub const VERSION: u64 = 1;

/// The store operations of one input: how many, and which one failed (1-based), if any.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StoreOps {
    /// Operations made, the failed one included.
    pub ops: u64,
    /// The 1-based index of the first failed operation.
    pub failed: Option<u64>,
    /// Operations that failed (more than one cannot be explained by the model, which fails at
    /// most one per step; the validator says so).
    pub failures: u64,
}

/// Writes one record per line.
pub struct LogWriter<W: Write> {
    out: W,
}

impl<W: Write> LogWriter<W> {
    /// Writes the header. `model` is the model configuration (the format of
    /// `model/configs/*.json`) that describes this cluster, if the host can state it; without it
    /// the validator needs `--config`.
    pub fn new(out: W, model: Option<Value>) -> io::Result<Self> {
        let mut w = LogWriter { out };
        let mut header = json!({"log": FORMAT, "version": VERSION});
        if let Some(m) = model {
            header["model"] = m;
        }
        w.line(&header)?;
        Ok(w)
    }

    /// An incarnation started (R17): the epoch it took, the servers it found live, the start's
    /// effects, and, if the host read it, the store as the incarnation found it (its own epoch
    /// written, the task and every bucket's metadata): the validator then checks that every
    /// write acknowledged before a crash is there, and nothing else but what the crash cut.
    pub fn start(
        &mut self,
        now_ms: u64,
        coordinator_epoch: Epoch,
        live: &BTreeSet<ServerId>,
        effects: &[Effect],
        read: Option<&PersistedState>,
    ) -> io::Result<()> {
        let mut v = json!({
            "type": "start",
            "now_ms": now_ms,
            "coordinator_epoch": coordinator_epoch,
            "live": live.iter().collect::<Vec<_>>(),
            "effects": effects_json(effects)?,
        });
        if let Some(store) = read {
            v["read"] = serde_json::to_value(convert::store(store)).map_err(io::Error::other)?;
        }
        self.line(&v)
    }

    /// One input handled at `now_ms`, with its effects in emission order and its store
    /// operations.
    pub fn input(
        &mut self,
        now_ms: u64,
        input: &Input,
        effects: &[Effect],
        store: StoreOps,
    ) -> io::Result<()> {
        let v = json!({
            "type": "input",
            "now_ms": now_ms,
            "input": serde_json::to_value(convert::input(input)).map_err(io::Error::other)?,
            "effects": effects_json(effects)?,
            "store": {"ops": store.ops, "failed": store.failed, "failures": store.failures},
        });
        self.line(&v)
    }

    /// The host stopped with nothing in flight and nothing queued, its coordinator idle (no
    /// rebalance in progress, nothing timed). The validator then requires a model state in which
    /// the coordinator has nothing left to do: a log that stops while the model would still
    /// retry or wait is not explained. A host that stops for another reason (a crash, a kill)
    /// writes no end record.
    pub fn end(&mut self, now_ms: u64) -> io::Result<()> {
        self.line(&json!({"type": "end", "now_ms": now_ms}))
    }

    /// One record, handed to the writer in one piece: a host killed mid-write then leaves at
    /// most one torn line, and an unbuffered file costs one system call per record.
    fn line(&mut self, v: &Value) -> io::Result<()> {
        let mut text = serde_json::to_vec(v).map_err(io::Error::other)?;
        text.push(b'\n');
        self.out.write_all(&text)?;
        self.out.flush()
    }

    /// The writer (a test reads what was written).
    pub fn get_ref(&self) -> &W {
        &self.out
    }
}

impl LogWriter<std::fs::File> {
    /// Continues the log at `path`, which a host that died (killed, crashed) left behind: its
    /// header is kept, and a torn last line (the record the host was writing when it died) is
    /// ended with a newline, so it stays in the log as evidence and the next record starts a
    /// line of its own. The validator accepts a torn line only as the last line or just before
    /// a `start`. Returns the writer and what the log says about where the run stopped; or
    /// `None` if the file holds no whole line (the host that created it died before its header
    /// was written), in which case it is emptied for a new log to be written into.
    pub fn append(path: &std::path::Path) -> io::Result<Option<(Self, Resume)>> {
        let text = std::fs::read(path)?;
        if !text.contains(&b'\n') {
            std::fs::OpenOptions::new()
                .write(true)
                .truncate(true)
                .open(path)?;
            return Ok(None);
        }
        let bad = |why: String| io::Error::new(io::ErrorKind::InvalidData, why);
        let complete = text.ends_with(b"\n");
        let mut lines = text.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let header: Value = lines
            .next()
            .and_then(|l| serde_json::from_slice(l).ok())
            .ok_or_else(|| bad(format!("{}: no log header on line 1", path.display())))?;
        if header.get("log").and_then(Value::as_str) != Some(FORMAT)
            || header.get("version").and_then(Value::as_u64) != Some(VERSION)
        {
            return Err(bad(format!(
                "{}: not a {FORMAT} version {VERSION} log",
                path.display()
            )));
        }
        let records: Vec<&[u8]> = lines.collect();
        let torn = !complete && !records.is_empty();
        let whole = if torn {
            &records[..records.len() - 1]
        } else {
            &records[..]
        };
        let mut resume = Resume {
            now_ms: 0,
            torn,
            ended: false,
            records: whole.len(),
            last_epoch: None,
        };
        for r in whole {
            let v: Value = serde_json::from_slice(r).unwrap_or(Value::Null);
            if v.get("type").and_then(Value::as_str) == Some("start") {
                let e = v.get("coordinator_epoch").and_then(Value::as_u64);
                resume.last_epoch = resume.last_epoch.max(e);
            }
        }
        if let Some(last) = whole.last() {
            let v: Value = serde_json::from_slice(last).map_err(|e| {
                bad(format!(
                    "{}: the last whole line is not a record: {e}",
                    path.display()
                ))
            })?;
            resume.now_ms = v
                .get("now_ms")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad(format!("{}: the last record has no now_ms", path.display())))?;
            resume.ended = v.get("type").and_then(Value::as_str) == Some("end");
        }
        let mut out = std::fs::OpenOptions::new().append(true).open(path)?;
        if !complete && !text.is_empty() {
            out.write_all(b"\n")?;
            out.flush()?;
        }
        Ok(Some((LogWriter { out }, resume)))
    }
}

/// Where a log that [`LogWriter::append`] continues stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resume {
    /// The clock of the last whole record: a new incarnation starts there (spec/log-format.md,
    /// "Time": the clock moves only at a logged tick).
    pub now_ms: u64,
    /// The last line was torn (the host died writing it).
    pub torn: bool,
    /// The last whole record is `end`: the run finished.
    pub ended: bool,
    /// Whole records after the header.
    pub records: usize,
    /// The highest coordinator epoch a `start` logged: the next incarnation must elect above it,
    /// or the log is of another store.
    pub last_epoch: Option<u64>,
}

fn effects_json(effects: &[Effect]) -> io::Result<Vec<Value>> {
    effects
        .iter()
        .map(|e| serde_json::to_value(convert::effect(e)).map_err(io::Error::other))
        .collect()
}

/// A store that counts its operations for the log, around any adapter. Every call of the
/// storage port is one operation, as spec 9 counts them (the model fails "the k-th store
/// operation of a step").
pub struct Recorded<S> {
    /// The adapter.
    pub inner: S,
    ops: StoreOps,
}

impl<S> Recorded<S> {
    /// Wraps `inner`, with nothing counted.
    pub fn new(inner: S) -> Self {
        Recorded {
            inner,
            ops: StoreOps::default(),
        }
    }

    /// The operations since the last call, and starts counting again.
    pub fn take(&mut self) -> StoreOps {
        std::mem::take(&mut self.ops)
    }

    fn count<T>(&mut self, r: Result<T, StoreError>) -> Result<T, StoreError> {
        self.ops.ops += 1;
        if r.is_err() {
            self.ops.failures += 1;
            self.ops.failed.get_or_insert(self.ops.ops);
        }
        r
    }
}

impl<S: Store> Store for Recorded<S> {
    fn elect_coordinator(&mut self) -> Result<Epoch, StoreError> {
        let r = self.inner.elect_coordinator();
        self.count(r)
    }
    fn load_cluster(&mut self) -> Result<ClusterState, StoreError> {
        let r = self.inner.load_cluster();
        self.count(r)
    }
    fn read_task(&mut self) -> Result<Option<TaskNode>, StoreError> {
        let r = self.inner.read_task();
        self.count(r)
    }
    fn write_task(&mut self, e: Epoch, task: &TaskNode) -> Result<(), StoreError> {
        let r = self.inner.write_task(e, task);
        self.count(r)
    }
    fn write_bucket(
        &mut self,
        e: Epoch,
        b: BucketId,
        rec: &BucketRecord,
    ) -> Result<(), StoreError> {
        let r = self.inner.write_bucket(e, b, rec);
        self.count(r)
    }
    fn mark_deleted(&mut self, e: Epoch, b: BucketId) -> Result<(), StoreError> {
        let r = self.inner.mark_deleted(e, b);
        self.count(r)
    }
    fn inspect(&self) -> Option<&PersistedState> {
        self.inner.inspect()
    }
}
