//! One step of the model, mirrored on the manager, and compared.
//!
//! The harness owns what a real host owns around the manager: the manager itself (on an
//! in-memory store with fault injection), the coordinator's FIFO event queue (filled from the
//! manager's `Enqueue` effects) and the clock. Tablet servers and the network are the model's:
//! environment actions change nothing on the manager's side, and every message the manager
//! sends must be exactly what the model's coordinator sent in the same step.

use std::collections::{BTreeSet, VecDeque};
use std::fmt::Write;

use rebalance_manager as mgr;
use rebalance_model as model;
use rebalance_model::{Action, RebalanceModel, StepOutput, SystemState};

use crate::observe::{self, AgeCaps, Observation};
use crate::tokens;

thread_local! {
    /// Reused buffers for the fast comparison (no allocation per edge once warm).
    static SCRATCH: std::cell::RefCell<(Vec<u64>, Vec<u64>)> = const {
        std::cell::RefCell::new((Vec::new(), Vec::new()))
    };
}
use crate::translate::{self, TICK_MS};

/// Where and how the manager differed from the model in one step.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// What differed, in one line.
    pub summary: String,
    /// The model's side, as `key: value` lines.
    pub model: String,
    /// The manager's side, same keys.
    pub manager: String,
}

/// The manager and its host-side surroundings.
#[derive(Clone)]
pub struct Harness {
    pub manager: mgr::Manager<mgr::MemStore>,
    pub queue: VecDeque<mgr::Event>,
    pub now_ms: u64,
    config: mgr::Config,
    caps: AgeCaps,
}

fn live_of(s: &SystemState) -> BTreeSet<mgr::ServerId> {
    s.servers
        .iter()
        .enumerate()
        .filter(|(_, sv)| sv.up)
        .map(|(i, _)| i as mgr::ServerId)
        .collect()
}

impl Harness {
    /// Starts the manager on the model's initial store. The model's initial state is a
    /// coordinator that has started (R17) and found no task (R16), so the harness runs the
    /// manager's `Recover` before comparing.
    pub fn start(model: &RebalanceModel, init: &SystemState) -> Result<Harness, Mismatch> {
        let config = translate::config(&model.config);
        let store = translate::initial_store(init);
        let (manager, effects) = mgr::Manager::start(config.clone(), store, live_of(init), 0)
            .map_err(|e| Mismatch {
                summary: format!("the manager refused to start: {e}"),
                model: String::new(),
                manager: String::new(),
            })?;
        let mut h = Harness {
            manager,
            queue: VecDeque::new(),
            now_ms: 0,
            config,
            caps: AgeCaps::of(&model.config),
        };
        h.absorb(&effects);
        if let Some(mgr::Event::Recover) = h.queue.front() {
            let ev = h.queue.pop_front().expect("front exists");
            let effects = h.manager.handle(0, mgr::Input::Event(ev));
            h.absorb(&effects);
        }
        h.compare_state(init, "initial state")?;
        Ok(h)
    }

    fn absorb(&mut self, effects: &[mgr::Effect]) {
        for e in effects {
            if let mgr::Effect::Enqueue(ev) = e {
                self.queue.push_back(ev.clone());
            }
        }
    }

    /// The manager's projection (for reports).
    pub fn observe(&self) -> Observation {
        observe::of_manager(&self.manager, &self.queue, self.caps)
    }

    fn compare_state(&self, post: &SystemState, when: &str) -> Result<(), Mismatch> {
        let same = SCRATCH.with(|cell| {
            let (a, b) = &mut *cell.borrow_mut();
            tokens::of_model(post, a);
            tokens::of_manager(&self.manager, &self.queue, self.caps, b);
            a == b
        });
        if same {
            return self.check_manager_invariants(post);
        }
        let want = observe::of_model(post);
        let got = self.observe();
        if want == got {
            return Err(Mismatch {
                summary: format!(
                    "harness bug: the fast and the readable projections disagree ({when})"
                ),
                model: want.render(),
                manager: got.render(),
            });
        }
        let first = want
            .0
            .iter()
            .zip(got.0.iter())
            .find(|(a, b)| a != b)
            .map(|(a, _)| a.0.clone())
            .unwrap_or_else(|| "line count".into());
        Err(Mismatch {
            summary: format!("projected state differs ({when}), first at `{first}`"),
            model: want.render(),
            manager: got.render(),
        })
    }

