//! The `cluster` program around the host (`rebalance_stores::Host`, spec/protocol.md "Group
//! commit"): each input offered, flushed on the latency bound, the released messages to the
//! simulated servers and each released input to the log; on a lost batch, a new incarnation.

use std::time::{Duration, Instant};

use rebalance_manager::sim::Cluster;
use rebalance_manager::{Config, Effect, Event, Input, Manager, PersistedState, Reply, Store};
use rebalance_stores::{Flow, GroupCommit, Host, HostStore, Observer};
use rebalance_wire::log::{LogWriter, Recorded, StoreOps};

use crate::args::Args;
use crate::failure::Failure;
use crate::store::{open_store, zk_server, AnyStore, Counted};

/// The core's store: counted for the figures, around a store that counts each input's
/// operations for the log, around the batching adapter.
pub(crate) type Core = Counted<Recorded<GroupCommit<AnyStore>>>;

impl HostStore for Core {
    type Durable = AnyStore;

    fn adapter(&self) -> &GroupCommit<AnyStore> {
        &self.inner.inner
    }

    fn adapter_mut(&mut self) -> &mut GroupCommit<AnyStore> {
        &mut self.inner.inner
    }
}

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

/// What the host's observer does with each released input: its log record, its latency, and
/// the clock a lost batch goes back to.
pub(crate) struct Watch {
    pub(crate) log: Log,
    pub(crate) latencies: Latencies,
    /// The clock of the last released input: a lost batch never happened, ticks included, so the
    /// next incarnation starts here (the log's clock moves only by its logged ticks).
    released_now: u64,
}

impl Observer<Taken> for Watch {
    type Error = Failure;

    fn released(
        &mut self,
        t: &Taken,
        effects: &[Effect],
        _: Option<&PersistedState>,
    ) -> Result<(), Failure> {
        if let Some(w) = &mut self.log {
            w.input(t.now_ms, &t.input, effects, t.ops)
                .map_err(log_failed)?;
        }
        self.latencies.0.push(t.at.elapsed().as_nanos() as u64);
        self.released_now = t.now_ms;
        Ok(())
    }
}

/// Why an incarnation stopped.
pub(crate) enum Stop {
    /// `--crash-coordinator-at`.
    Injected,
    /// A flush failed, or a write failed in doubt (step 5, G3): the open batch and everything
    /// held are lost. Counted as a lost batch.
    LostBatch(String),
}

