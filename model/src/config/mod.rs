//! The model's configuration: the knobs of spec section 6 in ticks, the cluster, the plan targets
//! and a budget per fault kind (spec section 9).

pub mod catalogue;
pub mod presets;

use crate::state::types::{
    BucketId, Epoch, RebalanceId, ServerId, TaskStatus, MAX_BUCKETS, MAX_REPLICAS, MAX_SERVERS,
};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;

/// A count per fault kind (spec 9). In [`crate::SystemState`] the same type holds what is left.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Budgets {
    pub register: u8,
    pub cancel: u8,
    pub coordinator_crash: u8,
    pub server_crash: u8,
    pub store_failure: u8,
    pub message_loss: u8,
    pub message_duplication: u8,
    pub bucket_deletion: u8,
    /// Steps a deposed coordinator may still take after R17 started a new incarnation (the
    /// zombie coordinator, spec 9). Absent from a file means 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub zombie_steps: u8,
}

/// A budget of this many is unbounded: taking a fault never counts it down (spec 9). A host's
/// log header asks for it where the real system may fault any number of times (the `cluster`
/// example: messages lost, store operations failed, the coordinator crashed), so that a state
/// reached after one more loss is the same state, not a new one with a smaller count: trace
/// validation then closes a record's hidden steps (a leader proposing, its proposal lost,
/// proposing again) without an endless chain of counts.
pub const UNBOUNDED: u8 = u8::MAX;

/// Takes one fault from a budget: one less, unless it is [`UNBOUNDED`].
pub fn spend(budget: &mut u8) {
    if *budget != UNBOUNDED {
        *budget -= 1;
    }
}

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// The initial state of one bucket: its stored metadata, which every replica has adopted.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BucketConfig {
    /// Initial replica list; its length is the replication factor, except under a `store`
    /// with a task, where a bucket may be left mid-migration at a union of up to twice that.
    pub assignment: Vec<ServerId>,
    /// Initial leader, a member of `assignment` (and of `isr`).
    pub leader: ServerId,
    /// Initial ISR, a subset of `assignment`; absent means the whole assignment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isr: Option<Vec<ServerId>>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub leader_epoch: Epoch,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bucket_epoch: Epoch,
}

/// A store the coordinator starts on (spec 3.1), as Fluss's recovery tests preload ZooKeeper:
/// the persisted task and the coordinator epoch of the incarnation that wrote it. The buckets'
/// metadata is the configuration's `buckets`. With a store, the coordinator starts as after R17:
/// its epoch is one above the stored one and Recover (R16) is the first event.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The stored coordinator epoch, the last incarnation's (at least 1).
    pub coordinator_epoch: Epoch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<TaskConfig>,
}

/// The persisted rebalance task of a preloaded store (spec 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskConfig {
    pub id: RebalanceId,
    pub status: TaskStatus,
    #[serde(default)]
    pub cancel_requested: bool,
    /// The persisted plan, in admission order; `new_leader` is `trs[0]` (spec 2).
    pub plan: Vec<PlanEntryConfig>,
}

/// One persisted plan entry: the origin and target replica lists and the origin leader.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanEntryConfig {
    pub bucket: BucketId,
    pub ors: Vec<ServerId>,
    pub trs: Vec<ServerId>,
    pub old_leader: ServerId,
}

/// One target of the plan the client registers (the plan itself is derived by
/// [`crate::RebalanceModel::register_plan`] from the live assignment).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlanTarget {
    pub bucket: BucketId,
    /// Target replica list; `target[0]` is the new leader.
    pub target: Vec<ServerId>,
}

/// The tick length when a configuration does not give `check_interval_ms`: Fluss's 30 s.
pub const DEFAULT_CHECK_INTERVAL_MS: u64 = 30_000;
/// The longest duration in ticks. Ages are `u16` and saturate one above their threshold
/// (spec 9), so this bounds them; it admits Fluss's 24-hour no-progress limit at 30 s a tick.
pub const MAX_DURATION_TICKS: u16 = 10_000;

