//! What several test files read of the catalogue (`model/src/config/catalogue.rs`): the state
//! counts CI pins and the fair-cycle search's bound of every preset CI checks whole; and the
//! search helpers they share.

use rebalance_model::config::catalogue::{self, States};

/// A preset's pinned state counts; panics for an unpinned one, so a new preset must be pinned.
fn states(name: &str) -> States {
    catalogue::entry(name)
        .and_then(|e| e.states)
        .unwrap_or_else(|| {
            panic!("pin the state counts of preset {name} in model/src/config/catalogue.rs")
        })
}

/// The states `check` explores on a preset (the reduced graph, spec 9). A change to the
/// transition relation or to the reduction changes it; the diff then shows it in review.
#[allow(dead_code)] // a test file may include this module for its search helpers only
pub fn pinned(name: &str) -> usize {
    states(name).reduced
}

/// The states of a preset's whole graph, within [`cycle_bound`] where it has one.
#[allow(dead_code)]
pub fn pinned_whole(name: &str) -> usize {
    states(name).whole
}

/// The progress check's states on a preset (spec 7.3, `no_give_up`): its whole graph within
/// [`cycle_bound`], as the fair-cycle search reads it.
#[allow(dead_code)]
pub fn pinned_progress(name: &str) -> usize {
    states(name).progress
}

/// The bound the fair-cycle search keeps on a preset whose whole graph is too large for CI: the
/// `max_network` it had before the partial-order reduction let its check drop it. The search
/// reads the whole graph (the reduction does not keep fair cycles, spec 9), so there it is
/// exhaustive only within the bound; `scripts/scheduled-checks.sh` searches these unbounded.
#[allow(dead_code)]
pub fn cycle_bound(name: &str) -> Option<u8> {
    catalogue::entry(name).and_then(|e| e.cycle_bound)
}

/// The shortest counterexample's length the catalogue pins for `bugs` together violating
/// `property` on configuration `name` (a preset, or a file under `model/configs/`).
#[allow(dead_code)]
pub fn pinned_shortest(bugs: &[rebalance_model::Bug], name: &str, property: &str) -> usize {
    let same =
        |s: &[rebalance_model::Bug]| s.len() == bugs.len() && s.iter().all(|b| bugs.contains(b));
    catalogue::entry(name)
        .into_iter()
        .flat_map(|e| e.caught.iter())
        .find_map(|c| match c.how {
            catalogue::How::InAState { shortest: Some(n) }
                if same(c.switches) && c.property == property =>
            {
                Some(n)
            }
            _ => None,
        })
        .unwrap_or_else(|| {
            panic!("the catalogue pins no length for {bugs:?} violating {property} on {name}")
        })
}

/// The prefix and cycle lengths the catalogue pins for the lasso on which `bug` violates a
/// goal on preset `name`.
#[allow(dead_code)]
pub fn pinned_lasso(bug: rebalance_model::Bug, name: &str) -> (usize, usize) {
    catalogue::entry(name)
        .into_iter()
        .flat_map(|e| e.caught.iter())
        .find_map(|c| match c.how {
            catalogue::How::OnAFairCycle { lasso: Some(l) } if c.switches == [bug] => Some(l),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the catalogue pins no lasso for {bug} on {name}"))
}

/// A state's fingerprint for a test's own search: the one every search of the model's gives
/// it (AHash, `rebalance_model::check::walk::fingerprint`), several times faster on a state of
/// 2.4 kB than std's SipHash, which these searches used before.
#[allow(dead_code)] // not every test file that includes this module searches
pub fn fingerprint(s: &rebalance_model::SystemState) -> u64 {
    rebalance_model::check::walk::fingerprint(s)
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
