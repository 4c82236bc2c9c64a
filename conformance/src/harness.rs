//! One step of the model, mirrored on the manager, and compared.
//!
//! The harness owns what a real host owns around the manager: the coordinator's FIFO event
//! queue (filled from the manager's `Enqueue` effects) and the clock. The manager and its store
//! are a [`ManagerSide`]: by default the manager in this process (on an in-memory store with
//! fault injection); with `--sut`, an implementation under test in a child process
//! ([`crate::sut::remote`]). Tablet servers and the network are the model's: environment
//! actions change nothing on the manager's side, and every message the manager sends must be
//! exactly what the model's coordinator sent in the same step.

use std::collections::{BTreeSet, VecDeque};

use rebalance_manager as mgr;
use rebalance_model::{Action, RebalanceModel, StepOutput, SystemState};

use crate::projection::{self, manager::AgeCaps};
use crate::sut::{Incarnation, ManagerSide, Seen};
use crate::translate;

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

impl Mismatch {
    /// The manager refused to `start` or `restart`: nothing to compare yet.
    fn refused(what: &str, why: String) -> Mismatch {
        Mismatch {
            summary: format!("the manager refused to {what}: {why}"),
            model: String::new(),
            manager: String::new(),
        }
    }
}

/// Why a step of the manager side did not agree: a divergence, or a failure of the side
/// itself (`E`, uninhabited in-process: a child that crashed, hung or sent a malformed line).
#[derive(Clone, Debug)]
pub enum Failure<E> {
    Diverged(Mismatch),
    Sut(E),
}

impl<E> From<Mismatch> for Failure<E> {
    fn from(m: Mismatch) -> Self {
        Failure::Diverged(m)
    }
}

/// The in-process manager side cannot fail by itself: its failures are all divergences.
pub fn in_process(f: Failure<std::convert::Infallible>) -> Mismatch {
    match f {
        Failure::Diverged(m) => m,
        Failure::Sut(never) => match never {},
    }
}

/// The manager and its host-side surroundings.
#[derive(Clone)]
pub struct Harness<S = mgr::Manager<mgr::MemStore>> {
    pub manager: S,
    pub queue: VecDeque<mgr::Event>,
    pub now_ms: u64,
    config: mgr::Config,
    caps: AgeCaps,
    /// Injected store failures that happened in the current incarnation: what the manager's
    /// `store_failures` must count.
    store_failures: u64,
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
    /// [`Harness::launch`] in process.
    pub fn start(model: &RebalanceModel, init: &SystemState) -> Result<Harness, Mismatch> {
        Harness::launch(model, init, &()).map_err(in_process)
    }
}

impl<S: ManagerSide> Harness<S> {
    /// Starts the manager side on the model's initial store. Without a configured store the
    /// model's initial state is a coordinator that has started (R17) and found no task (R16),
    /// so the harness runs the manager's `Recover` before comparing; with one, Recover is still
    /// queued on both sides and is the trace's first event to process.
    pub fn launch(
        model: &RebalanceModel,
        init: &SystemState,
        launcher: &S::Launcher,
    ) -> Result<Harness<S>, Failure<S::Error>> {
        if !model.config.abstract_buckets.is_empty() {
            // The model's abstract rest of a plan (spec 9) sends nothing and has no counterpart
            // in the manager: there is nothing to walk.
            return Err(Mismatch::refused(
                "start",
                "the configuration has abstract buckets (spec 9), which no manager has".into(),
            )
            .into());
        }
        let config = translate::config(&model.config);
        let store = translate::initial_store(init);
        let mut effects = Vec::new();
        let at = Incarnation {
            config: &config,
            live: live_of(init),
            now_ms: 0,
        };
        let manager = S::start(launcher, store, at, &mut effects)
            .map_err(Failure::Sut)?
            .map_err(|e| Mismatch::refused("start", e))?;
        let mut h = Harness {
            manager,
            queue: VecDeque::new(),
            now_ms: 0,
            config,
            caps: AgeCaps::of(&model.config),
            store_failures: 0,
        };
        h.absorb(&effects);
        let recovered = init.coordinator.events.is_empty();
        if let (true, Some(mgr::Event::Recover)) = (recovered, h.queue.front()) {
            let ev = h.queue.pop_front().expect("front exists");
            effects.clear();
            h.manager
                .input(0, mgr::Input::Event(ev), &mut effects)
                .map_err(Failure::Sut)?;
            h.manager.settle(&mut effects).map_err(Failure::Sut)?;
            h.absorb(&effects);
        }
        h.compare_state(init, "initial state")?;
        Ok(h)
    }

