//! Why a run stopped early: returned by `run`, `host` and `store`, and turned into the exit code
//! by `main` (its own file so that those modules need nothing from `main`).

pub(crate) enum Failure {
    /// Arguments that do not fit the store (exit 2).
    Usage(String),
    /// The store failed where the run cannot go on (exit 3).
    Store(String),
    /// A check of the run failed (exit 1).
    Invariant(String),
}
