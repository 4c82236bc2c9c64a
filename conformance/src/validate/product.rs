//! A set of explaining states kept as a product (spec/log-format.md, "A set kept as a
//! product").
//!
//! After a coordinator is killed, what each of its requests did is unknown: delivered before
//! its server saw the next epoch, or not. Those fates are independent from server to server,
//! so the set of states that explain the log is one common part (the store, the coordinator,
//! the budgets, the ghost) times, for each server, the few things it may hold: its own flags,
//! its views and the messages to and from it. On a 16-bucket log killed twice that was 16,384
//! states from 31 server parts. A product is kept as its factors, and a record at a few servers
//! is searched once per combination of their parts, not once per state.

use std::collections::BTreeSet;

use rebalance_model::state::{ReplicaView, ServerState};
use rebalance_model::{Message, ServerId, SystemState};

use super::fingerprint;

/// What a state holds at one server: its flags, its view of every bucket, and the messages
/// to and from it, in the network's order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Part {
    server: ServerState,
    views: Vec<Option<ReplicaView>>,
    network: Vec<Message>,
}

impl Part {
    /// The same flags and views as `other`: what no step at another server changes.
    pub(super) fn same_server(&self, other: &Part) -> bool {
        self.server == other.server && self.views == other.views
    }
}

/// The server a message goes to or comes from.
pub(super) fn message_server(m: &Message) -> ServerId {
    match m {
        Message::Nli(n) => n.to,
        Message::NliResponse(r) => r.from,
        Message::AdjustIsr(a) => a.from,
        Message::AdjustIsrResponse(r) => r.to,
    }
}

fn buckets_per_server(s: &SystemState) -> usize {
    s.views.len() / s.servers.len().max(1)
}

/// The part of `s` at server `x`.
pub(super) fn part_of(s: &SystemState, x: ServerId) -> Part {
    let b = buckets_per_server(s);
    let from = usize::from(x) * b;
    Part {
        server: s.servers[usize::from(x)],
        views: s.views[from..from + b].to_vec(),
        network: s
            .network
            .iter()
            .filter(|m| message_server(m) == x)
            .copied()
            .collect(),
    }
}

/// `s` with the part at server `x` replaced by `p`.
pub(super) fn with_part(s: &SystemState, x: ServerId, p: &Part) -> SystemState {
    let mut t = s.clone();
    set_part(&mut t, x, p);
    t.network.sort();
    t
}

fn set_part(t: &mut SystemState, x: ServerId, p: &Part) {
    let b = buckets_per_server(t);
    let from = usize::from(x) * b;
    t.servers[usize::from(x)] = p.server;
    t.views[from..from + b].copy_from_slice(&p.views);
    t.network.retain(|m| message_server(m) != x);
    t.network.extend(p.network.iter().copied());
}

/// `s` with every server's part cleared: what the states of a product share.
pub(super) fn common_of(s: &SystemState) -> SystemState {
    let mut t = s.clone();
    t.servers
        .iter_mut()
        .for_each(|e| *e = ServerState::default());
    t.views.iter_mut().for_each(|v| *v = None);
    t.network.clear();
    t
}

/// A set of states that is the product of one common part and, for each server, a set of
/// parts: every combination of one part per server is in the set, and nothing else.
#[derive(Clone, Debug)]
pub(super) struct Product {
    common: SystemState,
    /// Each server's parts, in a fixed order (the first is the one a representative takes).
    parts: Vec<Vec<Part>>,
}

impl Product {
    /// `states` as a product, if it is one and has more than one state. Each state is its
    /// common part and one part per server, so distinct states are distinct combinations:
    /// when their number is the product of the numbers of parts, they are every combination.
    pub(super) fn factor(states: &[SystemState]) -> Option<Product> {
        let first = states.first()?;
        if states.len() < 2 || first.zombie.is_some() {
            return None;
        }
        let common = common_of(first);
        let servers = first.servers.len();
        let mut sets: Vec<BTreeSet<(u64, usize)>> = vec![BTreeSet::new(); servers];
        let mut parts: Vec<Vec<Part>> = vec![Vec::new(); servers];
        for s in states {
            if common_of(s) != common {
                return None;
            }
            for x in 0..servers {
                let p = part_of(s, x as ServerId);
                if !parts[x].contains(&p) {
                    // Ordered by the fingerprint of the state it was found in with the others'
                    // parts of the first state: the same order on every run.
                    let key = fingerprint(&with_part(first, x as ServerId, &p));
                    sets[x].insert((key, parts[x].len()));
                    parts[x].push(p);
                }
            }
        }
        let size = parts
            .iter()
            .try_fold(1usize, |n, p| n.checked_mul(p.len()))?;
        if size != states.len() {
            return None;
        }
        let parts = sets
            .into_iter()
            .zip(parts)
            .map(|(order, p)| order.into_iter().map(|(_, i)| p[i].clone()).collect())
            .collect();
        Some(Product { common, parts })
    }

