//! Named configurations. `tiny` runs in seconds; the `ci-*` presets together give every fault
//! kind a budget of at least one and each finishes exhaustively in CI; `full` is for scheduled
//! runs.

use crate::check::fault_coverage::{FaultKind, Faults, Shape};
use crate::config::{BucketConfig, Budgets, Config, ConfigError, PlanTarget};

/// The spec 6 model column: timeout 2, backoff cap 2, target-unavailable 3, no-progress 4,
/// one tracked timed-out attempt, one slot.
fn base(description: &str, servers: u8, rf: u8) -> Config {
    Config {
        description: description.into(),
        servers,
        replication_factor: rf,
        buckets: Vec::new(),
        plan: Vec::new(),
        store: None,
        check_interval_ms: None,
        task_timeout_ticks: 2,
        check_interval_ticks: 1,
        max_reconcile_backoff_ticks: 2,
        target_unavailable_timeout_ticks: 3,
        no_progress_timeout_ticks: 4,
        task_timeout_ms: None,
        max_reconcile_backoff_ms: None,
        target_unavailable_timeout_ms: None,
        no_progress_timeout_ms: None,
        max_tracked_timed_out: 1,
        max_inflight: 1,
        budgets: Budgets {
            register: 1,
            ..Budgets::default()
        },
        max_network: None,
        failed_responses_in_flight: false,
        // The form the partial-order reduction needs (spec 9, P0): dead messages collected,
        // superseded requests kept, no bound.
        collect_dead_messages: true,
        collect_superseded_nli: false,
        absorb_redundant_nli: true,
        no_give_up: false,
        planned_leader: false,
        remote_plan: false,
        session_lost_on_store_failure: false,
        abstract_buckets: Vec::new(),
    }
}

fn bucket(assignment: &[u8]) -> BucketConfig {
    BucketConfig {
        assignment: assignment.to_vec(),
        leader: assignment[0],
        isr: None,
        leader_epoch: 0,
        bucket_epoch: 0,
    }
}

fn target(bucket: u8, target: &[u8]) -> PlanTarget {
    PlanTarget {
        bucket,
        target: target.to_vec(),
    }
}

/// Small timers for CI: timeout after 1 tick, backoff 1, give up after 1 tick without a target
/// or 2 ticks without progress.
fn fast(mut c: Config) -> Config {
    c.task_timeout_ticks = 1;
    c.max_reconcile_backoff_ticks = 1;
    c.target_unavailable_timeout_ticks = 1;
    c.no_progress_timeout_ticks = 2;
    c
}

/// One move bucket, RF 1 on 2 servers: [0] -> [1] (union [1, 0]).
fn one_move(description: &str) -> Config {
    let mut c = base(description, 2, 1);
    c.buckets = vec![bucket(&[0])];
    c.plan = vec![target(0, &[1])];
    fast(c)
}

/// One leader-only bucket, RF 2 on 2 servers: [0, 1] -> [1, 0].
fn one_leader_only(description: &str) -> Config {
    let mut c = base(description, 2, 2);
    c.buckets = vec![bucket(&[0, 1])];
    c.plan = vec![target(0, &[1, 0])];
    fast(c)
}

/// One move bucket, RF 2 on 3 servers: [0, 1] -> [1, 2] (union [1, 2, 0]); the new leader 1 is
/// already a replica, 2 joins, 0 leaves. Dead and superseded messages are collected (spec 9):
/// with two replicas every send reaches three servers, and without it the interleavings of
/// ignored deliveries alone make the graph too large for CI.
fn rf2_move(description: &str) -> Config {
    let mut c = base(description, 3, 2);
    c.buckets = vec![bucket(&[0, 1])];
    c.plan = vec![target(0, &[1, 2])];
    fast(c)
}

