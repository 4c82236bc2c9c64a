//! The model's configuration: the knobs of spec section 6 in ticks, the cluster, the plan targets
//! and a budget per fault kind (spec section 9).

use crate::types::{BucketId, ServerId, ServerSet};
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

fn is_zero(n: &u8) -> bool {
    *n == 0
}

/// The initial state of one bucket.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BucketConfig {
    /// Initial replica list; its length is the replication factor.
    pub assignment: Vec<ServerId>,
    /// Initial leader, a member of `assignment`. The initial ISR is the whole assignment.
    pub leader: ServerId,
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

/// Everything that fixes one model instance. Durations are in ticks; one tick is
/// `check_interval_ms` (spec 6, 9).
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
    pub task_timeout_ticks: u8,
    /// Always 1: a tick is one check interval by definition (spec 9).
    #[serde(default = "one")]
    pub check_interval_ticks: u8,
    pub max_reconcile_backoff_ticks: u8,
    pub target_unavailable_timeout_ticks: u8,
    pub no_progress_timeout_ticks: u8,
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
}

fn is_false(b: &bool) -> bool {
    !b
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
            ConfigError::Invalid { field, message } => write!(f, "field `{field}`: {message}"),
        }
    }
}

impl std::error::Error for ConfigError {}

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
        let config: Config = serde_json::from_str(text).map_err(|e| ConfigError::Parse {
            path: "<json>".into(),
            message: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    pub fn bucket_count(&self) -> u8 {
        self.buckets.len() as u8
    }

    /// Checks every constraint the model relies on; the error names the first bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.servers == 0 || self.servers > 8 {
            return Err(ConfigError::invalid("servers", "must be in 1..=8"));
        }
        if self.replication_factor == 0 || self.replication_factor > self.servers {
            return Err(ConfigError::invalid(
                "replication_factor",
                format!("must be in 1..={} (the number of servers)", self.servers),
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
        if self.buckets.len() > 8 {
            return Err(ConfigError::invalid("buckets", "at most 8 buckets"));
        }
        for (b, bucket) in self.buckets.iter().enumerate() {
            let field = format!("buckets[{b}].assignment");
            self.check_replicas(&field, &bucket.assignment)?;
            if !bucket.assignment.contains(&bucket.leader) {
                return Err(ConfigError::invalid(
                    format!("buckets[{b}].leader"),
                    format!("leader {} is not in the assignment", bucket.leader),
                ));
            }
        }
        let mut seen = ServerSet::EMPTY;
        for (i, target) in self.plan.iter().enumerate() {
            if target.bucket >= self.bucket_count() {
                return Err(ConfigError::invalid(
                    format!("plan[{i}].bucket"),
                    format!(
                        "bucket {} out of range ({} buckets)",
                        target.bucket,
                        self.buckets.len()
                    ),
                ));
            }
            if seen.contains(target.bucket) {
                return Err(ConfigError::invalid(
                    format!("plan[{i}].bucket"),
                    format!("bucket {} appears twice in the plan", target.bucket),
                ));
            }
            seen.insert(target.bucket);
            self.check_replicas(&format!("plan[{i}].target"), &target.target)?;
        }
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
            if value == 0 || value > 16 {
                return Err(ConfigError::invalid(field, "must be in 1..=16 ticks"));
            }
        }
        if self.max_tracked_timed_out == 0 {
            return Err(ConfigError::invalid(
                "max_tracked_timed_out",
                "must be at least 1 (spec 6)",
            ));
        }
        if self.max_inflight > 8 {
            return Err(ConfigError::invalid("max_inflight", "must be in 0..=8"));
        }
        Ok(())
    }

    fn check_replicas(&self, field: &str, replicas: &[ServerId]) -> Result<(), ConfigError> {
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
        for (j, s) in replicas.iter().enumerate() {
            if *s >= self.servers {
                return Err(ConfigError::invalid(
                    format!("{field}[{j}]"),
                    format!("server {s} out of range ({} servers)", self.servers),
                ));
            }
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