    fn check_manager_invariants(&self, post: &SystemState) -> Result<(), Mismatch> {
        match self.manager.check_invariants() {
            Ok(()) => Ok(()),
            Err(v) => Err(Mismatch {
                summary: format!("the manager broke its own invariant: {v}"),
                model: observe::of_model(post).render(),
                manager: self.observe().render(),
            }),
        }
    }

    /// Runs `action` on the manager and compares with the model's step `pre -> post`, `out`.
    /// Returns the manager's effects.
    pub fn apply(
        &mut self,
        model: &RebalanceModel,
        pre: &SystemState,
        action: &Action,
        post: &SystemState,
        out: &StepOutput,
    ) -> Result<Vec<mgr::Effect>, Mismatch> {
        let ops_before = self.manager.store().op_count();
        let fault = action.fail_store_op();
        if let Some(k) = fault {
            self.manager.store_mut().fail_nth_op(u64::from(k));
        }
        let mut effects = match action {
            Action::Register { .. } => {
                let plan = translate::plan(&model.register_plan(pre));
                self.input(mgr::Input::Register { plan })
            }
            Action::Cancel { .. } => self.input(mgr::Input::Cancel),
            Action::ProcessEvent { event, .. } => {
                let want = translate::event(event);
                match self.queue.pop_front() {
                    Some(front) if front == want => self.input(mgr::Input::Event(front)),
                    other => {
                        return Err(Mismatch {
                            summary: format!(
                                "event queue front differs: model {}, manager {}",
                                observe::model_event(event),
                                other.map_or("(empty)".into(), |e| observe::manager_event(&e))
                            ),
                            model: observe::of_model(pre).render(),
                            manager: self.observe().render(),
                        })
                    }
                }
            }
            Action::DeliverNliResponse { msg, .. } => self.input(translate::nli_response(msg)),
            Action::DeliverAdjustIsr { msg, .. } => self.input(translate::adjust_isr(msg)),
            Action::CrashServer { server } => {
                self.input(mgr::Input::ServerDown(mgr::ServerId::from(*server)))
            }
            Action::RestartServer { server } => {
                self.input(mgr::Input::ServerUp(mgr::ServerId::from(*server)))
            }
            Action::DeleteBucket { bucket } => {
                self.input(mgr::Input::BucketDeleted(mgr::BucketId::from(*bucket)))
            }
            Action::Tick => {
                self.now_ms += TICK_MS;
                self.input(mgr::Input::Tick)
            }
            Action::CrashCoordinator => {
                // R17: the old incarnation's memory and event queue are gone; its store stays.
                let store = self.manager.store().clone();
                self.queue.clear();
                let (m, effects) =
                    mgr::Manager::start(self.config.clone(), store, live_of(pre), self.now_ms)
                        .map_err(|e| Mismatch {
                            summary: format!("the manager refused to restart: {e}"),
                            model: String::new(),
                            manager: String::new(),
                        })?;
                self.manager = m;
                effects
            }
            // Environment only: tablet servers and the network (R21, R22, R24, faults).
            Action::DeliverNli { .. }
            | Action::DeliverAdjustIsrResponse { .. }
            | Action::DropMessage { .. }
            | Action::DuplicateMessage { .. }
            | Action::ProposeIsr { .. } => Vec::new(),
        };
        // Responses the model delivered at the end of the step because they can never be
        // current again (spec 9, "dead messages"): the manager must ignore them as R12 does.
        for r in &out.delivered_dead {
            effects.extend(self.input(translate::nli_response(r)));
        }
        self.absorb(&effects);
        if fault.is_some() && self.manager.store().fault_pending() {
            return Err(self.mismatch(
                post,
                format!(
                    "the model failed store operation {} of this step but the manager performed fewer",
                    fault.unwrap_or(0)
                ),
            ));
        }
        self.compare_effects(action, post, out, &effects)?;
        self.compare_state(post, "after the step")?;
        if action.can_fail_store() {
            let ops = self.manager.store().op_count() - ops_before;
            if ops != u64::from(out.store_ops) {
                return Err(self.mismatch(
                    post,
                    format!(
                        "store operations differ: model {}, manager {ops}",
                        out.store_ops
                    ),
                ));
            }
        }
        Ok(effects)
    }

