//! The host: one incarnation of the manager with the procedure around it (spec/protocol.md,
//! "Group commit", G1-G5), as a type, so that a program embedding the manager cannot release an
//! effect before its writes are durable.
//!
//! [`Host`] owns the manager, its store (the [`GroupCommit`] adapter, perhaps inside wrappers
//! that count or inject faults), the held effects ([`Outbox`]) and the event queue. Its calls are
//! the steps of the procedure in the [`crate::group_commit`] module:
//!
//! - [`Host::offer`] takes one input (step 1) and holds its effects (step 2);
//! - [`Host::flush`] makes the open batch durable (step 3);
//! - both then release what is durable (step 4): events join the host's queue
//!   ([`Host::next_event`]), messages and replies wait in [`Host::take_outgoing`] for the program
//!   to send, and an [`Observer`] sees every input's effects as they are released (a coordinator
//!   log, the `INV-RELEASED-DURABLE` check);
//! - a flush that fails, here or inside an input, or a write in doubt (one that failed and may
//!   have landed), answers [`Flow::Stopped`]: the incarnation is over (G3), the input in which
//!   it happened is never released, and [`Host::stop`] gives back the store for the next one
//!   (step 5). A stopped host refuses further inputs.
//!
//! When to flush (a latency bound, nothing else to do, a seeded schedule) is the program's
//! choice, as the spec leaves it: [`Host::holding`] and [`Host::oldest_held`] say what waits.
//!
//! One rule is the host's own (G5): within one release, a NotifyLeaderAndIsr identical to one
//! already sent to the same server is sent once. Held effects make such twins common, a reconcile's resend emitted while its
//! original was held, and a second copy would only be a duplicate delivery.

mod port;
mod route;

use std::collections::{BTreeSet, HashMap, VecDeque};

use rebalance_manager::{
    Config, Effect, Event, Input, Manager, PersistedState, ServerId, StartError, Store, StoreError,
};

use crate::group_commit::{Held, Outbox};
use crate::GroupCommit;

pub use port::HostStore;
use route::{RequestKey, Route};

/// What a host's program watches: each input's effects as the manager emitted them and as they
/// are released. Both default to doing nothing; `()` is the observer that watches nothing.
pub trait Observer<T> {
    /// Why the observer stops the program (a log that cannot be written, a check that failed).
    type Error;

    /// An input was handled; its effects are now held (a conformance harness compares them with
    /// the model's step).
    fn handled(&mut self, _note: &T, _effects: &[Effect]) -> Result<(), Self::Error> {
        Ok(())
    }

    /// An input's effects are released, in emission order, every one of them (before the host
    /// routes them), with the store's durable state when the store can show it without I/O.
    fn released(
        &mut self,
        _note: &T,
        _effects: &[Effect],
        _durable: Option<&PersistedState>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}

impl<T> Observer<T> for () {
    type Error = std::convert::Infallible;
}

/// Whether the incarnation goes on after a call.
#[must_use = "a stopped incarnation must be replaced (Host::stop, then Host::start)"]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Flow {
    /// The incarnation goes on.
    Going,
    /// A flush failed, or a write failed in doubt (G3): nothing held will be released, and the
    /// host takes no more input.
    Stopped(StoreError),
}

/// What is left of a stopped incarnation.
#[derive(Debug)]
pub struct Stopped<C> {
    /// The core's store, its open batch included (a new incarnation drops it, or reopens the
    /// medium underneath).
    pub store: C,
    /// Inputs whose effects were held and are now discarded.
    pub discarded: usize,
    /// Events that were queued and are now dropped.
    pub dropped_events: usize,
}

/// One incarnation of the manager inside its host. `C` is the core's store, `T` the program's
/// note on each input (the time it was taken, the input itself for a log, ...).
#[derive(Clone, Debug)]
pub struct Host<C, T = ()> {
    manager: Manager<C>,
    outbox: Outbox<T>,
    events: VecDeque<Event>,
    outgoing: Vec<Effect>,
    /// The index of a release's requests ([`Route`], G5), kept between releases only for
    /// its capacity.
    last: HashMap<RequestKey, usize>,
    earlier: Vec<usize>,
    stopped: Option<StoreError>,
    /// Planted for the checks that must catch it: release without waiting for durability.
    early_release: bool,
}

impl<C: HostStore, T> Host<C, T> {
    /// R17: a new incarnation on `store`. Returns the host and the start's effects (R16's
    /// Recover, now in the host's queue), for a log.
    pub fn start(
        config: Config,
        store: C,
        live: BTreeSet<ServerId>,
        now_ms: u64,
    ) -> Result<(Self, Vec<Effect>), StartError> {
        let (manager, effects) = Manager::start(config, store, live, now_ms)?;
        // G4: the start's reads flushed the open batch, and its election write goes alone, so
        // nothing of the start is pending and its effects leave at once.
        debug_assert_eq!(manager.store().adapter().pending(), 0);
        let mut host = Host {
            manager,
            outbox: Outbox::new(),
            events: VecDeque::new(),
            outgoing: Vec::new(),
            last: HashMap::new(),
            earlier: Vec::new(),
            stopped: None,
            early_release: false,
        };
        Route::new(
            &mut host.events,
            &mut host.outgoing,
            (&mut host.last, &mut host.earlier),
        )
        .all(effects.iter().cloned());
        Ok((host, effects))
    }

