//! The projection both sides are compared on, as plain values in spec vocabulary.
//!
//! [`model`] builds it from the model's [`SystemState`](rebalance_model::SystemState) and
//! [`StepOutput`](rebalance_model::StepOutput); [`manager`] from the manager's snapshot, its store,
//! the host's event queue and the manager's effects. The two are compared with `==`; only on a
//! mismatch is either rendered (as `key: value` lines, see [`State::render`] and
//! [`Effects::render`], for the keyed diff of [`crate::diff`]).
//!
//! What is compared:
//! - [`State`]: the store (coordinator epoch, the task with its plan, every bucket's assignment,
//!   LeaderAndIsr and deletion), the coordinator's view (epoch, live servers, rid, overall and
//!   per-bucket status, pending, attempts with the ages their mode reads, queued timeout and
//!   reconcile keys, the five flags, `restored`) and the host's event queue. Tablet servers and
//!   the network are the model's environment and are not projected.
//! - [`Effects`]: what the coordinator emitted in one step, each kind in emission order: the
//!   messages it sent, the events it enqueued, its replies, and whether a Register's reply came
//!   before every other effect of the step (spec 5, "Emission order"). The model records each
//!   kind in its own list, so no other order across kinds can be compared.
//!
//! Time: the model keeps ages in ticks (spec 9); the manager keeps timestamps. A manager
//! timestamp is turned into the model's saturated age with the same saturation the model uses,
//! and only the ages a mode reads are compared (a running attempt's `age`; a tracked attempt's
//! progress ages), because the model freezes the others.

/// A conversion between two enums whose variants carry the same names: the model's and the
/// manager's statuses map onto the projection's one to one, and a variant missing on either
/// side is a compile error, not a silent fallthrough.
macro_rules! same_variants {
    ($(#[$doc:meta])* $vis:vis fn $name:ident($from:ty) -> $to:path { $($variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        $vis fn $name(s: $from) -> $to {
            type To = $to;
            type From = $from;
            match s {
                $(From::$variant => To::$variant,)+
            }
        }
    };
}
// Also for the translation of a preloaded store's task status (`translate.rs`).
pub(crate) use same_variants;

pub mod json;
pub mod manager;
pub mod model;
mod render;

use std::cell::RefCell;

// Statuses and replies are rendered as the spec names them (`REBALANCING`, `Accepted(1)`).
use std::fmt::{self, Write};

/// An ordered list of servers (an assignment, a plan's replica list), kept inline. `len` is the
/// true length; at most [`Servers::CAP`] ids are kept, which holds every list of distinct model
/// servers (a model replica list has at most 8), so two lists are equal exactly when both are. An
/// id above 254 (the model's are below 16) is kept as 255, which no model list holds.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Servers {
    len: u8,
    ids: [u8; Servers::CAP],
}

impl Servers {
    pub const CAP: usize = 8;

    pub fn of<I: IntoIterator<Item = u32>>(items: I) -> Servers {
        let mut s = Servers::default();
        for x in items {
            if let Some(slot) = s.ids.get_mut(usize::from(s.len)) {
                *slot = u8::try_from(x).unwrap_or(u8::MAX);
            }
            s.len = s.len.saturating_add(1);
        }
        s
    }

    /// The servers in order (an id above 254 as 255; a list longer than [`Servers::CAP`] is
    /// cut there, as it is kept).
    pub fn to_vec(&self) -> Vec<u64> {
        let kept = usize::from(self.len).min(Servers::CAP);
        self.ids[..kept].iter().map(|x| u64::from(*x)).collect()
    }
}

impl fmt::Debug for Servers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kept = usize::from(self.len).min(Servers::CAP);
        f.write_char('[')?;
        for (i, x) in self.ids[..kept].iter().enumerate() {
            if i > 0 {
                f.write_char(',')?;
            }
            match *x {
                u8::MAX => f.write_str(">254")?,
                x => write!(f, "{x}")?,
            }
        }
        if usize::from(self.len) > kept {
            write!(f, ",... ({} in all)", self.len)?;
        }
        f.write_char(']')
    }
}

/// A set of servers (an ISR, the live servers) as a bit mask: bit `s` for server `s` (bit 63 for
/// every server above 62; the model's are below 16).
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerSet(pub u64);

impl ServerSet {
    pub fn of<I: IntoIterator<Item = u32>>(items: I) -> ServerSet {
        ServerSet(items.into_iter().fold(0, |m, s| m | 1u64 << s.min(63)))
    }
}

impl fmt::Debug for ServerSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_char('[')?;
        let mut first = true;
        for s in (0..64).filter(|s| self.0 & (1u64 << s) != 0) {
            if !first {
                f.write_char(',')?;
            }
            first = false;
            match s {
                63 => f.write_str(">62")?,
                s => write!(f, "{s}")?,
            }
        }
        f.write_char(']')
    }
}

