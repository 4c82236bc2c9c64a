//! The claims behind spec 9's search reductions, checked where they are used. Comparing verdicts
//! with and without a reduction (`superseded.rs`) cannot see a reduction that prunes too much
//! where no property happens to depend on what it pruned; these tests check the claims
//! themselves, on every message a reduction removes in the reduced graph of a few CI presets
//! (with superseded requests collected where a bucket is replicated):
//!
//! - a **dead** message (an Nli R22 refuses, an `Ok` AdjustIsrResponse R24 ignores): delivering it
//!   changes nothing but the network, and it stays dead after every step that keeps it in flight;
//!   and every message spec 9 calls dead is removed (a dead response delivered), none left in
//!   flight;
//! - a **superseded** Nli: once a newer Nli that supersedes it is delivered to a live server,
//!   it is dead; and if it is delivered first, the view it installs is older than the
//!   coordinator's cache, or the same view the newer Nli installs (they differ only in the
//!   coordinator epoch);
//! - a **redundant** Nli, a coordinator's resend that is absorbed (spec 3.4): delivering it
//!   instead changes nothing but the network, since its server holds exactly its view and the
//!   answer it would send is already in flight.
//!
//! The removed messages of a step are those the same step leaves in flight when the
//! configuration collects and absorbs nothing (found by mutation testing, spec/findings.md F18: a
//! dead test with `<=` for `<`, or a superseding test with `>` for `<`, changed no verdict on
//! any CI preset; nor did absorbing a resend whose server holds another view, `!=` -> `==` in
//! `nli_redundant`).

mod common;
use common::fingerprint;
use rebalance_model::reductions::{adjust_isr_response_dead, nli_dead, nli_superseded, supersedes};
use rebalance_model::{
    preset, Action, ActionKind, BugSet, Message, Nli, RebalanceModel, SystemState,
};
use std::collections::HashSet;

/// `s` with one copy of `m` taken out of the network.
fn without(s: &SystemState, m: &Message) -> SystemState {
    let mut t = s.clone();
    assert!(t.take(m));
    t
}

/// Equal as states, apart from what the last step did (the ghost of the SOME-* companions).
fn same_state(a: &SystemState, b: &SystemState) -> bool {
    let mut a = a.clone();
    a.ghost.last = b.ghost.last;
    a == *b
}

/// The server-bound messages `raw` holds that `reduced` does not (a multiset difference).
fn removed(raw: &SystemState, reduced: &SystemState) -> Vec<Message> {
    let mut left: Vec<Message> = reduced.network.iter().copied().collect();
    let mut out = Vec::new();
    for m in raw.network.iter() {
        if let Some(i) = left.iter().position(|k| k == m) {
            left.swap_remove(i);
        } else if matches!(m, Message::Nli(_) | Message::AdjustIsrResponse(_)) {
            out.push(*m);
        }
    }
    out
}

/// spec 9's dead messages, restated from its text rather than taken from the model: an Nli
/// whose server has seen a newer coordinator epoch, or exactly its own and holds a view with a
/// higher leader or bucket epoch; an `Ok` answer whose leader's view has moved to another leader
/// epoch or already has its bucket epoch; an NliResponse whose context has an older coordinator
/// epoch, or an older leader or bucket epoch than the cache (the coordinator delivers those at
/// once: with that delivery gone, `response_dead(r)` -> `false` in `deliver_dead_responses`,
/// they stayed in flight and no verdict changed, F18).
fn dead_by_spec(s: &SystemState, m: &Message) -> bool {
    match m {
        Message::NliResponse(r) => {
            let lai = &s.coordinator.cache.lai[r.bucket as usize];
            r.context.coordinator_epoch < s.coordinator.ce
                || r.context.leader_epoch < lai.leader_epoch
                || r.context.bucket_epoch < lai.bucket_epoch
        }
        Message::Nli(n) => {
            let last_ce = s.servers[n.to as usize].last_ce;
            n.coordinator_epoch < last_ce
                || n.coordinator_epoch == last_ce
                    && s.view(n.to, n.bucket).is_some_and(|v| {
                        v.leader_epoch > n.leader_epoch || v.bucket_epoch > n.bucket_epoch
                    })
        }
        Message::AdjustIsrResponse(r) => match &r.result {
            rebalance_model::AdjustIsrResult::Ok(lai) => s.view(r.to, r.bucket).is_some_and(|v| {
                v.leader_epoch != lai.leader_epoch || v.bucket_epoch >= lai.bucket_epoch
            }),
            rebalance_model::AdjustIsrResult::Err => false,
        },
        _ => false,
    }
}

