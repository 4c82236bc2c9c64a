//! Configuration knobs and defaults of spec section 6.

use serde::{Deserialize, Serialize};

/// The manager's configuration (spec 6). Build with [`Config::default`] and struct update syntax,
/// then [`Config::validate`], or parse JSON with [`Config::from_json`] (which validates).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// A running attempt older than this times out (R13, R23.1).
    pub task_timeout_ms: u64,
    /// Checker period, reconcile backoff base, finalize/recover retry period (R23).
    pub check_interval_ms: u64,
    /// Reconcile backoff cap (R14.4).
    pub max_reconcile_backoff_ms: u64,
    /// Give up when a target server stays down this long without progress (R14.3).
    pub target_unavailable_timeout_ms: u64,
    /// Give up when `observed` has not changed this long (R14.3).
    pub no_progress_timeout_ms: u64,
    /// Admission pauses while this many attempts are tracked (R3); at least 1.
    pub max_tracked_timed_out: usize,
    /// Normal execution slots (R3, D14); 0 pauses admission.
    pub max_inflight: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            task_timeout_ms: 120_000,
            check_interval_ms: 30_000,
            max_reconcile_backoff_ms: 300_000,
            target_unavailable_timeout_ms: 1_800_000,
            no_progress_timeout_ms: 86_400_000,
            max_tracked_timed_out: 8,
            max_inflight: 1,
        }
    }
}

/// A rejected configuration; each variant names the offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A duration knob is zero; every duration must be positive.
    #[error("config field `{field}` must be a positive duration (ms)")]
    NotPositive {
        /// The field's name.
        field: &'static str,
    },
    /// A count knob is below its minimum.
    #[error("config field `{field}` must be at least {min}")]
    TooSmall {
        /// The field's name.
        field: &'static str,
        /// The smallest accepted value.
        min: u64,
    },
    /// The JSON text is not a configuration (syntax, type or unknown field).
    #[error("config is not valid JSON for this schema: {0}")]
    Parse(String),
}

impl Config {
    /// Checks every knob against spec 6; the first offending field is named.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let durations = [
            ("task_timeout_ms", self.task_timeout_ms),
            ("check_interval_ms", self.check_interval_ms),
            ("max_reconcile_backoff_ms", self.max_reconcile_backoff_ms),
            (
                "target_unavailable_timeout_ms",
                self.target_unavailable_timeout_ms,
            ),
            ("no_progress_timeout_ms", self.no_progress_timeout_ms),
        ];
        for (field, value) in durations {
            if value == 0 {
                return Err(ConfigError::NotPositive { field });
            }
        }
        if self.max_tracked_timed_out < 1 {
            return Err(ConfigError::TooSmall {
                field: "max_tracked_timed_out",
                min: 1,
            });
        }
        // max_inflight >= 0 holds by type; 0 is the documented pause (D14).
        Ok(())
    }

    /// Parses a JSON object (missing fields take their defaults) and validates it.
    pub fn from_json(text: &str) -> Result<Config, ConfigError> {
        let config: Config =
            serde_json::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// `backoff(n) = min(check_interval_ms * 2^min(n, 8), max_reconcile_backoff_ms)` (spec 4).
    pub fn backoff_ms(&self, n: u32) -> u64 {
        let factor = 1u64 << n.min(8);
        self.check_interval_ms
            .saturating_mul(factor)
            .min(self.max_reconcile_backoff_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_spec_table() {
        let c = Config::default();
        assert_eq!(
            (
                c.task_timeout_ms,
                c.check_interval_ms,
                c.max_reconcile_backoff_ms
            ),
            (120_000, 30_000, 300_000)
        );
        assert_eq!(
            (c.target_unavailable_timeout_ms, c.no_progress_timeout_ms),
            (1_800_000, 86_400_000)
        );
        assert_eq!((c.max_tracked_timed_out, c.max_inflight), (8, 1));
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn validation_names_the_field() {
        let c = Config {
            no_progress_timeout_ms: 0,
            ..Config::default()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::NotPositive {
                field: "no_progress_timeout_ms"
            })
        );
        let c = Config {
            max_tracked_timed_out: 0,
            ..Config::default()
        };
        assert_eq!(
            c.validate(),
            Err(ConfigError::TooSmall {
                field: "max_tracked_timed_out",
                min: 1
            })
        );
        assert_eq!(
            Config {
                max_inflight: 0,
                ..Config::default()
            }
            .validate(),
            Ok(())
        );
    }

    #[test]
    fn json_fills_defaults_and_validates() {
        let c = Config::from_json(r#"{"max_inflight": 2}"#).unwrap();
        assert_eq!(
            c,
            Config {
                max_inflight: 2,
                ..Config::default()
            }
        );
        assert_eq!(
            Config::from_json(r#"{"task_timeout_ms": 0}"#),
            Err(ConfigError::NotPositive {
                field: "task_timeout_ms"
            })
        );
        assert!(matches!(
            Config::from_json(r#"{"bogus": 1}"#),
            Err(ConfigError::Parse(_))
        ));
        let round = serde_json::to_string(&Config::default()).unwrap();
        assert_eq!(Config::from_json(&round), Ok(Config::default()));
    }

    #[test]
    fn backoff_doubles_then_caps() {
        let c = Config::default();
        let seq: Vec<u64> = (0..6).map(|n| c.backoff_ms(n)).collect();
        assert_eq!(
            seq,
            vec![30_000, 60_000, 120_000, 240_000, 300_000, 300_000]
        );
        assert_eq!(c.backoff_ms(u32::MAX), 300_000);
    }
}
