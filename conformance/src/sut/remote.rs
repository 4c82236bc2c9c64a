//! An implementation under test in a child process, as a [`ManagerSide`].
//!
//! A step's requests are queued and sent at once at [`ManagerSide::settle`] with a `state`
//! request at the end, so a step costs one round trip. A walk's branch points are snapshots
//! in the child, named by the harness: [`ManagerSide::preserve`] queues `snapshot N`; a handle
//! whose state is not the child's current one queues `restore N` before its next input; a
//! snapshot no handle refers to any more is released with the next batch. A forked handle is a
//! second reference to the same snapshot, so a fork costs nothing in the child.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::rc::Rc;

use rebalance_manager as mgr;
use rebalance_manager_stdio::convert;
use rebalance_manager_stdio::wire::{self, Request, Response};

use super::driver::{quote, Driver, DriverError, SutCommand};
use super::{Incarnation, ManagerSide};
use crate::projection::{self, manager::AgeCaps};

/// The child and what the harness knows of its current state.
struct Conn {
    driver: Driver,
    /// Requests not yet sent.
    pending: Vec<Request>,
    /// Snapshots no handle refers to any more, released with the next batch.
    released: Rc<RefCell<Vec<u64>>>,
    /// Counts changes of the child's current state; a live handle holds the count it made.
    generation: u64,
    /// The snapshot the child's current state equals, if any.
    current_snapshot: Option<u64>,
    next_id: u64,
}

/// A snapshot in the child; released when the last handle to it goes.
struct Saved {
    id: u64,
    released: Rc<RefCell<Vec<u64>>>,
}

impl Drop for Saved {
    fn drop(&mut self) {
        self.released.borrow_mut().push(self.id);
    }
}

/// Which state of the child a handle stands for.
#[derive(Clone)]
enum At {
    /// The child's current state, as of generation `n`.
    Live(u64),
    /// A snapshot.
    Saved(Rc<Saved>),
}

/// A handle to one state of the implementation under test.
pub struct Remote {
    conn: Rc<RefCell<Conn>>,
    at: At,
    /// The observation at this state (shared by forks).
    seen: Rc<wire::Observation>,
    /// Changed since the last settle (an unchanged state needs no new observation).
    changed: bool,
}

fn live(l: &BTreeSet<mgr::ServerId>) -> Vec<u32> {
    l.iter().copied().collect()
}

fn expected(r: &Request) -> &'static str {
    match r {
        Request::Hello { .. } => "a `hello` line",
        Request::Start { .. } | Request::Restart { .. } => "an `effects` or `refused` line",
        Request::Input { .. } => "an `effects` line",
        Request::State => "a `state` line",
        _ => "a `done` line naming the op",
    }
}

impl Conn {
    /// Sends the pending requests with `then` after them, and the releases; returns the
    /// answers to the pending requests and to `then`, effects converted.
    fn flush(&mut self, then: Option<Request>) -> Result<Vec<Answer>, DriverError> {
        let mut batch = std::mem::take(&mut self.pending);
        batch.extend(then);
        let answered = batch.len();
        for id in self.released.borrow_mut().drain(..) {
            if self.current_snapshot == Some(id) {
                self.current_snapshot = None;
            }
            batch.push(Request::Release { id });
        }
        if batch.is_empty() {
            return Ok(Vec::new());
        }
        let answers = self.driver.exchange(&batch)?;
        let mut out = Vec::with_capacity(answered);
        for (request, (line, response)) in batch.iter().zip(answers) {
            let unexpected = |driver: &mut Driver| {
                driver.fail(DriverError::Unexpected {
                    request: quote(&request.to_line()),
                    line: quote(&line),
                    expected: expected(request).into(),
                })
            };
            let answer = match (request, response) {
                (
                    Request::Start { .. } | Request::Restart { .. } | Request::Input { .. },
                    Response::Effects(effects),
                ) => {
                    let mut converted = Vec::with_capacity(effects.len());
                    for e in &effects {
                        match convert::effect_from(e) {
                            Some(e) => converted.push(e),
                            None => return Err(unexpected(&mut self.driver)),
                        }
                    }
                    Answer::Effects(converted)
                }
                (Request::Start { .. } | Request::Restart { .. }, Response::Refused(why)) => {
                    Answer::Refused(why)
                }
                (Request::State, Response::State(o)) => Answer::State(o),
                (r, Response::Done(op)) if op == r.op() && !matches!(r, Request::State) => {
                    Answer::Done
                }
                _ => return Err(unexpected(&mut self.driver)),
            };
            out.push(answer);
        }
        out.truncate(answered);
        Ok(out)
    }
}

/// One answer, checked against its request.
enum Answer {
    Effects(Vec<mgr::Effect>),
    Refused(String),
    State(Box<wire::Observation>),
    Done,
}

impl Remote {
    /// Makes this handle's state the child's current one (queuing a restore if needed) before
    /// a change, and marks the change.
    fn begin(&mut self) -> Result<(), DriverError> {
        let mut c = self.conn.borrow_mut();
        match &self.at {
            At::Live(n) if *n == c.generation => {}
            At::Live(_) => {
                return Err(DriverError::Internal(
                    "a state of the implementation was changed while a handle still needed it"
                        .into(),
                ))
            }
            At::Saved(s) => {
                if c.current_snapshot != Some(s.id) {
                    c.pending.push(Request::Restore { id: s.id });
                }
            }
        }
        c.generation += 1;
        c.current_snapshot = None;
        self.at = At::Live(c.generation);
        self.changed = true;
        Ok(())
    }

