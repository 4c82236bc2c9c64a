//! A small deterministic simulated cluster for tests and benchmarks: the environment rules R21
//! (ISR catch-up), R22 (server handles Nli) and R24 (server handles AdjustIsrResponse), a
//! network of in-flight messages, and a seeded RNG. Not part of the protocol core and never
//! used by it; a host of the real coordinator does not need it.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::core::bucket_map::BucketMap;
use crate::core::effects::{AdjustIsrError, Effect, Event, Input, Nli, Reply, RequestContext};
use crate::core::types::{BucketId, BucketRecord, Epoch, LeaderAndIsr, ServerId};

/// SplitMix64: a tiny seeded generator (deterministic, printable seed).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// True with probability `per_million / 1_000_000`.
    pub fn chance(&mut self, per_million: u64) -> bool {
        self.below(1_000_000) < per_million
    }
}

/// A replica's adopted view of a bucket (spec 3.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplicaView {
    /// Leader epoch.
    pub leader_epoch: Epoch,
    /// Bucket epoch.
    pub bucket_epoch: Epoch,
    /// Leader.
    pub leader: Option<ServerId>,
    /// Assignment.
    pub replicas: Vec<ServerId>,
    /// ISR.
    pub isr: BTreeSet<ServerId>,
    /// The leader got an `Err` to its AdjustIsr and waits for a newer Nli.
    pub isr_rejected: bool,
}

/// A tablet server (spec 3.3).
#[derive(Clone, Debug, Default)]
pub struct Server {
    /// Registered and running.
    pub up: bool,
    /// Highest coordinator epoch seen.
    pub last_ce: Epoch,
    /// Views per bucket (survive restarts).
    pub views: BucketMap<ReplicaView>,
}

/// A message in flight (spec 3.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Msg {
    /// Coordinator -> server.
    Nli(Nli),
    /// Server -> coordinator.
    NliResponse {
        /// Responder.
        from: ServerId,
        /// Bucket.
        bucket: BucketId,
        /// Adopted?
        ok: bool,
        /// Echoed context.
        context: RequestContext,
    },
    /// Leader -> coordinator.
    AdjustIsr {
        /// Leader.
        from: ServerId,
        /// Bucket.
        bucket: BucketId,
        /// Leader epoch of its view.
        leader_epoch: Epoch,
        /// Bucket epoch of its view.
        bucket_epoch: Epoch,
        /// Proposed ISR.
        isr: BTreeSet<ServerId>,
    },
    /// Coordinator -> leader.
    AdjustIsrResponse {
        /// Leader.
        to: ServerId,
        /// Bucket.
        bucket: BucketId,
        /// Result.
        result: Result<LeaderAndIsr, AdjustIsrError>,
    },
}

impl Msg {
    fn adjust_leader_bucket(&self) -> Option<(ServerId, BucketId)> {
        match self {
            Msg::AdjustIsr { from, bucket, .. } => Some((*from, *bucket)),
            Msg::AdjustIsrResponse { to, bucket, .. } => Some((*to, *bucket)),
            _ => None,
        }
    }
}

/// The simulated servers and network.
#[derive(Clone, Debug, Default)]
pub struct Cluster {
    /// Servers by id.
    pub servers: BTreeMap<ServerId, Server>,
    /// Messages in flight, oldest first.
    pub net: VecDeque<Msg>,
    /// AdjustIsr requests and responses in flight per (leader, bucket) (R21's guard).
    pub adjust_in_flight: BTreeMap<(ServerId, BucketId), u32>,
    /// A bucket's followers catch up only from this time on (slow followers: timeouts).
    pub slow_until: BTreeMap<BucketId, u64>,
    /// A bucket's followers catch up only this long after the leader first wants to expand the
    /// ISR (turned into `slow_until` then).
    pub slow_for: BTreeMap<BucketId, u64>,
    /// Leaders whose proposal waits for `slow_until`; retried by [`Cluster::retry_deferred`].
    pub deferred: BTreeSet<(ServerId, BucketId)>,
}