/// The program around the current incarnation's host: the simulated cluster it talks to, the
/// client's replies, the log and the figures.
pub(crate) struct HostLoop<'a> {
    pub(crate) args: &'a Args,
    h: Option<Host<Core, Taken>>,
    pub(crate) cluster: Cluster,
    pub(crate) replies: Vec<Reply>,
    pub(crate) watch: Watch,
    /// The host's clock (simulated: 30 s ticks).
    pub(crate) now: u64,
    /// Read the store back at each start, for the log (small clusters only).
    read: bool,
    pub(crate) inputs: u64,
    pub(crate) recoveries: Vec<Duration>,
    pub(crate) lost_batches: u64,
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
            h: None,
            cluster,
            replies: Vec::new(),
            watch: Watch {
                log,
                latencies: Latencies::default(),
                released_now: now,
            },
            now,
            read,
            inputs: 0,
            recoveries: Vec::new(),
            lost_batches: 0,
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

    fn h(&self) -> &Host<Core, Taken> {
        self.h.as_ref().expect("an incarnation is running")
    }

    fn h_mut(&mut self) -> &mut Host<Core, Taken> {
        self.h.as_mut().expect("an incarnation is running")
    }

    pub(crate) fn m(&self) -> &Manager<Core> {
        self.h().manager()
    }

    /// R17: a new incarnation on `store`. Returns the store it read, if it read it back.
    pub(crate) fn incarnate(&mut self, store: AnyStore) -> Result<Option<PersistedState>, Failure> {
        let gc = GroupCommit::new(store, self.args.group_commit);
        let config = Config {
            max_inflight: self.args.max_inflight,
            ..Config::default()
        };
        let (mut h, effects) = Host::start(
            config,
            Counted::new(Recorded::new(gc)),
            self.cluster.live(),
            self.now,
        )
        .map_err(|e| Failure::Store(e.to_string()))?;
        assert_eq!(effects, vec![Effect::Enqueue(Event::Recover)]);
        if let Some(bug) = self.args.plant {
            h.plant(bug);
        }
        // With `read`, two reads that are no input's, so that the log shows what this incarnation
        // found.
        let read = if self.read {
            let fail = |e| Failure::Store(format!("reading the store back: {e}"));
            let cluster = h.store_mut().load_cluster().map_err(fail)?;
            let task = h.store_mut().read_task().map_err(fail)?;
            Some(PersistedState {
                coordinator_epoch: h.manager().coordinator_epoch(),
                task,
                cluster,
            })
        } else {
            None
        };
        h.store_mut().inner.take(); // the start's own reads and epoch write are not an input's
        if let Some(w) = &mut self.watch.log {
            w.start(
                self.now,
                h.manager().coordinator_epoch(),
                h.manager().live(),
                &effects,
                read.as_ref(),
            )
            .map_err(log_failed)?;
        }
        self.h = Some(h);
        Ok(read)
    }

    /// R16: the new incarnation's Recover (queued by its start), handled and released. A store
    /// failure in it ends the run (the store is unreachable or damaged).
    pub(crate) fn recover(&mut self) -> Result<(), Failure> {
        let recover = self.next_event();
        assert_eq!(recover, Some(Event::Recover), "R17 queues Recover first");
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

    /// The front of the incarnation's event queue.
    pub(crate) fn next_event(&mut self) -> Option<Event> {
        self.h_mut().next_event()
    }

    /// Steps 1 and 2, then 3 for the latency bound and 4 for what is durable: one input.
    pub(crate) fn feed(&mut self, input: Input) -> Result<(), Failure> {
        let at = Instant::now();
        let now = self.now;
        let logged = input.clone();
        self.inputs += 1;
        let h = self.h.as_mut().expect("an incarnation is running");
        let flow = h.offer(now, input, &mut self.watch, |core| Taken {
            at,
            now_ms: now,
            input: logged,
            ops: core.inner.take(),
        })?;
        self.send();
        if let Flow::Stopped(e) = flow {
            return self.stop(Stop::LostBatch(e.to_string()));
        }
        let latency = Duration::from_millis(self.args.commit_latency_ms);
        if self
            .h()
            .oldest_held()
            .is_some_and(|t| t.at.elapsed() >= latency)
        {
            self.flush()?;
        }
        Ok(())
    }

    /// True when effects are held (the loop flushes before it waits for anything else).
    pub(crate) fn holding(&self) -> bool {
        self.h().holding()
    }

    /// Step 3 and then 4, or 5 when the flush fails.
    pub(crate) fn flush(&mut self) -> Result<(), Failure> {
        let h = self.h.as_mut().expect("an incarnation is running");
        let flow = h.flush(&mut self.watch)?;
        self.send();
        match flow {
            Flow::Going => Ok(()),
            Flow::Stopped(e) => self.stop(Stop::LostBatch(e.to_string())),
        }
    }

    /// The released messages to the simulated servers, the replies to the client.
    fn send(&mut self) {
        let h = self.h.as_mut().expect("an incarnation is running");
        let mut no_events = std::collections::VecDeque::new();
        self.cluster
            .absorb(h.drain_outgoing(), &mut no_events, &mut self.replies);
        debug_assert!(no_events.is_empty(), "the host keeps the events");
    }

    /// Step 5 (or an injected crash): the incarnation stops, with its event queue, its open batch
    /// and what it held; a new one starts on the reopened store and recovers.
    pub(crate) fn stop(&mut self, why: Stop) -> Result<(), Failure> {
        let stopped = self.h.take().expect("an incarnation is running").stop();
        self.add_counts(&stopped.store);
        // The process dies: its session and file lock go with it.
        drop(stopped.store);
        // What was held never happened, ticks included: the next incarnation's clock starts at
        // the last released input's (a log's clock moves only by its logged ticks).
        self.now = self.watch.released_now;
        match &why {
            Stop::Injected => eprintln!(
                "\ncluster: crashing the coordinator after {} inputs",
                self.inputs
            ),
            Stop::LostBatch(e) => {
                self.lost_batches += 1;
                eprintln!(
                    "\ncluster: a batch was lost or a write left in doubt ({e}); the incarnation \
                     stops with {} inputs' \
                     effects unreleased, and a new one recovers",
                    stopped.discarded
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
        let h = self.h.take().expect("an incarnation is running");
        self.add_counts(h.store());
        self.h = Some(h);
    }

    fn add_counts(&mut self, counted: &Core) {
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
