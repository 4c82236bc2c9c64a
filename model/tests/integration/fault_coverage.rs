//! The fault-coverage measure of spec 9 ("Fault coverage") on the fault-combination family:
//! each small member reaches its own pair at every phase the table expects of it, and no cell
//! of a kind it has no budget for.

use rebalance_model::check::fault_coverage::{measure, possible_cells, Faults, Phase, Shape};
use rebalance_model::check::por::reduced;
use rebalance_model::presets::{combination, combination_name, preset};
use rebalance_model::BugSet;

fn walked(name: &str) -> rebalance_model::check::fault_coverage::Coverage {
    let config = preset(name).unwrap_or_else(|| panic!("{name} is a family member"));
    let (model, _) = reduced(config, BugSet::default());
    let cov = measure(&model, usize::MAX, |_| {});
    assert!(cov.complete, "{name}: the walk saw every state");
    cov
}

#[test]
fn family_names_round_trip() {
    for faults in Faults::all_of_size(2)
        .into_iter()
        .chain(Faults::all_of_size(3))
    {
        for shape in Shape::ALL {
            let name = combination_name(shape, faults);
            assert_eq!(preset(&name), Some(combination(shape, faults)), "{name}");
        }
    }
    // Kinds out of order, unknown kinds and unknown shapes are not family members.
    assert!(preset("faults-move-loss+cancel").is_none());
    assert!(preset("faults-move-cancel+lost").is_none());
    assert!(preset("faults-sideways-cancel+loss").is_none());
}

/// A cancel and a store failure can each strike at every phase of either plan kind; the walk
/// must see the pair at each, and only that pair.
#[test]
fn cancel_and_store_failure_reach_every_phase() {
    for shape in Shape::ALL {
        let faults = Faults::of(&[
            rebalance_model::check::fault_coverage::FaultKind::Cancel,
            rebalance_model::check::fault_coverage::FaultKind::StoreFailure,
        ]);
        let cov = walked(&combination_name(shape, faults));
        let expected: Vec<_> = possible_cells(2)
            .into_iter()
            .filter(|c| c.faults == faults && c.shape == shape)
            .collect();
        let phases = Phase::ALL.iter().filter(|p| p.exists_for(shape)).count();
        assert_eq!(expected.len(), phases);
        let reached: Vec<_> = cov.cells.iter().copied().collect();
        assert_eq!(reached, expected, "{shape:?}");
    }
}

/// A lost message needs one in flight, and none is in flight about a bucket still at its
/// origin with nothing else having happened: the walk must not invent that cell.
#[test]
fn loss_is_not_seen_at_origin_without_a_message() {
    use rebalance_model::check::fault_coverage::FaultKind::{Cancel, MessageLoss};
    let faults = Faults::of(&[Cancel, MessageLoss]);
    let cov = walked(&combination_name(Shape::LeaderOnly, faults));
    assert!(cov.cells.iter().all(|c| c.faults == faults));
    assert!(!cov.cells.iter().any(|c| c.phase == Phase::AtOrigin));
    assert_eq!(cov.cells.len(), 3, "mid-move, at target and tracked");
}
