//! The projection as `key: value` lines, for reports and the keyed diff of [`crate::diff`]:
//! only rendered on a mismatch, so the comparison itself never formats anything.

use std::fmt::Write;

use std::fmt;

use super::json;
use super::{Attempt, Effects, Event, Key, Opt, State};

/// A key as the spec's examples write it: `r1,b0`.
struct K<'a>(&'a Key);

impl fmt::Display for K<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{},b{}", self.0.rid, self.0.bucket)
    }
}

/// An event as spec 3.2 writes it: `Timeout(r1,b0)`, `Finalize(r1)`, `Recover`.
struct E<'a>(&'a Event);

impl fmt::Display for E<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Event::Timeout { key } => write!(f, "Timeout({})", K(key)),
            Event::Reconcile { key } => write!(f, "Reconcile({})", K(key)),
            Event::Finalize { rid } => write!(f, "Finalize(r{rid})"),
            Event::Recover => f.write_str("Recover"),
        }
    }
}

/// `[a, b, c]` (as `Debug` lists it), each item as `show` renders it.
fn list<T>(items: &[T], show: impl Fn(&T) -> String) -> String {
    let shown: Vec<String> = items.iter().map(show).collect();
    format!("[{}]", shown.join(", "))
}

impl State {
    /// The projection as `key: value` lines, for reports.
    pub fn render(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(
            o,
            "store.coordinator_epoch: {}",
            self.store_coordinator_epoch
        );
        match &self.task {
            None => o.push_str("store.task: -\n"),
            Some(t) => {
                let _ = writeln!(
                    o,
                    "store.task: id={} status={} cancel_requested={} plan={:?}",
                    t.id,
                    t.status.name(),
                    t.cancel_requested,
                    self.plan
                );
            }
        }
        for b in &self.buckets {
            let _ = writeln!(
                o,
                "store.b{}: assign={:?} {:?} deleted={}",
                b.bucket, b.assignment, b.lai, b.deleted
            );
        }
        let _ = writeln!(o, "coord.ce: {}", self.ce);
        let _ = writeln!(o, "coord.live: {:?}", self.live);
        let _ = writeln!(o, "coord.rid: {}", Opt(self.rid));
        match self.overall {
            Some(s) => {
                let _ = writeln!(o, "coord.overall: {}", s.name());
            }
            None => o.push_str("coord.overall: -\n"),
        }
        o.push_str("coord.status: [");
        for (i, (b, st)) in self.status.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(o, "{sep}b{b}={}", st.name());
        }
        o.push_str("]\ncoord.pending: [");
        for (i, b) in self.pending.iter().enumerate() {
            let sep = if i > 0 { "," } else { "" };
            let _ = write!(o, "{sep}b{b}");
        }
        o.push_str("]\n");
        for (b, a) in &self.attempts {
            let _ = match a {
                Attempt::Running { key, age } => {
                    writeln!(o, "coord.attempt.b{b}: key={} running age={age}", K(key))
                }
                Attempt::Tracked {
                    key,
                    since_progress,
                    blocked_for,
                    reconciles,
                    reconcile_in,
                    observed_assignment,
                    observed_leader,
                    observed_isr,
                } => writeln!(
                    o,
                    "coord.attempt.b{b}: key={} tracked since_progress={since_progress} \
                     blocked_for={} reconciles={reconciles} reconcile_in={reconcile_in} \
                     observed={observed_assignment:?}/{}/{observed_isr:?}",
                    K(key),
                    Opt(*blocked_for),
                    Opt(*observed_leader),
                ),
            };
        }
        let keys = |keys: &[Key]| list(keys, |k| K(k).to_string());
        let _ = writeln!(o, "coord.queued_timeouts: {}", keys(&self.queued_timeouts));
        let _ = writeln!(
            o,
            "coord.queued_reconciles: {}",
            keys(&self.queued_reconciles)
        );
        let f = &self.flags;
        let _ = writeln!(
            o,
            "coord.flags: cancel_requested={} finalize_pending={} finalize_queued={} \
             recovery_pending={} recovery_queued={}",
            f.cancel_requested,
            f.finalize_pending,
            f.finalize_queued,
            f.recovery_pending,
            f.recovery_queued
        );
        let events = list(&self.events, |e| E(e).to_string());
        let _ = writeln!(o, "coord.events: {events}");
        let _ = writeln!(o, "coord.restored: {}", self.restored);
        o
    }
}

impl Effects {
    /// The effects as `key: value` lines, for reports.
    pub fn render(&self) -> String {
        let mut o = String::new();
        // Messages as the trace format writes them, so a report's line can be pasted into an
        // `expect` block.
        for (i, m) in self.sent.iter().enumerate() {
            let _ = writeln!(o, "sent.{i}: {}", json::sent(m));
        }
        for (i, e) in self.enqueued.iter().enumerate() {
            let _ = writeln!(o, "enqueued.{i}: {}", E(e));
        }
        for (i, r) in self.replies.iter().enumerate() {
            let _ = writeln!(o, "reply.{i}: {}", json::reply(r));
        }
        let _ = writeln!(o, "register_reply_first: {}", self.register_reply_first);
        o
    }
}
