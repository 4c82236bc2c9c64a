//! G5 (spec/protocol.md, "Group commit (the host)"): within one release, a NotifyLeaderAndIsr
//! identical to one the release already sends is not sent again.

use std::collections::{HashMap, VecDeque};

use rebalance_manager::{BucketId, Effect, Epoch, Event, Nli, ServerId};

/// A NotifyLeaderAndIsr's server, bucket, coordinator epoch and bucket epoch.
pub(super) type RequestKey = (ServerId, BucketId, Epoch, Epoch);

/// Released effects on their way: events to the host's queue, messages and replies to the
/// program, a NotifyLeaderAndIsr identical to one already sent in this release dropped (G5).
pub(super) struct Route<'a> {
    events: &'a mut VecDeque<Event>,
    outgoing: &'a mut Vec<Effect>,
    /// Where this release's effects begin in `outgoing`.
    start: usize,
    /// The requests this release has sent so far.
    requests: usize,
    /// Whether the index below is in use.
    built: bool,
    /// Once a release sends more than [`SCAN`] requests (below that a scan of the release is
    /// cheaper than hashing every request): the last request sent under each key...
    last: &'a mut HashMap<RequestKey, usize>,
    /// ... and, for each effect of the release, the one sent before it under its key.
    earlier: &'a mut Vec<usize>,
}

/// Up to this many requests in a release, a twin is looked for by scanning.
const SCAN: usize = 8;

/// No earlier request under the key.
const NONE: usize = usize::MAX;

fn key(nli: &Nli) -> RequestKey {
    (nli.to, nli.bucket, nli.coordinator_epoch, nli.bucket_epoch)
}

impl<'a> Route<'a> {
    pub(super) fn new(
        events: &'a mut VecDeque<Event>,
        outgoing: &'a mut Vec<Effect>,
        (last, earlier): (&'a mut HashMap<RequestKey, usize>, &'a mut Vec<usize>),
    ) -> Self {
        last.clear();
        earlier.clear();
        Route {
            start: outgoing.len(),
            events,
            outgoing,
            requests: 0,
            built: false,
            last,
            earlier,
        }
    }

    pub(super) fn all(&mut self, effects: impl IntoIterator<Item = Effect>) {
        for e in effects {
            match e {
                Effect::Enqueue(ev) => self.events.push_back(ev),
                Effect::SendNli(nli) => {
                    if !self.twin(&nli) {
                        self.requests += 1;
                        self.push(Effect::SendNli(nli));
                    }
                }
                other => self.push(other),
            }
        }
    }

    fn push(&mut self, e: Effect) {
        if self.requests > SCAN && !self.built {
            // The map takes over: every effect of the release so far goes in.
            self.built = true;
            for i in self.start..self.outgoing.len() {
                let before = match &self.outgoing[i] {
                    Effect::SendNli(nli) => self.last.insert(key(nli), i),
                    _ => None,
                };
                self.earlier.push(before.unwrap_or(NONE));
            }
        }
        if self.built {
            let before = match &e {
                Effect::SendNli(nli) => self.last.insert(key(nli), self.outgoing.len()),
                _ => None,
            };
            self.earlier.push(before.unwrap_or(NONE));
        }
        self.outgoing.push(e);
    }

    /// Whether this release already sends `nli`.
    fn twin(&self, nli: &Nli) -> bool {
        let same = |e: &Effect| matches!(e, Effect::SendNli(sent) if sent == nli);
        if !self.built {
            return self.outgoing[self.start..].iter().any(same);
        }
        let mut at = self.last.get(&key(nli)).copied().unwrap_or(NONE);
        while at != NONE {
            if same(&self.outgoing[at]) {
                return true;
            }
            at = self.earlier[at - self.start];
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nli(to: ServerId, bucket: BucketId, leader_epoch: Epoch) -> Effect {
        Effect::SendNli(Nli {
            to,
            bucket,
            replicas: vec![0, 1, 2],
            leader: Some(0),
            leader_epoch,
            isr: [0, 1, 2].into(),
            bucket_epoch: 1,
            coordinator_epoch: 1,
            exec_key: None,
        })
    }

    /// The effects `release` leaves for the program, one release.
    fn sent(release: Vec<Effect>) -> Vec<Effect> {
        let (mut events, mut out, mut last, mut earlier) =
            (VecDeque::new(), Vec::new(), HashMap::new(), Vec::new());
        Route::new(&mut events, &mut out, (&mut last, &mut earlier)).all(release);
        out
    }

    #[test]
    fn a_twin_is_dropped_even_after_another_request_under_its_key() {
        // A and B differ under the same key (server, bucket, epochs); A again is A's twin.
        let (a, b) = (nli(1, 7, 0), nli(1, 7, 1));
        assert_eq!(sent(vec![a.clone(), b.clone(), a.clone()]), vec![a, b]);
    }

    #[test]
    fn the_index_finds_what_the_scan_finds() {
        // More requests than SCAN, so the index takes over midway; every request twice, and
        // the two of one key interleaved.
        let unique: Vec<Effect> = (0..2 * SCAN as u32)
            .flat_map(|b| [nli(1, b, 0), nli(1, b, 1)])
            .collect();
        let mut release = unique.clone();
        release.extend(unique.iter().rev().cloned());
        assert_eq!(sent(release), unique);
    }
}