// The values that cross the driver protocol are its own types, defined once in the wire crate:
// the key, the event, the flags and the task's and the coordinator's statuses.
pub use rebalance_wire::{Event, Flags, Key, OverallStatus, TaskStatus};

/// A status of a bucket (spec 3.2): the wire's [`rebalance_wire::BucketStatus`] and one more,
/// `TimeoutFinal`, which exists only in the model, with the bug switch `timeout-completes` (H1),
/// and so is no value of the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BucketStatus {
    NotStarted,
    Rebalancing,
    Timeout,
    Completed,
    Failed,
    Canceled,
    TimeoutFinal,
}

impl BucketStatus {
    /// The status as the spec writes it (spec 3.2).
    pub fn name(self) -> &'static str {
        match self {
            BucketStatus::NotStarted => "NOT_STARTED",
            BucketStatus::Rebalancing => "REBALANCING",
            BucketStatus::Timeout => "TIMEOUT",
            BucketStatus::Completed => "COMPLETED",
            BucketStatus::Failed => "FAILED",
            BucketStatus::Canceled => "CANCELED",
            BucketStatus::TimeoutFinal => "TIMEOUT_FINAL",
        }
    }
}

/// A LeaderAndIsr (spec 3.1).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LeaderAndIsr {
    pub leader: Option<u64>,
    pub leader_epoch: u64,
    pub isr: ServerSet,
    pub bucket_epoch: u64,
    pub coordinator_epoch: u64,
}

impl fmt::Debug for LeaderAndIsr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "leader={} le={} isr={:?} be={} ce={}",
            Opt(self.leader),
            self.leader_epoch,
            self.isr,
            self.bucket_epoch,
            self.coordinator_epoch
        )
    }
}

/// `-` for none.
struct Opt<T>(Option<T>);

impl<T: fmt::Display> fmt::Display for Opt<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(x) => x.fmt(f),
            None => f.write_char('-'),
        }
    }
}

/// The stored task, without its plan (see [`State::plan`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Task {
    pub id: u64,
    pub status: TaskStatus,
    pub cancel_requested: bool,
}

/// One entry of the stored plan.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct PlanEntry {
    pub bucket: u64,
    pub ors: Servers,
    pub trs: Servers,
    pub old_leader: Option<u64>,
    pub new_leader: u64,
}

impl fmt::Debug for PlanEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "b{}:{:?}->{:?}/{}->{}",
            self.bucket,
            self.ors,
            self.trs,
            Opt(self.old_leader),
            self.new_leader
        )
    }
}

/// One bucket of the store's cluster metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bucket {
    pub bucket: u64,
    pub assignment: Servers,
    pub lai: LeaderAndIsr,
    pub deleted: bool,
}

/// An attempt in the mode the coordinator reads it in: a running attempt's age, or a tracked
/// (timed-out) attempt's progress ages, reconcile counters and last observation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt {
    Running {
        key: Key,
        age: u64,
    },
    Tracked {
        key: Key,
        since_progress: u64,
        blocked_for: Option<u64>,
        reconciles: u64,
        reconcile_in: u64,
        observed_assignment: Servers,
        observed_leader: Option<u64>,
        observed_isr: ServerSet,
    },
}

/// The projected state: store, coordinator view and event queue. The lists are cleared and
/// refilled in place by the builders, so a reused value allocates nothing once warm.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct State {
    pub store_coordinator_epoch: u64,
    pub task: Option<Task>,
    /// The stored task's plan, in plan order (empty without a task).
    pub plan: Vec<PlanEntry>,
    pub buckets: Vec<Bucket>,
    /// The coordinator's epoch (`ce`).
    pub ce: u64,
    /// The registered servers of the coordinator's context.
    pub live: ServerSet,
    /// The current rebalance's id, if any.
    pub rid: Option<u64>,
    /// `REBALANCING` or a final status, once a rebalance is registered or recovered.
    pub overall: Option<OverallStatus>,
    /// Per-bucket status, ascending by bucket.
    pub status: Vec<(u64, BucketStatus)>,
    /// Buckets not yet admitted, in admission order.
    pub pending: Vec<u64>,
    /// Attempts, ascending by bucket.
    pub attempts: Vec<(u64, Attempt)>,
    /// Keys with a queued Timeout event (the dedupe set).
    pub queued_timeouts: Vec<Key>,
    /// Keys with a queued Reconcile event (the dedupe set).
    pub queued_reconciles: Vec<Key>,
    /// The coordinator's boolean flags (spec 3.2).
    pub flags: Flags,
    /// The coordinator's FIFO event queue, front first.
    pub events: Vec<Event>,
    /// INV-TRACKED-BOUND's `restored`: a ghost in the model, a counter in the manager.
    pub restored: u64,
}

