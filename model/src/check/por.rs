//! The partial-order reduction of spec 9 ("Partial-order reduction"): where the steps of one
//! replica (one server's deliveries about one bucket, and the faults on those messages) form a
//! stubborn set, the search follows only them. Every search that reads the graph through
//! [`search_actions`] (Stateright's checker through the model's `actions`, and our own walks)
//! then explores the reduced graph; the predicates that define the protocol's own notions
//! (fair end states, enabledness) keep reading the whole one.
//!
//! The conditions below are the spec's P0-P7, each named where it is checked. Why they make
//! the set stubborn (D1), why one of its deliveries stays enabled whatever happens outside it
//! (the key, WD2), why its steps change nothing a property reads (V), and why every stubborn
//! step lowers a measure no cycle can lower forever (the cycle proviso) is argued in the spec;
//! `model/tests/integration/por.rs` checks the consequences on every CI preset.

use crate::config::Config;
use crate::state::message::{AdjustIsrResult, Message};
use crate::state::types::{BucketId, ServerId};
use crate::state::SystemState;
use crate::step::action::Action;
use crate::step::environment;
use crate::step::model::RebalanceModel;
use crate::verdict::bug::{Bug, BugSet};

/// A replica: one server's copy of one bucket, the unit whose steps a stubborn set holds.
pub type Replica = (ServerId, BucketId);

/// How [`reduced`] set up the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Setup {
    /// The reduction is on; the configuration was changed as each line says (spec 9, P0).
    On { adjustments: Vec<&'static str> },
    /// The reduction cannot apply to this model (P0); the model is the unreduced one, with its
    /// configuration unchanged.
    NotApplicable(&'static str),
}

/// One line saying what the reduction did, as `check` and the conformance walk print it.
pub fn describe(setup: &Setup) -> String {
    match setup {
        Setup::On { adjustments } if adjustments.is_empty() => {
            "reduction: partial-order (spec 9), on".to_string()
        }
        Setup::On { adjustments } => format!(
            "reduction: partial-order (spec 9), on; configuration changed: {}",
            adjustments.join("; ")
        ),
        Setup::NotApplicable(why) => {
            format!("reduction: partial-order (spec 9) not applicable, whole graph searched: {why}")
        }
    }
}

/// Why the reduction cannot apply to `config` under `bugs` (P0), or `None`.
pub fn not_applicable(config: &Config, bugs: BugSet) -> Option<&'static str> {
    if config.budgets.zombie_steps > 0 {
        Some("a deposed coordinator (zombie_steps) sends with an old coordinator epoch after a newer one")
    } else if !config.abstract_buckets.is_empty() {
        Some("abstract_buckets: a Rest step raises a server's coordinator epoch and spends the loss budget, which the argument's conditions do not cover")
    } else if config.session_lost_on_store_failure {
        Some("session_lost_on_store_failure: a coordinator step that ends in R17, which the argument's conditions do not cover")
    } else if config.failed_responses_in_flight {
        Some("failed_responses_in_flight: a dead request's delivery is not a no-op")
    } else if bugs.has(Bug::NoRequestFencing) {
        Some("no-request-fencing: a stale answer is not ignored, so it is not dead")
    } else if bugs.has(Bug::SplitBucketWrites) {
        Some("split-bucket-writes: a resend can carry epochs below one already sent")
    } else {
        None
    }
}

/// The model searched with the reduction: the configuration as P0 needs it (dead messages
/// collected, superseded requests kept, redundant resends absorbed, no `max_network` bound),
/// and [`RebalanceModel::reduction`] on. Where P0 cannot hold, the unreduced model.
pub fn reduced(mut config: Config, bugs: BugSet) -> (RebalanceModel, Setup) {
    if let Some(why) = not_applicable(&config, bugs) {
        return (RebalanceModel::new(config, bugs), Setup::NotApplicable(why));
    }
    let mut adjustments = Vec::new();
    if !config.collect_dead_messages {
        config.collect_dead_messages = true;
        adjustments.push("dead messages collected (spec 9): the stubborn sets rely on it");
    }
    if config.collect_superseded_nli {
        config.collect_superseded_nli = false;
        adjustments
            .push("superseded requests kept: their collection would disable a stubborn delivery");
    }
    if !config.absorb_redundant_nli {
        config.absorb_redundant_nli = true;
        adjustments.push("redundant resends absorbed (spec 3.4): the stubborn sets rely on it");
    }
    if config.max_network.take().is_some() {
        adjustments.push("max_network dropped: a bound is not closed under reordering");
    }
    let mut model = RebalanceModel::new(config, bugs);
    model.reduction = true;
    (model, Setup::On { adjustments })
}

/// The actions a search follows from `state`: the stubborn set of [`stubborn_replica`] when
/// the model is reduced and there is one, otherwise every candidate
/// ([`RebalanceModel::candidate_actions`]). Like the candidates, some may turn out disabled.
pub fn search_actions(model: &RebalanceModel, state: &SystemState, out: &mut Vec<Action>) {
    if model.reduction {
        if let Some(replica) = stubborn_replica(model, state) {
            stubborn_actions(state, replica, out);
            return;
        }
    }
    model.candidate_actions(state, out);
}

/// The first replica, in ascending (server, bucket) order, whose steps form a stubborn set in
/// `state` (spec 9, P1-P7), if any.
pub fn stubborn_replica(model: &RebalanceModel, state: &SystemState) -> Option<Replica> {
    debug_assert!(model.reduction, "only a reduced model has stubborn sets");
    // P1 and P2: no crash of any server, of the coordinator or of a deposed one can come.
    let b = &state.budgets;
    if b.server_crash > 0 || b.coordinator_crash > 0 || state.zombie.is_some() {
        return None;
    }
    let mut replicas: smallvec::SmallVec<[Replica; 8]> = state
        .network
        .iter()
        .filter_map(server_bound_replica)
        .collect();
    replicas.sort_unstable();
    replicas.dedup();
    replicas.into_iter().find(|r| stubborn(state, *r))
}

