//! The Stateright model: initial state, enabled actions and the transition function `step`.

use crate::config::{BucketConfig, Config, PlanTarget, TaskConfig};
use crate::state::message::Message;
use crate::state::types::{Epoch, Plan, PlanEntry, Replicas, ServerSet};
use crate::state::{
    BucketMeta, Coordinator, Event, Ghost, LastStep, Network, PerBucket, ServerState, Store,
    SystemState, TaskNode,
};
use crate::step::action::{Action, StepOutput};
use crate::step::coordinator::responses::adjust_isr_accepted;
use crate::step::coordinator::Step;
use crate::step::environment;
use crate::step::initial::{bucket_meta, initial_plans, initial_view};
use crate::verdict::bug::{Bug, BugSet};
use crate::verdict::rule::Rule;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The model of spec section 9: one configuration plus the enabled bug switches.
#[derive(Clone, Debug)]
pub struct RebalanceModel {
    pub config: Config,
    pub bugs: BugSet,
    /// Searched with the partial-order reduction of spec 9: the searches follow
    /// [`crate::check::por::search_actions`], a stubborn set where there is one. Set only by
    /// [`crate::check::por::reduced`], which also puts the configuration in the form the
    /// reduction needs. The protocol's own predicates (fair end states, enabledness) ignore it.
    pub reduction: bool,
    /// Transitions the checker did not follow because they lead beyond the configuration's
    /// `max_network` bound (shared by the checker's clones of the model, so a report can say
    /// how much the bound cut off rather than leave it silently unchecked).
    truncated: Arc<AtomicU64>,
    /// Fair end states the LIVE-* properties were checked at (spec 7.3), counted by the first
    /// LIVE-* property, which the checker evaluates once on every state it reaches.
    fair_ends: Arc<AtomicU64>,
}

impl RebalanceModel {
    pub fn new(config: Config, bugs: BugSet) -> Self {
        RebalanceModel {
            config,
            bugs,
            reduction: false,
            truncated: Arc::default(),
            fair_ends: Arc::default(),
        }
    }

    /// Transitions cut off by `max_network` since the last [`RebalanceModel::reset_truncated`].
    pub fn truncated(&self) -> u64 {
        self.truncated.load(Ordering::Relaxed)
    }

    pub fn reset_truncated(&self) {
        self.truncated.store(0, Ordering::Relaxed);
    }

    /// Fair end states counted since the last [`RebalanceModel::reset_fair_ends`].
    pub fn fair_ends(&self) -> u64 {
        self.fair_ends.load(Ordering::Relaxed)
    }

    pub fn reset_fair_ends(&self) {
        self.fair_ends.store(0, Ordering::Relaxed);
    }

    /// [`RebalanceModel::is_fair_end`], counting the fair end states it finds.
    pub fn is_fair_end_counted(&self, state: &SystemState) -> bool {
        let end = self.is_fair_end(state);
        if end {
            self.fair_ends.fetch_add(1, Ordering::Relaxed);
        }
        end
    }

    /// [`RebalanceModel::within_bound`], counting the transitions it cuts off.
    pub fn within_bound_counted(&self, state: &SystemState) -> bool {
        let inside = self.within_bound(state);
        if !inside {
            self.truncated.fetch_add(1, Ordering::Relaxed);
        }
        inside
    }

