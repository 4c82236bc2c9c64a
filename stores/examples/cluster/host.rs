//! The host procedure of group commit (`rebalance_stores::group_commit`, spec/protocol.md "Group
//! commit"), around one incarnation at a time: take an input, hold its effects, flush, release;
//! on a lost batch, a new incarnation.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rebalance_manager::sim::Cluster;
use rebalance_manager::{Config, Effect, Event, Input, Manager, PersistedState, Reply, Store};
use rebalance_stores::group_commit::{Held, Outbox};
use rebalance_stores::GroupCommit;
use rebalance_wire::log::{LogWriter, Recorded, StoreOps};

use crate::args::Args;
use crate::failure::Failure;
use crate::store::{open_store, zk_server, AnyStore, Counted};

/// The store as the host holds it: counted for the figures, around a store that counts each
/// input's operations for the log, around the batching adapter.
pub(crate) type Host = Counted<Recorded<GroupCommit<AnyStore>>>;

/// The coordinator log, when `--log` asked for one.
pub(crate) type Log = Option<LogWriter<std::fs::File>>;

/// What the host keeps of an input until its effects are released.
pub(crate) struct Taken {
    at: Instant,
    now_ms: u64,
    input: Input,
    ops: StoreOps,
}

/// Times from taking an input to releasing its effects, in nanoseconds.
#[derive(Default)]
pub(crate) struct Latencies(Vec<u64>);

impl Latencies {
    /// Mean and 99th percentile, in microseconds.
    pub(crate) fn mean_p99_us(&mut self) -> Option<(f64, f64)> {
        let n = self.0.len();
        if n == 0 {
            return None;
        }
        let mean = self.0.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
        let k = (n * 99 / 100).min(n - 1);
        let (_, p99, _) = self.0.select_nth_unstable(k);
        Some((mean / 1e3, *p99 as f64 / 1e3))
    }
}

/// Why an incarnation stopped.
pub(crate) enum Stop {
    /// `--crash-coordinator-at`.
    Injected,
    /// A flush failed (step 5): the open batch and everything held are lost.
    LostBatch(String),
}

/// The host around the current incarnation: the simulated cluster it talks to, its event queue,
/// the held effects and the log.
pub(crate) struct HostLoop<'a> {
    pub(crate) args: &'a Args,
    pub(crate) m: Option<Manager<Host>>,
    pub(crate) cluster: Cluster,
    pub(crate) events: VecDeque<Event>,
    pub(crate) replies: Vec<Reply>,
    outbox: Outbox<Taken>,
    pub(crate) log: Log,
    /// The host's clock (simulated: 30 s ticks).
    pub(crate) now: u64,
    /// The clock of the last released input: a lost batch never happened, ticks included, so the
    /// next incarnation starts here (the log's clock moves only by its logged ticks).
    released_now: u64,
    /// Read the store back at each start, for the log (small clusters only).
    read: bool,
    pub(crate) inputs: u64,
    pub(crate) recoveries: Vec<Duration>,
    pub(crate) lost_batches: u64,
    pub(crate) latencies: Latencies,
    /// `--zk-outage-at`: while the server is down, the store failure count and the input count
    /// at which it is started again.
    pub(crate) outage: Option<(u64, u64)>,
    /// Whether `--zk-outage-at` killed the server (a run may end before it).
    pub(crate) zk_outage: bool,
    /// `--zk-kill-leader-at`: whether the ensemble's leader was killed, and the input count at
    /// which the killed member is started again while it is down.
    pub(crate) zk_leader_killed: bool,
    pub(crate) member_down_until: Option<u64>,
    /// Core writes, durable operations and their time, summed over every incarnation.
    pub(crate) writes: u64,
    pub(crate) batches: u64,
    pub(crate) single_writes: u64,
    pub(crate) batched_writes: u64,
    pub(crate) largest_batch: usize,
}