    /// Sends what is pending with `then` and returns the effects of every answer, in order
    /// (`Err(why)` if a start was refused), and the observation if `then` was `state`.
    fn flush(
        &mut self,
        then: Option<Request>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, DriverError> {
        let answers = self.conn.borrow_mut().flush(then)?;
        for a in answers {
            match a {
                Answer::Effects(e) => effects.extend(e),
                Answer::Refused(why) => return Ok(Err(why)),
                Answer::State(o) => self.seen = Rc::from(o),
                Answer::Done => {}
            }
        }
        Ok(Ok(()))
    }
}

fn empty_observation() -> wire::Observation {
    wire::Observation {
        store: wire::Store {
            coordinator_epoch: 0,
            task: None,
            buckets: Vec::new(),
        },
        coordinator: wire::Coordinator {
            coordinator_epoch: 0,
            now_ms: 0,
            live: Vec::new(),
            rid: None,
            overall: None,
            status: Vec::new(),
            pending: Vec::new(),
            attempts: Vec::new(),
            queued_timeouts: Vec::new(),
            queued_reconciles: Vec::new(),
            flags: wire::Flags::default(),
            restored: 0,
        },
        store_ops: 0,
        fault_pending: false,
        invariant_violation: None,
    }
}

impl ManagerSide for Remote {
    type Launcher = SutCommand;
    type Error = DriverError;

    fn start(
        sut: &SutCommand,
        store: mgr::MemStore,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<Self, String>, DriverError> {
        let conn = Conn {
            driver: Driver::spawn(sut)?,
            pending: vec![Request::Start {
                config: convert::config(at.config),
                store: convert::store(store.state()),
                live: live(&at.live),
                now_ms: at.now_ms,
            }],
            released: Rc::default(),
            generation: 0,
            current_snapshot: None,
            next_id: 1,
        };
        let mut remote = Remote {
            conn: Rc::new(RefCell::new(conn)),
            at: At::Live(0),
            seen: Rc::new(empty_observation()),
            changed: false,
        };
        Ok(remote
            .flush(Some(Request::State), effects)?
            .map(|()| remote))
    }

    fn restart(
        &mut self,
        at: Incarnation<'_>,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<Result<(), String>, DriverError> {
        self.begin()?;
        // Synchronous: whether the manager refused to start decides the rest of the step.
        self.flush(
            Some(Request::Restart {
                live: live(&at.live),
                now_ms: at.now_ms,
            }),
            effects,
        )
    }

    fn fail_nth_store_op(&mut self, k: u64) -> Result<(), DriverError> {
        self.begin()?;
        self.conn
            .borrow_mut()
            .pending
            .push(Request::FailStoreOp { nth: k });
        Ok(())
    }

    fn input(
        &mut self,
        now_ms: u64,
        input: mgr::Input,
        _: &mut Vec<mgr::Effect>,
    ) -> Result<(), DriverError> {
        self.begin()?;
        self.conn.borrow_mut().pending.push(Request::Input {
            now_ms,
            input: convert::input(&input),
        });
        Ok(())
    }

    fn settle(&mut self, effects: &mut Vec<mgr::Effect>) -> Result<(), DriverError> {
        if !std::mem::take(&mut self.changed) {
            // An environment step: nothing was sent, the observation still holds.
            return Ok(());
        }
        match self.flush(Some(Request::State), effects)? {
            Ok(()) => Ok(()),
            Err(why) => Err(DriverError::Internal(format!(
                "a start was refused outside start or restart: {why}"
            ))),
        }
    }

    fn store_ops(&self) -> u64 {
        self.seen.store_ops
    }

    fn fault_pending(&self) -> bool {
        self.seen.fault_pending
    }

    fn project(&self, queue: &VecDeque<mgr::Event>, caps: AgeCaps, o: &mut projection::State) {
        let store = convert::store_from(&self.seen.store);
        let snap = convert::coordinator_from(&self.seen.coordinator);
        projection::manager::state(&store, &snap, queue, caps, o);
    }

    fn invariant_violation(&self) -> Option<String> {
        self.seen.invariant_violation.clone()
    }

    fn progress(&self) -> mgr::Progress {
        let c = &self.seen.coordinator;
        let buckets: BTreeMap<mgr::BucketId, mgr::BucketStatus> = c
            .status
            .iter()
            .map(|s| (s.bucket, convert::bucket_status_from(s.status)))
            .collect();
        let mut counts = mgr::StatusCounts::default();
        for s in buckets.values() {
            *match s {
                mgr::BucketStatus::NotStarted => &mut counts.not_started,
                mgr::BucketStatus::Rebalancing => &mut counts.rebalancing,
                mgr::BucketStatus::Timeout => &mut counts.timeout,
                mgr::BucketStatus::Completed => &mut counts.completed,
                mgr::BucketStatus::Failed => &mut counts.failed,
                mgr::BucketStatus::Canceled => &mut counts.canceled,
            } += 1;
        }
        mgr::Progress {
            rid: c.rid,
            overall: c.overall.map(convert::overall_from),
            buckets,
            counts,
        }
    }

    fn fork(&mut self) -> Result<Self, DriverError> {
        self.preserve()?;
        Ok(Remote {
            conn: Rc::clone(&self.conn),
            at: self.at.clone(),
            seen: Rc::clone(&self.seen),
            changed: false,
        })
    }

    fn preserve(&mut self) -> Result<(), DriverError> {
        let mut c = self.conn.borrow_mut();
        match &self.at {
            At::Saved(_) => Ok(()),
            At::Live(n) if *n == c.generation => {
                let id = c.next_id;
                c.next_id += 1;
                c.pending.push(Request::Snapshot { id });
                c.current_snapshot = Some(id);
                self.at = At::Saved(Rc::new(Saved {
                    id,
                    released: Rc::clone(&c.released),
                }));
                Ok(())
            }
            At::Live(_) => Err(DriverError::Internal(
                "a state of the implementation was lost before it was kept".into(),
            )),
        }
    }
}
