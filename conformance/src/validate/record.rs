//! A manager side that writes the coordinator log of what it was given and did, as a host would
//! (`rebalance_wire::log`): the way to get the log of a manager run along a model trace,
//! whose validation must then succeed, and whose records a test can spoil one at a time.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

use rebalance_manager as mgr;
use rebalance_wire::log::{LogWriter, StoreOps};

use crate::projection::{self, manager::AgeCaps};
use crate::sut::{Incarnation, ManagerSide, Seen};

/// The log lines written so far, shared by every fork of a [`Recording`] (a lockstep forks its
/// side only to explore; a replay along one trace never does).
pub type Sink = Arc<Mutex<LogWriter<Vec<u8>>>>;

/// The in-process manager, logging every start and input to a [`Sink`].
#[derive(Clone)]
pub struct Recording {
    inner: mgr::Manager<mgr::MemStore>,
    sink: Sink,
    /// An armed store failure: the operation count it fires after.
    armed: Option<u64>,
}

/// A new empty log with a header carrying `model` (the model configuration, as JSON).
pub fn sink(model: Option<serde_json::Value>) -> Sink {
    Arc::new(Mutex::new(
        LogWriter::new(Vec::new(), model).expect("writing to memory"),
    ))
}

/// The log written to `sink`, as text.
pub fn text(sink: &Sink) -> String {
    let w = sink.lock().expect("sink");
    String::from_utf8(w.get_ref().clone()).expect("the log is UTF-8")
}

impl Recording {
    fn log_start(&self, now_ms: u64, effects: &[mgr::Effect]) {
        let m = &self.inner;
        self.sink
            .lock()
            .expect("sink")
            .start(
                now_ms,
                m.coordinator_epoch(),
                m.live(),
                effects,
                mgr::Store::inspect(m.store()),
            )
            .expect("writing to memory");
    }
}

impl ManagerSide for Recording {
    type Launcher = Sink;
    type Error = Infallible;

    fn start(
        sink: &Sink,
        store: mgr::MemStore,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<Self, String>, Infallible> {
        let now = at.now_ms;
        let before = effects.len();
        let started = <mgr::Manager<mgr::MemStore> as ManagerSide>::start(&(), store, at, effects)?;
        Ok(started.map(|inner| {
            let r = Recording {
                inner,
                sink: sink.clone(),
                armed: None,
            };
            r.log_start(now, &effects[before..]);
            r
        }))
    }

    fn restart(
        &mut self,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, Infallible> {
        let now = at.now_ms;
        let before = effects.len();
        let r = self.inner.restart(at, effects)?;
        if r.is_ok() {
            self.log_start(now, &effects[before..]);
        }
        Ok(r)
    }

    fn fail_nth_store_op(&mut self, k: u64) -> Result<(), Infallible> {
        self.armed = Some(self.inner.store().op_count() + k);
        self.inner.fail_nth_store_op(k)
    }

    fn input(
        &mut self,
        now_ms: u64,
        input: mgr::Input,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<(), Infallible> {
        let ops_before = self.inner.store().op_count();
        let pending_before = self.inner.store().fault_pending();
        let before = effects.len();
        self.inner.input(now_ms, input.clone(), effects)?;
        let ops = self.inner.store().op_count() - ops_before;
        let fired = pending_before && !self.inner.store().fault_pending();
        let failed = fired.then(|| self.armed.expect("armed") - ops_before);
        if fired {
            self.armed = None;
        }
        let store = StoreOps {
            ops,
            failed,
            failures: u64::from(fired),
        };
        self.sink
            .lock()
            .expect("sink")
            .input(now_ms, &input, &effects[before..], store)
            .expect("writing to memory");
        Ok(())
    }

    fn settle(&mut self, effects: &mut Vec<mgr::Effect>) -> Result<(), Infallible> {
        self.inner.settle(effects)
    }
    fn store_ops(&self) -> u64 {
        self.inner.store_ops()
    }
    fn fault_pending(&self) -> bool {
        self.inner.fault_pending()
    }
    fn project(&self, queue: &VecDeque<mgr::Event>, caps: AgeCaps, o: &mut projection::State) {
        self.inner.project(queue, caps, o)
    }
    fn invariant_violation(&self) -> Option<String> {
        self.inner.invariant_violation()
    }
    fn progress(&self) -> mgr::Progress {
        self.inner.progress()
    }
    fn accessors_disagree(&self, seen: &Seen<'_>) -> Option<String> {
        self.inner.accessors_disagree(seen)
    }
    fn fork(&mut self) -> Result<Self, Infallible> {
        Ok(self.clone())
    }
    fn preserve(&mut self) -> Result<(), Infallible> {
        Ok(())
    }
}

/// The log of the manager driven along `steps` of `model` (every step must be enabled and
/// agree, as in a replay), with the model's configuration in its header.
pub fn log_of(
    model: &rebalance_model::RebalanceModel,
    steps: &[rebalance_model::Action],
) -> Result<String, String> {
    let config = serde_json::to_value(&model.config).map_err(|e| e.to_string())?;
    let sink = sink(Some(config));
    let mut lockstep = crate::lockstep::Lockstep::<Recording>::launch(model, &sink)
        .map_err(|f| format!("{:?}", crate::harness::in_process(f).summary))?;
    for (i, a) in steps.iter().enumerate() {
        match lockstep.try_step(a) {
            Ok(Some(_)) => {}
            Ok(None) => return Err(format!("step {} is not enabled", i + 1)),
            Err(f) => {
                return Err(format!(
                    "step {}: {}",
                    i + 1,
                    crate::harness::in_process(f).summary
                ))
            }
        }
    }
    Ok(text(&sink))
}