impl<'a> HostLoop<'a> {
    pub(crate) fn new(args: &'a Args, cluster: Cluster, log: Log, now: u64, read: bool) -> Self {
        HostLoop {
            args,
            m: None,
            cluster,
            events: VecDeque::new(),
            replies: Vec::new(),
            outbox: Outbox::new(),
            log,
            now,
            released_now: now,
            read,
            inputs: 0,
            recoveries: Vec::new(),
            lost_batches: 0,
            latencies: Latencies::default(),
            outage: None,
            zk_outage: false,
            zk_leader_killed: false,
            member_down_until: None,
            writes: 0,
            batches: 0,
            single_writes: 0,
            batched_writes: 0,
            largest_batch: 0,
        }
    }

    pub(crate) fn m(&self) -> &Manager<Host> {
        self.m.as_ref().expect("an incarnation is running")
    }

    fn m_mut(&mut self) -> &mut Manager<Host> {
        self.m.as_mut().expect("an incarnation is running")
    }

    fn adapter(&self) -> &GroupCommit<AnyStore> {
        &self.m().store().inner.inner
    }

    /// R17: a new incarnation on `store`. Returns the store it read, if it read it back.
    pub(crate) fn incarnate(&mut self, store: AnyStore) -> Result<Option<PersistedState>, Failure> {
        let gc = GroupCommit::new(store, self.args.group_commit);
        let config = Config {
            max_inflight: self.args.max_inflight,
            ..Config::default()
        };
        let (mut m, effects) = Manager::start(
            config,
            Counted::new(Recorded::new(gc)),
            self.cluster.live(),
            self.now,
        )
        .map_err(|e| Failure::Store(e.to_string()))?;
        assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
        if let Some(bug) = self.args.plant {
            m.plant(bug);
        }
        // With `read`, two reads that are no input's, so that the log shows what this incarnation
        // found.
        let read = if self.read {
            let fail = |e| Failure::Store(format!("reading the store back: {e}"));
            let cluster = m.store_mut().load_cluster().map_err(fail)?;
            let task = m.store_mut().read_task().map_err(fail)?;
            Some(PersistedState {
                coordinator_epoch: m.coordinator_epoch(),
                task,
                cluster,
            })
        } else {
            None
        };
        m.store_mut().inner.take(); // the start's own reads and epoch write are not an input's
        if let Some(w) = &mut self.log {
            w.start(
                self.now,
                m.coordinator_epoch(),
                m.live(),
                &effects,
                read.as_ref(),
            )
            .map_err(log_failed)?;
        }
        self.m = Some(m);
        Ok(read)
    }

    /// R16: the new incarnation's Recover, handled and released. A store failure in it ends the
    /// run (the store is unreachable or damaged).
    pub(crate) fn recover(&mut self) -> Result<(), Failure> {
        self.feed(Input::Event(Event::Recover))?;
        self.flush()?;
        if let (n, Some(e)) = self.m().store_failures() {
            if n > 0 {
                return Err(Failure::Store(format!("recovery: {e}")));
            }
        }
        self.m()
            .check_invariants()
            .map_err(|v| Failure::Invariant(format!("{v:?}")))
    }

    /// Steps 1 and 2, then 3 for the latency bound and 4 when nothing is pending: one input.
    pub(crate) fn feed(&mut self, input: Input) -> Result<(), Failure> {
        let at = Instant::now();
        let now = self.now;
        let m = self.m_mut();
        let effects = m.handle(now, input.clone());
        let ops = m.store_mut().inner.take();
        self.inputs += 1;
        let taken = Taken {
            at,
            now_ms: now,
            input,
            ops,
        };
        let acknowledged = self.adapter().acknowledged();
        self.outbox.hold(acknowledged, taken, effects);
        self.release()?;
        if let Some(e) = self.adapter().lost() {
            return self.stop(Stop::LostBatch(e.to_string()));
        }
        let latency = Duration::from_millis(self.args.commit_latency_ms);
        if self
            .outbox
            .oldest()
            .is_some_and(|t| t.at.elapsed() >= latency)
        {
            self.flush()?;
        }
        Ok(())
    }

