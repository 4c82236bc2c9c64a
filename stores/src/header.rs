//! The layout header both durable stores begin with.

/// What is wrong with a persisted layout header (`{"format": .., "version": .., ..}`), the first
/// thing both durable stores read: one check, so a store of another format or a newer version is
/// refused the same way everywhere and never overwritten.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeaderFault {
    /// The `format` field is missing or names another format.
    NotOurs,
    /// No numeric `version` field.
    NoVersion,
    /// A version this build does not read.
    Unsupported(u64),
}

/// Checks a layout header's `format` and `version` fields against the store's own.
pub(crate) fn check_header(
    header: &serde_json::Value,
    format: &str,
    version: u64,
) -> Result<(), HeaderFault> {
    if header.get("format").and_then(|f| f.as_str()) != Some(format) {
        return Err(HeaderFault::NotOurs);
    }
    match header.get("version").and_then(|v| v.as_u64()) {
        None => Err(HeaderFault::NoVersion),
        Some(v) if v != version => Err(HeaderFault::Unsupported(v)),
        Some(_) => Ok(()),
    }
}