impl State {
    /// Empties every list, keeping its capacity.
    pub fn clear(&mut self) {
        self.plan.clear();
        self.buckets.clear();
        self.status.clear();
        self.pending.clear();
        self.attempts.clear();
        self.queued_timeouts.clear();
        self.queued_reconciles.clear();
        self.events.clear();
    }

    /// The key of the first line where `self` and `other` render differently.
    pub fn first_difference(&self, other: &State) -> String {
        first_differing_key(&self.render(), &other.render())
    }
}

/// A message the coordinator sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    Nli {
        to: u64,
        bucket: u64,
        replicas: Servers,
        lai: LeaderAndIsr,
        exec_key: Option<Key>,
    },
    AdjustIsrResponse {
        to: u64,
        bucket: u64,
        /// The new LeaderAndIsr, or none for a refusal.
        result: Option<LeaderAndIsr>,
    },
    /// A tablet server's message sent by the coordinator (always a divergence).
    ServerMessage,
}

/// A reply to the client, as R1 and R2 name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `Accepted(id)`: R1 accepted the plan as rebalance `id`; `Accepted` (no id): R2 accepted
    /// the cancel.
    Accepted(Option<u64>),
    RejectedInProgress,
    /// The manager's production guard refused a malformed plan (the model has no such reply).
    RejectedInvalidPlan,
    StoreError,
    NothingToCancel,
}

/// What the coordinator emitted in one step, each kind in emission order.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Effects {
    /// Requests sent to servers, in emission order.
    pub sent: Vec<Sent>,
    /// Events put on the coordinator's queue, in emission order.
    pub enqueued: Vec<Event>,
    /// Replies to the client, in emission order.
    pub replies: Vec<Reply>,
    /// For a Register: its reply came before every other effect of the step (spec 5, R1 and
    /// "Emission order"). False for every other action.
    pub register_reply_first: bool,
}

impl Effects {
    /// Resets every field, keeping the lists' capacity. Destructured, so that a new field
    /// cannot be left holding the previous step's value.
    fn clear(&mut self) {
        let Effects {
            sent,
            enqueued,
            replies,
            register_reply_first,
        } = self;
        sent.clear();
        enqueued.clear();
        replies.clear();
        *register_reply_first = false;
    }
}

/// The key of the first line where two renderings differ (`line count` if one is a prefix).
pub fn first_differing_key(a: &str, b: &str) -> String {
    // Paired by key, as the side-by-side diff pairs them: zipping by position named the model's
    // first line whenever the log had extra lines before it (a `sent.0` missing from the model
    // was reported as a difference at `register_reply_first`).
    crate::diff::side_by_side(a, b)
        .iter()
        .find(|l| l.differs())
        .map(|l| {
            let line = if l.model.is_empty() {
                &l.manager
            } else {
                &l.model
            };
            line.split_once(": ")
                .map_or(line.as_str(), |(k, _)| k)
                .to_string()
        })
        .unwrap_or_else(|| "line count".into())
}

/// A model and a manager projection, reused across the steps of one thread.
#[derive(Default)]
pub struct Pair<T> {
    pub model: T,
    pub manager: T,
}

thread_local! {
    static STATES: RefCell<Pair<State>> = RefCell::new(Pair::default());
    static EFFECTS: RefCell<Pair<Effects>> = RefCell::new(Pair::default());
}

/// Runs `f` on this thread's reused pair of state projections.
pub fn with_states<R>(f: impl FnOnce(&mut Pair<State>) -> R) -> R {
    STATES.with(|cell| f(&mut cell.borrow_mut()))
}

/// Runs `f` on this thread's reused pair of effect projections.
pub fn with_effects<R>(f: impl FnOnce(&mut Pair<Effects>) -> R) -> R {
    EFFECTS.with(|cell| f(&mut cell.borrow_mut()))
}

#[cfg(test)]
mod tests {
    use super::first_differing_key;

    #[test]
    fn the_first_differing_key_is_found_by_key_not_by_position() {
        // The log sent two messages the model did not; both end with the same flag.
        let model = "register_reply_first: false";
        let log = "sent.0: nli to 0\nsent.1: nli to 5\nregister_reply_first: false";
        assert_eq!(first_differing_key(model, log), "sent.0");
        assert_eq!(first_differing_key(log, model), "sent.0");
        assert_eq!(first_differing_key("a: 1\nb: 2", "a: 1\nb: 3"), "b");
        assert_eq!(first_differing_key("a: 1", "a: 1"), "line count");
    }
}
