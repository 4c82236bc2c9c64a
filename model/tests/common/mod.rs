//! What several test files pin: the unique state count of every preset CI checks whole.

/// `(preset, unique states)` for `tiny` and every `ci-*` preset, in preset order. A change to
/// the transition relation changes these; the diff then shows it in review.
#[allow(dead_code)] // a test file may include this module for its search helpers only
pub const PINNED: &[(&str, usize)] = &[
    ("tiny", 5185),
    ("ci-messages", 205344),
    ("ci-store", 78731),
    ("ci-server-crash", 741153),
    ("ci-coordinator-crash", 307964),
    ("ci-leader", 20104),
    ("ci-two-buckets", 98352),
    ("ci-rf2-server-crash", 515159),
    ("ci-rf2-recovery", 235158),
    ("ci-recovery-store", 123435),
    ("ci-rf3-loss", 122582),
    ("ci-rf3-crash-loss", 6328894),
    ("ci-backoff", 729650),
    ("ci-zombie", 369614),
    ("ci-inflight2", 1617343),
    ("ci-rf2-isr-cancel-crash", 2351141),
    ("ci-liveness-store", 917168),
    ("ci-tracked2", 491760),
    ("ci-leader-crash", 129554),
];

/// The pinned count of a preset; panics for an unpinned one, so a new preset must be pinned.
#[allow(dead_code)]
pub fn pinned(name: &str) -> usize {
    PINNED
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("pin the state count of preset {name} in tests/common"))
        .1
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
