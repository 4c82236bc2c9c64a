//! The effects of inputs whose writes are not durable yet (steps 2, 4 and 5 of the host
//! procedure in the module above).

use std::collections::VecDeque;

use rebalance_manager::Effect;

/// One input's effects, held, with what the host keeps about the input (`T`: the time it was
/// taken, the input itself for a log, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held<T> {
    /// The host's note on the input.
    pub input: T,
    /// Its effects, in emission order.
    pub effects: Vec<Effect>,
}

/// Held effects, in the order the inputs were handled, each with the adapter's count of
/// acknowledged writes at the end of its input ([`super::GroupCommit::acknowledged`]): the input
/// depends on no write after that one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbox<T> {
    held: VecDeque<(u64, Held<T>)>,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox {
            held: VecDeque::new(),
        }
    }
}

impl<T> Outbox<T> {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Step 2: after an input, its effects, behind the ones already held, with `acknowledged`,
    /// the adapter's count of writes acknowledged to the core so far.
    pub fn hold(&mut self, acknowledged: u64, input: T, effects: Vec<Effect>) {
        self.held.push_back((acknowledged, Held { input, effects }));
    }

    /// Step 4: the held inputs whose writes are all durable, given `durable`, the adapter's
    /// count of writes made durable ([`super::GroupCommit::durable`]), oldest first. Writes
    /// become durable in the order they were acknowledged, so these are a prefix: effects leave
    /// in emission order. An input that wrote nothing while nothing was pending goes at once.
    pub fn release(&mut self, durable: u64) -> impl Iterator<Item = Held<T>> + '_ {
        let n = self.held.partition_point(|(ack, _)| *ack <= durable);
        self.held.drain(..n).map(|(_, h)| h)
    }

    /// Step 5: after a failed flush, the held effects never happen. Returns how many inputs'.
    pub fn discard(&mut self) -> usize {
        let n = self.held.len();
        self.held.clear();
        n
    }

    /// True when nothing is held.
    pub fn is_empty(&self) -> bool {
        self.held.is_empty()
    }

    /// Inputs held.
    pub fn len(&self) -> usize {
        self.held.len()
    }

    /// The oldest held input's note (for the latency bound).
    pub fn oldest(&self) -> Option<&T> {
        self.held.front().map(|(_, h)| &h.input)
    }

    /// Every held effect, oldest first (what the incarnation has emitted and not yet released).
    pub fn effects(&self) -> impl Iterator<Item = &Effect> {
        self.held.iter().flat_map(|(_, h)| h.effects.iter())
    }
}
