//! The superseded-request reduction (spec 9, "superseded requests") changes no verdict: every
//! preset with a replicated bucket is checked with and without `collect_superseded_nli`. For the protocol,
//! each property's verdict (holds, violated, example found, no example) must be the same; for
//! every bug switch, its property of spec 10 must be violated in both or in neither (a shortest-
//! path search, which stops at the first violation; for a livelock switch, the fair-cycle
//! search). The reduction only removes behaviours, so
//! it can only make a violation disappear; this is the test that none does on these presets.
//!
//! CI runs the smallest such preset; `SUPERSEDED_PRESETS=all` runs every replicated preset
//! (scripts/scheduled-checks.sh does).

use rebalance_model::check::checker::{check, CheckOptions};
use rebalance_model::check::cycle::fair_cycles_for_goals;
use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::config::presets::ci_preset_names;
use rebalance_model::verdict::bug::Bug;
use rebalance_model::{preset, BugSet, Config, RebalanceModel};

fn verdicts(config: Config, bugs: BugSet) -> Vec<(&'static str, &'static str)> {
    let model = RebalanceModel::new(config, bugs);
    let report = check(&model, &CheckOptions::dfs(2));
    report
        .verdicts
        .iter()
        .map(|(p, v)| (*p, crate::common::verdict_kind(v)))
        .collect()
}

#[test]
fn superseded_nli_collection_changes_no_verdict() {
    let all = std::env::var("SUPERSEDED_PRESETS").is_ok_and(|v| v == "all");
    let small = ["ci-rf3-loss"];
    let mut checked = 0;
    let mut differences = Vec::new();
    for name in ci_preset_names() {
        // The presets keep superseded requests (the partial-order reduction needs them, spec
        // 9); the switch is compared on every replicated one, within the bound of the
        // fair-cycle search where it has one.
        let mut full = preset(name).expect("preset");
        full.max_network = crate::common::cycle_bound(name);
        if full.replication_factor < 2 || !(all || small.contains(&name)) {
            continue;
        }
        let mut reduced = full.clone();
        reduced.collect_superseded_nli = true;
        let with = verdicts(reduced.clone(), BugSet::none());
        let without = verdicts(full.clone(), BugSet::none());
        if with != without {
            differences.push(format!(
                "{name}:\n  with    {with:?}\n  without {without:?}"
            ));
        }
        checked += 1;
        for bug in Bug::ALL {
            let property = bug.violated_property();
            // A livelock switch is violated on a fair cycle, which only the search sees.
            let violated = |config: &Config| {
                let model = RebalanceModel::new(config.clone(), BugSet::of(&[bug]));
                if bug.found_by_cycle_search() {
                    fair_cycles_for_goals(&model)
                        .violations
                        .iter()
                        .any(|l| l.goal == property)
                } else {
                    !first_discoveries(&model, &[property]).is_empty()
                }
            };
            let (with, without) = (violated(&reduced), violated(&full));
            if with != without {
                differences.push(format!(
                    "{name} {bug}: {property} violated with the reduction: {with}, without: {without}"
                ));
            }
            checked += 1;
        }
    }
    assert!(checked > Bug::ALL.len(), "only {checked} runs");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
