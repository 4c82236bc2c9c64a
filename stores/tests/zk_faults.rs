//! Faults against a real ZooKeeper server (`scripts/with-zookeeper.sh`): a zombie coordinator, a
//! server restart mid-rebalance, and session expiry. Each drives managers on `ZkStore` through
//! the simulated cluster. Without a server these tests are reported as ignored, with the README
//! command as the reason; they never pass without one.
//!
//! The tests share one server and one of them stops it, so they take a lock and run one at a
//! time.

use std::collections::{BTreeMap, VecDeque};
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rebalance_manager::sim::Cluster;
use rebalance_manager::{
    BucketId, BucketRecord, Config, Effect, Event, Input, LeaderAndIsr, Manager, OverallStatus,
    PersistedState, Plan, PlanEntry, Reply, ServerId, Store, StoreError, TaskNode,
};
use rebalance_stores::zk::{ZkStore, ZkStoreOptions};

const SERVERS: u32 = 6;
const BUCKETS: u32 = 24;
/// More than any of these rebalances needs; reaching it is a failure, not a hang.
const MAX_INPUTS: usize = 20_000;

static SERVER: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    SERVER.lock().unwrap_or_else(|p| p.into_inner())
}

fn zk_addr() -> String {
    std::env::var("ZK_ADDR")
        .expect("ZK_ADDR unset: run the tests through scripts/with-zookeeper.sh (README)")
}

fn options() -> ZkStoreOptions {
    ZkStoreOptions {
        op_timeout: Duration::from_secs(1),
        ..ZkStoreOptions::default()
    }
}

fn origin(b: u32) -> Vec<ServerId> {
    (0..3).map(|i| (b + i) % SERVERS).collect()
}

fn at(assignment: &[ServerId]) -> BucketRecord {
    BucketRecord {
        assignment: assignment.to_vec(),
        lai: LeaderAndIsr {
            leader: Some(assignment[0]),
            leader_epoch: 0,
            isr: assignment.iter().copied().collect(),
            bucket_epoch: 0,
            coordinator_epoch: 0,
        },
    }
}

fn initial() -> PersistedState {
    let mut s = PersistedState::default();
    for b in 0..BUCKETS {
        s.cluster.buckets.insert(b, at(&origin(b)));
    }
    s
}

/// Every bucket moves one replica: [a, b, c] -> [b, c, d].
fn plan() -> Plan {
    Plan::new(
        (0..BUCKETS)
            .map(|b| {
                let o = origin(b);
                let t = vec![o[1], o[2], (b + 3) % SERVERS];
                (b, PlanEntry::new(o.clone(), t, Some(o[0])).unwrap())
            })
            .collect(),
    )
}

/// A fresh root for one test, removed again when dropped.
struct Root {
    addr: String,
    path: String,
}

impl Root {
    fn new(name: &str) -> Self {
        let addr = zk_addr();
        let path = format!("/faults-{name}-{}", std::process::id());
        ZkStore::delete_tree(&addr, &path).unwrap();
        ZkStore::create(&addr, &path, &initial(), options()).unwrap();
        Root { addr, path }
    }

    fn open(&self) -> ZkStore {
        ZkStore::open(&self.addr, &self.path, options()).unwrap()
    }

    /// What a new coordinator would read now, through a handle of its own.
    fn read(&self) -> (BTreeMap<BucketId, BucketRecord>, Option<TaskNode>) {
        let mut s = self.open();
        (s.load_cluster().unwrap().buckets, s.read_task().unwrap())
    }
}

impl Drop for Root {
    fn drop(&mut self) {
        let _ = ZkStore::delete_tree(&self.addr, &self.path);
    }
}

/// The host's side of one coordinator: its event queue and the replies it got.
#[derive(Default)]
struct Host {
    events: VecDeque<Event>,
    replies: Vec<Reply>,
}

/// The simulated servers and network, shared by every coordinator, and the clock.
struct World {
    cluster: Cluster,
    now_ms: u64,
}

impl World {
    fn new() -> Self {
        let mut cluster = Cluster::new(0..SERVERS);
        for (b, rec) in &initial().cluster.buckets {
            cluster.init_bucket(*b, rec);
        }
        World { cluster, now_ms: 0 }
    }

    fn feed<S: Store>(&mut self, m: &mut Manager<S>, host: &mut Host, input: Input) {
        let effects: Vec<Effect> = m.handle(self.now_ms, input);
        self.cluster
            .absorb(effects, &mut host.events, &mut host.replies);
        m.check_invariants()
            .unwrap_or_else(|v| panic!("invariant violated: {v:?}"));
    }

    /// The next input for the coordinator: a delivered message, else a queued event, else a
    /// tick if it has work in progress. `None` when it is quiescent.
    fn next_input<S: Store>(&mut self, m: &Manager<S>, host: &mut Host) -> Option<Input> {
        while !self.cluster.net.is_empty() {
            if let Some(input) = self.cluster.deliver(0, self.now_ms) {
                return Some(input);
            }
        }
        if let Some(ev) = host.events.pop_front() {
            return Some(Input::Event(ev));
        }
        if m.has_in_progress() {
            self.now_ms += m.config().check_interval_ms;
            self.cluster.retry_deferred(self.now_ms);
            return Some(Input::Tick);
        }
        None
    }

