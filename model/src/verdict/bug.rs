//! Historical bugs as switches (spec section 10). Each restores one old behaviour, named by its
//! `H<n>` entry in spec section 12.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bug {
    /// H1: R13 finishes the bucket with a final TIMEOUT status; finalize writes COMPLETED.
    TimeoutCompletes,
    /// H2: R15 ignores a failed write and sets `overall` final anyway.
    FinalNotPersisted,
    /// H3: R2 ignores a failed write and cancels locally anyway.
    CancelBestEffort,
    /// H5: R12 skips the context and key checks.
    NoRequestFencing,
    /// H6: R7.4 rewrites the union with `bucket_epoch + 1`.
    EpochBumpOnRetry,
    /// H7: R14 never gives up (no R14.3) and reconciles every check interval (no backoff): a
    /// tracked attempt whose target server never comes back is reconciled forever. No state
    /// violates anything; only the fair-cycle search (spec 7.3, "Fair cycles") finds it.
    EndlessReconcile,
    /// H8: R3 ignores `max_tracked_timed_out`.
    UnboundedTracked,
    /// H10: R16 puts mid-migration buckets into `pending`; R2 cancels every pending bucket.
    CancelAfterRestart,
    /// H13: R16 `[late]`: every bucket pending, admission in plan order; R2 cancels only
    /// pending buckets at origin (the `[late]` `recovered` flag).
    RecoveryOrder,
    /// H12 (`[v1]`): R2 cancels pending buckets but leaves an admitted attempt that has changed
    /// nothing yet (still at origin) running, so it migrates after the cancel was accepted.
    UntouchedAfterCancel,
    /// Fluss as written, not a fixed bug: `at_origin` is Fluss's single predicate
    /// `assignment == ors && leader == old_leader && isr ⊆ ors` instead of D4's, so a bucket
    /// whose leader failed over is not at origin (spec 8, D4).
    FlussAtOrigin,
    /// Fluss as written: a leader-only reconcile always re-runs the election over `trs` and
    /// writes its result, epochs bumped, even when the elected leader is the current one
    /// (spec 8, D3; H23).
    ReelectOnReconcile,
    /// Fluss as written (`[v1]`, `[mid]`): a failed read of the task at startup leaves recovery
    /// pending and nothing retries it (spec 8, D6; H14).
    StartupReadBlocks,
    /// Fluss as written (`[late]`): a failed read of the task at startup abandons recovery; the
    /// stored task is never recovered (spec 8, D6; H14).
    StartupReadSkips,
    /// Fluss as written: writes of the task node are not conditional on the writer's
    /// coordinator epoch, so a deposed coordinator's cancel or finalize lands (spec 8, D7; H21).
    /// Bucket writes stay fenced, as in Fluss. Only a zombie coordinator can tell.
    UnfencedTaskWrites,
    /// Fluss as written (`[late]`): the next bucket to admit, and the order in which recovery
    /// classifies the plan, is any pending bucket, not the plan's front (a hash map's iteration
    /// order; spec 3.2 `pending`, R3, R16; H13).
    HashOrderRecovery,
    /// Fluss's later tests: a bucket restored by recovery shows REBALANCING and holds a normal
    /// slot instead of D1's tracked TIMEOUT (spec 8, D1).
    RecoveredShowsRebalancing,
    /// Fluss as written: a move's Phase A and Phase B write the LeaderAndIsr and the assignment
    /// as two store operations, each into the context before the store, so a failure (or a
    /// crash) between or at them leaves the store half written and the context ahead of it;
    /// the move decision table reads the store where Fluss reads ZooKeeper, and its retry of
    /// Phase A rewrites the union into the store (spec 8, D15).
    SplitBucketWrites,
    /// This spec before finding F22: R5 sends nothing when the election keeps the current
    /// leader, so a leader whose request was lost, or whose proposal was refused after it
    /// adopted a newer view, never hears from the coordinator again and the bucket waits for
    /// its give-up. Only the progress check (spec 7.3, `no_give_up`) sees it, on a fair cycle.
    NoResendOnKeptLeader,
    /// This spec before finding F23 (F14's first consequence): R17 starts with empty retry
    /// sets, so a liveness write that failed before a coordinator crash is never retried and a
    /// bucket stays leaderless, or keeps a down server in its ISR, with every server up.
    RepairsLostOnRestart,
    /// apache/fluss#3868's remote plan (`remote_plan`) with its first point dropped: R1 writes
    /// the task node's reference before the plan object, so a failed object write leaves a
    /// reference to a plan that is missing or partial.
    ReferenceBeforePlan,
    /// apache/fluss#3868's remote plan with superseded plans cleaned up too early: R1 deletes
    /// every other plan object before its reference is durable, so a failed reference write
    /// leaves the stored task referencing a deleted plan.
    CleanupBeforeReference,
    /// apache/fluss#3868's remote plan stored at one fixed path: each R1 overwrites the one plan
    /// object, so a Register whose reference write fails leaves the stored task referencing
    /// another rebalance's plan, or a partial one.
    OnePlanPath,
}

