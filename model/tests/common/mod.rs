//! What several test files pin: the unique state count of every preset CI checks whole.

/// `(preset, reduced, whole)` for `tiny` and every `ci-*` preset, in preset order: the unique
/// states `check` explores (the partial-order reduction's graph, spec 9), and those of the whole
/// graph the fair-cycle search reads, within [`cycle_bound`] where the preset has one. A change to the transition relation or to the reduction changes these; the diff
/// then shows it in review.
#[allow(dead_code)] // a test file may include this module for its search helpers only
pub const PINNED: &[(&str, usize, usize)] = &[
    ("tiny", 366, 915),
    ("ci-messages", 14349, 22865),
    ("ci-store", 6566, 16067),
    ("ci-server-crash", 13733, 22717),
    ("ci-coordinator-crash", 10284, 11859),
    ("ci-leader", 10178, 11940),
    ("ci-two-buckets", 2270649, 82458),
    ("ci-rf2-server-crash", 155146, 590362),
    ("ci-rf2-recovery", 167704, 219762),
    ("ci-recovery-store", 88078, 114548),
    ("ci-rf3-loss", 39757, 104608),
    ("ci-rf3-crash-loss", 15119746, 3138381),
    ("ci-backoff", 430170, 513408),
    ("ci-zombie", 132633, 132633),
    ("ci-inflight2", 240774, 1183286),
    ("ci-rf2-isr-cancel-crash", 18661884, 1449984),
    ("ci-liveness-store", 361317, 626096),
    ("ci-tracked2", 5787574, 459911),
    ("ci-leader-crash", 112478, 181673),
    ("ci-refused-leader", 808321, 166557),
    ("ci-repair-after-crash", 89, 89),
];

/// `(preset, states)` for `tiny` and every `ci-*` preset: the whole graph of the progress check
/// (spec 7.3, `no_give_up`), within [`cycle_bound`], as the fair-cycle search reads it.
#[allow(dead_code)]
pub const PINNED_PROGRESS: &[(&str, usize)] = &[
    ("tiny", 340),
    ("ci-messages", 8498),
    ("ci-store", 5619),
    ("ci-server-crash", 7364),
    ("ci-coordinator-crash", 4640),
    ("ci-leader", 4872),
    ("ci-two-buckets", 9816),
    ("ci-rf2-server-crash", 195270),
    ("ci-rf2-recovery", 74206),
    ("ci-recovery-store", 37539),
    ("ci-rf3-loss", 38661),
    ("ci-rf3-crash-loss", 1037871),
    ("ci-backoff", 42575),
    ("ci-zombie", 23431),
    ("ci-inflight2", 191491),
    ("ci-rf2-isr-cancel-crash", 474010),
    ("ci-liveness-store", 219598),
    ("ci-tracked2", 110781),
    ("ci-refused-leader", 62354),
    ("ci-repair-after-crash", 89),
    ("ci-leader-crash", 72769),
];

/// The progress check's states on a preset; panics for an unpinned one.
#[allow(dead_code)]
pub fn pinned_progress(name: &str) -> usize {
    PINNED_PROGRESS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, s)| *s)
        .unwrap_or_else(|| {
            panic!("pin the progress check's states of preset {name} in tests/common")
        })
}

fn entry(name: &str) -> (usize, usize) {
    PINNED
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, r, w)| (*r, *w))
        .unwrap_or_else(|| panic!("pin the state counts of preset {name} in tests/common"))
}

/// The states `check` explores on a preset (the reduced graph); panics for an unpinned one, so
/// a new preset must be pinned.
#[allow(dead_code)]
pub fn pinned(name: &str) -> usize {
    entry(name).0
}

/// The states of a preset's whole graph, within [`cycle_bound`] where it has one.
#[allow(dead_code)]
pub fn pinned_whole(name: &str) -> usize {
    entry(name).1
}

/// The bound the fair-cycle search keeps on a preset whose whole graph is too large for CI: the
/// `max_network` it had before the partial-order reduction let its check drop it. The search
/// reads the whole graph (the reduction does not keep fair cycles, spec 9), so there it is
/// exhaustive only within the bound; `scripts/scheduled-checks.sh` searches some unbounded.
#[allow(dead_code)]
pub fn cycle_bound(name: &str) -> Option<u8> {
    match name {
        "ci-two-buckets" | "ci-tracked2" => Some(2),
        "ci-rf2-isr-cancel-crash" | "ci-refused-leader" => Some(3),
        "ci-rf3-crash-loss" | "ci-inflight2" => Some(4),
        _ => None,
    }
}

