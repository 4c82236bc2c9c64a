//! Spec 7.3's fairness: the fair-end-state shortcut agrees with the plain definition, every
//! terminal state is a fair end state, and fair end states are where the LIVE-* goals are read.

use std::ops::ControlFlow;

use rebalance_model::check::walk::bfs;
use rebalance_model::step::action::Fairness;
use rebalance_model::{preset, ActionKind, BugSet, RebalanceModel};

/// `is_fair_end` skips the enabled-action scan when a message is in flight or an event is
/// queued; on every state of these presets that must give the plain definition's answer.
#[test]
fn fair_end_shortcut_agrees_with_the_plain_definition() {
    for name in [
        "tiny",
        "ci-store",
        "ci-leader",
        "ci-two-buckets",
        "ci-recovery-store",
        "ci-zombie",
        "ci-liveness-store",
    ] {
        let mut config = preset(name).unwrap();
        config.max_network = crate::common::cycle_bound(name);
        let model = RebalanceModel::new(config, BugSet::none());
        let (mut ends, mut terminal, mut states) = (0, 0, 0);
        bfs(&model, |s, _| {
            states += 1;
            let end = model.is_fair_end(s);
            assert_eq!(end, !model.obligatory_enabled(s), "{name}: {s:?}");
            if model.is_terminal(s) {
                terminal += 1;
                assert!(end, "{name}: a terminal state is a fair end state: {s:?}");
            }
            ends += usize::from(end);
            ControlFlow::Continue(())
        });
        println!("{name}: {states} states, {ends} fair end states, {terminal} terminal");
        assert!(ends > 0, "{name}: no fair end state in {states} states");
        assert!(terminal <= ends, "{name}");
    }
}

/// The fairness table of spec 7.3 and `ActionKind::fairness` agree: every kind is in exactly
/// one row of the spec's table, with the class the code gives it; and a store fault is never
/// obligatory.
#[test]
fn fairness_table_is_spec_7_3() {
    let spec = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../spec/protocol.md"))
        .expect("spec");
    let section = &spec[spec.find("### 7.3 Liveness").expect("7.3")..];
    let section = &section[..section.find("\n## ").unwrap_or(section.len())];
    let mut rows = Vec::new();
    for line in section.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (kinds, class) = (cells[1], cells[2]);
        if kinds.contains("fail_store_op") || !matches!(class, "obligatory" | "optional") {
            continue; // the store-fault row (checked below), or a row of another table
        }
        for kind in kinds.split(',').map(|k| k.trim().trim_matches('`')) {
            rows.push((kind.to_string(), class.to_string()));
        }
    }
    assert!(!rows.is_empty(), "no fairness table in spec 7.3");
    for kind in ActionKind::ALL {
        let found: Vec<_> = rows.iter().filter(|(k, _)| k == kind.name()).collect();
        assert_eq!(
            found.len(),
            1,
            "{} in spec 7.3's table: {found:?}",
            kind.name()
        );
        let want = match kind.fairness() {
            Fairness::Obligatory => "obligatory",
            Fairness::Optional => "optional",
        };
        assert_eq!(found[0].1, want, "{}", kind.name());
    }
    assert_eq!(rows.len(), ActionKind::ALL.len(), "{rows:?}");
    let tick = rebalance_model::Action::TICK;
    assert!(tick.is_obligatory());
    assert!(!tick.with_fail_store_op(Some(1)).is_obligatory());
}

/// The progress check (spec 7.3, `no_give_up`) changes one fairness class, and only that one: a
/// crashed server's restart becomes obligatory (the faults stop), and its store-failing variant
/// stays a fault.
#[test]
fn the_progress_check_makes_restarts_obligatory_and_nothing_else() {
    use rebalance_model::Action;
    let mut config = preset("ci-server-crash").unwrap();
    let default = RebalanceModel::new(config.clone(), BugSet::none());
    config.no_give_up = true;
    let progress = RebalanceModel::new(config, BugSet::none());
    let restart = Action::RestartServer {
        server: 1,
        fail_store_op: None,
    };
    assert!(!default.is_obligatory(&restart));
    assert!(progress.is_obligatory(&restart));
    assert!(!progress.is_obligatory(&restart.with_fail_store_op(Some(1))));
    let s = crate::common::find(&default, |s| {
        s.coordinator.rid.is_some() && !s.network.is_empty() && s.servers.iter().any(|x| !x.up)
    });
    let mut enabled = Vec::new();
    default.enabled_actions(&s, &mut enabled);
    for a in enabled
        .iter()
        .filter(|a| !matches!(a, Action::RestartServer { .. }))
    {
        assert_eq!(default.is_obligatory(a), progress.is_obligatory(a), "{a:?}");
    }
}
