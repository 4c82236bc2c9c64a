//! Every reachable state keeps its set-like fields in one order, so that two states with the
//! same contents are one state of the graph, and the binary searches that read them
//! (`SystemState::send`, `nli_redundant`, `enqueue_reconcile`) find what is there. Part of the
//! model's mutation oracle (`.cargo/mutants-model.toml`): R23.1 inserting a queued timeout at
//! the wrong place (`*k < a.key` -> `*k > a.key`) split equal states and changed no verdict,
//! since the queued timeouts are only ever searched linearly (F18, whole-set shard 3/8).

use rebalance_model::check::walk::{edges, fingerprint};
use rebalance_model::{preset, Action, BugSet, RebalanceModel, SystemState};
use std::collections::HashSet;

fn strictly_ascending<T: Ord>(xs: &[T]) -> bool {
    xs.windows(2).all(|w| w[0] < w[1])
}

/// The order each set-like field is kept in; the name of the first field out of order.
fn out_of_order(s: &SystemState) -> Option<&'static str> {
    let c = &s.coordinator;
    if !s.network.windows(2).all(|w| w[0] <= w[1]) {
        return Some("network (a multiset, ascending)");
    }
    let buckets: Vec<_> = c.attempts.iter().map(|(b, _)| *b).collect();
    if !strictly_ascending(&buckets) {
        return Some("attempts (by bucket)");
    }
    if !strictly_ascending(&c.queued_timeouts) {
        return Some("queued_timeouts");
    }
    if !strictly_ascending(&c.queued_reconciles) {
        return Some("queued_reconciles");
    }
    None
}

#[test]
fn every_set_like_field_of_every_reachable_state_is_in_its_order() {
    // Two buckets in two slots (ci-inflight2 without its third bucket), so that two attempts
    // time out and are reconciled at once; a message loss and a duplication (ci-messages), so
    // that the network holds several messages and two copies of one.
    let (mut most_timeouts, mut most_reconciles, mut most_messages) = (0, 0, 0);
    let mut two_slots = preset("ci-inflight2").expect("preset");
    two_slots.buckets.truncate(2);
    two_slots.plan.truncate(2);
    for (name, config) in [
        ("ci-inflight2, two buckets", two_slots),
        ("ci-messages", preset("ci-messages").expect("preset")),
    ] {
        let model = RebalanceModel::new(config, BugSet::none());
        let init = model.init_state();
        let mut seen = HashSet::from([fingerprint(&init)]);
        let mut stack = vec![init];
        while let Some(s) = stack.pop() {
            if let Some(field) = out_of_order(&s) {
                panic!("{name}: {field} out of order in {s:?}");
            }
            let c = &s.coordinator;
            most_timeouts = most_timeouts.max(c.queued_timeouts.len());
            most_reconciles = most_reconciles.max(c.queued_reconciles.len());
            most_messages = most_messages.max(s.network.len());
            edges(&model, &s, |_, _, next, _| {
                if seen.insert(fingerprint(&next)) {
                    stack.push(next);
                }
            });
        }
    }
    // Each order was tested where it can fail.
    assert!(
        most_timeouts >= 2,
        "at most {most_timeouts} queued timeouts"
    );
    assert!(
        most_reconciles >= 2,
        "at most {most_reconciles} queued reconciles"
    );
    assert!(
        most_messages >= 2,
        "at most {most_messages} messages in flight"
    );
}

/// A deposed coordinator (spec 8's zombie) is kept exactly while it has steps left: a zombie
/// step that leaves budget keeps it, and one that spends the last drops it, so that no state
/// holds a zombie that can never act (it would split states that behave alike). R17 keeps one
/// only with budget too. (Found by mutation, F18 shard 7/8: `zombie_steps > 0` -> `== 0` after
/// a zombie step changed no verdict, since `ci-zombie` allows one step, after which a kept
/// zombie is inert.)
#[test]
fn a_zombie_is_kept_exactly_while_it_has_steps_left() {
    let mut zombie2 = preset("ci-zombie").expect("preset");
    zombie2.budgets.zombie_steps = 2;
    // A duplicated response, so that two identical copies can wait for the zombie.
    zombie2.budgets.message_duplication = 1;
    // And no zombie at all where a coordinator crash has no zombie steps (R17's `> 0` as `>= 0`
    // survived: F18, whole-set shard 4/8).
    let no_zombie = preset("ci-coordinator-crash").expect("preset");
    assert_eq!(no_zombie.budgets.zombie_steps, 0);
    let (mut kept_after_a_step, mut zombie_deliveries) = (0, 0);
    for config in [zombie2, no_zombie] {
        walk_zombies(config, &mut kept_after_a_step, &mut zombie_deliveries);
    }
    assert!(kept_after_a_step > 0, "no zombie step left a step to take");
    assert!(zombie_deliveries > 0, "the zombie never took a response");
}

fn walk_zombies(
    config: rebalance_model::Config,
    kept_after_a_step: &mut usize,
    zombie_deliveries: &mut usize,
) {
    let model = RebalanceModel::new(config, BugSet::none());
    let init = model.init_state();
    let mut seen = HashSet::from([fingerprint(&init)]);
    let mut stack = vec![init];
    while let Some(s) = stack.pop() {
        assert!(
            s.zombie.is_none() || s.budgets.zombie_steps > 0,
            "a zombie without steps left: {s:?}"
        );
        let mut listed = Vec::new();
        edges(&model, &s, |_, a, next, _| {
            // The zombie takes only responses to its own requests, one action for each run of
            // identical copies (`zombie_candidates`; its `&&` turned to `||` listed every
            // response, and copies again: F18, whole-set shard 4/8).
            if let Action::ZombieDeliverNliResponse { msg } = &a {
                let ce = s.zombie.as_ref().expect("a zombie acts").ce;
                assert_eq!(
                    msg.context.coordinator_epoch, ce,
                    "{a:?} by the zombie of {ce}"
                );
                *zombie_deliveries += 1;
            }
            assert!(!listed.contains(&a), "{a:?} listed twice in {s:?}");
            listed.push(a);
            let stepped = s.zombie.is_some() && next.budgets.zombie_steps < s.budgets.zombie_steps;
            if stepped {
                assert_eq!(
                    next.zombie.is_some(),
                    next.budgets.zombie_steps > 0,
                    "after {a:?} with {} zombie steps left",
                    next.budgets.zombie_steps
                );
                *kept_after_a_step += usize::from(next.zombie.is_some());
            }
            if seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
}