    /// An independent copy (a branch point of a walk).
    pub fn fork(&mut self) -> Result<Harness<S>, S::Error> {
        Ok(Harness {
            manager: self.manager.fork()?,
            queue: self.queue.clone(),
            now_ms: self.now_ms,
            config: self.config.clone(),
            caps: self.caps,
            store_failures: self.store_failures,
        })
    }

    fn absorb(&mut self, effects: &[mgr::Effect]) {
        for e in effects {
            if let mgr::Effect::Enqueue(ev) = e {
                self.queue.push_back(ev.clone());
            }
        }
    }

    /// The manager's projection.
    pub fn projection(&self) -> projection::State {
        let mut o = projection::State::default();
        self.manager.project(&self.queue, self.caps, &mut o);
        o
    }

    fn compare_state(&self, post: &SystemState, when: &str) -> Result<(), Mismatch> {
        let differs = projection::with_states(|p| {
            projection::model::state(post, &mut p.model);
            self.manager.project(&self.queue, self.caps, &mut p.manager);
            (p.model != p.manager).then(|| Mismatch {
                summary: format!(
                    "projected state differs ({when}), first at `{}`",
                    p.model.first_difference(&p.manager)
                ),
                model: p.model.render(),
                manager: p.manager.render(),
            })
        });
        match differs {
            Some(mismatch) => Err(mismatch),
            None => self.check_manager_invariants(post),
        }
    }

    fn check_manager_invariants(&self, post: &SystemState) -> Result<(), Mismatch> {
        let seen = Seen {
            config: &self.config,
            now_ms: self.now_ms,
            store_failures: self.store_failures,
            post,
        };
        let summary = match self.manager.invariant_violation() {
            Some(v) => format!("the manager broke its own invariant: {v}"),
            None => match self.manager.accessors_disagree(&seen) {
                Some(v) => format!("the manager's accessors disagree: {v}"),
                None => return Ok(()),
            },
        };
        Err(self.mismatch(post, summary))
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
    ) -> Result<Vec<mgr::Effect>, Failure<S::Error>> {
        self.manager.before_step(action).map_err(Failure::Sut)?;
        let ops_before = self.manager.store_ops();
        let fault = action.fail_store_op();
        if let Some(k) = fault {
            self.manager
                .fail_nth_store_op(u64::from(k))
                .map_err(Failure::Sut)?;
        }
        let mut effects = Vec::new();
        match action {
            Action::Register { plan, .. } => {
                let targets = plan.unwrap_or(&model.config.plan);
                let plan = translate::plan(&model.register_plan(pre, targets));
                self.input(mgr::Input::Register { plan }, &mut effects)?;
            }
            Action::Cancel { .. } => self.input(mgr::Input::Cancel, &mut effects)?,
            Action::ProcessEvent { event, .. } => {
                let want = translate::event(event);
                match self.queue.pop_front() {
                    Some(front) if front == want => {
                        self.input(mgr::Input::Event(front), &mut effects)?
                    }
                    other => {
                        return Err(Failure::Diverged(Mismatch {
                            summary: format!(
                                "event queue front differs: model {:?}, manager {}",
                                projection::model::event(event),
                                other.map_or("(empty)".into(), |e| format!(
                                    "{:?}",
                                    projection::manager::event(&e)
                                ))
                            ),
                            model: model_render(pre),
                            manager: self.projection().render(),
                        }))
                    }
                }
            }
            Action::DeliverNliResponse { msg, .. } => {
                self.input(translate::nli_response(msg), &mut effects)?
            }
            Action::DeliverAdjustIsr { msg, .. } => {
                self.input(translate::adjust_isr(msg), &mut effects)?
            }
            Action::CrashServer { server, .. } => self.input(
                mgr::Input::ServerCrashed(mgr::ServerId::from(*server)),
                &mut effects,
            )?,
            Action::RestartServer { server, .. } => self.input(
                mgr::Input::ServerRestarted(mgr::ServerId::from(*server)),
                &mut effects,
            )?,
            Action::DeleteBucket { bucket, .. } => self.input(
                mgr::Input::BucketDeleted(mgr::BucketId::from(*bucket)),
                &mut effects,
            )?,
            Action::Tick { .. } => {
                self.now_ms += self.config.check_interval_ms;
                self.input(mgr::Input::Tick, &mut effects)?
            }
            Action::CrashCoordinator => {
                // R17: the old incarnation's memory and event queue are gone; its store stays.
                self.queue.clear();
                self.store_failures = 0;
                let at = Incarnation {
                    config: &self.config,
                    live: live_of(pre),
                    now_ms: self.now_ms,
                };
                self.manager
                    .restart(at, &mut effects)
                    .map_err(Failure::Sut)?
                    .map_err(|e| Mismatch::refused("restart", e))?;
            }
            // Environment only: tablet servers and the network (R21, R22, R24, faults).
            Action::DeliverNli { .. }
            | Action::DeliverAdjustIsrResponse { .. }
            | Action::DropMessage { .. }
            | Action::DuplicateMessage { .. }
            | Action::ProposeIsr { .. } => {}
            // The zombie coordinator (spec 9): the deposed incarnation's own steps are the
            // model's environment here, like a server's. What the manager side must show is
            // that they change nothing it owns: D7 refuses every store write of an older
            // coordinator epoch, so the store and the current manager stay as they were.
            Action::ZombieProcessEvent { .. }
            | Action::ZombieDeliverNliResponse { .. }
            | Action::ZombieCancel => {}
            // Refused at launch: a harness never holds a configuration with abstract buckets.
            Action::Rest { .. } => {
                return Err(Mismatch::refused(
                    "take a step",
                    "a Rest step of an abstract bucket (spec 9) has no counterpart".into(),
                )
                .into())
            }
        }
        // Responses the model delivered at the end of the step because they can never be
        // current again (spec 9, "dead messages"): the manager must ignore them as R12 does.
        for r in &out.delivered_dead {
            self.input(translate::nli_response(r), &mut effects)?;
        }
        self.manager.settle(&mut effects).map_err(Failure::Sut)?;
        self.absorb(&effects);
        if let Some(k) = fault {
            if self.manager.fault_pending() {
                return Err(self
                    .mismatch(
                        post,
                        format!(
                        "the model failed store operation {k} of this step but the manager performed fewer"
                    ),
                    )
                    .into());
            }
            self.store_failures += 1;
        }
        if !is_zombie(action) {
            // A zombie step's effects are the deposed incarnation's, not the manager's.
            self.compare_effects(action, post, out, &effects)?;
        }
        self.compare_state(post, "after the step")?;
        if action.can_fail_store() {
            let ops = self.manager.store_ops().saturating_sub(ops_before);
            if ops != u64::from(out.store_ops) {
                return Err(self
                    .mismatch(
                        post,
                        format!(
                            "store operations differ: model {}, manager {ops}",
                            out.store_ops
                        ),
                    )
                    .into());
            }
        }
        Ok(effects)
    }

