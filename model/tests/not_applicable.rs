//! The n/a reasoning of `properties::not_applicable` (spec 7.2), checked where it decides. Each
//! test builds a small configuration on which one guard, and only it, calls a companion n/a, and
//! checks exhaustively that the companion has no example there, reported as n/a with that
//! reason. A guard that wrongly called the companion applicable would make the check report a
//! missing example; one that wrongly called it n/a where an example exists is caught by
//! `ci_presets.rs`, which fails on an example for a companion called n/a. (Found by mutation
//! testing, spec/findings.md F18: with these guards mutated, every CI preset still passed.)

use rebalance_model::check::checker::{check, CheckOptions, Verdict};
use rebalance_model::check::por::reduced;
use rebalance_model::check::shortest::first_discoveries;
use rebalance_model::{preset, BugSet, Config};

fn verdict_of(config: Config, property: &str) -> Verdict {
    // The reduced graph, as `check` searches by default: its verdicts are the whole graph's
    // (spec 9; `integration/por.rs`).
    let (model, _) = reduced(config, BugSet::none());
    let r = check(&model, &CheckOptions::dfs(2));
    r.verdicts
        .into_iter()
        .find(|(p, _)| *p == property)
        .unwrap_or_else(|| panic!("no property {property}"))
        .1
}

fn assert_na(config: Config, property: &str, reason: &str) {
    match verdict_of(config, property) {
        Verdict::NotApplicable(why) => assert!(why.contains(reason), "{property}: n/a, but {why}"),
        other => panic!("{property}: {other:?}, expected n/a ({reason})"),
    }
}

/// SOME-ADMISSION-CAPPED is applicable on `c` and has an example: the first one, by a
/// breadth-first search that stops there.
fn assert_capped_admission_has_an_example(c: Config) {
    assert_eq!(
        rebalance_model::verdict::properties::not_applicable("SOME-ADMISSION-CAPPED", &c),
        None
    );
    let (model, _) = reduced(c, BugSet::none());
    let found = first_discoveries(&model, &["SOME-ADMISSION-CAPPED"]);
    assert_eq!(found.len(), 1, "no example of SOME-ADMISSION-CAPPED");
}

/// `ci-two-buckets` (two moves, a coordinator crash) without its cancel, with two slots and one
/// tracked attempt: the shape of the capped-admission guards below.
fn two_moves_two_slots_one_tracked() -> Config {
    let mut c = preset("ci-two-buckets").unwrap();
    c.budgets.cancel = 0;
    c.max_tracked_timed_out = 1;
    c.max_inflight = 2;
    c
}

#[test]
fn target_unavailable_give_up_needs_a_shorter_timeout_than_no_progress() {
    let mut c = preset("tiny").unwrap();
    c.budgets.server_crash = 1;
    c.target_unavailable_timeout_ticks = c.no_progress_timeout_ticks;
    assert_na(
        c,
        "SOME-GIVE-UP-UNAVAILABLE",
        "not shorter than no_progress_timeout",
    );
}

#[test]
fn capped_admission_without_recovery_needs_m_plus_k_plan_buckets() {
    // Two moves, one tracked attempt, two slots, no coordinator crash, no store failure:
    // M + k = 3 > 2 buckets.
    let mut c = two_moves_two_slots_one_tracked();
    c.budgets.coordinator_crash = 0;
    assert_na(
        c,
        "SOME-ADMISSION-CAPPED",
        "max_tracked_timed_out + max_inflight",
    );
}

#[test]
fn the_backoff_cap_past_the_no_progress_give_up_is_not_reached() {
    // Backoffs 1, 2, then the cap 4 after 3 ticks without progress: the give-up at 2 comes first.
    let mut c = preset("tiny").unwrap();
    c.budgets.server_crash = 1;
    c.max_reconcile_backoff_ticks = 4;
    c.no_progress_timeout_ticks = 2;
    c.target_unavailable_timeout_ticks = 1;
    assert_na(
        c,
        "SOME-BACKOFF-AT-CAP",
        "before the backoff reaches its cap",
    );
}

/// With a coordinator crash, two moves, two slots and M = 1: both moves are admitted and
/// mid-migration at once, so the recovery restores both as tracked and none is pending: no
/// example. (The guard said M + 1 = 2 buckets suffice with a crash, and a configuration like
/// this one failed its check with a missing example; found by mutating that guard, F18.)
#[test]
fn capped_admission_with_a_recovery_and_every_bucket_admitted_has_no_example() {
    assert_na(
        two_moves_two_slots_one_tracked(),
        "SOME-ADMISSION-CAPPED",
        "max(max_tracked_timed_out, max_inflight) + 1",
    );
}

/// The same with a store failure: a failed Phase A leaves an admitted bucket at its origin, so
/// after the recovery it is pending beside the restored one, and M + 1 = 2 buckets have an
/// example (the guard must see the crash: with its `> 0` turned to `< 0` it asked for M + k).
#[test]
fn capped_admission_with_a_recovery_and_a_failed_phase_a_needs_only_m_plus_one_buckets() {
    let mut c = preset("ci-two-buckets").unwrap();
    c.budgets.cancel = 0;
    c.budgets.store_failure = 1;
    c.max_tracked_timed_out = 1;
    c.max_inflight = 2;
    assert_capped_admission_has_an_example(c);
}

#[test]
fn the_progress_goal_is_decided_by_the_progress_check_only() {
    let mut c = preset("tiny").unwrap();
    assert_na(c.clone(), "LIVE-PROGRESS", "give-ups on");
    c.no_give_up = true;
    assert_eq!(verdict_of(c, "LIVE-PROGRESS"), Verdict::Holds);
}