impl Cluster {
    /// A cluster of up servers with no views.
    pub fn new(servers: impl IntoIterator<Item = ServerId>) -> Self {
        let servers = servers
            .into_iter()
            .map(|s| {
                (
                    s,
                    Server {
                        up: true,
                        ..Server::default()
                    },
                )
            })
            .collect();
        Cluster {
            servers,
            ..Cluster::default()
        }
    }

    /// Whether server `s` is up.
    fn is_up(&self, s: ServerId) -> bool {
        self.servers.get(&s).is_some_and(|srv| srv.up)
    }

    /// The up servers.
    pub fn live(&self) -> BTreeSet<ServerId> {
        self.servers
            .iter()
            .filter(|(_, s)| s.up)
            .map(|(id, _)| *id)
            .collect()
    }

    /// Every assigned replica adopts the stored state of `b` (initial cluster setup).
    pub fn init_bucket(&mut self, b: BucketId, rec: &BucketRecord) {
        for s in &rec.assignment {
            if let Some(srv) = self.servers.get_mut(s) {
                srv.views.insert(
                    b,
                    ReplicaView {
                        leader_epoch: rec.lai.leader_epoch,
                        bucket_epoch: rec.lai.bucket_epoch,
                        leader: rec.lai.leader,
                        replicas: rec.assignment.clone(),
                        isr: rec.lai.isr.clone(),
                        isr_rejected: false,
                    },
                );
            }
        }
    }

    /// Takes the manager's effects: messages go to the network; events and replies are returned.
    pub fn absorb(
        &mut self,
        effects: impl IntoIterator<Item = Effect>,
        events: &mut VecDeque<Event>,
        replies: &mut Vec<Reply>,
    ) {
        for e in effects {
            match e {
                Effect::SendNli(nli) => self.net.push_back(Msg::Nli(nli)),
                Effect::SendAdjustIsrResponse { to, bucket, result } => {
                    self.push(Msg::AdjustIsrResponse { to, bucket, result });
                }
                Effect::Enqueue(ev) => events.push_back(ev),
                Effect::Reply(r) => replies.push(r),
            }
        }
    }

    fn push(&mut self, m: Msg) {
        if let Some(lb) = m.adjust_leader_bucket() {
            *self.adjust_in_flight.entry(lb).or_default() += 1;
        }
        self.net.push_back(m);
    }

    fn settle(&mut self, m: &Msg) {
        if let Some(lb) = m.adjust_leader_bucket() {
            if let Some(n) = self.adjust_in_flight.get_mut(&lb) {
                *n -= 1;
                if *n == 0 {
                    self.adjust_in_flight.remove(&lb);
                }
            }
        }
    }

    /// F-LOSS (spec 3.4): drop message `i`.
    pub fn drop_msg(&mut self, i: usize) {
        if let Some(m) = self.net.remove(i) {
            self.settle(&m);
        }
    }

    /// F-DUP (spec 3.4): duplicate message `i`.
    pub fn duplicate(&mut self, i: usize) {
        if let Some(m) = self.net.get(i).cloned() {
            self.push(m);
        }
    }

    /// Deliver message `i`. Server-bound messages are handled here (R22, R24, then R21);
    /// coordinator-bound ones are returned as the manager's input.
    pub fn deliver(&mut self, i: usize, now_ms: u64) -> Option<Input> {
        let m = self.net.remove(i)?;
        self.settle(&m);
        match m {
            Msg::Nli(nli) => {
                self.on_nli(nli, now_ms);
                None
            }
            Msg::AdjustIsrResponse { to, bucket, result } => {
                self.on_adjust_response(to, bucket, result, now_ms);
                None
            }
            Msg::NliResponse {
                from,
                bucket,
                ok,
                context,
            } => Some(Input::NliResponse {
                from,
                bucket,
                ok,
                context,
            }),
            Msg::AdjustIsr {
                from,
                bucket,
                leader_epoch,
                bucket_epoch,
                isr,
            } => Some(Input::AdjustIsr {
                from,
                bucket,
                leader_epoch,
                bucket_epoch,
                isr,
            }),
        }
    }