    /// A product of `common` and `parts` (each server's parts distinct and non-empty).
    pub(super) fn new(common: SystemState, parts: Vec<Vec<Part>>) -> Product {
        Product { common, parts }
    }

    /// How many states it holds (saturating).
    pub(super) fn len(&self) -> usize {
        self.parts
            .iter()
            .fold(1usize, |n, p| n.saturating_mul(p.len()))
    }

    /// How many combinations of parts the servers `at` have (saturating).
    pub(super) fn combinations(&self, at: &[usize]) -> usize {
        at.iter()
            .fold(1usize, |n, &x| n.saturating_mul(self.parts[x].len()))
    }

    pub(super) fn parts(&self, x: ServerId) -> &[Part] {
        &self.parts[usize::from(x)]
    }

    pub(super) fn servers(&self) -> usize {
        self.parts.len()
    }

    /// The state of the combination `choice` (one part index per server).
    pub(super) fn state(&self, choice: &[usize]) -> SystemState {
        let mut t = self.common.clone();
        for (x, &i) in choice.iter().enumerate() {
            set_part(&mut t, x as ServerId, &self.parts[x][i]);
        }
        t.network.sort();
        t
    }

    /// Every state, by fingerprint (the order of a set of states kept whole).
    pub(super) fn states(&self) -> Vec<SystemState> {
        let mut out = Vec::with_capacity(self.len());
        self.each(|s| {
            out.push(s);
            true
        });
        out.sort_by_key(fingerprint);
        out
    }

    /// One state per part of each server, the other servers at their first parts: every part
    /// appears in one of them.
    pub(super) fn one_per_part(&self) -> Vec<SystemState> {
        let mut out = vec![self.state(&vec![0; self.parts.len()])];
        for (x, ps) in self.parts.iter().enumerate() {
            for j in 1..ps.len() {
                let mut choice = vec![0; self.parts.len()];
                choice[x] = j;
                out.push(self.state(&choice));
            }
        }
        out
    }

    /// Calls `f` with each state in turn, in the order of the combinations, until it returns
    /// false: a set of four million states (a 16-bucket log killed twice, seed 4) is never
    /// spelled out whole.
    pub(super) fn each(&self, mut f: impl FnMut(SystemState) -> bool) {
        let mut choice = vec![0; self.parts.len()];
        while f(self.state(&choice)) && next_choice(&mut choice, |x| self.parts[x].len()) {}
    }
}

impl Product {
    /// The product without the states another one dominates (`dominates(a, b)`: `a`
    /// dominates `b`, which differ at one server's messages at most here). A state is dominated
    /// exactly when its part at some server is dominated by another part of that server with
    /// the rest equal: if `a` dominates `b`, they differ only in messages, and at some server
    /// `a`'s are more, so `b` with that server's part of `a` is in the product and dominates
    /// `b`. So each server's parts are reduced on their own, compared in one state that takes
    /// the first part of every other server.
    pub(super) fn undominated(
        mut self,
        dominates: impl Fn(&SystemState, &SystemState) -> bool,
    ) -> Product {
        let first = self.state(&vec![0; self.parts.len()]);
        for (x, ps) in self.parts.iter_mut().enumerate() {
            if ps.len() < 2 {
                continue;
            }
            let states: Vec<SystemState> = ps
                .iter()
                .map(|q| with_part(&first, x as ServerId, q))
                .collect();
            let keep: Vec<bool> = (0..ps.len())
                .map(|b| !(0..ps.len()).any(|a| a != b && dominates(&states[a], &states[b])))
                .collect();
            let mut i = 0;
            ps.retain(|_| {
                i += 1;
                keep[i - 1]
            });
        }
        self
    }
}

/// The next combination after `choice` in lexicographic order, with `sizes(x)` choices at
/// position `x`; false after the last.
pub(super) fn next_choice(choice: &mut [usize], sizes: impl Fn(usize) -> usize) -> bool {
    let all: Vec<usize> = (0..choice.len()).collect();
    next_choice_at(choice, &all, sizes)
}