    fn input(&mut self, input: mgr::Input) -> Vec<mgr::Effect> {
        self.manager.handle(self.now_ms, input)
    }

    fn mismatch(&self, post: &SystemState, summary: String) -> Mismatch {
        Mismatch {
            summary,
            model: observe::of_model(post).render(),
            manager: self.observe().render(),
        }
    }

    fn compare_effects(
        &self,
        action: &Action,
        post: &SystemState,
        out: &StepOutput,
        effects: &[mgr::Effect],
    ) -> Result<(), Mismatch> {
        let register = matches!(action, Action::Register { .. });
        let same = SCRATCH.with(|cell| {
            let (a, b) = &mut *cell.borrow_mut();
            tokens::model_effects(out, a);
            tokens::manager_effects(register, effects, b);
            a == b
        });
        if same {
            return Ok(());
        }
        let want = render_model_effects(out);
        let got = render_manager_effects(action, effects);
        if want == got {
            return Err(Mismatch {
                summary: "harness bug: the fast and the readable effect encodings disagree".into(),
                model: want.join("\n"),
                manager: got.join("\n"),
            });
        }
        let text = |lines: &[String]| {
            if lines.is_empty() {
                "(no effects)".to_string()
            } else {
                lines.join("\n")
            }
        };
        let mut model_text = text(&want);
        let mut manager_text = text(&got);
        let _ = write!(
            model_text,
            "\n--- state after ---\n{}",
            observe::of_model(post).render()
        );
        let _ = write!(
            manager_text,
            "\n--- state after ---\n{}",
            self.observe().render()
        );
        Err(Mismatch {
            summary: "emitted effects differ".into(),
            model: model_text,
            manager: manager_text,
        })
    }
}

/// A LeaderAndIsr as text, from either side's fields.
fn lai_text(leader: Option<u64>, le: u64, isr: Vec<u64>, be: u64, ce: u64) -> String {
    let leader = leader.map_or("-".into(), |x| x.to_string());
    format!("leader={leader} le={le} isr={isr:?} be={be} ce={ce}")
}

fn model_lai(l: &model::LeaderAndIsr) -> String {
    lai_text(
        l.leader.map(u64::from),
        l.leader_epoch.into(),
        l.isr.iter().map(u64::from).collect(),
        l.bucket_epoch.into(),
        l.coordinator_epoch.into(),
    )
}

fn manager_lai(l: &mgr::LeaderAndIsr) -> String {
    lai_text(
        l.leader.map(u64::from),
        l.leader_epoch,
        l.isr.iter().map(|x| u64::from(*x)).collect(),
        l.bucket_epoch,
        l.coordinator_epoch,
    )
}

/// An Nli send as text: destination, bucket, replicas, its LeaderAndIsr and execution key.
fn nli_text(to: u64, bucket: u64, replicas: Vec<u64>, lai: String, key: String) -> String {
    format!("send Nli to={to} b{bucket} replicas={replicas:?} {lai} key={key}")
}

