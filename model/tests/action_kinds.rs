//! The action kinds table (`ActionKind`) agrees with the trace format's `kind` tags, and the
//! presets reach every kind. Part of the model's mutation oracle (`.cargo/mutants-model.toml`):
//! a zombie that never cancels (`budgets.cancel > 0` -> `== 0` where its actions are listed) or
//! never takes a response addressed to its epoch (that arm of `zombie_step` deleted) changed no
//! verdict, since every switch the zombie matters for is caught by its other steps (F18,
//! whole-set shard 3/8); a kind no preset reaches is caught here.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use rebalance_model::check::walk::dfs;
use rebalance_model::{preset, ActionKind, BugSet, RebalanceModel};

#[test]
fn every_kind_name_is_the_tag_serde_writes_and_the_presets_reach_every_kind() {
    let mut seen = BTreeSet::new();
    let wanted = ActionKind::ALL.len()
        + ActionKind::ALL
            .iter()
            .filter(|k| k.can_fail_store())
            .count();
    // Small ones first, the large ci-liveness-store for what they leave, so the search can stop
    // early.
    for name in [
        "ci-store",
        "ci-zombie",
        "ci-coordinator-crash",
        "ci-messages",
        "ci-leader",
        "ci-liveness-store",
        "ci-rf2-recovery",
        "ci-server-crash",
    ] {
        // Each (kind, fails a store op) pair is checked the first time it is seen; once every
        // pair has been, the rest of the graph has nothing left to show.
        if seen.len() == wanted {
            break;
        }
        let model = RebalanceModel::new(preset(name).expect("preset"), BugSet::none());
        dfs(&model, |edge| {
            let kind = edge.action.kind();
            if seen.insert((kind, edge.action.fail_store_op().is_some())) {
                let json = serde_json::to_value(edge.action).expect("serialises");
                assert_eq!(json["kind"], kind.name(), "{name}: {json}");
                assert_eq!(
                    kind.can_fail_store(),
                    edge.action.can_fail_store(),
                    "{name}: {json}"
                );
            }
            if seen.len() == wanted {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        });
    }
    for kind in ActionKind::ALL {
        assert!(seen.contains(&(kind, false)), "{kind:?} never enabled");
        if kind.can_fail_store() {
            assert!(
                seen.contains(&(kind, true)),
                "{kind:?} never failed a store op"
            );
        }
    }
}

/// A step that makes `n` failable store operations has exactly the `n` failing variants the
/// trace format names (`fail_store_op` = 1..=n, the k-th operation fails, spec 9): each is
/// enabled and fails at its own operation, and the (n+1)-th is not. Under `+=` -> `-=` in the
/// count (`store_op`), the operations were numbered 255, 254, ... downwards, so the same
/// failures happened under other labels, which no verdict reads but every trace does (F18,
/// whole-set shard 4/8).
#[test]
fn each_store_operation_of_a_step_fails_under_its_own_number() {
    use rebalance_model::check::walk::{edges, fingerprint};
    use std::collections::HashSet;
    let model = RebalanceModel::new(preset("ci-store").expect("preset"), BugSet::none());
    let init = model.init_state();
    let mut seen = HashSet::from([fingerprint(&init)]);
    let mut stack = vec![init];
    let (mut steps, mut failures) = (0, 0);
    while let Some(s) = stack.pop() {
        if s.budgets.store_failure > 0 {
            let mut candidates = Vec::new();
            model.candidate_actions(&s, &mut candidates);
            for a in candidates.iter().filter(|a| a.fail_store_op().is_none()) {
                let Some((_, out)) = model.step(&s, a) else {
                    continue;
                };
                if !a.can_fail_store() || out.store_ops == 0 {
                    continue;
                }
                steps += 1;
                for k in 1..=out.store_ops {
                    let failing = a.with_fail_store_op(Some(k));
                    let (_, o) = model
                        .step(&s, &failing)
                        .unwrap_or_else(|| panic!("{failing:?} is not enabled"));
                    assert!(o.store_failed, "{failing:?} failed nothing");
                    assert_eq!(o.store_ops, k, "{failing:?} failed another operation");
                    failures += 1;
                }
                let beyond = a.with_fail_store_op(Some(out.store_ops + 1));
                assert!(model.step(&s, &beyond).is_none(), "{beyond:?} is enabled");
            }
        }
        edges(&model, &s, |_, _, next, _| {
            if seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
    assert!(
        steps > 0 && failures >= steps,
        "{steps} steps, {failures} failures"
    );
}