    /// The single initial state: every server up and in sync with the store. Without a
    /// configured `store`, no task, and the coordinator (epoch 1) has started and recovered
    /// nothing. With one, the store as given, and the coordinator has just started on it as R17
    /// does: its epoch one above the stored one, Recover (R16) the first event.
    pub fn init_state(&self) -> SystemState {
        let cfg = &self.config;
        let (stored_ce, task) = match &cfg.store {
            None => (1, None),
            Some(s) => (s.coordinator_epoch, s.task.as_ref().map(task_node)),
        };
        let ce = if cfg.store.is_some() {
            stored_ce + 1
        } else {
            stored_ce
        };
        let mut buckets = BucketMeta {
            assignment: PerBucket::new(),
            lai: PerBucket::new(),
            deleted: PerBucket::new(),
        };
        let view = |b: &BucketConfig| bucket_meta(b, stored_ce);
        for b in &cfg.buckets {
            let (assignment, lai) = view(b);
            buckets.assignment.push(assignment);
            buckets.lai.push(lai);
            buckets.deleted.push(false);
        }
        let servers = (0..cfg.servers)
            .map(|_| ServerState {
                up: true,
                last_ce: stored_ce,
            })
            .collect();
        let views = (0..cfg.servers)
            .flat_map(|s| (0..cfg.bucket_count()).map(move |b| (s, b)))
            .map(|(s, b)| initial_view(cfg, s, b))
            .collect();
        let all = ServerSet::from_servers(&(0..cfg.servers).collect::<Vec<_>>());
        let mut coordinator = Coordinator::fresh(ce, all, buckets.clone());
        if cfg.store.is_some() {
            coordinator.recovery_pending = true;
            coordinator.recovery_queued = true;
            coordinator.events.push(Event::Recover);
        }
        let state = SystemState {
            store: Store {
                plans: initial_plans(cfg, self.bugs.has(Bug::OnePlanPath), task.as_ref()),
                task,
                buckets,
                coordinator_epoch: ce,
            },
            coordinator,
            servers,
            views,
            network: Network::new(),
            budgets: cfg.budgets,
            ghost: Ghost::default(),
            zombie: None,
        };
        if cfg.abstract_buckets.is_empty() {
            state
        } else {
            // An abstract bucket starts at its canonical metadata (spec 9).
            crate::step::coordinator::rest::abstraction(cfg, &state)
        }
    }

    /// The plan R1 is given for `targets` (the configuration's or a register step's): for each
    /// target bucket not deleted, `ors` = current assignment, `trs` = the target, `old_leader`
    /// = current leader or `ors[0]`, `new_leader = trs[0]`.
    pub fn register_plan(&self, state: &SystemState, targets: &[PlanTarget]) -> Plan {
        targets
            .iter()
            .filter(|t| !state.store.buckets.deleted[t.bucket as usize])
            .map(|t| {
                let ors = state.store.buckets.assignment[t.bucket as usize];
                let old_leader = state.store.buckets.lai[t.bucket as usize]
                    .leader
                    .unwrap_or(ors[0]);
                PlanEntry {
                    bucket: t.bucket,
                    ors,
                    trs: Replicas::from_slice(&t.target),
                    old_leader,
                    new_leader: t.target[0],
                }
            })
            .collect()
    }

    /// Whether steps collect dead messages (spec 9): the configuration asks for it, failed
    /// responses are not in flight (delivering a dead Nli would put one there), and R12 fences
    /// (under `no-request-fencing` a stale response is not dead), and no deposed coordinator
    /// can act (a response from its coordinator epoch is stale for the new incarnation but
    /// current for the old one).
    pub fn collects_dead_messages(&self) -> bool {
        self.config.collect_dead_messages
            && !self.config.failed_responses_in_flight
            && !self.bugs.has(crate::verdict::bug::Bug::NoRequestFencing)
            && self.config.budgets.zombie_steps == 0
    }

    /// Whether dead-message collection also removes superseded Nli (spec 9). Not under
    /// `split-bucket-writes`: there a resend copies the stored epochs into a context that ran
    /// ahead of them (D15), so the cache's epochs can fall back and the argument that a
    /// superseded Nli's view stays older than the cache no longer holds.
    pub fn collects_superseded_nli(&self) -> bool {
        self.config.collect_superseded_nli
            && !self.bugs.has(crate::verdict::bug::Bug::SplitBucketWrites)
    }

    /// Runs one action. `None` means the action is not enabled in `state`.
    pub fn step(&self, state: &SystemState, action: &Action) -> Option<(SystemState, StepOutput)> {
        let mut next = state.clone();
        let out = self.step_into(state, action, &mut next)?;
        Some((next, out))
    }

