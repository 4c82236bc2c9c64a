//! The fault mix of one run, drawn from its seed: swarm testing, as TigerBeetle's VOPR does it.
//! Each fault kind is switched on or off by the seed and, when on, given its own rate or count,
//! so that a swarm of seeds covers runs with few kinds of fault as well as runs with every kind.

use rebalance_manager::sim::Rng;

/// One run's faults and host settings. Rates are per million; counts are spread over the fault
/// phase at points drawn from the seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mix {
    /// The manager's execution slots (spec 6, `max_inflight`).
    pub max_inflight: usize,
    /// Group commit's batch bound; 1 is one write at a time.
    pub group_commit: usize,
    /// A flush (the latency bound) after this many inputs on average, besides the flush when
    /// nothing else can be taken.
    pub flush_every: u64,
    /// A message is lost instead of delivered.
    pub loss_ppm: u64,
    /// A message is duplicated before a delivery.
    pub dup_ppm: u64,
    /// A random message is delivered instead of the oldest (reordering).
    pub reorder_ppm: u64,
    /// A store operation of the core fails (R8).
    pub store_fail_ppm: u64,
    /// The clock ticks although messages are in flight (attempts time out under way).
    pub early_tick_ppm: u64,
    /// Buckets whose followers are slow to catch up.
    pub slow_ppm: u64,
    /// Tablet server crashes (each restarted later, at the latest when the faults stop).
    pub server_crashes: u32,
    /// Coordinator crashes at random inputs: the incarnation stops with its open batch.
    pub coordinator_crashes: u32,
    /// Flushes that fail: nothing, a prefix or all of the batch lands, and the incarnation stops.
    pub flush_failures: u32,
    /// Writes that go to the store alone (every write with a batch of one) and land, but whose
    /// answer is lost: in doubt, so the host stops the incarnation (G3, spec/findings.md F25).
    pub doubtful_writes: u32,
    /// The fault phase lasts this many inputs per bucket, in tenths (the rebalance may finish
    /// sooner).
    pub fault_inputs_per_bucket_tenths: u64,
}

impl Mix {
    /// The mix of `seed`. `max_inflight` scales with the cluster so that a million buckets are
    /// not moved one at a time.
    pub fn of(seed: u64, buckets: u32) -> Mix {
        let mut rng = Rng::new(seed ^ 0x5741_524d_5741_524d);
        let on = |rng: &mut Rng| rng.chance(500_000);
        let rate = |rng: &mut Rng, max: u64| {
            if on(rng) {
                1 + rng.below(max)
            } else {
                0
            }
        };
        let slots = [1, 4, 16, 64, 256, 1024];
        let cap = (buckets as usize / 4).max(1);
        let max_inflight = slots[rng.below(slots.len() as u64) as usize].min(cap);
        let batches = [1, 8, 64, 1000];
        let group_commit = batches[rng.below(batches.len() as u64) as usize];
        Mix {
            max_inflight,
            group_commit,
            flush_every: 1 + rng.below(200),
            loss_ppm: rate(&mut rng, 30_000),
            dup_ppm: rate(&mut rng, 30_000),
            reorder_ppm: rate(&mut rng, 200_000),
            store_fail_ppm: rate(&mut rng, 20_000),
            early_tick_ppm: rate(&mut rng, 5_000),
            slow_ppm: rate(&mut rng, 50_000),
            server_crashes: rate(&mut rng, 4) as u32,
            coordinator_crashes: rate(&mut rng, 4) as u32,
            flush_failures: if group_commit > 1 {
                rate(&mut rng, 4) as u32
            } else {
                0
            },
            fault_inputs_per_bucket_tenths: 10 + rng.below(60),
            // Drawn last and from its own stream, so that every earlier seed keeps its mix.
            doubtful_writes: rate(&mut Rng::new(seed ^ 0x4455_4254_4455_4254), 4) as u32,
        }
    }

    /// One line, printed with every run.
    pub fn describe(&self) -> String {
        format!(
            "inflight {} batch {} flush/{} loss {} dup {} reorder {} store-fail {} early-tick {} \
             slow {} (ppm) server-crashes {} coordinator-crashes {} flush-failures {} \
             doubtful-writes {} fault-phase {}.{} inputs/bucket",
            self.max_inflight,
            self.group_commit,
            self.flush_every,
            self.loss_ppm,
            self.dup_ppm,
            self.reorder_ppm,
            self.store_fail_ppm,
            self.early_tick_ppm,
            self.slow_ppm,
            self.server_crashes,
            self.coordinator_crashes,
            self.flush_failures,
            self.doubtful_writes,
            self.fault_inputs_per_bucket_tenths / 10,
            self.fault_inputs_per_bucket_tenths % 10
        )
    }
}