impl Bug {
    pub const ALL: [Bug; 23] = [
        Bug::TimeoutCompletes,
        Bug::FinalNotPersisted,
        Bug::CancelBestEffort,
        Bug::NoRequestFencing,
        Bug::EpochBumpOnRetry,
        Bug::EndlessReconcile,
        Bug::UnboundedTracked,
        Bug::CancelAfterRestart,
        Bug::RecoveryOrder,
        Bug::UntouchedAfterCancel,
        Bug::FlussAtOrigin,
        Bug::ReelectOnReconcile,
        Bug::StartupReadBlocks,
        Bug::StartupReadSkips,
        Bug::UnfencedTaskWrites,
        Bug::HashOrderRecovery,
        Bug::RecoveredShowsRebalancing,
        Bug::SplitBucketWrites,
        Bug::NoResendOnKeptLeader,
        Bug::RepairsLostOnRestart,
        Bug::ReferenceBeforePlan,
        Bug::CleanupBeforeReference,
        Bug::OnePlanPath,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Bug::TimeoutCompletes => "timeout-completes",
            Bug::FinalNotPersisted => "final-not-persisted",
            Bug::CancelBestEffort => "cancel-best-effort",
            Bug::NoRequestFencing => "no-request-fencing",
            Bug::EpochBumpOnRetry => "epoch-bump-on-retry",
            Bug::EndlessReconcile => "endless-reconcile",
            Bug::UnboundedTracked => "unbounded-tracked",
            Bug::CancelAfterRestart => "cancel-after-restart",
            Bug::RecoveryOrder => "recovery-order",
            Bug::UntouchedAfterCancel => "untouched-after-cancel",
            Bug::FlussAtOrigin => "fluss-at-origin",
            Bug::ReelectOnReconcile => "reelect-on-reconcile",
            Bug::StartupReadBlocks => "startup-read-blocks",
            Bug::StartupReadSkips => "startup-read-skips",
            Bug::UnfencedTaskWrites => "unfenced-task-writes",
            Bug::HashOrderRecovery => "hash-order-recovery",
            Bug::RecoveredShowsRebalancing => "recovered-shows-rebalancing",
            Bug::SplitBucketWrites => "split-bucket-writes",
            Bug::NoResendOnKeptLeader => "no-resend-on-kept-leader",
            Bug::RepairsLostOnRestart => "repairs-lost-on-restart",
            Bug::ReferenceBeforePlan => "reference-before-plan",
            Bug::CleanupBeforeReference => "cleanup-before-reference",
            Bug::OnePlanPath => "one-plan-path",
        }
    }

    /// The property of spec section 10 that this switch must violate.
    pub fn violated_property(self) -> &'static str {
        match self {
            Bug::TimeoutCompletes => "INV-COMPLETED-AT-TARGET",
            Bug::FinalNotPersisted => "INV-FINAL-PERSISTED",
            Bug::CancelBestEffort => "INV-CANCEL-PERSISTED-FIRST",
            Bug::NoRequestFencing => "INV-FENCE-RESPONSE",
            Bug::EpochBumpOnRetry => "INV-EPOCH-ONLY-ON-CHANGE",
            // On a fair cycle, not in a state: see `found_by_cycle_search`.
            Bug::EndlessReconcile => "LIVE-TRACKED-FINISHES",
            Bug::UnboundedTracked => "INV-TRACKED-BOUND",
            Bug::CancelAfterRestart => "INV-CANCELED-AT-ORIGIN",
            Bug::RecoveryOrder => "INV-PENDING-AT-ORIGIN",
            Bug::UntouchedAfterCancel => "INV-CANCEL-EFFECTS",
            Bug::FlussAtOrigin => "INV-CANCEL-NO-NEW-WORK",
            Bug::ReelectOnReconcile => "INV-EPOCH-ONLY-ON-CHANGE",
            Bug::StartupReadBlocks | Bug::StartupReadSkips => "LIVE-RECOVERED",
            Bug::UnfencedTaskWrites => "INV-CANCEL-PERSISTED-FIRST",
            // Holds alone under D1's classify-first recovery (findings F11); with
            // `recovery-order` it halves H13's counterexample.
            Bug::HashOrderRecovery => "INV-NO-STRAY-UNION",
            Bug::RecoveredShowsRebalancing => "INV-SLOT",
            Bug::SplitBucketWrites => "INV-CANCEL-NO-NEW-WORK",
            // On a fair cycle of the progress check.
            Bug::NoResendOnKeptLeader => "LIVE-PROGRESS",
            Bug::RepairsLostOnRestart => "LIVE-METADATA-REPAIRED",
            Bug::ReferenceBeforePlan | Bug::CleanupBeforeReference | Bug::OnePlanPath => {
                "INV-PLAN-RESOLVES"
            }
        }
    }

    /// Where the switch comes from: the historical behaviour it puts back (spec section 12's
    /// `H*`, or the finding that found it), for a variant, the decision of spec section 8 it
    /// departs from, and for a proposed design done wrong, the design's thread.
    pub fn origin(self) -> &'static str {
        match self {
            Bug::TimeoutCompletes => "H1",
            Bug::FinalNotPersisted => "H2",
            Bug::CancelBestEffort => "H3",
            Bug::NoRequestFencing => "H5",
            Bug::EpochBumpOnRetry => "H6",
            Bug::EndlessReconcile => "H7",
            Bug::UnboundedTracked => "H8",
            Bug::CancelAfterRestart => "H10",
            Bug::UntouchedAfterCancel => "H12",
            Bug::RecoveryOrder => "H13",
            Bug::NoResendOnKeptLeader => "F22",
            Bug::RepairsLostOnRestart => "F23",
            Bug::FlussAtOrigin => "D4",
            Bug::ReelectOnReconcile => "D3",
            Bug::StartupReadBlocks | Bug::StartupReadSkips => "D6",
            Bug::UnfencedTaskWrites => "D7",
            Bug::HashOrderRecovery => "R16's plan order",
            Bug::RecoveredShowsRebalancing => "D1",
            Bug::SplitBucketWrites => "D15",
            Bug::ReferenceBeforePlan | Bug::CleanupBeforeReference | Bug::OnePlanPath => {
                "apache/fluss#3868"
            }
        }
    }

    /// Whether this switch is one of Fluss's own choices where the spec decided otherwise
    /// ("Fluss as written", spec 10), rather than a historical bug that Fluss has fixed.
    pub fn is_variant(self) -> bool {
        !matches!(
            self,
            Bug::TimeoutCompletes
                | Bug::FinalNotPersisted
                | Bug::CancelBestEffort
                | Bug::NoRequestFencing
                | Bug::EpochBumpOnRetry
                | Bug::EndlessReconcile
                | Bug::UnboundedTracked
                | Bug::CancelAfterRestart
                | Bug::RecoveryOrder
                | Bug::UntouchedAfterCancel
                | Bug::NoResendOnKeptLeader
                | Bug::RepairsLostOnRestart
                | Bug::ReferenceBeforePlan
                | Bug::CleanupBeforeReference
                | Bug::OnePlanPath
        )
    }

    /// Whether this switch's violation is a fair cycle on which its liveness goal never holds,
    /// found by the fair-cycle search (`rebalance-model check --liveness cycles`, spec 7.3),
    /// rather than a state that `check` reaches. No path to a state shows it, so
    /// [`crate::check::shortest::bug_counterexample`] has none; its counterexample is a lasso
    /// ([`crate::check::cycle::fair_cycles`]).
    pub fn found_by_cycle_search(self) -> bool {
        matches!(self, Bug::EndlessReconcile | Bug::NoResendOnKeptLeader)
    }

    /// Whether this switch is caught only by the progress check (spec 7.3, `no_give_up`):
    /// with give-ups on, the bucket it strands ends FAILED, which every other goal allows.
    pub fn needs_progress_check(self) -> bool {
        matches!(self, Bug::NoResendOnKeptLeader)
    }

    /// The Fluss-as-written switches, in the order of [`Bug::ALL`].
    pub fn variants() -> impl Iterator<Item = Bug> {
        Bug::ALL.into_iter().filter(|b| b.is_variant())
    }

    /// Parses a `--variant` name: only a Fluss-as-written switch is accepted, and the error lists
    /// every valid name.
    pub fn parse_variant(s: &str) -> Result<Bug, String> {
        Bug::variants().find(|b| b.name() == s).ok_or_else(|| {
            let names: Vec<_> = Bug::variants().map(|b| b.name()).collect();
            format!("unknown variant `{s}`; known: {}", names.join(", "))
        })
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Bug {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Bug::ALL.into_iter().find(|b| b.name() == s).ok_or_else(|| {
            let names: Vec<_> = Bug::ALL.iter().map(|b| b.name()).collect();
            format!("unknown bug `{s}`; known: {}", names.join(", "))
        })
    }
}

/// The set of enabled bug switches (a bitmask over [`Bug::ALL`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BugSet(u32);

impl BugSet {
    pub fn none() -> BugSet {
        BugSet(0)
    }
    pub fn of(bugs: &[Bug]) -> BugSet {
        BugSet(bugs.iter().fold(0, |m, b| m | (1 << *b as u32)))
    }
    pub fn has(self, bug: Bug) -> bool {
        self.0 & (1 << bug as u32) != 0
    }
    pub fn to_vec(self) -> Vec<Bug> {
        Bug::ALL.into_iter().filter(|b| self.has(*b)).collect()
    }
}