/// One move bucket, RF 3 on 4 servers, overlapping: [0, 1, 2] -> [1, 2, 3] (union
/// [1, 2, 3, 0]); two replicas stay, 3 joins, 0 leaves, and the leader moves from 0 to 1.
fn rf3_overlap(description: &str) -> Config {
    let mut c = base(description, 4, 3);
    c.buckets = vec![bucket(&[0, 1, 2])];
    c.plan = vec![target(0, &[1, 2, 3])];
    fast(c)
}

/// Two move buckets, RF 1 on 2 servers: both [0] -> [1], admitted in bucket order.
fn two_moves(description: &str) -> Config {
    let mut c = base(description, 2, 1);
    c.buckets = vec![bucket(&[0]), bucket(&[0])];
    c.plan = vec![target(0, &[1]), target(1, &[1])];
    fast(c)
}

type Preset = (&'static str, fn() -> Config);

const PRESETS: &[Preset] = &[
    ("tiny", || {
        one_move("one move bucket, no faults: timeouts, reconcile, give-up, reordering")
    }),
    ("ci-messages", || {
        let mut c = one_move("one move bucket; message loss and duplication, reordering");
        c.budgets.message_loss = 1;
        c.budgets.message_duplication = 1;
        c
    }),
    ("ci-store", || {
        let mut c = one_move("one move bucket; two store failures at any site, a cancel");
        c.budgets.store_failure = 2;
        c.budgets.cancel = 1;
        c
    }),
    ("ci-server-crash", || {
        let mut c = one_move("one move bucket; a server crash and restart");
        c.budgets.server_crash = 1;
        c
    }),
    ("ci-coordinator-crash", || {
        let mut c = one_move("one move bucket; a coordinator crash and recovery, a deletion");
        c.budgets.coordinator_crash = 1;
        c.budgets.bucket_deletion = 1;
        c
    }),
    ("ci-leader", || {
        let mut c = one_leader_only(
            "one leader-only bucket; a store failure, a cancel, a loss, a second register",
        );
        c.budgets.store_failure = 1;
        c.budgets.cancel = 1;
        c.budgets.message_loss = 1;
        c.budgets.register = 2;
        c
    }),
    ("ci-two-buckets", || {
        let mut c = two_moves("two move buckets; a coordinator crash and a cancel");
        c.budgets.coordinator_crash = 1;
        c.budgets.cancel = 1;
        c
    }),
    ("ci-rf2-server-crash", || {
        let mut c = rf2_move(
            "RF-2 move [0,1] -> [1,2]; a server crash (shrinks the ISR, may take the leader)",
        );
        c.budgets.server_crash = 1;
        c
    }),
    ("ci-rf2-recovery", || {
        let mut c =
            rf2_move("RF-2 move; a coordinator crash at any point, a store failure, a cancel");
        c.budgets.coordinator_crash = 1;
        c.budgets.store_failure = 1;
        c.budgets.cancel = 1;
        c
    }),
    ("ci-recovery-store", || {
        let mut c = rf2_move(
            "RF-2 move; a coordinator crash and two store failures, so recovery itself can fail",
        );
        c.budgets.coordinator_crash = 1;
        c.budgets.store_failure = 2;
        c
    }),
    ("ci-rf3-loss", || {
        let mut c = rf3_overlap("RF-3 overlapping move [0,1,2] -> [1,2,3]; a message loss");
        c.budgets.message_loss = 1;
        c
    }),
    ("ci-rf3-crash-loss", || {
        let mut c = rf3_overlap(
            "RF-3 overlapping move [0,1,2] -> [1,2,3]; a server crash and a message loss",
        );
        c.budgets.server_crash = 1;
        c.budgets.message_loss = 1;
        c
    }),
    ("ci-backoff", || {
        let mut c = one_move(
            "one move; backoff capped at 4 ticks (1, 2, 4), a server crash and a message loss",
        );
        c.max_reconcile_backoff_ticks = 4;
        c.target_unavailable_timeout_ticks = 6;
        c.no_progress_timeout_ticks = 8;
        c.budgets.server_crash = 1;
        c.budgets.message_loss = 1;
        c
    }),
    ("full", || {
        let mut c = base(
            "3 buckets on 4 servers, RF 3, [0,1,2] -> [1,0,3]; every fault once (scheduled)",
            4,
            3,
        );
        c.buckets = vec![bucket(&[0, 1, 2]), bucket(&[0, 1, 2]), bucket(&[1, 2, 3])];
        c.plan = vec![
            target(0, &[1, 0, 3]),
            target(1, &[1, 0, 2]),
            target(2, &[1, 2, 3]),
        ];
        c.max_tracked_timed_out = 2;
        c.budgets = Budgets {
            register: 1,
            cancel: 1,
            coordinator_crash: 1,
            server_crash: 1,
            store_failure: 1,
            message_loss: 1,
            message_duplication: 1,
            bucket_deletion: 1,
            zombie_steps: 0,
        };
        c
    }),
    ("ci-zombie", || {
        let mut c = one_leader_only(
            "one leader-only bucket; a coordinator crash after which the deposed one takes a step, a cancel",
        );
        c.budgets.coordinator_crash = 1;
        c.budgets.cancel = 1;
        c.budgets.zombie_steps = 1;
        c
    }),
    ("ci-inflight2", || {
        let mut c = base(
            "three move buckets, two slots, one tracked timed-out attempt",
            2,
            1,
        );
        c.buckets = vec![bucket(&[0]), bucket(&[0]), bucket(&[0])];
        c.plan = vec![target(0, &[1]), target(1, &[1]), target(2, &[1])];
        // k = 2 slots and M = 1 tracked attempt: M - 1 + k = 2 is below the three buckets, so
        // `unbounded-tracked` can exceed INV-TRACKED-BOUND with two slots, and the M + k plan
        // buckets let the tracked cap block an admission (SOME-ADMISSION-CAPPED) while two
        // slots block another (SOME-INFLIGHT-CAPPED). With M = k = 2 (the scheduled
        // `tracked2-inflight2-net4.json`, 10.1 million states) the bound is every bucket and
        // cannot be exceeded.
        c.max_inflight = 2;
        fast(c)
    }),
    ("ci-rf2-isr-cancel-crash", || {
        let mut c = rf2_move(
            "RF-2 move; a server crash that shrinks the ISR, a cancel, a coordinator crash",
        );
        c.budgets.server_crash = 1;
        c.budgets.cancel = 1;
        c.budgets.coordinator_crash = 1;
        c
    }),
    ("ci-liveness-store", || {
        let mut c = one_move(
            "one move bucket; a server crash, a bucket deletion and two store failures, so their writes fail and R23.5 retries them",
        );
        c.budgets.server_crash = 1;
        c.budgets.bucket_deletion = 1;
        c.budgets.store_failure = 2;
        c
    }),
    ("ci-tracked2", || {
        let mut c = base(
            "three move buckets, one slot, two tracked timed-out attempts, a deletion",
            2,
            1,
        );
        c.buckets = vec![bucket(&[0]), bucket(&[0]), bucket(&[0])];
        c.plan = vec![target(0, &[1]), target(1, &[1]), target(2, &[1])];
        // M + k plan buckets with M = 2: the tracked cap binds at M >= 2 (SOME-ADMISSION-CAPPED
        // has an example), and INV-TRACKED-BOUND's `M - 1 + k` = 2 is below the three buckets,
        // so `unbounded-tracked` violates it.
        c.max_tracked_timed_out = 2;
        // A deletion can hit a bucket still waiting for its slot, which R4.1 then completes
        // at its admission: the one CI preset where R4.1 fires (found when `Rule` gained a
        // variant per case label and the suites' cover test named R4.1 unreached).
        c.budgets.bucket_deletion = 1;
        fast(c)
    }),
    ("ci-refused-leader", || {
        let mut c = base(
            "leader-only [0,1,2] -> [2,0,1], 2 outside the ISR; a server crash shrinks the ISR while the leader's proposal is in flight (F22)",
            3,
            3,
        );
        // Server 2 is up but not yet in the ISR, so leader 0 proposes it at once (R21) and the
        // election over [2, 0, 1] keeps 0. Server 1's crash while that proposal is in flight
        // shrinks the ISR (R19), the leader adopts the new view, and the coordinator's refusal
        // of the older proposal (R18) parks it (R24): the shape the seeded simulation found
        // (F20). Before F22 nothing ever sent that leader a newer request.
        c.buckets = vec![BucketConfig {
            isr: Some(vec![0, 1]),
            ..bucket(&[0, 1, 2])
        }];
        c.plan = vec![target(0, &[2, 0, 1])];
        c.budgets.server_crash = 1;
        fast(c)
    }),
    ("ci-repair-after-crash", || {
        let mut c = base(
            "no rebalance; a leader's crash, its restart's election write failing, a coordinator crash (F23)",
            2,
            1,
        );
        // The liveness repairs across a coordinator crash (R17, R23.5), with nothing else: the
        // sole replica's crash leaves bucket 0 leaderless (R19), the restart's election write
        // fails (R8, R20), and the coordinator crashes before a tick retries it. No register
        // budget, so every SOME-* is not applicable; LIVE-METADATA-REPAIRED is the point.
        c.buckets = vec![bucket(&[0])];
        c.plan = vec![target(0, &[1])];
        c.budgets.register = 0;
        c.budgets.server_crash = 1;
        c.budgets.store_failure = 1;
        c.budgets.coordinator_crash = 1;
        fast(c)
    }),
    ("ci-leader-crash", || {
        let mut c = one_leader_only(
            "one leader-only bucket; a server crash and restart, a message loss, a cancel",
        );
        // The one preset where `elect` chooses among a live replica outside the ISR (a
        // restarted server not yet caught up) and a down one: `ci-leader` has no server crash,
        // and every RF-2 move keeps its candidates in the ISR (found by mutating `elect`'s
        // `&&` to `||`, spec/findings.md F18). The message loss gives an AdjustIsr a chance to
        // be refused (SOME-ADJUST-ISR-REJECTED); without it the graph has no such state.
        c.budgets.server_crash = 1;
        c.budgets.message_loss = 1;
        // A cancel while the bucket is tracked and its new leader has failed over, so the
        // bucket is back at origin: R14.1b cancels it (finding F1). The one CI preset where
        // R14.1b fires (found when the suites' cover test named it unreached).
        c.budgets.cancel = 1;
        c
    }),
];

/// A preset by name: one of the named presets, or a member of the fault-combination family.
pub fn preset(name: &str) -> Option<Config> {
    PRESETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| f())
        .or_else(|| parse_combination(name))
}

