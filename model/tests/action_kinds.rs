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
