//! What several test files pin: the unique state count of every preset CI checks whole.

/// `(preset, unique states)` for `tiny` and every `ci-*` preset, in preset order. A change to
/// the transition relation changes these; the diff then shows it in review.
#[allow(dead_code)] // a test file may include this module for its search helpers only
pub const PINNED: &[(&str, usize)] = &[
    ("tiny", 2592),
    ("ci-messages", 106556),
    ("ci-store", 39489),
    ("ci-server-crash", 258094),
    ("ci-coordinator-crash", 95076),
    ("ci-leader", 11940),
    ("ci-two-buckets", 92562),
    ("ci-rf2-server-crash", 348338),
    ("ci-rf2-recovery", 144382),
    ("ci-recovery-store", 75823),
    ("ci-rf3-loss", 63553),
    ("ci-rf3-crash-loss", 5913599),
    ("ci-backoff", 513408),
    ("ci-zombie", 132633),
    ("ci-inflight2", 1183286),
    ("ci-rf2-isr-cancel-crash", 2217241),
    ("ci-liveness-store", 626096),
    ("ci-tracked2", 459911),
    ("ci-leader-crash", 96732),
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