/// spec 9's superseded requests, restated from its text: an Nli is superseded when a newer one
/// to the same server and bucket is in flight, from a newer coordinator epoch, or from the same
/// one with a higher leader or bucket epoch. (With the epochs' `||` turned to `&&`, fewer were
/// collected and only the graph grew, past the mutation gate's timeout: F18, shard 7/8.)
fn superseded_by_spec(s: &SystemState, old: &Nli) -> bool {
    s.network.iter().any(|m| {
        matches!(m, Message::Nli(new) if new.to == old.to
            && new.bucket == old.bucket
            && (new.coordinator_epoch > old.coordinator_epoch
                || new.coordinator_epoch == old.coordinator_epoch
                    && (new.leader_epoch > old.leader_epoch
                        || new.bucket_epoch > old.bucket_epoch)))
    })
}

fn is_dead(s: &SystemState, m: &Message) -> bool {
    match m {
        Message::Nli(n) => nli_dead(s, n),
        Message::AdjustIsrResponse(r) => adjust_isr_response_dead(s, r),
        _ => false,
    }
}

#[derive(Default)]
struct Tally {
    states: usize,
    dead: usize,
    /// Of `dead`, the `Ok` AdjustIsrResponse removals (the rest are Nli).
    dead_answers: usize,
    superseded: usize,
    /// Resends absorbed as redundant.
    absorbed: usize,
    failures: Vec<String>,
}

impl Tally {
    fn fail(&mut self, what: String) {
        if self.failures.len() < 5 {
            self.failures.push(what);
        }
    }
}

/// A dead message: its delivery is a no-op, and every step that keeps it keeps it dead.
fn check_dead(full: &RebalanceModel, raw: &SystemState, m: &Message, t: &mut Tally) {
    t.dead += 1;
    if matches!(m, Message::AdjustIsrResponse(_)) {
        t.dead_answers += 1;
    }
    match full.step(raw, &Action::deliver(*m)) {
        Some((after, _)) if same_state(&after, &without(raw, m)) => {}
        Some(_) => t.fail(format!("delivering dead {m:?} changed the state")),
        None => t.fail(format!("dead {m:?} cannot be delivered")),
    }
    full.successors(raw, |a, next, _| {
        if next.network.iter().any(|k| k == m) && !is_dead(&next, m) {
            t.fail(format!("{m:?} was dead, and not after {a:?}"));
        }
    });
}

/// A resend absorbed as redundant: delivered instead, it changes nothing but the network.
fn check_absorbed(full: &RebalanceModel, raw: &SystemState, m: &Message, t: &mut Tally) {
    t.absorbed += 1;
    match full.step(raw, &Action::deliver(*m)) {
        Some((after, _)) if same_state(&after, &without(raw, m)) => {}
        Some(_) => t.fail(format!("delivering absorbed {m:?} changed the state")),
        None => t.fail(format!("absorbed {m:?} cannot be delivered")),
    }
}