    /// Steps 1 and 2, then 4 for whatever is durable already: `input` at `now_ms`, its effects
    /// held behind the ones already held. `note` makes the program's note on the input once it
    /// is handled, from the core's store (a wrapper's count of the input's operations, say).
    /// Panics if the incarnation has stopped.
    pub fn offer<O: Observer<T>>(
        &mut self,
        now_ms: u64,
        input: Input,
        observer: &mut O,
        note: impl FnOnce(&mut C) -> T,
    ) -> Result<Flow, O::Error> {
        if let Some(e) = &self.stopped {
            panic!("an input offered to a stopped incarnation (its batch was lost: {e})");
        }
        let effects = self.manager.handle(now_ms, input);
        let note = note(self.manager.store_mut());
        observer.handled(&note, &effects)?;
        // The adapter lost inside the input (a batch the size bound flushed failed, or a write
        // that went alone failed in doubt): the input is never durable, so it is held and never
        // released, though the inputs before it may be.
        let lost = self.manager.store().adapter().lost().cloned();
        let acknowledged = match lost {
            Some(_) => u64::MAX,
            None => self.manager.store().adapter().acknowledged(),
        };
        self.outbox.hold(acknowledged, note, effects);
        self.release(observer)?;
        Ok(match lost {
            Some(e) => self.stop_with(e),
            None => Flow::Going,
        })
    }

    /// Step 3, then 4: the open batch made durable in one operation, and every held input whose
    /// writes are now durable released. On failure the incarnation stops (G3).
    pub fn flush<O: Observer<T>>(&mut self, observer: &mut O) -> Result<Flow, O::Error> {
        if let Some(e) = &self.stopped {
            return Ok(Flow::Stopped(e.clone()));
        }
        match self.manager.store_mut().adapter_mut().flush() {
            Ok(_) => {
                self.release(observer)?;
                Ok(Flow::Going)
            }
            Err(e) => Ok(self.stop_with(e)),
        }
    }

    /// Step 4: every held input whose writes are all durable, oldest first.
    fn release<O: Observer<T>>(&mut self, observer: &mut O) -> Result<(), O::Error> {
        let durable = if self.early_release {
            u64::MAX
        } else {
            self.manager.store().adapter().durable()
        };
        let shown = self.manager.store().adapter().inner().inspect();
        let mut route = Route::new(
            &mut self.events,
            &mut self.outgoing,
            (&mut self.last, &mut self.earlier),
        );
        for Held { input, effects } in self.outbox.release(durable) {
            observer.released(&input, &effects, shown)?;
            route.all(effects);
        }
        Ok(())
    }

    fn stop_with(&mut self, e: StoreError) -> Flow {
        self.stopped = Some(e.clone());
        Flow::Stopped(e)
    }

    /// Step 5, or a coordinator crash: the incarnation ends with its held effects, its event
    /// queue and its open batch; what is left is its store, for the next [`Host::start`].
    /// Released messages not yet taken are dropped too (the process that would send them died).
    pub fn stop(mut self) -> Stopped<C> {
        let discarded = self.outbox.discard();
        Stopped {
            store: self.manager.into_store(),
            discarded,
            dropped_events: self.events.len(),
        }
    }

    /// The released messages and replies not yet taken, in release order: the program sends
    /// them (and answers its clients) now.
    pub fn take_outgoing(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.outgoing)
    }

    /// Like [`Host::take_outgoing`], keeping the buffer's capacity for the next release.
    pub fn drain_outgoing(&mut self) -> std::vec::Drain<'_, Effect> {
        self.outgoing.drain(..)
    }

    /// The front of the event queue, to offer as `Input::Event`.
    pub fn next_event(&mut self) -> Option<Event> {
        self.events.pop_front()
    }

    /// The event queue (released events, not yet taken).
    pub fn events(&self) -> &VecDeque<Event> {
        &self.events
    }

    /// Whether effects are held: a program with nothing else to do flushes.
    pub fn holding(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// The oldest held input's note (for a latency bound).
    pub fn oldest_held(&self) -> Option<&T> {
        self.outbox.oldest()
    }

    /// Every held effect, oldest first.
    pub fn held_effects(&self) -> impl Iterator<Item = &Effect> {
        self.outbox.effects()
    }

    /// The batch that was lost, once the incarnation has stopped.
    pub fn stopped(&self) -> Option<&StoreError> {
        self.stopped.as_ref()
    }

    /// The manager, to read (its status, progress and invariants).
    pub fn manager(&self) -> &Manager<C> {
        &self.manager
    }

    /// The core's store (for counts and the durable state underneath).
    pub fn store(&self) -> &C {
        self.manager.store()
    }

    /// The core's store, for fault injection and figures. Writing to it behind the manager's
    /// back breaks INV-CONTEXT-COHERENT.
    pub fn store_mut(&mut self) -> &mut C {
        self.manager.store_mut()
    }

    /// The group-commit adapter inside the store.
    pub fn adapter(&self) -> &GroupCommit<C::Durable> {
        self.manager.store().adapter()
    }

    /// Puts a manager bug back into this incarnation, for checks that must catch it.
    #[cfg(feature = "testing")]
    pub fn plant(&mut self, bug: rebalance_manager::PlantedBug) {
        self.manager.plant(bug);
    }

    /// Breaks G1 on purpose, for checks that must catch it: from now on every held effect is
    /// released at once, durable or not.
    #[cfg(feature = "testing")]
    pub fn plant_early_release(&mut self) {
        self.early_release = true;
    }
}
