//! Command-line numbers both examples take the same way, shared by `#[path]` as
//! `cluster_plan.rs` is: a seed in decimal or 0x-hex, and counts within a range, each refused
//! with the range it expected, in clap's usage errors (exit 2).

/// A seed: decimal, or hexadecimal after `0x` (as the runs print it, so a printed seed can be
/// pasted back).
pub(crate) fn seed(v: &str) -> Result<u64, String> {
    match v.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => v.parse(),
    }
    .map_err(|_| "not a number (decimal, or hex after 0x)".to_string())
}

/// A parser of whole numbers from `lo` to `hi`, inclusive, saying both in its error.
pub(crate) fn within<T>(lo: T, hi: T) -> impl Fn(&str) -> Result<T, String> + Clone
where
    T: std::str::FromStr + PartialOrd + std::fmt::Display + Copy + Send + Sync + 'static,
{
    move |v: &str| {
        v.parse::<T>()
            .ok()
            .filter(|n| *n >= lo && *n <= hi)
            .ok_or_else(|| format!("expected {lo} to {hi}"))
    }
}

/// A count from 1 (the Nth operation, the Nth batch): 0 names nothing.
pub(crate) fn count_from_one(v: &str) -> Result<u64, String> {
    v.parse::<u64>()
        .ok()
        .filter(|n| *n >= 1)
        .ok_or_else(|| "expected a count from 1".to_string())
}