/// The fault-combination family (spec 9, "Fault coverage"): one RF-2 bucket, a move `[0, 1] ->
/// [1, 2]` or a leader-only change `[0, 1] -> [1, 0]`, with a budget of one for each fault kind
/// named and none for the others, so that the exhaustive search puts each fault at every point
/// of the migration and of the other's. A second register is a register budget of two; a
/// deposed coordinator's step needs a coordinator crash before it, so `zombie` also gives the
/// crash a budget of one. Named `faults-<shape>-<kind>+<kind>...`, the kinds in
/// [`FaultKind::ALL`] order (`faults-move-cancel+loss`).
pub fn combination(shape: Shape, faults: Faults) -> Config {
    let description = format!("{} bucket; one each of: {faults}", shape.name());
    let mut c = match shape {
        Shape::Move => rf2_move(&description),
        Shape::LeaderOnly => one_leader_only(&description),
    };
    for kind in faults.iter() {
        let b = &mut c.budgets;
        match kind {
            FaultKind::SecondRegister => b.register = 2,
            FaultKind::Cancel => b.cancel = 1,
            FaultKind::CoordinatorCrash => b.coordinator_crash = 1,
            FaultKind::ServerCrash => b.server_crash = 1,
            FaultKind::StoreFailure => b.store_failure = 1,
            FaultKind::MessageLoss => b.message_loss = 1,
            FaultKind::MessageDuplication => b.message_duplication = 1,
            FaultKind::BucketDeletion => b.bucket_deletion = 1,
            FaultKind::ZombieStep => {
                b.zombie_steps = 1;
                b.coordinator_crash = 1;
            }
        }
    }
    c
}