/// A state's fingerprint for a test's own search (the checker's is not public).
#[allow(dead_code)] // not every test file that includes this module searches
pub fn fingerprint(s: &rebalance_model::SystemState) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// The first reachable state (depth-first, in action order, within the search bound) that
/// satisfies `want`; panics when there is none.
#[allow(dead_code)]
pub fn find(
    m: &rebalance_model::RebalanceModel,
    want: impl Fn(&rebalance_model::SystemState) -> bool,
) -> rebalance_model::SystemState {
    let mut seen = std::collections::HashSet::new();
    let mut stack = vec![m.init_state()];
    while let Some(s) = stack.pop() {
        if want(&s) {
            return s;
        }
        m.successors(&s, |_, next, _| {
            if m.within_bound(&next) && seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
    panic!("no reachable state of the kind asked for");
}

/// Every edge of `m`'s reachable graph within its search bound, depth-first in action order:
/// `visit(state, action, successor, output)` once per edge.
#[allow(dead_code)]
pub fn each_edge(
    m: &rebalance_model::RebalanceModel,
    mut visit: impl FnMut(
        &rebalance_model::SystemState,
        &rebalance_model::Action,
        &rebalance_model::SystemState,
        &rebalance_model::StepOutput,
    ),
) {
    let init = m.init_state();
    let mut seen = std::collections::HashSet::from([fingerprint(&init)]);
    let mut stack = vec![init];
    while let Some(s) = stack.pop() {
        m.successors(&s, |a, next, out| {
            visit(&s, &a, &next, &out);
            if m.within_bound(&next) && seen.insert(fingerprint(&next)) {
                stack.push(next);
            }
        });
    }
}

/// A verdict's kind, without its counterexample's or example's length: what two searches of the
/// same configuration must agree on (superseded.rs, por.rs).
#[allow(dead_code)]
pub fn verdict_kind(v: &rebalance_model::check::checker::Verdict) -> &'static str {
    use rebalance_model::check::checker::Verdict;
    match v {
        Verdict::Holds => "holds",
        Verdict::Violated(_) => "violated",
        Verdict::ExampleFound(_) => "example found",
        Verdict::NoExample => "no example",
        Verdict::NotApplicable(_) => "n/a",
    }
}

/// The states `actions` visit from `from`, `from` first; panics on a step that is not enabled.
#[allow(dead_code)]
pub fn replay(
    model: &rebalance_model::RebalanceModel,
    from: &rebalance_model::SystemState,
    actions: &[rebalance_model::Action],
) -> Vec<rebalance_model::SystemState> {
    let mut states = vec![from.clone()];
    for a in actions {
        let next = model
            .step(states.last().unwrap(), a)
            .unwrap_or_else(|| panic!("step not enabled: {a:?}"))
            .0;
        states.push(next);
    }
    states
}

/// A lasso's cycle, checked from the definitions alone: it replays, returns to its first state,
/// never passes a state where its goal holds, and is fair under the model's fairness
/// (`RebalanceModel::is_obligatory`: every obligatory action enabled in all its states, whatever
/// `max_network`, is one of its steps). Returns the cycle's states, its first last again.
#[allow(dead_code)]
pub fn assert_fair_lasso(
    model: &rebalance_model::RebalanceModel,
    lasso: &rebalance_model::check::lasso::Lasso,
) -> Vec<rebalance_model::SystemState> {
    use rebalance_model::{Action, SystemState};
    let goal = rebalance_model::verdict::properties::live_goals()
        .iter()
        .find(|(n, _)| *n == lasso.goal)
        .expect("a LIVE-* goal")
        .1;
    let entry = replay(model, &model.init_state(), &lasso.prefix)
        .pop()
        .unwrap();
    let states = replay(model, &entry, &lasso.cycle);
    assert!(!lasso.cycle.is_empty());
    assert_eq!(
        states.last(),
        Some(&entry),
        "the cycle ends where it starts"
    );
    let on_cycle = &states[..states.len() - 1];
    for s in on_cycle {
        assert!(!goal(model, s), "{} holds on the cycle", lasso.goal);
    }
    let enabled = |s: &SystemState| -> Vec<Action> {
        let mut v = Vec::new();
        model.enabled_actions(s, &mut v);
        v.retain(|a| model.is_obligatory(a));
        v
    };
    let taken: std::collections::HashSet<Action> = lasso.cycle.iter().copied().collect();
    for a in enabled(&on_cycle[0]) {
        if on_cycle.iter().all(|s| enabled(s).contains(&a)) {
            assert!(taken.contains(&a), "{a:?} stays enabled and is never taken");
        }
    }
    states
}

/// Runs `check` on every preset of `names` on a worker per core, the presets taken in the
/// order given (largest first, so the last to start is short), and returns every failure.
#[allow(dead_code)]
pub fn on_every_core(
    names: Vec<&'static str>,
    check: impl Fn(&str) -> Result<(), String> + Sync,
) -> Vec<String> {
    let queue = std::sync::Mutex::new(names.into_iter());
    let next = || queue.lock().unwrap().next();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut failures = Vec::new();
                    while let Some(name) = next() {
                        failures.extend(check(name).err());
                    }
                    failures
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker"))
            .collect()
    })
}