    /// Runs `m` until it is quiescent.
    fn run_to_end<S: Store>(&mut self, m: &mut Manager<S>, host: &mut Host) {
        for _ in 0..MAX_INPUTS {
            match self.next_input(m, host) {
                Some(input) => self.feed(m, host, input),
                None => return,
            }
        }
        panic!("no quiescence after {MAX_INPUTS} inputs: {:?}", m.counts());
    }

    /// Starts a coordinator incarnation on `store` and feeds it its Recover event.
    fn start<S: Store>(&mut self, store: S, host: &mut Host) -> Manager<S> {
        let (mut m, effects) =
            Manager::start(Config::default(), store, self.cluster.live(), self.now_ms)
                .expect("start");
        self.cluster
            .absorb(effects, &mut host.events, &mut host.replies);
        if let Some(ev) = host.events.pop_front() {
            self.feed(&mut m, host, Input::Event(ev));
        }
        m
    }
}

/// The manager's cache of every bucket (equal to the store's acknowledged state,
/// INV-CONTEXT-COHERENT).
fn cached<S: Store>(m: &Manager<S>) -> BTreeMap<BucketId, BucketRecord> {
    (0..BUCKETS)
        .map(|b| (b, m.bucket(b).expect("cached bucket").clone()))
        .collect()
}

#[test]
#[cfg_attr(
    not(zk_server),
    ignore = "needs a ZooKeeper server: scripts/with-zookeeper.sh cargo test --workspace --release (README)"
)]
fn a_zombie_coordinator_lands_no_write() {
    let _server = one_at_a_time();
    let root = Root::new("zombie");
    let mut world = World::new();

    // The old coordinator registers the plan and gets part of the way.
    let mut host_a = Host::default();
    let mut a = world.start(root.open(), &mut host_a);
    world.feed(&mut a, &mut host_a, Input::Register { plan: plan() });
    assert_eq!(host_a.replies, vec![Reply::Accepted(1)]);
    for _ in 0..40 {
        let input = world.next_input(&a, &mut host_a).expect("work left");
        world.feed(&mut a, &mut host_a, input);
    }
    assert!(
        a.counts().completed < BUCKETS as usize,
        "still mid-rebalance"
    );

    // A new coordinator is elected on its own session and recovers.
    let mut host_b = Host::default();
    let mut b = world.start(root.open(), &mut host_b);
    assert_eq!(b.coordinator_epoch(), a.coordinator_epoch() + 1);
    let acked_by_a = a.store().acknowledged_writes();
    let (at_election, _) = root.read();
    let failures_before = a.store_failures().0;

    // Both keep handling inputs: every message the cluster sends the coordinator reaches both,
    // and the zombie also gets its own events, ticks and a client's cancel.
    world.feed(&mut a, &mut host_a, Input::Cancel);
    for _ in 0..MAX_INPUTS {
        let Some(input) = world.next_input(&b, &mut host_b) else {
            break;
        };
        world.feed(&mut a, &mut host_a, input.clone());
        if let Some(ev) = host_a.events.pop_front() {
            world.feed(&mut a, &mut host_a, Input::Event(ev));
        }
        if matches!(input, Input::Tick) {
            world.feed(&mut a, &mut host_a, Input::Tick);
        }
        world.feed(&mut b, &mut host_b, input);
    }

    // The zombie tried to write and was fenced every time; none of its writes landed.
    let (failures, last) = a.store_failures();
    assert!(failures > failures_before, "the zombie attempted writes");
    assert!(
        matches!(last, Some(StoreError::Fenced { writer_epoch, store_epoch })
            if *writer_epoch == a.coordinator_epoch() && *store_epoch == b.coordinator_epoch()),
        "{last:?}"
    );
    assert_eq!(a.store().acknowledged_writes(), acked_by_a);
    assert_eq!(
        host_a.replies.last(),
        Some(&Reply::StoreError),
        "its cancel failed"
    );

    // The new coordinator finished the rebalance, and ZooKeeper holds exactly its view.
    assert_eq!(b.overall(), Some(OverallStatus::Completed));
    assert_eq!(b.counts().completed, BUCKETS as usize);
    let (buckets, task) = root.read();
    assert_eq!(buckets, cached(&b));
    let task = task.expect("task node");
    assert_eq!(task.status, rebalance_manager::TaskStatus::Completed);
    assert!(!task.cancel_requested, "the zombie's cancel did not land");
    // A record last written with the zombie's epoch is one it wrote before the election.
    for (bucket, rec) in &buckets {
        if rec.lai.coordinator_epoch == a.coordinator_epoch() {
            assert_eq!(Some(rec), at_election.get(bucket), "bucket {bucket}");
        }
    }
}