/// A superseded Nli: the newer one makes it dead; delivered first, it installs a view older
/// than the cache, or the newer one's view.
fn check_superseded(full: &RebalanceModel, raw: &SystemState, old: &Nli, t: &mut Tally) {
    t.superseded += 1;
    let newer: Vec<Nli> = raw
        .network
        .iter()
        .filter_map(|k| match k {
            Message::Nli(n) if supersedes(n, old) => Some(*n),
            _ => None,
        })
        .collect();
    if newer.is_empty() {
        t.fail(format!(
            "{old:?} is called superseded, but nothing supersedes it"
        ));
    }
    for n in &newer {
        if !raw.servers[n.to as usize].up {
            continue; // the newer one would be lost, and with it nothing is claimed
        }
        let Some((after, _)) = full.step(raw, &Action::DeliverNli { msg: *n }) else {
            t.fail(format!("{n:?} cannot be delivered"));
            continue;
        };
        if !nli_dead(&after, old) {
            t.fail(format!("{old:?} is not dead once {n:?} is delivered"));
        }
    }
    let Some((first, _)) = full.step(raw, &Action::DeliverNli { msg: *old }) else {
        t.fail(format!("superseded {old:?} cannot be delivered"));
        return;
    };
    let before = raw.view(old.to, old.bucket);
    let view = first.view(old.to, old.bucket);
    if view == before {
        return;
    }
    let Some(v) = view else {
        t.fail(format!("delivering {old:?} removed a view"));
        return;
    };
    let cache = &raw.coordinator.cache.lai[old.bucket as usize];
    let older = v.bucket_epoch < cache.bucket_epoch || v.leader_epoch < cache.leader_epoch;
    let as_newer = newer.iter().any(|n| {
        (n.leader, n.leader_epoch, n.bucket_epoch, n.replicas, n.isr)
            == (v.leader, v.leader_epoch, v.bucket_epoch, v.replicas, v.isr)
    });
    if !older && !as_newer {
        t.fail(format!(
            "superseded {old:?} delivered first installs {v:?}, not older than the cache {cache:?}"
        ));
    }
}