/// The name of [`combination`]`(shape, faults)`.
pub fn combination_name(shape: Shape, faults: Faults) -> String {
    let kinds: Vec<&str> = faults.iter().map(FaultKind::name).collect();
    format!("faults-{}-{}", shape.name(), kinds.join("+"))
}

fn parse_combination(name: &str) -> Option<Config> {
    let rest = name.strip_prefix("faults-")?;
    let (shape, kinds) = Shape::ALL
        .into_iter()
        .find_map(|s| Some((s, rest.strip_prefix(s.name())?.strip_prefix('-')?)))?;
    let mut faults = Faults::default();
    for k in kinds.split('+') {
        faults = faults.with(FaultKind::ALL.into_iter().find(|f| f.name() == k)?);
    }
    (combination_name(shape, faults) == name).then(|| combination(shape, faults))
}

/// Every preset name, in a fixed order.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The presets CI checks exhaustively (`ci-*`).
pub fn ci_preset_names() -> Vec<&'static str> {
    preset_names()
        .into_iter()
        .filter(|n| n.starts_with("ci-"))
        .collect()
}

/// A preset by name, or else a JSON configuration file at that path (for every CLI that takes
/// `--config NAME|FILE`).
pub fn load(name_or_path: &str) -> Result<Config, String> {
    if let Some(c) = preset(name_or_path) {
        return Ok(c);
    }
    if std::path::Path::new(name_or_path).exists() {
        return Config::from_json_file(name_or_path).map_err(|e| match e {
            // A bad field is named with its file; the others already name it.
            ConfigError::Invalid { .. } | ConfigError::NotAnObject { .. } => {
                format!("{name_or_path}: {}", explain(&e))
            }
            other => other.to_string(),
        });
    }
    Err(format!(
        "unknown configuration `{name_or_path}`{}: neither a preset ({}) nor a file",
        did_you_mean(name_or_path),
        preset_names().join(", ")
    ))
}

