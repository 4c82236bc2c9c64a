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

use serde_json::{Map, Value};

use rebalance_manager::store::{ClusterState, PersistedState, Store, StoreError};
use rebalance_manager::{BucketId, BucketRecord, Effect, Epoch, Input, ServerId, TaskNode};

use crate::decode::{wire_struct, wire_tagged};
use crate::{convert, Store as StoreJson};

/// The log format's name and version, in the header line.
pub const FORMAT: &str = "rebalance-coordinator-log";
/// The version [`LogWriter`] writes and the validator reads.
pub const VERSION: u64 = 2;

wire_struct! {
    /// The first line of a log. `version` is checked by the reader, which knows which versions
    /// it reads; `model` is the model configuration (the format of `model/configs/*.json`),
    /// which the model's own loader reads.
    #[derive(Clone, Debug, PartialEq)]
    pub struct Header {
        pub log: String as one_of(&[FORMAT]),
        pub version: u64,
        pub model: Option<Map<String, Value>>,
    }
}

wire_struct! {
    /// The store operations of one input: how many, and which one failed (1-based), if any.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct StoreOps {
        /// Operations made, the failed one included.
        pub ops: u64,
        /// The 1-based index of the first failed operation.
        pub failed: Option<u64>,
        /// Operations that failed (more than one cannot be explained by the model, which fails
        /// at most one per step; the validator says so).
        pub failures: u64,
    }
}

impl StoreOps {
    /// `failed` is in `1..=ops` exactly when `failures` is in `1..=ops` (spec/log-format.md);
    /// what a [`Recorded`] store counts always is.
    pub fn consistent(&self) -> bool {
        match self.failed {
            None => self.failures == 0,
            Some(k) => (1..=self.ops).contains(&k) && (1..=self.ops).contains(&self.failures),
        }
    }
}

wire_tagged! {
    /// A record of the log after its header, tagged with `type`: the one definition that hosts
    /// write (through [`LogWriter`]) and the validator reads.
    #[derive(Clone, Debug, PartialEq, Eq)]
    #[tag = "type"]
    pub enum Record {
        /// An incarnation started (R17): the epoch it took, the servers it found live, the
        /// start's effects, and the store as it found it, if the host read it.
        "start" => Start {
            now_ms: u64,
            coordinator_epoch: u64,
            live: Vec<u32>,
            effects: Vec<crate::Effect>,
            read: Option<StoreJson>,
        },
        /// One input handled, with its effects in emission order and its store operations.
        "input" => Input {
            now_ms: u64,
            input: crate::Input,
            effects: Vec<crate::Effect>,
            store: StoreOps,
        },
        /// The host stopped, its coordinator idle; the last record.
        "end" => End { now_ms: u64 },
    }
}

impl Record {
    /// The clock the record was written at.
    pub fn now_ms(&self) -> u64 {
        match self {
            Record::Start { now_ms, .. }
            | Record::Input { now_ms, .. }
            | Record::End { now_ms } => *now_ms,
        }
    }
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
        let model = match model {
            None => None,
            Some(Value::Object(m)) => Some(m),
            Some(other) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("the log header's model must be an object, not {other}"),
                ))
            }
        };
        let mut w = LogWriter { out };
        w.line(&Header {
            log: FORMAT.into(),
            version: VERSION,
            model,
        })?;
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
        self.line(&Record::Start {
            now_ms,
            coordinator_epoch,
            live: live.iter().copied().collect(),
            effects: effects.iter().map(convert::effect).collect(),
            read: read.map(convert::store),
        })
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
        self.line(&Record::Input {
            now_ms,
            input: convert::input(input),
            effects: effects.iter().map(convert::effect).collect(),
            store,
        })
    }

    /// The host stopped with nothing in flight and nothing queued, its coordinator idle (no
    /// rebalance in progress, nothing timed). The validator then requires a model state in which
    /// the coordinator has nothing left to do: a log that stops while the model would still
    /// retry or wait is not explained. A host that stops for another reason (a crash, a kill)
    /// writes no end record.
    pub fn end(&mut self, now_ms: u64) -> io::Result<()> {
        self.line(&Record::End { now_ms })
    }

    /// One record, handed to the writer in one piece: a host killed mid-write then leaves at
    /// most one torn line, and an unbuffered file costs one system call per record.
    fn line(&mut self, v: &impl serde::Serialize) -> io::Result<()> {
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
        let header = lines
            .next()
            .and_then(|l| std::str::from_utf8(l).ok())
            .and_then(|l| crate::decode::line::<Header>(l).ok())
            .ok_or_else(|| bad(format!("{}: no log header on line 1", path.display())))?;
        if header.version != VERSION {
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
        let decode = |r: &[u8]| {
            std::str::from_utf8(r)
                .map_err(|e| e.to_string())
                .and_then(|t| crate::decode::line::<Record>(t).map_err(|e| e.to_string()))
        };
        let mut resume = Resume {
            now_ms: 0,
            torn,
            ended: false,
            records: whole.len(),
            last_epoch: None,
        };
        // A whole line that is not a record is a torn line an earlier append ended: skipped here
        // as the validator skips it (it checks that such a line comes just before a `start`).
        for r in whole {
            if let Ok(Record::Start {
                coordinator_epoch, ..
            }) = decode(r)
            {
                resume.last_epoch = resume.last_epoch.max(Some(coordinator_epoch));
            }
        }
        if let Some(last) = whole.last() {
            let record = decode(last).map_err(|e| {
                bad(format!(
                    "{}: the last whole line is not a record: {e}",
                    path.display()
                ))
            })?;
            resume.now_ms = record.now_ms();
            resume.ended = matches!(record, Record::End { .. });
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