/// Everything that fixes one model instance. Durations are in ticks; one tick is
/// `check_interval_ms` (spec 6, 9). Each duration may be given in milliseconds instead
/// (`task_timeout_ms`), a whole number of ticks; [`Config::from_value`] converts it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// One line for `rebalance-model configs`.
    #[serde(default)]
    pub description: String,
    pub servers: u8,
    pub replication_factor: u8,
    /// Initial assignment and leader per bucket; buckets are `0..buckets.len()`.
    pub buckets: Vec<BucketConfig>,
    /// Plan targets, in admission order.
    pub plan: Vec<PlanTarget>,
    /// A preloaded store; absent means a fresh cluster with no task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub store: Option<StoreConfig>,
    /// The tick length in ms (spec 6 `check_interval_ms`); absent means 30,000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_interval_ms: Option<u64>,
    #[serde(default)]
    pub task_timeout_ticks: u16,
    /// Always 1: a tick is one check interval by definition (spec 9).
    #[serde(default = "one")]
    pub check_interval_ticks: u8,
    #[serde(default)]
    pub max_reconcile_backoff_ticks: u16,
    #[serde(default)]
    pub target_unavailable_timeout_ticks: u16,
    #[serde(default)]
    pub no_progress_timeout_ticks: u16,
    /// The same durations in ms, as Fluss's configuration gives them; each is an alternative to
    /// its `_ticks` field and must be a whole number of ticks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_reconcile_backoff_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_unavailable_timeout_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub no_progress_timeout_ms: Option<u64>,
    pub max_tracked_timed_out: u8,
    pub max_inflight: u8,
    pub budgets: Budgets,
    /// Optional search bound: states with more messages in flight are not explored
    /// (`Model::within_boundary`). A bound, like the budgets; absent means unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_network: Option<u8>,
    /// Put failed (`ok = false`) NliResponses in flight too. Off by default: R12 ignores them in
    /// every state (D11), so they only add states (spec/findings.md, "Model abstractions"); on,
    /// conformance also checks that the manager ignores every one of them.
    #[serde(default, skip_serializing_if = "is_false")]
    pub failed_responses_in_flight: bool,
    /// Remove an Nli from the network as soon as its server would reject it forever (spec 9,
    /// "dead messages"). Ignored with `failed_responses_in_flight`, where delivering it puts a
    /// failed response in flight.
    #[serde(default, skip_serializing_if = "is_false")]
    pub collect_dead_messages: bool,
    /// With `collect_dead_messages`, also remove an Nli as soon as a newer Nli to the same
    /// server and bucket is in flight (spec 9, "superseded requests").
    #[serde(default, skip_serializing_if = "is_false")]
    pub collect_superseded_nli: bool,
    /// Absorb a coordinator's Nli whose delivery would change nothing: its server has adopted
    /// exactly this request, is up, and the answer it sent is still in flight (spec 3.4,
    /// "redundant requests"). On unless a configuration turns it off; trace validation turns it
    /// off, since a real network delivers such a resend a second time.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub absorb_redundant_nli: bool,
    /// The progress check of spec 7.3 (`check --no-give-up`): R14.3 never gives a bucket up,
    /// and a crashed server's restart is obligatory (the faults stop), so LIVE-PROGRESS decides
    /// whether every bucket reaches COMPLETED, or CANCELED after a cancel, without a give-up.
    /// The ages only R14.3 reads stay at 0, and `reconciles` stops where the backoff reaches its
    /// cap, so the graph stays finite without the give-up's bound.
    #[serde(default, skip_serializing_if = "is_false")]
    pub no_give_up: bool,
    /// A design Fluss proposes, not this spec's rule (apache/fluss#3869; spec/fluss-designs.md):
    /// a move ends with the plan's new leader. Phase B and R7.2 elect `new_leader` when it is live
    /// and in the ISR, and `final_state` also asks that the leader be `new_leader`, so completion
    /// waits for the new leader's own acknowledgement. Model only: the manager does not
    /// implement it, and conformance is not run on a configuration with it.
    #[serde(default, skip_serializing_if = "is_false")]
    pub planned_leader: bool,
    /// A design Fluss proposes (apache/fluss#3868; spec/fluss-designs.md, "Large plans outside
    /// ZooKeeper"): the plan lives in a remote plan storage and the task node holds a
    /// reference to it. R1 writes the plan object under its rebalance id, then the task node,
    /// then deletes superseded objects (a failure of that last write is ignored); R16 reads the
    /// reference, then the object. A failed object write may leave a partial object. Model only,
    /// like `planned_leader`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub remote_plan: bool,
    /// A failure Fluss met (apache/fluss#4335; spec/fluss-designs.md, "An oversized ZooKeeper
    /// node"): every failed store operation also costs the coordinator its session, so R17
    /// follows in the same step, with no coordinator crash budget spent; `budgets.store_failure`
    /// bounds how often. Model only.
    #[serde(default, skip_serializing_if = "is_false")]
    pub session_lost_on_store_failure: bool,
    /// Plan buckets modelled abstractly, as the rest of a larger plan (spec 9, "One bucket
    /// against the rest of the plan"): each keeps its status, attempt, events and deletion
    /// marker under the protocol's rules, but its metadata is only "at its origin" or "away",
    /// it sends and receives nothing, and `Rest` steps do what its own steps would do to what
    /// buckets share. Model only, like `planned_leader`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub abstract_buckets: Vec<BucketId>,
}