    #[inline]
    fn input(
        &mut self,
        input: mgr::Input,
        effects: &mut Vec<mgr::Effect>,
    ) -> Result<(), Failure<S::Error>> {
        self.manager
            .input(self.now_ms, input, effects)
            .map_err(Failure::Sut)
    }

    fn mismatch(&self, post: &SystemState, summary: String) -> Mismatch {
        Mismatch {
            summary,
            model: model_render(post),
            manager: self.projection().render(),
        }
    }

    /// The coordinator's effects of the step, each kind in emission order (see
    /// [`projection::Effects`] for what is and is not ordered).
    fn compare_effects(
        &self,
        action: &Action,
        post: &SystemState,
        out: &StepOutput,
        effects: &[mgr::Effect],
    ) -> Result<(), Mismatch> {
        let differs = projection::with_effects(|p| {
            projection::model::effects(action, out, &mut p.model);
            projection::manager::effects(action, effects, &mut p.manager);
            (p.model != p.manager).then(|| (p.model.render(), p.manager.render()))
        });
        let Some((model, manager)) = differs else {
            return Ok(());
        };
        Err(Mismatch {
            summary: format!(
                "emitted effects differ, first at `{}`",
                projection::first_differing_key(&model, &manager)
            ),
            model: format!("{model}--- state after ---\n{}", model_render(post)),
            manager: format!(
                "{manager}--- state after ---\n{}",
                self.projection().render()
            ),
        })
    }
}

/// Whether `action` is a step of the deposed coordinator (spec 9).
fn is_zombie(action: &Action) -> bool {
    matches!(
        action,
        Action::ZombieProcessEvent { .. }
            | Action::ZombieDeliverNliResponse { .. }
            | Action::ZombieCancel
    )
}

/// The model's projection, rendered (for reports).
fn model_render(s: &SystemState) -> String {
    let mut o = projection::State::default();
    projection::model::state(s, &mut o);
    o.render()
}
