//! The abstract rest of the plan (spec 9, "One bucket against the rest of the plan"): what a
//! `Rest` step does to what buckets share, and the two values an abstract bucket's metadata
//! takes. An abstract bucket's status, attempt, events and deletion marker follow the rules of
//! section 5 unchanged; only what the protocol does with its own metadata and messages is
//! replaced, by the steps below and by the abstract branches of R4 and R14.

use super::{Rule, Step};
use crate::config::{spend, Config};
use crate::state::types::{
    BucketId, BucketStatus, LeaderAndIsr, PlanEntry, PlanKind, Replicas, ServerId, ServerSet,
};
use crate::state::{Observed, SystemState};
use crate::step::action::{RestFault, RestStep};
use crate::step::initial::{initial_meta, initial_view};

/// The observation an abstract attempt holds when its bucket's metadata changed since it was
/// observed: no real observation has an empty assignment, so R14.2 always sees progress.
pub fn stale() -> Observed {
    Observed::default()
}

/// The first member of abstract bucket `b`'s configured target: the leader the plan asks for.
fn target_leader(config: &Config, b: BucketId) -> ServerId {
    config
        .plan
        .iter()
        .find(|t| t.bucket == b)
        .expect("an abstract bucket is a plan bucket")
        .target[0]
}

/// The leader an abstract bucket has when its target leader does not lead: its initial leader
/// if that is another member of `assignment`, else the first other member (none if there is
/// no other).
fn other_leader(config: &Config, b: BucketId, assignment: &Replicas) -> Option<ServerId> {
    let t = target_leader(config, b);
    let (_, initial) = initial_meta(config, b);
    match initial.leader {
        Some(l) if l != t && assignment.contains(&l) => Some(l),
        _ => assignment.iter().copied().find(|s| *s != t),
    }
}

/// An abstract bucket's metadata: `assignment`, led by its target leader or by the other
/// leader, the whole assignment in the ISR, the initial epochs. Nothing reads an abstract
/// bucket's epochs but its own messages, which are not modelled.
fn canonical(
    config: &Config,
    b: BucketId,
    assignment: Replicas,
    target_led: bool,
) -> (Replicas, LeaderAndIsr) {
    let (_, initial) = initial_meta(config, b);
    let t = target_leader(config, b);
    let leader = if target_led && assignment.contains(&t) {
        Some(t)
    } else {
        other_leader(config, b, &assignment)
    };
    let lai = LeaderAndIsr {
        leader,
        isr: ServerSet::from_servers(&assignment),
        ..initial
    };
    (assignment, lai)
}

/// An abstract bucket's plan entry as R1 derives it from canonical metadata: the same kind as
/// `e`, its old leader the target leader or the other one.
pub fn canonical_entry(config: &Config, e: &PlanEntry) -> PlanEntry {
    let old_leader = if e.old_leader == e.new_leader {
        e.new_leader
    } else {
        other_leader(config, e.bucket, &e.ors).unwrap_or(e.ors[0])
    };
    PlanEntry { old_leader, ..*e }
}

/// An abstract bucket's metadata once a plan names it (`e`, canonical): at its origin, `ors`
/// led by the old leader; away, a move at `trs` led by its first member, a leader-only bucket
/// led by its new leader.
pub fn canonical_meta(config: &Config, e: &PlanEntry, away: bool) -> (Replicas, LeaderAndIsr) {
    let b = e.bucket;
    match (away, e.kind()) {
        (true, PlanKind::Move) => canonical(config, b, e.trs, true),
        (true, _) => canonical(config, b, e.ors, true),
        (false, _) => canonical(config, b, e.ors, e.old_leader == e.new_leader),
    }
}

/// The plan entry of `b` the state holds: the coordinator's, or between a crash and Recover,
/// when the coordinator holds no plan, the stored task's.
fn plan_entry(s: &SystemState, b: BucketId) -> Option<PlanEntry> {
    s.coordinator.plan_entry(b).copied().or_else(|| {
        s.store
            .task
            .as_ref()
            .and_then(|t| t.plan.iter().find(|e| e.bucket == b).copied())
    })
}