    /// [`RebalanceModel::step`] into `next`, which must hold a copy of `state` and is the
    /// successor afterwards (left partly stepped when the action is not enabled). The checker's
    /// successor function: a state is 2.4 kB, and returning it through `step`'s tuple and an
    /// `Option::map` copied it twice more (docs/measurements.md, "Our DFS").
    pub fn step_into(
        &self,
        state: &SystemState,
        action: &Action,
        next: &mut SystemState,
    ) -> Option<StepOutput> {
        let k = action.fail_store_op();
        if let Some(k) = k {
            if k == 0 || state.budgets.store_failure == 0 {
                return None;
            }
        }
        next.ghost.last = LastStep::default();
        let mut step = Step::new(&self.config, self.bugs, next, k);
        let enabled = self.run(&mut step, state, action);
        if !enabled {
            return None;
        }
        if k.is_some() {
            if !step.out.store_failed {
                return None; // fewer than k store operations
            }
            crate::config::spend(&mut step.s.budgets.store_failure);
            if self.config.session_lost_on_store_failure {
                // apache/fluss#4335: the store refuses the write and closes the coordinator's
                // session with it, so the incarnation that made it is gone in the same step.
                step.crash_coordinator();
            }
        }
        if self.collects_dead_messages() {
            environment::collect_dead_server_messages(step.s, self.collects_superseded_nli());
            step.deliver_dead_responses();
            // Spec 7.2: SOME-STALE-RESPONSE-IGNORED counts the coordinator's own steps only. An
            // answer already stale when its server sent it is ignored here all the same; which
            // step notices a stale answer then depends only on when servers take their
            // deliveries, an order a search may change (spec 9, "Partial-order reduction").
            if action.kind().is_server_step() {
                step.s.ghost.last.stale_response_ignored = false;
            }
        }
        let out = std::mem::take(&mut step.out);
        crate::step::transition::record(&self.config, state, action, &out, next);
        Some(out)
    }

    /// Dispatches an action; false if it is not enabled.
    fn run(&self, st: &mut Step<'_>, pre: &SystemState, action: &Action) -> bool {
        match action {
            Action::Register { plan, .. } => {
                if pre.budgets.register == 0 {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.register);
                let plan = self.register_plan(pre, plan.unwrap_or(&self.config.plan));
                let _ = st.register(plan);
            }
            Action::Cancel { .. } => {
                if pre.budgets.cancel == 0 {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.cancel);
                let _ = st.cancel();
            }
            Action::ProcessEvent { event, .. } => {
                if pre.coordinator.events.first() != Some(event) {
                    return false;
                }
                st.s.coordinator.events.remove(0);
                self.process_event(st, pre, event);
            }
            Action::DeliverNli { msg } => {
                if !st.s.take(&Message::Nli(*msg)) {
                    return false;
                }
                st.fired(Rule::R22);
                if let Some(r) =
                    environment::deliver_nli(st.s, msg, self.config.failed_responses_in_flight)
                {
                    st.out.server_sent.push(r);
                }
            }
            Action::DeliverNliResponse { msg, .. } => {
                if !st.s.take(&Message::NliResponse(*msg)) {
                    return false;
                }
                let _ = st.on_nli_response(msg);
            }
            Action::DeliverAdjustIsr { msg, .. } => {
                if !st.s.take(&Message::AdjustIsr(*msg)) {
                    return false;
                }
                let lai = pre.coordinator.cache.lai[msg.bucket as usize];
                let _ = st.on_adjust_isr(msg);
                // Ghost of INV-ADJUST-ISR-FENCED.
                if adjust_isr_accepted(&st.out)
                    && (msg.leader_epoch, msg.bucket_epoch) != (lai.leader_epoch, lai.bucket_epoch)
                {
                    st.s.ghost.violations.unfenced_adjust_isr = true;
                }
            }
            Action::DeliverAdjustIsrResponse { msg } => {
                if !st.s.take(&Message::AdjustIsrResponse(*msg)) {
                    return false;
                }
                st.fired(Rule::R24);
                environment::deliver_adjust_isr_response(st.s, msg);
            }
            Action::DropMessage { msg } => {
                if pre.budgets.message_loss == 0 || !st.s.take(msg) {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.message_loss);
            }
            Action::DuplicateMessage { msg } => {
                if pre.budgets.message_duplication == 0 || !pre.network.contains(msg) {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.message_duplication);
                st.s.duplicate(*msg);
            }
            Action::ProposeIsr { server, bucket } => {
                if *server >= self.config.servers
                    || *bucket >= self.config.bucket_count()
                    || self.config.is_abstract(*bucket)
                {
                    return false;
                }
                let Some(p) = environment::isr_proposal(pre, *server, *bucket) else {
                    return false;
                };
                st.fired(Rule::R21);
                let m = Message::AdjustIsr(p);
                st.out.server_sent.push(m);
                st.s.send(m);
            }
            Action::CrashServer { server, .. } => {
                if pre.budgets.server_crash == 0
                    || *server >= self.config.servers
                    || !pre.servers[*server as usize].up
                {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.server_crash);
                st.s.servers[*server as usize].up = false;
                st.on_server_crash(*server);
            }
            Action::RestartServer { server, .. } => {
                if *server >= self.config.servers || pre.servers[*server as usize].up {
                    return false;
                }
                st.s.servers[*server as usize].up = true;
                st.on_server_restart(*server);
            }
            Action::CrashCoordinator => {
                if pre.budgets.coordinator_crash == 0 {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.coordinator_crash);
                st.crash_coordinator();
            }
            Action::DeleteBucket { bucket, .. } => {
                if pre.budgets.bucket_deletion == 0
                    || *bucket >= self.config.bucket_count()
                    || pre.store.buckets.deleted[*bucket as usize]
                {
                    return false;
                }
                crate::config::spend(&mut st.s.budgets.bucket_deletion);
                let _ = st.on_bucket_deleted(*bucket);
            }
            Action::ZombieProcessEvent { .. }
            | Action::ZombieDeliverNliResponse { .. }
            | Action::ZombieCancel => return st.zombie_step(pre, action),
            Action::Rest { step, .. } => return st.rest_step(*step),
            Action::Tick { .. } => {
                if !pre.coordinator.timed() {
                    return false;
                }
                st.tick();
                // A tick that changes nothing is a stutter step; leaving it out keeps the
                // graph free of self-loops (spec 7.3).
                if !differs_ignoring_last(st.s, pre) {
                    return false;
                }
            }
        }
        true
    }