fn server_control(args: &[&str]) {
    let script = std::env::var("ZK_SCRIPT").expect("ZK_SCRIPT is set by scripts/with-zookeeper.sh");
    let status = Command::new(script)
        .args(args)
        .status()
        .expect("run ZK_SCRIPT");
    assert!(status.success(), "{args:?}: {status}");
}

#[test]
#[cfg_attr(
    not(zk_server),
    ignore = "needs a ZooKeeper server: scripts/with-zookeeper.sh cargo test --workspace --release (README)"
)]
fn a_server_restart_mid_rebalance_loses_no_acknowledged_write() {
    let _server = one_at_a_time();
    let root = Root::new("restart");
    let mut world = World::new();
    let mut host = Host::default();
    let mut m = world.start(root.open(), &mut host);
    world.feed(&mut m, &mut host, Input::Register { plan: plan() });
    for _ in 0..60 {
        let input = world.next_input(&m, &mut host).expect("work left");
        world.feed(&mut m, &mut host, input);
    }
    let completed_before = m.counts().completed;
    assert!(completed_before < BUCKETS as usize, "still mid-rebalance");
    let acknowledged = cached(&m);
    let task_before = m.store_mut().read_task().unwrap();

    // Kill the server (SIGKILL, no clean shutdown) and keep feeding inputs: the store fails.
    server_control(&["--stop-server", "--kill"]);
    let failures_before = m.store_failures().0;
    let mut fed = 0;
    while m.store_failures().0 < failures_before + 3 && fed < 30 {
        let Some(input) = world.next_input(&m, &mut host) else {
            break;
        };
        world.feed(&mut m, &mut host, input);
        fed += 1;
    }
    let (failures, last) = m.store_failures();
    assert!(
        failures >= failures_before + 3,
        "{failures} failures in {fed} inputs"
    );
    assert!(
        matches!(
            last,
            Some(StoreError::Unavailable(_) | StoreError::SessionExpired(_))
        ),
        "{last:?}"
    );
    assert_eq!(cached(&m), acknowledged, "a failed write changed nothing");

    // Restart it on the same data directory: every acknowledged write is there, and nothing
    // else (a write whose answer was lost is settled first).
    server_control(&["--start-server"]);
    let mut settled = m.store_mut().settle();
    for _ in 0..10 {
        if settled.is_ok() {
            break;
        }
        settled = m.store_mut().settle();
    }
    settled.expect("the store settles once the server is back");
    let (buckets, task) = root.read();
    assert_eq!(buckets, acknowledged);
    assert_eq!(task, task_before);

    // The manager completes afterwards (timeouts and reconcile repair the failed steps).
    world.run_to_end(&mut m, &mut host);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    assert_eq!(m.counts().completed, BUCKETS as usize);
    let (buckets, task) = root.read();
    assert_eq!(buckets, cached(&m));
    assert_eq!(
        task.expect("task").status,
        rebalance_manager::TaskStatus::Completed
    );
}

#[test]
#[cfg_attr(
    not(zk_server),
    ignore = "needs a ZooKeeper server: scripts/with-zookeeper.sh cargo test --workspace --release (README)"
)]
fn session_expiry_is_a_typed_store_failure() {
    let _server = one_at_a_time();
    let root = Root::new("expiry");
    let mut world = World::new();
    let mut host = Host::default();
    let short_session = ZkStoreOptions {
        session_timeout: Duration::from_secs(4), // the server's minimum (2 ticks)
        ..options()
    };
    let store = ZkStore::open(&root.addr, &root.path, short_session).unwrap();
    let mut m = world.start(store, &mut host);
    world.feed(&mut m, &mut host, Input::Register { plan: plan() });
    for _ in 0..30 {
        let input = world.next_input(&m, &mut host).expect("work left");
        world.feed(&mut m, &mut host, input);
    }
    // The server is gone for longer than the session's expiry time: the client gives the
    // session up. The server comes back; the session does not.
    server_control(&["--stop-server", "--kill"]);
    assert!(
        m.store().wait_for_session_end(Duration::from_secs(60)),
        "the client ends the session"
    );
    server_control(&["--start-server"]);
    let failures_before = m.store_failures().0;

    // A cancel writes the task node: it fails with the typed error, and nothing changes.
    let snapshot = m.snapshot();
    world.feed(&mut m, &mut host, Input::Cancel);
    assert_eq!(host.replies.last(), Some(&Reply::StoreError));
    let (failures, last) = m.store_failures();
    assert_eq!(failures, failures_before + 1);
    assert!(
        matches!(last, Some(StoreError::SessionExpired(_))),
        "{last:?}"
    );
    assert_eq!(m.snapshot(), snapshot);

    // The next operation opens a new session; the rebalance completes.
    world.run_to_end(&mut m, &mut host);
    assert_eq!(m.overall(), Some(OverallStatus::Completed));
    let (buckets, _) = root.read();
    assert_eq!(buckets, cached(&m));
}