impl Step<'_> {
    /// Runs one step of the rest; false if it is not enabled.
    pub fn rest_step(&mut self, step: RestStep) -> bool {
        if self.config.abstract_buckets.is_empty() {
            return false;
        }
        match step {
            RestStep::Move { bucket } => self.rest_move(bucket),
            RestStep::Progress { bucket } => {
                if !self.config.is_abstract(bucket) {
                    return false;
                }
                let current = self.observe(bucket);
                let Some(a) = self.s.coordinator.attempt_mut(bucket) else {
                    return false;
                };
                a.observed = if a.observed == current {
                    stale()
                } else {
                    current
                };
                true
            }
            RestStep::Finish { bucket } => {
                // R12 completes a leader-only bucket on its new leader's ack even when it is
                // deleted (R14.1 would complete it anyway); a move's completion needs
                // `final_state`, which a deleted bucket never has, but completing a deleted
                // bucket here is what R14.1 does to it, so no case is left out by allowing it.
                if !self.config.is_abstract(bucket)
                    || self.s.coordinator.attempt(bucket).is_none()
                    || self.at_origin(bucket)
                {
                    return false;
                }
                // R12: the leader's acknowledgement of the final request.
                self.fired(Rule::R12);
                let _ = self.finish(bucket, BucketStatus::Completed);
                true
            }
            RestStep::Fault { fault } => {
                let b = &mut self.s.budgets;
                let budget = match fault {
                    RestFault::MessageLoss => &mut b.message_loss,
                    RestFault::MessageDuplication => &mut b.message_duplication,
                    RestFault::StoreFailure => &mut b.store_failure,
                };
                if *budget == 0 {
                    return false;
                }
                spend(budget);
                true
            }
            RestStep::RaiseEpoch { server, epoch } => {
                let Some(sv) = self.s.servers.get_mut(server as usize) else {
                    return false;
                };
                if !sv.up || epoch <= sv.last_ce || epoch > self.s.store.coordinator_epoch {
                    return false;
                }
                sv.last_ce = epoch;
                true
            }
        }
    }

    /// The bucket's metadata leaves its origin or comes back, as its plan kind allows: a move
    /// leaves once, while it has an attempt (Phase A); a leader-only bucket leaves when its new
    /// leader is live (an election) and comes back when it is not (a failover). Before any plan
    /// names it, a bucket with another member is led by its target leader (when that is live:
    /// R20's or R23.5's election) or by the other one (when it is not: R19's failover), which
    /// decides what R1 will make of it. The write goes to the store and the cache, and an
    /// attempt's observation turns stale.
    fn rest_move(&mut self, b: BucketId) -> bool {
        if !self.config.is_abstract(b) || self.deleted(b) {
            return false;
        }
        let live = self.s.coordinator.live;
        let (assignment, lai) = match plan_entry(self.s, b) {
            Some(e) => {
                let at_origin = e.at_origin(self.assignment(b), self.lai(b).leader);
                let allowed = match e.kind() {
                    PlanKind::Move => at_origin && self.s.coordinator.attempt(b).is_some(),
                    PlanKind::LeaderOnly => live.contains(e.new_leader) == at_origin,
                    PlanKind::NoOp => false,
                };
                if !allowed {
                    return false;
                }
                canonical_meta(self.config, &e, at_origin)
            }
            None => {
                let t = target_leader(self.config, b);
                let target_led = self.lai(b).leader == Some(t);
                let assignment = *self.assignment(b);
                if !assignment.contains(&t)
                    || other_leader(self.config, b, &assignment).is_none()
                    || live.contains(t) == target_led
                {
                    return false;
                }
                canonical(self.config, b, assignment, !target_led)
            }
        };
        let i = b as usize;
        self.s.store.buckets.assignment[i] = assignment;
        self.s.store.buckets.lai[i] = lai;
        self.s.coordinator.cache.assignment[i] = assignment;
        self.s.coordinator.cache.lai[i] = lai;
        if let Some(a) = self.s.coordinator.attempt_mut(b) {
            a.observed = stale();
        }
        true
    }
}

/// The abstraction function of spec 9's argument: the state of the abstract model that a state
/// of the whole model stands for, under `config`'s abstract buckets (its other buckets stay as
/// they are). Each abstract bucket's metadata becomes its canonical value at or away from its
/// origin, its attempt's observation the canonical one or [`stale`] as it equals the bucket's
/// metadata or not, its servers' views what they were at the start, and its messages and
/// pending repair disappear. The ghosts of a step (its `SOME-*` facts and the violation
/// flags) are cleared: they are history, not state, and a `Rest` step keeps none of them.
pub fn abstraction(config: &Config, s: &SystemState) -> SystemState {
    let mut a = s.clone();
    for &c in &config.abstract_buckets {
        let i = c as usize;
        let stored = &s.store.buckets;
        let (assignment, lai) = match plan_entry(s, c) {
            Some(e) => {
                let away = !e.at_origin(&stored.assignment[i], stored.lai[i].leader);
                let e = canonical_entry(config, &e);
                for entry in a
                    .coordinator
                    .plan
                    .iter_mut()
                    .chain(a.store.task.iter_mut().flat_map(|t| t.plan.iter_mut()))
                {
                    if entry.bucket == c {
                        *entry = e;
                    }
                }
                canonical_meta(config, &e, away)
            }
            None => {
                let target_led = stored.lai[i].leader == Some(target_leader(config, c));
                canonical(config, c, stored.assignment[i], target_led)
            }
        };
        for meta in [&mut a.store.buckets, &mut a.coordinator.cache] {
            meta.assignment[i] = assignment;
            meta.lai[i] = lai;
        }
        let concrete_now = Observed {
            assignment: s.coordinator.cache.assignment[i],
            leader: s.coordinator.cache.lai[i].leader,
            isr: s.coordinator.cache.lai[i].isr,
        };
        if let Some(att) = a.coordinator.attempt_mut(c) {
            att.observed = if att.observed == concrete_now {
                Observed {
                    assignment,
                    leader: lai.leader,
                    isr: lai.isr,
                }
            } else {
                stale()
            };
        }
        for server in 0..config.servers {
            *a.view_mut(server, c) = initial_view(config, server, c);
        }
        a.network.retain(|m| m.bucket() != c);
        a.coordinator.liveness_repairs.remove(c);
    }
    a.ghost.last = Default::default();
    a.ghost.violations = Default::default();
    a
}
