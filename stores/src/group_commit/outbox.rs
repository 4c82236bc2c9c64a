//! The effects of inputs whose writes are not durable yet (steps 2, 4 and 5 of the host
//! procedure in the module above).

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

/// Held effects, in the order the inputs were handled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outbox<T> {
    held: Vec<Held<T>>,
}

impl<T> Default for Outbox<T> {
    fn default() -> Self {
        Outbox { held: Vec::new() }
    }
}

impl<T> Outbox<T> {
    /// An empty outbox.
    pub fn new() -> Self {
        Self::default()
    }

    /// Step 2: after an input, with `pending` writes in the open batch. Its effects may go at once
    /// only when nothing is pending and nothing is held: then every write they can depend on is
    /// durable, and no earlier effect is still waiting (effects leave in emission order). Then
    /// they are returned; otherwise they are held and `None` is returned.
    pub fn hold(&mut self, pending: usize, input: T, effects: Vec<Effect>) -> Option<Held<T>> {
        let held = Held { input, effects };
        if pending == 0 && self.held.is_empty() {
            return Some(held);
        }
        self.held.push(held);
        None
    }

    /// Step 4: after a successful flush, everything held, oldest first.
    pub fn release(&mut self) -> std::vec::Drain<'_, Held<T>> {
        self.held.drain(..)
    }

    /// Step 5: after a failed flush, the held effects never happen.
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
        self.held.first().map(|h| &h.input)
    }

    /// Every held effect, oldest first (what the incarnation has emitted and not yet released).
    pub fn effects(&self) -> impl Iterator<Item = &Effect> {
        self.held.iter().flat_map(|h| h.effects.iter())
    }
}