    /// The front event of the queue (R13, R14, R15's Finalize, R16), with the fencing ghosts.
    fn process_event(&self, st: &mut Step<'_>, pre: &SystemState, event: &Event) {
        match event {
            Event::Timeout { key } => {
                let c = &pre.coordinator;
                let current =
                    c.is_running(key.bucket) && c.attempt(key.bucket).map(|a| a.key) == Some(*key);
                st.s.coordinator.queued_timeouts.retain(|k| k != key);
                let before = st.s.clone();
                let _ = st.on_timeout(*key);
                let changed = differs_ignoring_last(st.s, &before);
                if !current {
                    if changed {
                        st.s.ghost.violations.stale_timeout_acted = true;
                    } else {
                        st.s.ghost.last.stale_timeout_ignored = true;
                    }
                }
            }
            Event::Reconcile { key } => {
                let c = &pre.coordinator;
                let current =
                    c.is_tracked(key.bucket) && c.attempt(key.bucket).map(|a| a.key) == Some(*key);
                st.s.coordinator.queued_reconciles.retain(|k| k != key);
                let before = st.s.clone();
                let _ = st.on_reconcile(*key);
                let changed = differs_ignoring_last(st.s, &before);
                if !current {
                    if changed {
                        st.s.ghost.violations.stale_reconcile_acted = true;
                    } else {
                        st.s.ghost.last.stale_reconcile_ignored = true;
                    }
                }
            }
            Event::Finalize { rid } => {
                let _ = st.on_finalize_event(*rid);
            }
            Event::Recover => {
                let _ = st.on_recover();
            }
        }
    }