    /// True when effects are held (the loop flushes before it waits for anything else).
    pub(crate) fn holding(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Step 3 and then 4, or 5 when the flush fails.
    pub(crate) fn flush(&mut self) -> Result<(), Failure> {
        let flushed = self.m_mut().store_mut().inner.inner.flush();
        match flushed {
            Ok(_) => self.release(),
            Err(e) => self.stop(Stop::LostBatch(e.to_string())),
        }
    }

    /// Step 4: the effects of every held input whose writes are durable, in order, each with
    /// its log record.
    fn release(&mut self) -> Result<(), Failure> {
        let durable = self.adapter().durable();
        let HostLoop {
            outbox,
            log,
            cluster,
            events,
            replies,
            latencies,
            released_now,
            ..
        } = self;
        // A NotifyLeaderAndIsr identical to one sent in this same release carries nothing new
        // (R22 adopts it again, or refuses it again): sent once. Held effects make such twins
        // common (a resend emitted while its original was held), and a second copy would only
        // double the responses.
        let mut sent = std::collections::HashMap::new();
        for Held { input: t, effects } in outbox.release(durable) {
            if let Some(w) = log {
                w.input(t.now_ms, &t.input, &effects, t.ops)
                    .map_err(log_failed)?;
            }
            latencies.0.push(t.at.elapsed().as_nanos() as u64);
            *released_now = t.now_ms;
            let effects = effects.into_iter().filter(|e| match e {
                Effect::SendNli(nli) => {
                    let key = (nli.to, nli.bucket, nli.coordinator_epoch, nli.bucket_epoch);
                    sent.insert(key, nli.clone()).as_ref() != Some(nli)
                }
                _ => true,
            });
            cluster.absorb(effects, events, replies);
        }
        Ok(())
    }

    /// Step 5 (or an injected crash): the incarnation stops, with its event queue, its open batch
    /// and what it held; a new one starts on the reopened store and recovers.
    pub(crate) fn stop(&mut self, why: Stop) -> Result<(), Failure> {
        let m = self.m.take().expect("an incarnation is running");
        let counted = m.into_store();
        self.add_counts(&counted);
        drop(counted); // the process dies: its session and file lock go with it
        self.events.clear(); // and so does its event queue
        let held = self.outbox.discard();
        // What was held never happened, ticks included: the next incarnation's clock starts at
        // the last released input's (a log's clock moves only by its logged ticks).
        self.now = self.released_now;
        match &why {
            Stop::Injected => eprintln!(
                "\ncluster: crashing the coordinator after {} inputs",
                self.inputs
            ),
            Stop::LostBatch(e) => {
                self.lost_batches += 1;
                eprintln!(
                    "\ncluster: a batch was lost ({e}); the incarnation stops with {held} inputs' \
                     effects unreleased, and a new one recovers"
                );
                if self.outage.take().is_some() {
                    // The store is down: start it again before the new incarnation opens it.
                    eprintln!("cluster: starting the ZooKeeper server again");
                    zk_server(&["--start-server"])?;
                }
            }
        }
        let t = Instant::now();
        let store = open_store(self.args)?;
        self.incarnate(store)?;
        self.recover()?;
        self.recoveries.push(t.elapsed());
        Ok(())
    }

    /// Adds the current incarnation's counts to the run's, at the end.
    pub(crate) fn finish(&mut self) {
        let m = self.m.take().expect("an incarnation is running");
        self.add_counts(m.store());
        self.m = Some(m);
    }

    fn add_counts(&mut self, counted: &Host) {
        let stats = counted.inner.inner.stats();
        self.writes += counted.writes;
        self.batches += stats.flushes;
        self.single_writes += stats.single_writes;
        self.batched_writes += stats.batched_writes;
        self.largest_batch = self.largest_batch.max(stats.largest);
    }
}

fn log_failed(e: std::io::Error) -> Failure {
    Failure::Store(format!("writing the log: {e}"))
}