fn is_false(b: &bool) -> bool {
    !b
}

fn is_true(b: &bool) -> bool {
    *b
}

fn yes() -> bool {
    true
}

fn one() -> u8 {
    1
}

/// Why a configuration was refused. `field` names the offending field as a JSON path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// The file could not be read.
    Io { path: String, message: String },
    /// The file is not a configuration (serde's message names the field and line).
    Parse { path: String, message: String },
    /// A field has a value the model cannot use.
    Invalid { field: String, message: String },
    /// Something other than a JSON object where a configuration belongs; a string there is most
    /// likely a preset's name, which [`crate::config::presets::explain`] says more about.
    NotAnObject { found: serde_json::Value },
}

impl ConfigError {
    /// The offending field, when the error is about one.
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { field, .. } => Some(field),
            _ => None,
        }
    }
    fn invalid(field: impl Into<String>, message: impl Into<String>) -> ConfigError {
        ConfigError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Io { path, message } => write!(f, "cannot read {path}: {message}"),
            ConfigError::Parse { path, message } => write!(f, "{path}: {message}"),
            ConfigError::Invalid { field, message } if field.is_empty() => write!(f, "{message}"),
            ConfigError::Invalid { field, message } => write!(f, "field `{field}`: {message}"),
            ConfigError::NotAnObject { found } => {
                let found = match found {
                    serde_json::Value::String(s) => format!("the string {s:?}"),
                    other => other.to_string(),
                };
                write!(
                    f,
                    "expected a configuration object, found {found} (a preset's name is accepted \
                     by --config, not inside a file or trace)"
                )
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// A tick longer than `tick` in which every duration of `given` (ms) is a whole number of ticks
/// and at most [`MAX_DURATION_TICKS`] of them: their greatest common divisor with the tick, if
/// that is enough.
fn coarser_tick(given: &[u64], tick: u64) -> Option<u64> {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = given.iter().fold(0, |g, ms| gcd(g, *ms));
    let longest = given.iter().max()?;
    (g > tick && longest / g <= u64::from(MAX_DURATION_TICKS)).then_some(g)
}

impl Config {
    /// Reads and validates a JSON configuration (same fields as the presets; see
    /// `rebalance-model configs` and `spec/trace-format.md`).
    pub fn from_json_file(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        Config::from_json_str(&text).map_err(|e| match e {
            ConfigError::Parse { message, .. } => ConfigError::Parse {
                path: path.display().to_string(),
                message,
            },
            other => other,
        })
    }

    pub fn from_json_str(text: &str) -> Result<Config, ConfigError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ConfigError::Parse {
                path: "<json>".into(),
                message: e.to_string(),
            })?;
        Config::from_value(value)
    }

    /// A configuration from its JSON value: durations given in ms converted to ticks, then
    /// every field validated.
    pub fn from_value(value: serde_json::Value) -> Result<Config, ConfigError> {
        if !value.is_object() {
            return Err(ConfigError::NotAnObject { found: value });
        }
        let mut config: Config = serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let message = e.into_inner().to_string();
            if field == "." {
                ConfigError::Parse {
                    path: "<json>".into(),
                    message,
                }
            } else {
                ConfigError::invalid(field, message)
            }
        })?;
        config.durations_from_ms()?;
        config.validate()?;
        Ok(config)
    }

    pub fn bucket_count(&self) -> u8 {
        self.buckets.len() as u8
    }

    /// The tick length in ms.
    pub fn tick_ms(&self) -> u64 {
        self.check_interval_ms.unwrap_or(DEFAULT_CHECK_INTERVAL_MS)
    }

    /// Fills each `_ticks` duration given as `_ms` instead. A duration that is not a whole
    /// number of ticks is refused rather than rounded: the model and the manager would then
    /// time out at different instants.
    fn durations_from_ms(&mut self) -> Result<(), ConfigError> {
        let tick = self.tick_ms();
        if tick == 0 {
            return Err(ConfigError::invalid(
                "check_interval_ms",
                "must be at least 1",
            ));
        }
        let fields = [
            (
                "task_timeout",
                self.task_timeout_ms,
                &mut self.task_timeout_ticks,
            ),
            (
                "max_reconcile_backoff",
                self.max_reconcile_backoff_ms,
                &mut self.max_reconcile_backoff_ticks,
            ),
            (
                "target_unavailable_timeout",
                self.target_unavailable_timeout_ms,
                &mut self.target_unavailable_timeout_ticks,
            ),
            (
                "no_progress_timeout",
                self.no_progress_timeout_ms,
                &mut self.no_progress_timeout_ticks,
            ),
        ];
        // A coarser tick is suggested only when every duration is in ms (one in ticks would
        // change its meaning with the tick).
        let given: Vec<u64> = fields.iter().filter_map(|(_, ms, _)| *ms).collect();
        let given = if given.len() == fields.len() {
            given
        } else {
            Vec::new()
        };
        for (name, ms, ticks) in fields {
            let Some(ms) = ms else {
                if *ticks == 0 {
                    return Err(ConfigError::invalid(
                        format!("{name}_ticks"),
                        format!(
                            "missing or 0: give `{name}_ticks` (1..={MAX_DURATION_TICKS}) or \
                             `{name}_ms`"
                        ),
                    ));
                }
                continue;
            };
            let field = format!("{name}_ms");
            if ms % tick != 0 {
                return Err(ConfigError::invalid(
                    field,
                    format!(
                        "{ms} ms is not a whole number of ticks of {tick} ms (check_interval_ms)"
                    ),
                ));
            }
            let n = ms / tick;
            if n == 0 || n > u64::from(MAX_DURATION_TICKS) {
                return Err(ConfigError::invalid(
                    field,
                    format!(
                        "{ms} ms is {n} ticks; must be 1..={MAX_DURATION_TICKS} ticks (the model \
                         counts each age in ticks in its state){}",
                        coarser_tick(&given, tick)
                            .map(|g| format!(
                                "; a check_interval_ms of {g} keeps every duration given in ms \
                                 exact and within the limit (spec/trace-format.md, \"Durations \
                                 in milliseconds\", says what it gives up)"
                            ))
                            .unwrap_or_default()
                    ),
                ));
            }
            if *ticks != 0 && u64::from(*ticks) != n {
                return Err(ConfigError::invalid(
                    field,
                    format!("{ms} ms is {n} ticks but `{name}_ticks` says {ticks}"),
                ));
            }
            *ticks = n as u16;
        }
        Ok(())
    }

    /// Checks every constraint the model relies on; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.servers == 0 || usize::from(self.servers) > MAX_SERVERS {
            return Err(ConfigError::invalid(
                "servers",
                format!("must be in 1..={MAX_SERVERS}"),
            ));
        }
        if self.replication_factor == 0 || self.replication_factor > self.servers {
            return Err(ConfigError::invalid(
                "replication_factor",
                format!("must be in 1..={} (the number of servers)", self.servers),
            ));
        }
        // A replica list is stored inline at MAX_REPLICAS; the longest one is a union of an
        // origin and a target, at most twice the factor and at most every server.
        if usize::from(self.servers.min(2 * self.replication_factor)) > MAX_REPLICAS {
            return Err(ConfigError::invalid(
                "replication_factor",
                format!(
                    "with more than {MAX_REPLICAS} servers, at most {} (a union of two \
                     assignments must fit in {MAX_REPLICAS} replicas)",
                    MAX_REPLICAS / 2
                ),
            ));
        }
        if self.collect_superseded_nli && !self.collect_dead_messages {
            return Err(ConfigError::invalid(
                "collect_superseded_nli",
                "needs collect_dead_messages (a superseded Nli is one kind of dead message)",
            ));
        }
        if self.buckets.is_empty() {
            return Err(ConfigError::invalid(
                "buckets",
                "at least one bucket is needed",
            ));
        }
        if self.buckets.len() > MAX_BUCKETS {
            return Err(ConfigError::invalid(
                "buckets",
                format!("at most {MAX_BUCKETS} buckets"),
            ));
        }
        // Mid-migration a stored assignment may be a union (spec 2); only a preloaded task
        // can leave one.
        let union_allowed = self.store.as_ref().is_some_and(|s| s.task.is_some());
        for (b, bucket) in self.buckets.iter().enumerate() {
            let field = format!("buckets[{b}].assignment");
            if union_allowed {
                let rf = usize::from(self.replication_factor);
                let n = bucket.assignment.len();
                if n < rf || n > 2 * rf {
                    return Err(ConfigError::invalid(
                        field.as_str(),
                        format!(
                            "has {n} replicas; must be {rf}..={} (a union at most)",
                            2 * rf
                        ),
                    ));
                }
                self.check_servers(&field, &bucket.assignment)?;
            } else {
                self.check_replicas(&field, &bucket.assignment)?;
            }
            let isr = bucket.isr.as_deref().unwrap_or(&bucket.assignment);
            if let Some(given) = &bucket.isr {
                let field = format!("buckets[{b}].isr");
                self.check_servers(&field, given)?;
                if given.is_empty() {
                    return Err(ConfigError::invalid(field, "must not be empty"));
                }
                if let Some(j) = given.iter().position(|s| !bucket.assignment.contains(s)) {
                    return Err(ConfigError::invalid(
                        format!("{field}[{j}]"),
                        format!("server {} is not in the assignment", given[j]),
                    ));
                }
            }
            if !bucket.assignment.contains(&bucket.leader) || !isr.contains(&bucket.leader) {
                return Err(ConfigError::invalid(
                    format!("buckets[{b}].leader"),
                    format!(
                        "leader {} is not in the assignment and the ISR",
                        bucket.leader
                    ),
                ));
            }
        }
        if let Some(store) = &self.store {
            self.check_store(store)?;
        }
        self.check_targets("plan", &self.plan)?;
        if self.check_interval_ticks != 1 {
            return Err(ConfigError::invalid(
                "check_interval_ticks",
                "must be 1: one tick is one check interval (spec 9)",
            ));
        }
        for (field, value) in [
            ("task_timeout_ticks", self.task_timeout_ticks),
            (
                "max_reconcile_backoff_ticks",
                self.max_reconcile_backoff_ticks,
            ),
            (
                "target_unavailable_timeout_ticks",
                self.target_unavailable_timeout_ticks,
            ),
            ("no_progress_timeout_ticks", self.no_progress_timeout_ticks),
        ] {
            if value == 0 || value > MAX_DURATION_TICKS {
                return Err(ConfigError::invalid(
                    field,
                    format!("must be in 1..={MAX_DURATION_TICKS} ticks"),
                ));
            }
        }
        if self.max_tracked_timed_out == 0 {
            return Err(ConfigError::invalid(
                "max_tracked_timed_out",
                "must be at least 1 (spec 6)",
            ));
        }
        if usize::from(self.max_inflight) > MAX_BUCKETS {
            return Err(ConfigError::invalid(
                "max_inflight",
                format!("must be in 0..={MAX_BUCKETS}"),
            ));
        }
        self.check_abstract_buckets()
    }

    /// Whether bucket `b` is one of the abstract rest of the plan.
    pub fn is_abstract(&self, b: BucketId) -> bool {
        self.abstract_buckets.contains(&b)
    }

    /// Abstract buckets are plan buckets, each named once, and the configuration is one the
    /// argument of spec 9 covers: no preloaded store (an abstract bucket starts at its origin)
    /// and no deposed coordinator (whose steps on the rest's buckets are not abstracted).
    fn check_abstract_buckets(&self) -> Result<(), ConfigError> {
        for (i, b) in self.abstract_buckets.iter().enumerate() {
            let field = format!("abstract_buckets[{i}]");
            if !self.plan.iter().any(|t| t.bucket == *b) {
                return Err(ConfigError::invalid(
                    field,
                    format!("bucket {b} is not in the plan"),
                ));
            }
            if self.abstract_buckets[..i].contains(b) {
                return Err(ConfigError::invalid(
                    field,
                    format!("bucket {b} appears twice"),
                ));
            }
        }
        if self.abstract_buckets.is_empty() {
            return Ok(());
        }
        if self.store.is_some() {
            return Err(ConfigError::invalid(
                "abstract_buckets",
                "cannot be used with a preloaded `store` (an abstract bucket starts at its origin)",
            ));
        }
        if self.budgets.zombie_steps > 0 {
            return Err(ConfigError::invalid(
                "abstract_buckets",
                "cannot be used with `budgets.zombie_steps` (spec 9: the deposed coordinator's \
                 steps on abstract buckets are not abstracted)",
            ));
        }
        if self.planned_leader || self.remote_plan || self.session_lost_on_store_failure {
            return Err(ConfigError::invalid(
                "abstract_buckets",
                "cannot be used with `planned_leader`, `remote_plan` or \
                 `session_lost_on_store_failure`",
            ));
        }
        if self.budgets.register > 1 {
            return Err(ConfigError::invalid(
                "abstract_buckets",
                "cannot be used with a second register (`budgets.register` above 1): a later \
                 plan's origin is where the first left an abstract bucket, which is not one of \
                 its two canonical values",
            ));
        }
        Ok(())
    }

    fn check_store(&self, store: &StoreConfig) -> Result<(), ConfigError> {
        // The new incarnation's epoch is one above; epochs are u8.
        if store.coordinator_epoch == 0 || store.coordinator_epoch == Epoch::MAX {
            return Err(ConfigError::invalid(
                "store.coordinator_epoch",
                format!("must be in 1..={}", Epoch::MAX - 1),
            ));
        }
        let Some(task) = &store.task else {
            return Ok(());
        };
        if task.id == 0 || task.id == RebalanceId::MAX {
            return Err(ConfigError::invalid(
                "store.task.id",
                format!(
                    "must be in 1..={} (R1 numbers from 1)",
                    RebalanceId::MAX - 1
                ),
            ));
        }
        let mut seen = Vec::new();
        for (i, e) in task.plan.iter().enumerate() {
            let field = format!("store.task.plan[{i}]");
            self.check_plan_bucket(&format!("{field}.bucket"), e.bucket, &mut seen)?;
            self.check_replicas(&format!("{field}.ors"), &e.ors)?;
            self.check_replicas(&format!("{field}.trs"), &e.trs)?;
            if !e.ors.contains(&e.old_leader) {
                return Err(ConfigError::invalid(
                    format!("{field}.old_leader"),
                    format!("server {} is not in `ors`", e.old_leader),
                ));
            }
        }
        Ok(())
    }

    /// A plan's bucket: in range and not already in the plan.
    fn check_plan_bucket(
        &self,
        field: &str,
        bucket: BucketId,
        seen: &mut Vec<BucketId>,
    ) -> Result<(), ConfigError> {
        if bucket >= self.bucket_count() {
            return Err(ConfigError::invalid(
                field,
                format!(
                    "bucket {bucket} out of range ({} buckets)",
                    self.buckets.len()
                ),
            ));
        }
        if seen.contains(&bucket) {
            return Err(ConfigError::invalid(
                field,
                format!("bucket {bucket} appears twice in the plan"),
            ));
        }
        seen.push(bucket);
        Ok(())
    }

    /// A list of plan targets (the configuration's `plan`, or a `register` step's): each
    /// bucket in range and once, each target a valid replica list. `field` is the list's path.
    pub fn check_targets(&self, field: &str, targets: &[PlanTarget]) -> Result<(), ConfigError> {
        let mut seen = Vec::new();
        for (i, target) in targets.iter().enumerate() {
            self.check_plan_bucket(&format!("{field}[{i}].bucket"), target.bucket, &mut seen)?;
            self.check_replicas(&format!("{field}[{i}].target"), &target.target)?;
        }
        Ok(())
    }
    /// A `register` step's targets: what the model needs to build the plan (each bucket in
    /// range, each target `replication_factor` servers in range). A bucket named twice or a
    /// target naming a server twice is a plan R1 refuses, not a malformed trace.
    pub fn check_register_targets(
        &self,
        field: &str,
        targets: &[PlanTarget],
    ) -> Result<(), ConfigError> {
        for (i, target) in targets.iter().enumerate() {
            self.check_plan_bucket(
                &format!("{field}[{i}].bucket"),
                target.bucket,
                &mut Vec::new(),
            )?;
            let field = format!("{field}[{i}].target");
            self.check_replica_count(&field, &target.target)?;
            self.check_server_range(&field, &target.target)?;
        }
        Ok(())
    }

    fn check_replicas(&self, field: &str, replicas: &[ServerId]) -> Result<(), ConfigError> {
        self.check_replica_count(field, replicas)?;
        self.check_servers(field, replicas)
    }

    fn check_replica_count(&self, field: &str, replicas: &[ServerId]) -> Result<(), ConfigError> {
        if replicas.len() != self.replication_factor as usize {
            return Err(ConfigError::invalid(
                field,
                format!(
                    "has {} replicas but replication_factor is {}",
                    replicas.len(),
                    self.replication_factor
                ),
            ));
        }
        Ok(())
    }

    fn check_server_range(&self, field: &str, replicas: &[ServerId]) -> Result<(), ConfigError> {
        match replicas.iter().position(|s| *s >= self.servers) {
            Some(j) => Err(ConfigError::invalid(
                format!("{field}[{j}]"),
                format!(
                    "server {} out of range ({} servers)",
                    replicas[j], self.servers
                ),
            )),
            None => Ok(()),
        }
    }

    /// Every server in range and none twice.
    fn check_servers(&self, field: &str, replicas: &[ServerId]) -> Result<(), ConfigError> {
        self.check_server_range(field, replicas)?;
        for (j, s) in replicas.iter().enumerate() {
            if replicas[..j].contains(s) {
                return Err(ConfigError::invalid(
                    format!("{field}[{j}]"),
                    format!("server {s} appears twice"),
                ));
            }
        }
        Ok(())
    }
}