    /// Every action that may be enabled in `state`, in a fixed order (Stateright rebuilds paths
    /// by index), decided by cheap guards: [`RebalanceModel::step`] runs the action once and says
    /// `None` when it is not enabled after all (a Tick that would change nothing). The variants
    /// with a failing store operation are listed only when the store-failure budget is left;
    /// they need the action's count of store operations, which only running it tells.
    pub fn candidate_actions(&self, state: &SystemState, out: &mut Vec<Action>) {
        let failable = state.budgets.store_failure > 0;
        let push = |a: Action, out: &mut Vec<Action>| {
            out.push(a);
            if failable && a.can_fail_store() {
                if let Some((_, o)) = self.step(state, &a) {
                    for k in 1..=o.store_ops {
                        out.push(a.with_fail_store_op(Some(k)));
                    }
                }
            }
        };
        let b = &state.budgets;
        if b.register > 0 {
            push(
                Action::Register {
                    plan: None,
                    fail_store_op: None,
                },
                out,
            );
        }
        if b.cancel > 0 {
            push(
                Action::Cancel {
                    fail_store_op: None,
                },
                out,
            );
        }
        if let Some(event) = state.coordinator.events.first() {
            push(
                Action::ProcessEvent {
                    event: *event,
                    fail_store_op: None,
                },
                out,
            );
        }
        let network = &state.network;
        let distinct = || {
            network
                .iter()
                .enumerate()
                .filter(|(i, m)| *i == 0 || network[i - 1] != **m)
                .map(|(_, m)| *m)
        };
        for m in distinct() {
            push(Action::deliver(m), out);
        }
        if b.message_loss > 0 {
            out.extend(distinct().map(|msg| Action::DropMessage { msg }));
        }
        if b.message_duplication > 0 {
            out.extend(distinct().map(|msg| Action::DuplicateMessage { msg }));
        }
        for server in 0..self.config.servers {
            for bucket in 0..self.config.bucket_count() {
                if !self.config.is_abstract(bucket)
                    && environment::isr_proposal(state, server, bucket).is_some()
                {
                    out.push(Action::ProposeIsr { server, bucket });
                }
            }
        }
        for server in 0..self.config.servers {
            if state.servers[server as usize].up {
                if b.server_crash > 0 {
                    push(
                        Action::CrashServer {
                            server,
                            fail_store_op: None,
                        },
                        out,
                    );
                }
            } else {
                push(
                    Action::RestartServer {
                        server,
                        fail_store_op: None,
                    },
                    out,
                );
            }
        }
        if b.coordinator_crash > 0 {
            out.push(Action::CrashCoordinator);
        }
        if b.bucket_deletion > 0 {
            for bucket in 0..self.config.bucket_count() {
                if !state.store.buckets.deleted[bucket as usize] {
                    push(
                        Action::DeleteBucket {
                            bucket,
                            fail_store_op: None,
                        },
                        out,
                    );
                }
            }
        }
        if state.coordinator.timed() {
            push(Action::TICK, out);
        }
        if state.zombie.is_some() {
            crate::step::coordinator::zombie::zombie_candidates(state, out);
        }
        if !self.config.abstract_buckets.is_empty() {
            self.rest_candidates(state, out);
        }
    }

    /// The `Rest` steps worth trying (spec 9, "One bucket against the rest of the plan"):
    /// each abstract bucket's move, progress and finish, each budget the rest may spend, and
    /// each up server's `last_ce` raised to any newer epoch up to the store's. `step` decides.
    fn rest_candidates(&self, state: &SystemState, out: &mut Vec<Action>) {
        use crate::step::action::{RestFault, RestStep};
        let push = |step: RestStep, out: &mut Vec<Action>| {
            let a = Action::Rest {
                step,
                fail_store_op: None,
            };
            out.push(a);
            if state.budgets.store_failure > 0 {
                if let Some((_, o)) = self.step(state, &a) {
                    for k in 1..=o.store_ops {
                        out.push(a.with_fail_store_op(Some(k)));
                    }
                }
            }
        };
        for &bucket in &self.config.abstract_buckets {
            push(RestStep::Move { bucket }, out);
            if state.coordinator.attempt(bucket).is_some() {
                push(RestStep::Progress { bucket }, out);
                push(RestStep::Finish { bucket }, out);
            }
        }
        let b = &state.budgets;
        for (fault, left) in [
            (RestFault::MessageLoss, b.message_loss),
            (RestFault::MessageDuplication, b.message_duplication),
            (RestFault::StoreFailure, b.store_failure),
        ] {
            if left > 0 {
                out.push(Action::Rest {
                    step: RestStep::Fault { fault },
                    fail_store_op: None,
                });
            }
        }
        let top: Epoch = state.store.coordinator_epoch;
        for (server, sv) in state.servers.iter().enumerate() {
            if sv.up {
                for epoch in sv.last_ce + 1..=top {
                    out.push(Action::Rest {
                        step: RestStep::RaiseEpoch {
                            server: server as u8,
                            epoch,
                        },
                        fail_store_op: None,
                    });
                }
            }
        }
    }

    /// Every enabled action, in the order of [`RebalanceModel::candidate_actions`].
    pub fn enabled_actions(&self, state: &SystemState, out: &mut Vec<Action>) {
        self.successors(state, |a, _, _| out.push(a));
    }