/// Two leader-only buckets (`[0, 1]` to `[1, 0]`), two slots, a tracked cap of one, a coordinator
/// crash, and `server_crashes` server crashes.
fn two_leader_only_buckets_two_slots(server_crashes: u8) -> Config {
    let mut c = Config::from_json_str(
        r#"{"servers": 2, "replication_factor": 2,
            "buckets": [{"assignment": [0, 1], "leader": 0}, {"assignment": [0, 1], "leader": 0}],
            "plan": [{"bucket": 0, "target": [1, 0]}, {"bucket": 1, "target": [1, 0]}],
            "task_timeout_ticks": 1, "max_reconcile_backoff_ticks": 1,
            "target_unavailable_timeout_ticks": 1, "no_progress_timeout_ticks": 2,
            "max_tracked_timed_out": 1, "max_inflight": 2,
            "budgets": {"register": 1, "coordinator_crash": 1},
            "collect_dead_messages": true}"#,
    )
    .unwrap();
    c.budgets.server_crash = server_crashes;
    c
}

/// The leader-only clause needs a server crash: without one, every candidate is live, an
/// admitted leader-only bucket is elected at once, and a bucket at its origin after the
/// recovery was never admitted. Two leader-only buckets, two slots, a tracked cap of one and a
/// coordinator crash, no server crash: max(M, k) + 1 = 3 buckets are needed, so 2 have no
/// example, and the guard says n/a. (Shard 5/8's survivor `&&` -> `||` at that clause asked
/// for M + 1 = 2 and so called the goal applicable here.)
#[test]
fn without_a_server_crash_leader_only_buckets_need_max_m_k_plus_one() {
    let c = two_leader_only_buckets_two_slots(0);
    assert!(
        rebalance_model::verdict::properties::not_applicable("SOME-ADMISSION-CAPPED", &c).is_some(),
        "the guard calls SOME-ADMISSION-CAPPED applicable with 2 leader-only buckets, 2 slots, \
         M = 1 and no server crash"
    );
    let (model, _) = reduced(c, BugSet::none());
    let found = first_discoveries(&model, &["SOME-ADMISSION-CAPPED"]);
    assert!(
        found.is_empty(),
        "an example the guard says cannot be: {found:?}"
    );
}

/// The guard's other way to leave an admitted bucket at its origin: a leader-only bucket whose
/// election finds no live candidate. Two leader-only buckets, two slots, a tracked cap of one,
/// a server crash and a coordinator crash: M + 1 = 2 buckets have an example (found in 8
/// steps), where without that clause the guard would ask for max(M, k) + 1 = 3.
#[test]
fn capped_admission_with_a_recovery_and_a_leader_only_wait_needs_only_m_plus_one_buckets() {
    let c = two_leader_only_buckets_two_slots(1);
    assert_capped_admission_has_an_example(c);
}

/// A store failure aborts the admission loop at its failed write, so a bucket stays pending with
/// a slot free, without any recovery: two moves, two slots, M = 1, no coordinator crash have an
/// example (Register's second write fails, the admitted bucket times out: capped). The guard
/// said n/a there, asking for M + k = 3 (found writing the test below, F18 shard 7/8).
#[test]
fn capped_admission_with_a_store_failure_needs_only_m_plus_one_buckets_without_a_recovery() {
    let mut c = two_moves_two_slots_one_tracked();
    c.budgets.coordinator_crash = 0;
    c.budgets.store_failure = 1;
    assert_capped_admission_has_an_example(c);
}

/// The leader-only wait shortens the need only after a recovery, which puts the waiting bucket
/// back in `pending`; without a coordinator crash it stays admitted, so two leader-only buckets,
/// two slots, M = 1 and a server crash need M + k = 3. (The guard's `coordinator_crash > 0`
/// turned to `>= 0` asked for M + 1 = 2 here, and survived where no configuration told the
/// two apart: F18, shard 7/8.)
#[test]
fn without_a_recovery_a_leader_only_wait_does_not_shorten_the_need() {
    let mut c = two_leader_only_buckets_two_slots(1);
    c.budgets.coordinator_crash = 0;
    assert_na(
        c,
        "SOME-ADMISSION-CAPPED",
        "max_tracked_timed_out + max_inflight",
    );
}

/// No LIVE-* goal applies against an abstract rest of the plan (spec 9: a Rest step is
/// optional, so the rest may keep a slot forever), and each applies again once the same plan is
/// concrete. (With the abstract guard turned off, the goals were applicable there, and no gate
/// test read a configuration with abstract buckets: F18, the abstract rest's own mutants.)
#[test]
fn no_liveness_goal_applies_against_an_abstract_rest() {
    let path = format!(
        "{}/configs/rest-rf2-recovery.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut c = Config::from_json_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.abstract_buckets.is_empty());
    c.no_give_up = true; // so that LIVE-PROGRESS would apply but for the abstract rest
    let goals: Vec<&str> = rebalance_model::verdict::properties::all()
        .into_iter()
        .map(|p| p.name)
        .filter(|n| n.starts_with("LIVE-"))
        .collect();
    assert!(goals.len() >= 5, "only {goals:?}");
    for goal in &goals {
        let why = rebalance_model::verdict::properties::always_not_applicable(goal, &c);
        assert!(
            why.is_some_and(|w| w.contains("abstract_buckets")),
            "{goal}: {why:?} with abstract buckets"
        );
    }
    c.abstract_buckets.clear();
    for goal in &goals {
        assert_eq!(
            rebalance_model::verdict::properties::always_not_applicable(goal, &c),
            None,
            "{goal} with the same plan concrete"
        );
    }
}