/// The replica a server-bound message is addressed to (an Nli or an AdjustIsrResponse).
pub fn server_bound_replica(m: &Message) -> Option<Replica> {
    match m {
        Message::Nli(n) => Some((n.to, n.bucket)),
        Message::AdjustIsrResponse(r) => Some((r.to, r.bucket)),
        Message::NliResponse(_) | Message::AdjustIsr(_) => None,
    }
}

/// Whether the steps of `replica` form a stubborn set in `state`: P1 and P3-P7 of spec 9
/// (P2 and the budget half of P1 hold for every replica, [`stubborn_replica`]).
fn stubborn(state: &SystemState, (server, bucket): Replica) -> bool {
    let srv = &state.servers[server as usize];
    // P1: the server is up (and, above, cannot crash). P6: it has seen the coordinator's epoch,
    // so no request in flight or to come raises it and kills one of this set.
    if !srv.up || srv.last_ce != state.coordinator.ce {
        return false;
    }
    // P3: the server cannot propose now, and no proposal or refusal of it is in flight.
    if environment::isr_proposal(state, server, bucket).is_some() {
        return false;
    }
    let cache = state.coordinator.cache.lai[bucket as usize];
    let mut requests = false;
    for m in &state.network {
        match m {
            Message::AdjustIsr(a) if (a.from, a.bucket) == (server, bucket) => return false,
            Message::AdjustIsrResponse(r)
                if (r.to, r.bucket) == (server, bucket) && r.result == AdjustIsrResult::Err =>
            {
                return false
            }
            Message::Nli(n) if (n.to, n.bucket) == (server, bucket) => {
                requests = true;
                // P7: a request that makes the server the bucket's leader only if the
                // coordinator can never send it another request with the same epochs.
                if n.leader == Some(server) && !sole_request_at_its_epochs(state, n) {
                    return false;
                }
                // P4: its answer is not already in flight (a second one would be absorbed).
                if state
                    .network
                    .binary_search(&environment::ok_answer(n))
                    .is_ok()
                {
                    return false;
                }
                // P5: while a loss can come, only a request the coordinator can never send
                // again: older epochs than its cache.
                let stale =
                    n.leader_epoch < cache.leader_epoch || n.bucket_epoch < cache.bucket_epoch;
                if state.budgets.message_loss > 0 && !stale {
                    return false;
                }
            }
            _ => {}
        }
    }
    // P7: a server that leads in its own view, where a request is in flight, only while no
    // server is down: no restart can then make it propose from the view it has now.
    !(requests
        && state
            .view(server, bucket)
            .is_some_and(|v| v.leader == Some(server))
        && state.servers.iter().any(|s| !s.up))
}

/// P7's test for a request that makes its server the leader: the coordinator can never send
/// that server another request for the bucket with the same epochs but another execution key,
/// whose delivery, a proposal, its refusal and then this request's delivery would clear the
/// refusal in one order and not in the other. Either the request is stale (the coordinator's
/// epochs for the bucket have moved on, and only grow), or it is exactly what the coordinator
/// sends now and the execution key cannot change at these epochs: no server is down (R20's
/// resend after a restart is the only send for a bucket without an attempt and no write), no
/// rebalance can be registered, no recovery is pending, and the bucket is not waiting to be
/// admitted.
fn sole_request_at_its_epochs(state: &SystemState, n: &crate::state::message::Nli) -> bool {
    let c = &state.coordinator;
    let cache = c.cache.lai[n.bucket as usize];
    if n.leader_epoch < cache.leader_epoch || n.bucket_epoch < cache.bucket_epoch {
        return true;
    }
    let key = c.attempt(n.bucket).map(|a| a.key);
    n.exec_key == key
        && state.servers.iter().all(|s| s.up)
        && state.budgets.register == 0
        && !c.recovery_pending
        && !(key.is_none()
            && c.status_of(n.bucket) == Some(crate::state::types::BucketStatus::NotStarted))
}

/// The stubborn set of `replica`: the delivery of each distinct message addressed to it, and
/// its loss and duplication while those budgets last, in the order of
/// [`RebalanceModel::candidate_actions`].
pub fn stubborn_actions(state: &SystemState, replica: Replica, out: &mut Vec<Action>) {
    let network = &state.network;
    let mine = || {
        network
            .iter()
            .enumerate()
            .filter(|(i, m)| {
                (*i == 0 || network[i - 1] != **m) && server_bound_replica(m) == Some(replica)
            })
            .map(|(_, m)| *m)
    };
    out.extend(mine().map(Action::deliver));
    if state.budgets.message_loss > 0 {
        out.extend(mine().map(|msg| Action::DropMessage { msg }));
    }
    if state.budgets.message_duplication > 0 {
        out.extend(mine().map(|msg| Action::DuplicateMessage { msg }));
    }
}

/// The measure every stubborn step lowers (the cycle proviso, spec 9): the server-bound
/// messages in flight, counted with their copies, plus twice the duplication budget left. A
/// delivery or a loss removes one such message (and a step's collection only removes more); a
/// duplication adds one and spends a unit of budget. So no cycle of the reduced graph is made
/// of reduced states only.
pub fn measure(state: &SystemState) -> usize {
    state
        .network
        .iter()
        .filter(|m| server_bound_replica(m).is_some())
        .count()
        + 2 * usize::from(state.budgets.message_duplication)
}
