//! What several test files pin: the unique state count of every preset CI checks whole.

/// `(preset, unique states)` for `tiny` and every `ci-*` preset, in preset order. A change to
/// the transition relation changes these; the diff then shows it in review.
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
    ("ci-tracked2", 60170),
    ("ci-leader-crash", 47751),
];

/// The pinned count of a preset; panics for an unpinned one, so a new preset must be pinned.
pub fn pinned(name: &str) -> usize {
    PINNED
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("pin the state count of preset {name} in tests/common"))
        .1
}