    /// R22.
    fn on_nli(&mut self, nli: Nli, now_ms: u64) {
        let Some(srv) = self.servers.get_mut(&nli.to) else {
            return;
        };
        if !srv.up {
            return; // a down server loses the message
        }
        let (to, bucket, context) = (nli.to, nli.bucket, nli.context());
        let ok = if nli.coordinator_epoch < srv.last_ce {
            false
        } else {
            srv.last_ce = nli.coordinator_epoch;
            // The request becomes the view: its lists are moved, not copied.
            let view = ReplicaView {
                leader_epoch: nli.leader_epoch,
                bucket_epoch: nli.bucket_epoch,
                leader: nli.leader,
                replicas: nli.replicas,
                isr: nli.isr,
                isr_rejected: false,
            };
            match srv.views.get_mut(&bucket) {
                Some(v)
                    if view.bucket_epoch < v.bucket_epoch || view.leader_epoch < v.leader_epoch =>
                {
                    false
                }
                Some(v) => {
                    *v = view;
                    true
                }
                None => {
                    srv.views.insert(bucket, view);
                    true
                }
            }
        };
        self.net.push_back(Msg::NliResponse {
            from: to,
            bucket,
            ok,
            context,
        });
        if ok {
            self.propose(to, bucket, now_ms);
        }
    }

    /// R24.
    fn on_adjust_response(
        &mut self,
        to: ServerId,
        b: BucketId,
        result: Result<LeaderAndIsr, AdjustIsrError>,
        now_ms: u64,
    ) {
        let Some(srv) = self.servers.get_mut(&to) else {
            return;
        };
        if !srv.up {
            return;
        }
        let Some(v) = srv.views.get_mut(&b) else {
            return;
        };
        match result {
            Ok(lai) => {
                if v.leader_epoch == lai.leader_epoch && v.bucket_epoch < lai.bucket_epoch {
                    v.isr = lai.isr;
                    v.bucket_epoch = lai.bucket_epoch;
                }
                self.propose(to, b, now_ms);
            }
            Err(_) => v.isr_rejected = true,
        }
    }

    /// R21: if `s` leads `b` in its view, has nothing in flight and was not rejected, propose
    /// the ISR plus every live assigned replica. Slow buckets wait for `slow_until`.
    pub fn propose(&mut self, s: ServerId, b: BucketId, now_ms: u64) -> bool {
        let Some(srv) = self.servers.get(&s) else {
            return false;
        };
        let Some(v) = srv.views.get(&b) else {
            return false;
        };
        if !srv.up
            || v.leader != Some(s)
            || v.isr_rejected
            || self.adjust_in_flight.contains_key(&(s, b))
        {
            return false;
        }
        // Nothing to propose unless some live replica is missing from the ISR (checked before
        // the proposal is built: most calls propose nothing).
        let joining = |r: &ServerId| !v.isr.contains(r) && self.is_up(*r);
        if !v.replicas.iter().any(joining) {
            return false;
        }
        let mut isr = v.isr.clone();
        isr.extend(v.replicas.iter().copied().filter(joining));
        if let Some(d) = self.slow_for.remove(&b) {
            self.slow_until.insert(b, now_ms + d);
        }
        if self.slow_until.get(&b).is_some_and(|t| now_ms < *t) {
            self.deferred.insert((s, b));
            return false;
        }
        let (leader_epoch, bucket_epoch) = (v.leader_epoch, v.bucket_epoch);
        self.push(Msg::AdjustIsr {
            from: s,
            bucket: b,
            leader_epoch,
            bucket_epoch,
            isr,
        });
        true
    }

    /// Retry proposals deferred by slow followers (call on every tick).
    pub fn retry_deferred(&mut self, now_ms: u64) {
        let due: Vec<_> = self
            .deferred
            .iter()
            .copied()
            .filter(|(_, b)| self.slow_until.get(b).is_none_or(|t| now_ms >= *t))
            .collect();
        for (s, b) in due {
            self.deferred.remove(&(s, b));
            self.slow_until.remove(&b);
            self.propose(s, b, now_ms);
        }
    }

    /// A server crashes (views survive).
    pub fn crash(&mut self, s: ServerId) {
        if let Some(srv) = self.servers.get_mut(&s) {
            srv.up = false;
        }
    }

    /// A server restarts.
    pub fn restart(&mut self, s: ServerId) {
        if let Some(srv) = self.servers.get_mut(&s) {
            srv.up = true;
        }
    }
}