/// The model's coordinator effects as lines: sends, then enqueues, then the reply.
pub fn render_model_effects(out: &StepOutput) -> Vec<String> {
    let mut lines = Vec::new();
    for m in &out.sent {
        lines.push(match m {
            model::Message::Nli(n) => nli_text(
                n.to.into(),
                n.bucket.into(),
                n.replicas.iter().map(|x| u64::from(*x)).collect(),
                lai_text(
                    n.leader.map(u64::from),
                    n.leader_epoch.into(),
                    n.isr.iter().map(u64::from).collect(),
                    n.bucket_epoch.into(),
                    n.coordinator_epoch.into(),
                ),
                n.exec_key.map_or("-".into(), observe::model_key),
            ),
            model::Message::AdjustIsrResponse(r) => format!(
                "send AdjustIsrResponse to={} b{} {}",
                r.to,
                r.bucket,
                match &r.result {
                    model::AdjustIsrResult::Ok(l) => format!("ok {}", model_lai(l)),
                    model::AdjustIsrResult::Err => "err".into(),
                }
            ),
            other => format!("send (a server message!) {other:?}"),
        });
    }
    for e in &out.enqueued {
        lines.push(format!("enqueue {}", observe::model_event(e)));
    }
    if let Some(r) = &out.reply {
        lines.push(format!(
            "reply {}",
            match r {
                model::ClientReply::Register(model::RegisterReply::Accepted(id)) =>
                    format!("accepted r{id}"),
                model::ClientReply::Register(model::RegisterReply::RejectedInProgress) =>
                    "rejected in-progress".into(),
                model::ClientReply::Register(model::RegisterReply::StoreError)
                | model::ClientReply::Cancel(model::CancelReply::StoreError) =>
                    "store-error".into(),
                model::ClientReply::Cancel(model::CancelReply::Accepted) => "accepted".into(),
                model::ClientReply::Cancel(model::CancelReply::NothingToCancel) =>
                    "nothing-to-cancel".into(),
            }
        ));
    }
    lines
}

/// The manager's effects in the same shape as [`render_model_effects`].
pub fn render_manager_effects(action: &Action, effects: &[mgr::Effect]) -> Vec<String> {
    let mut sends = Vec::new();
    let mut enqueues = Vec::new();
    let mut replies = Vec::new();
    for e in effects {
        match e {
            mgr::Effect::SendNli(n) => sends.push(nli_text(
                n.to.into(),
                n.bucket.into(),
                n.replicas.iter().map(|x| u64::from(*x)).collect(),
                lai_text(
                    n.leader.map(u64::from),
                    n.leader_epoch,
                    n.isr.iter().map(|x| u64::from(*x)).collect(),
                    n.bucket_epoch,
                    n.coordinator_epoch,
                ),
                n.exec_key.map_or("-".into(), observe::manager_key),
            )),
            mgr::Effect::SendAdjustIsrResponse { to, bucket, result } => sends.push(format!(
                "send AdjustIsrResponse to={} b{} {}",
                to,
                bucket,
                match result {
                    Ok(l) => format!("ok {}", manager_lai(l)),
                    Err(_) => "err".into(),
                }
            )),
            mgr::Effect::Enqueue(ev) => {
                enqueues.push(format!("enqueue {}", observe::manager_event(ev)))
            }
            mgr::Effect::Reply(r) => replies.push(format!(
                "reply {}",
                match r {
                    mgr::Reply::Accepted(id) if matches!(action, Action::Register { .. }) =>
                        format!("accepted r{id}"),
                    mgr::Reply::Accepted(_) => "accepted".into(),
                    mgr::Reply::Rejected(mgr::RejectReason::InProgress) =>
                        "rejected in-progress".into(),
                    mgr::Reply::Rejected(other) => format!("rejected {other:?}"),
                    mgr::Reply::NothingToCancel => "nothing-to-cancel".into(),
                    mgr::Reply::StoreError => "store-error".into(),
                }
            )),
        }
    }
    sends.extend(enqueues);
    sends.extend(replies);
    sends
}
