//! The action kinds table (`ActionKind`) agrees with the trace format's `kind` tags, and the
//! presets reach every kind.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use rebalance_model::walk::dfs;
use rebalance_model::{preset, ActionKind, BugSet, RebalanceModel};

#[test]
fn every_kind_name_is_the_tag_serde_writes_and_the_presets_reach_every_kind() {
    let mut seen = BTreeSet::new();
    for name in [
        "ci-messages",
        "ci-store",
        "ci-coordinator-crash",
        "ci-leader",
        "ci-rf2-recovery",
        "ci-server-crash",
        "ci-zombie",
        "ci-liveness-store",
    ] {
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
            ControlFlow::Continue(())
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
