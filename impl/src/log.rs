//! The coordinator log of `spec/log-format.md`, written by a host (never by the core, whose
//! effects are already data): one JSON object per line, flushed line by line, so a host that
//! dies mid-write leaves at most a torn last line, which `rebalance-conformance validate`
//! reports and ignores.
//!
//! A host wraps its store in [`Recorded`], which counts the store operations an input makes and
//! remembers which one failed, and calls [`LogWriter::start`] after each `Manager::start` and
//! [`LogWriter::input`] after each `Manager::handle`. Inputs and effects are encoded as the
//! driver protocol encodes them ([`crate::wire`]).

use std::collections::BTreeSet;
use std::io::{self, Write};

use serde_json::{json, Value};

use crate::store::{ClusterState, PersistedState, Store, StoreError};
use crate::wire::convert;
use crate::{BucketId, BucketRecord, Effect, Epoch, Input, ServerId, TaskNode};

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

    /// An incarnation started (R17): the epoch it took, the servers it found live, and the
    /// start's effects.
    pub fn start(
        &mut self,
        now_ms: u64,
        coordinator_epoch: Epoch,
        live: &BTreeSet<ServerId>,
        effects: &[Effect],
    ) -> io::Result<()> {
        let v = json!({
            "type": "start",
            "now_ms": now_ms,
            "coordinator_epoch": coordinator_epoch,
            "live": live.iter().collect::<Vec<_>>(),
            "effects": effects_json(effects)?,
        });
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

    fn line(&mut self, v: &Value) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, v).map_err(io::Error::other)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    /// The writer (a test reads what was written).
    pub fn get_ref(&self) -> &W {
        &self.out
    }
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