/// What a configuration error says, and, for a string where a configuration object belongs (a
/// preset's name, meant or misspelt, inside a file or a trace), what exists instead: serde
/// alone said `expected struct Config`.
pub fn explain(e: &ConfigError) -> String {
    let ConfigError::NotAnObject {
        found: serde_json::Value::String(name),
    } = e
    else {
        return e.to_string();
    };
    if preset(name).is_some() {
        return format!(
            "{e}; `{name}` is a preset: give its configuration itself (`rebalance-model check \
             --config {name} --json` prints it as `config_resolved`)"
        );
    }
    format!(
        "{e}; `{name}` is not a preset either{}; the presets are {}",
        did_you_mean(name),
        preset_names().join(", ")
    )
}

/// ` (did you mean `tiny`?)` when exactly one preset is a near miss of `name` (at most two
/// single-character edits, and fewer than half its length), else nothing.
fn did_you_mean(name: &str) -> String {
    let near: Vec<&str> = preset_names()
        .into_iter()
        .filter(|p| {
            let d = edits(name, p);
            d <= 2 && 2 * d < p.chars().count()
        })
        .collect();
    match near.as_slice() {
        [one] => format!(" (did you mean `{one}`?)"),
        _ => String::new(),
    }
}

/// The Levenshtein distance: single-character insertions, deletions and substitutions.
fn edits(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitute = diagonal + usize::from(ca != *cb);
            diagonal = row[j + 1];
            row[j + 1] = substitute.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}