    /// Every enabled action with its successor and output, each computed once.
    pub fn successors(
        &self,
        state: &SystemState,
        mut visit: impl FnMut(Action, SystemState, StepOutput),
    ) {
        let mut candidates = Vec::new();
        self.candidate_actions(state, &mut candidates);
        for a in candidates {
            if let Some((next, out)) = self.step(state, &a) {
                visit(a, next, out);
            }
        }
    }

    /// The optional `max_network` search bound of the configuration.
    pub fn within_bound(&self, state: &SystemState) -> bool {
        self.config
            .max_network
            .is_none_or(|n| state.network.len() <= n as usize)
    }

    /// "No action is enabled": every budget spent or unusable, nothing in flight or queued,
    /// nothing timed. Every terminal state is a fair end state, not the other way round.
    pub fn is_terminal(&self, state: &SystemState) -> bool {
        if !self.is_fair_end(state) {
            return false;
        }
        let mut candidates = Vec::new();
        self.candidate_actions(state, &mut candidates);
        candidates.iter().all(|a| self.step(state, a).is_none())
    }

    /// A **fair end state** (spec 7.3): no obligatory action is enabled
    /// ([`Action::is_obligatory`]), whatever optional budget is left. A fair run may stop here,
    /// so every LIVE-* property must hold here. Enabled means enabled by the protocol: an
    /// action that leads beyond `max_network` still counts, so the search bound never makes a
    /// state look finished.
    pub fn is_fair_end(&self, state: &SystemState) -> bool {
        // Cheap sufficient conditions first: a message in flight can always be delivered and a
        // queued event processed, and both are obligatory (`model/tests/integration/fairness.rs` checks
        // this shortcut against the plain definition below).
        if !state.network.is_empty() || !state.coordinator.events.is_empty() {
            return false;
        }
        !self.obligatory_enabled(state)
    }

    /// Whether some obligatory action is enabled in `state`: the plain definition behind
    /// [`RebalanceModel::is_fair_end`].
    pub fn obligatory_enabled(&self, state: &SystemState) -> bool {
        let mut candidates = Vec::new();
        self.candidate_actions(state, &mut candidates);
        candidates
            .iter()
            .any(|a| self.is_obligatory(a) && self.step(state, a).is_some())
    }

    /// Whether a fair run of this configuration must eventually take `a` while it stays
    /// enabled (spec 7.3): [`Action::is_obligatory`], and under the progress check
    /// (`no_give_up`) also a crashed server's restart: the faults stop, so every crashed
    /// server comes back.
    pub fn is_obligatory(&self, a: &Action) -> bool {
        a.is_obligatory()
            || self.config.no_give_up
                && matches!(
                    a,
                    Action::RestartServer {
                        fail_store_op: None,
                        ..
                    }
                )
    }
}

/// The task node a preloaded store holds (`new_leader` is `trs[0]`, spec 2).
fn task_node(t: &TaskConfig) -> TaskNode {
    TaskNode {
        id: t.id,
        status: t.status,
        cancel_requested: t.cancel_requested,
        plan: t
            .plan
            .iter()
            .map(|e| PlanEntry {
                bucket: e.bucket,
                ors: Replicas::from_slice(&e.ors),
                trs: Replicas::from_slice(&e.trs),
                old_leader: e.old_leader,
                new_leader: e.trs[0],
            })
            .collect(),
    }
}

/// Whether `a` and `b` differ in anything but the last-step ghost (did a step change anything).
fn differs_ignoring_last(a: &SystemState, b: &SystemState) -> bool {
    // Destructured, so that a field added to the state or the ghost cannot be left out here.
    let SystemState {
        store,
        coordinator,
        servers,
        views,
        network,
        budgets,
        ghost,
        zombie,
    } = a;
    let Ghost {
        restored,
        final_recovered,
        drained_after_cancel,
        violations,
        last: _,
    } = ghost;
    *store != b.store
        || *coordinator != b.coordinator
        || *servers != b.servers
        || *views != b.views
        || *network != b.network
        || *budgets != b.budgets
        || *restored != b.ghost.restored
        || *final_recovered != b.ghost.final_recovered
        || *drained_after_cancel != b.ghost.drained_after_cancel
        || *violations != b.ghost.violations
        || *zombie != b.zombie
}