/// [`next_choice`] over the positions `at` only (in increasing order), the others left as they
/// are.
pub(super) fn next_choice_at(
    choice: &mut [usize],
    at: &[usize],
    sizes: impl Fn(usize) -> usize,
) -> bool {
    for &x in at.iter().rev() {
        choice[x] += 1;
        if choice[x] < sizes(x) {
            return true;
        }
        choice[x] = 0;
    }
    false
}

#[cfg(test)]
pub(super) mod tests {
    use super::{message_server, next_choice, next_choice_at, Product};
    use crate::validate::fingerprint;
    use crate::validate::focused::tests::message_pool;
    use crate::validate::focused::{dominates, undominated};
    use rebalance_model::{Message, SystemState};

    /// The initial state of a small preset, and a message to each of two servers found in its
    /// first reachable states.
    fn two_servers() -> (SystemState, Message, Message) {
        let (init, pool) = message_pool();
        let mut seen: Vec<Message> = Vec::new();
        for m in pool {
            if !seen.iter().any(|x| message_server(x) == message_server(&m)) {
                seen.push(m);
            }
        }
        assert!(seen.len() >= 2, "messages to two servers: {seen:?}");
        (init, seen[0], seen[1])
    }

    /// Every combination of: each of the two messages in flight or not, and the second server
    /// up or down.
    pub(in crate::validate) fn product_states() -> Vec<SystemState> {
        let (init, a, b) = two_servers();
        let y = usize::from(message_server(&b));
        let mut out = Vec::new();
        for bits in 0..8u32 {
            let mut s = init.clone();
            s.network.clear();
            if bits & 1 != 0 {
                s.network.push(a);
            }
            if bits & 2 != 0 {
                s.network.push(b);
            }
            s.network.sort();
            s.servers[y].up = bits & 4 == 0;
            out.push(s);
        }
        out
    }

    #[test]
    fn a_product_is_kept_as_its_parts_and_gives_back_its_states() {
        let mut states = product_states();
        let p = Product::factor(&states).expect("a product");
        assert_eq!(p.len(), 8);
        // The first message's server: in flight or not; the second's: that, and up or down.
        let mut sizes: Vec<usize> = (0..p.servers()).map(|x| p.parts(x as u8).len()).collect();
        sizes.sort();
        let n = sizes.len();
        assert_eq!(sizes[n - 2..], [2, 4], "{sizes:?}");
        assert!(sizes[..n - 2].iter().all(|&k| k == 1), "{sizes:?}");
        states.sort_by_key(fingerprint);
        assert_eq!(p.states(), states);
    }

    #[test]
    fn a_product_without_its_dominated_states_is_the_set_without_them() {
        let states = product_states();
        let p = Product::factor(&states).expect("a product");
        let reduced = p.undominated(dominates).states();
        let mut sorted = states.clone();
        sorted.sort_by_key(fingerprint);
        let whole = undominated(sorted);
        assert_eq!(reduced, whole);
        // Requests in flight dominate their absence: not every state is kept.
        assert!(
            whole.len() < states.len(),
            "{} of {}",
            whole.len(),
            states.len()
        );
    }

    #[test]
    fn a_set_that_is_not_a_product_is_kept_whole() {
        let states = product_states();
        // One combination missing.
        assert!(Product::factor(&states[1..]).is_none());
        // Two states that differ outside every server's part.
        let mut other = states[0].clone();
        other.coordinator.ce += 1;
        assert!(Product::factor(&[states[0].clone(), other]).is_none());
        // A single state gains nothing.
        assert!(Product::factor(&states[..1]).is_none());
    }

    #[test]
    fn the_combinations_are_counted_in_order() {
        let mut choice = vec![0, 0];
        let mut seen = vec![choice.clone()];
        while next_choice(&mut choice, |x| [2, 3][x]) {
            seen.push(choice.clone());
        }
        assert_eq!(seen.len(), 6);
        assert_eq!(seen[1], vec![0, 1]);
        assert_eq!(seen[5], vec![1, 2]);
        // Over the first and third positions only, the second left as it is.
        let mut choice = vec![0, 5, 0];
        let mut n = 1;
        while next_choice_at(&mut choice, &[0, 2], |_| 2) {
            assert_eq!(choice[1], 5);
            n += 1;
        }
        assert_eq!((n, choice), (4, vec![0, 5, 0]));
    }
}