/// Walks the reduced graph of `name`; at each step, compares with the same step in the
/// unreduced model and checks each message the reduction removed.
fn check_preset(name: &str) -> Tally {
    let mut config = preset(name).expect("preset");
    assert!(config.collect_dead_messages, "{name} collects nothing");
    // The presets keep superseded requests (the partial-order reduction needs them, spec 9);
    // the configuration files of replicated moves still collect them, so check that claim too,
    // where a bucket has two or more replicas. Within the bound the fair-cycle search keeps.
    config.collect_superseded_nli = config.replication_factor >= 2;
    config.max_network = common::cycle_bound(name);
    let reduced = RebalanceModel::new(config.clone(), BugSet::none());
    let mut plain = config;
    plain.collect_dead_messages = false;
    plain.collect_superseded_nli = false;
    plain.absorb_redundant_nli = false;
    let full = RebalanceModel::new(plain, BugSet::none());
    let mut t = Tally::default();
    let mut seen = HashSet::new();
    let init = reduced.init_state();
    seen.insert(fingerprint(&init));
    let mut stack = vec![init];
    while let Some(s) = stack.pop() {
        t.states += 1;
        reduced.successors(&s, |a, next, out| {
            let (raw, _) = full
                .step(&s, &a)
                .expect("enabled when reduced, enabled in full");
            // Only a dead response is delivered early: a current one delivered at once would
            // drop the runs in which it arrives later.
            for r in &out.delivered_dead {
                let m = Message::NliResponse(*r);
                if !dead_by_spec(&raw, &m) {
                    t.fail(format!("{a:?} delivered {m:?} as dead, which it is not"));
                }
            }
            for m in removed(&raw, &next) {
                if is_dead(&raw, &m) {
                    check_dead(&full, &raw, &m, &mut t);
                } else if let Message::Nli(n) = &m {
                    if reduced.collects_superseded_nli() && nli_superseded(&raw, n) {
                        check_superseded(&full, &raw, n, &mut t);
                    } else if a.kind() != ActionKind::DeliverNli
                        && a.kind() != ActionKind::DropMessage
                        && a.kind() != ActionKind::DuplicateMessage
                    {
                        // A coordinator step's resend, absorbed.
                        check_absorbed(&full, &raw, &m, &mut t);
                    } else {
                        t.fail(format!(
                            "{a:?} removed {m:?}, which is neither dead, superseded nor absorbed"
                        ));
                    }
                } else {
                    t.fail(format!("{a:?} removed {m:?}, which is not dead"));
                }
            }
            // Collection is complete: no dead message is left in flight (found by mutating the
            // answer's test `||` -> `&&`, which collected fewer and changed no verdict, F18).
            if let Some(m) = next.network.iter().find(|m| dead_by_spec(&next, m)) {
                t.fail(format!("{a:?} left dead {m:?} in flight"));
            }
            if let Some(why) = next
                .network
                .iter()
                .find_map(|m| context_not_behind(&next, m))
            {
                t.fail(format!("after {a:?}: {why}"));
            }
            if reduced.collects_superseded_nli() {
                let left = next
                    .network
                    .iter()
                    .find(|m| matches!(m, Message::Nli(n) if superseded_by_spec(&next, n)));
                if let Some(m) = left {
                    t.fail(format!("{a:?} left superseded {m:?} in flight"));
                }
            }
            if reduced.within_bound(&next) && seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
    t
}

/// Why a response in flight breaks the premises of `response_dead`'s leader-epoch clause, if it
/// does. A response's context is the coordinator's cache when it sent the request, and the cache
/// is the store (INV-CONTEXT-COHERENT), whose epochs only grow: so no context is ahead of the
/// store's, and one whose leader epoch is behind also has its bucket epoch behind (a leader
/// change is a write, and every write raises the bucket epoch). The leader-epoch clause is then
/// redundant with the bucket-epoch one, which is why mutating its `<` to `>` changes nothing
/// (spec/findings.md F18, shard 4/8); these premises are what make that mutant equivalent.
fn context_not_behind(s: &SystemState, m: &Message) -> Option<String> {
    let Message::NliResponse(r) = m else {
        return None;
    };
    let lai = s.store.buckets.lai[r.bucket as usize];
    let c = &r.context;
    if c.leader_epoch > lai.leader_epoch || c.bucket_epoch > lai.bucket_epoch {
        return Some(format!("{m:?} has a context ahead of the store's {lai:?}"));
    }
    if c.leader_epoch < lai.leader_epoch && c.bucket_epoch >= lai.bucket_epoch {
        return Some(format!(
            "{m:?} is behind the store's leader epoch but not its bucket epoch ({lai:?})"
        ));
    }
    None
}

fn assert_claims_hold(name: &str) -> Tally {
    let t = check_preset(name);
    println!(
        "{name}: {} states, {} dead ({} of them answers), {} superseded and {} absorbed removals checked",
        t.states, t.dead, t.dead_answers, t.superseded, t.absorbed
    );
    assert!(t.failures.is_empty(), "{name}: {:#?}", t.failures);
    assert!(
        t.dead > 0,
        "{name}: no dead message was removed, so nothing was checked"
    );
    t
}

/// Some superseded request was removed and checked: a reduction that never fires (its test
/// always false) would pass every claim above, having nothing to claim.
fn assert_some_superseded(tallies: &[Tally]) {
    assert!(
        tallies.iter().any(|t| t.superseded > 0),
        "no superseded request was removed, so that claim was never checked"
    );
}

/// Likewise for dead answers: mutating `adjust_isr_response_dead` to `false` survived while
/// only the total of dead removals was required (spec/findings.md F18), the Nli making it up.
fn assert_some_dead_answer(tallies: &[Tally]) {
    assert!(
        tallies.iter().any(|t| t.dead_answers > 0),
        "no dead AdjustIsrResponse was removed, so that claim was never checked"
    );
}

/// And for absorbed resends.
fn assert_some_absorbed(tallies: &[Tally]) {
    assert!(
        tallies.iter().any(|t| t.absorbed > 0),
        "no resend was absorbed, so that claim was never checked"
    );
}

#[test]
fn dead_and_superseded_removals_are_harmless_on_rf2_presets() {
    let tallies: Vec<Tally> = ["ci-rf2-recovery", "ci-leader-crash"]
        .into_iter()
        .map(assert_claims_hold)
        .collect();
    assert_some_superseded(&tallies);
    assert_some_dead_answer(&tallies);
    assert_some_absorbed(&tallies);
}

#[test]
fn dead_and_superseded_removals_are_harmless_on_rf3() {
    assert_some_superseded(&[assert_claims_hold("ci-rf3-loss")]);
}

/// `ci-server-crash` has dead answers whose leader epoch is the view's and whose bucket epoch is
/// older: the one kind of dead answer an adoption test with `||` for `&&` would adopt (that
/// mutant survived on the presets above, whose dead answers all had older leader epochs, F18).
#[test]
fn dead_answers_of_the_current_leader_epoch_are_harmless() {
    assert_some_dead_answer(&[assert_claims_hold("ci-server-crash")]);
}

#[test]
fn dead_removals_are_harmless_with_three_buckets() {
    assert_claims_hold("ci-tracked2");
}
