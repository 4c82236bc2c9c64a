//! Decoding a driver line with the path of every field, so that a malformed line is reported as
//! `field input.context.exec_key.rid: expected an unsigned integer, found "1"` and never as a
//! position in the text. This walks a parsed [`Value`]: [`Decode`] for each type, and the macros
//! `wire_struct!`, `wire_tagged!` and `wire_names!`, with which `lib.rs` defines each
//! type of the protocol from one list of its fields, so that its encoding (serde's derived
//! `Serialize`), the names its decoder allows and the fields it reads cannot disagree.
//!
//! # Why not serde's derived `Deserialize`
//!
//! It would be less code, and it cannot keep the protocol's promises (spec/driver-protocol.md:
//! an error names the field, unknown fields are refused). The requests, inputs, effects, events
//! and replies are internally tagged enums (`{"op": "input", ...}`, `{"type": "tick"}`), and
//! serde decodes those by buffering the object into its private `Content` before it knows the
//! variant, so an error inside one comes from the buffer: no path and no position. Checked with
//! serde 1.0.229, serde_json 1.0.154 and serde_path_to_error 0.1.20, on a `Request` and `Input`
//! shaped like ours with `deny_unknown_fields` everywhere:
//!
//! - `{"op":"input",...,"input":{"type":"nli_response",...,"exec_key":{"rid":"1",...}}}`:
//!   serde_json says `invalid type: string "1", expected u64`, with no line or column (it gives
//!   them for plain structs, and only them); serde_path_to_error, which finds
//!   `input.context.exec_key.rid` when the same nesting is plain structs, says the path is `.`.
//!   A 33-bit server id, an unknown field or an unknown tag inside a tagged enum: the same, path
//!   `.`.
//! - `{"op":"state","zz":1}` and `{"type":"tick","zz":1}`: accepted; `deny_unknown_fields`
//!   does not reach the unit variants of an internally tagged enum.
//!
//! So a derive would need an untagged shim or a custom deserializer per enum anyway, and would
//! print serde's texts (`invalid type: ...`) where the protocol and its tests have these. Do
//! not replace this module with a derive without a test that every error names its path (the
//! round-trip tests in `wire/tests/round_trip.rs` check every field of every message).

use std::fmt;

use serde_json::{Map, Value};

/// A malformed driver line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// The line is not one JSON value.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// A required field is absent.
    #[error("field `{path}`: missing")]
    Missing {
        /// Where, e.g. `input.msg.bucket`.
        path: String,
    },
    /// A field the protocol does not define.
    #[error("field `{path}`: unknown field")]
    Unknown {
        /// Where.
        path: String,
    },
    /// A value of the wrong JSON type or out of range.
    #[error("field `{path}`: expected {expected}, found {found}")]
    Type {
        /// Where (`(line)` for the whole line).
        path: String,
        /// What the protocol wants there.
        expected: &'static str,
        /// What the line has, abbreviated.
        found: String,
    },
    /// A tag (`op`, `type`, a status) that is not one of the protocol's names.
    #[error("field `{path}`: unknown value {found}; expected one of {expected}")]
    Variant {
        /// Where.
        path: String,
        /// The names the protocol defines there.
        expected: String,
        /// What the line has.
        found: String,
    },
}

impl WireError {
    /// The field path the error names (`(line)` for the whole line).
    pub fn path(&self) -> &str {
        match self {
            WireError::NotJson(_) => "(line)",
            WireError::Missing { path }
            | WireError::Unknown { path }
            | WireError::Type { path, .. }
            | WireError::Variant { path, .. } => path,
        }
    }
}

/// Where a value sits in the line, rendered only when an error needs it.
#[derive(Clone, Copy)]
pub enum Path<'a> {
    /// The whole line.
    Root,
    /// A field of an object.
    Field(&'a Path<'a>, &'a str),
    /// An element of a list.
    Index(&'a Path<'a>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => f.write_str("(line)"),
            Path::Field(Path::Root, k) => f.write_str(k),
            Path::Field(p, k) => write!(f, "{p}.{k}"),
            Path::Index(p, i) => write!(f, "{p}[{i}]"),
        }
    }
}

impl<'a> Path<'a> {
    /// The path of field `key` below this one.
    pub fn field(&'a self, key: &'a str) -> Path<'a> {
        Path::Field(self, key)
    }
}

fn found(v: &Value) -> String {
    let mut s = v.to_string();
    if s.len() > 40 {
        let mut end = 37;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
        s.push_str("...");
    }
    s
}

/// A type error at `p`.
pub fn type_error(p: &Path, expected: &'static str, v: &Value) -> WireError {
    WireError::Type {
        path: p.to_string(),
        expected,
        found: found(v),
    }
}

/// A value decodable at a path.
pub trait Decode: Sized {
    /// Decodes `v`, found at `p`.
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError>;

    /// The value of an absent field: an error, except for optional fields.
    fn absent(p: &Path) -> Result<Self, WireError> {
        Err(WireError::Missing {
            path: p.to_string(),
        })
    }
}

impl Decode for u64 {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        v.as_u64()
            .ok_or_else(|| type_error(p, "an unsigned integer", v))
    }
}

impl Decode for u32 {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        v.as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| type_error(p, "an unsigned 32-bit integer", v))
    }
}

impl Decode for bool {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        v.as_bool().ok_or_else(|| type_error(p, "true or false", v))
    }
}

impl Decode for String {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| type_error(p, "a string", v))
    }
}

impl<T: Decode> Decode for Vec<T> {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        let items = v.as_array().ok_or_else(|| type_error(p, "a list", v))?;
        items
            .iter()
            .enumerate()
            .map(|(i, x)| T::decode(x, &Path::Index(p, i)))
            .collect()
    }
}

/// Any JSON object, kept as it is (a log header's model configuration, which its own loader
/// reads).
impl Decode for Map<String, Value> {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        v.as_object()
            .cloned()
            .ok_or_else(|| type_error(p, "an object", v))
    }
}

/// `null` or absent is none.
impl<T: Decode> Decode for Option<T> {
    fn decode(v: &Value, p: &Path) -> Result<Self, WireError> {
        match v {
            Value::Null => Ok(None),
            v => T::decode(v, p).map(Some),
        }
    }

    fn absent(_: &Path) -> Result<Self, WireError> {
        Ok(None)
    }
}

/// `v` as an object whose fields are all in `allowed`.
pub fn object<'v>(
    v: &'v Value,
    p: &Path,
    allowed: &[&str],
) -> Result<&'v Map<String, Value>, WireError> {
    let m = v.as_object().ok_or_else(|| type_error(p, "an object", v))?;
    if let Some(k) = m.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(WireError::Unknown {
            path: p.field(k).to_string(),
        });
    }
    Ok(m)
}

/// Field `key` of `m` (at `p`), decoded.
pub fn get<T: Decode>(m: &Map<String, Value>, key: &str, p: &Path) -> Result<T, WireError> {
    let at = p.field(key);
    match m.get(key) {
        Some(v) => T::decode(v, &at),
        None => T::absent(&at),
    }
}

/// The string tag `key` of `m`, checked against `names`.
pub fn tag<'v>(
    m: &'v Map<String, Value>,
    key: &str,
    p: &Path,
    names: &[&str],
) -> Result<&'v str, WireError> {
    let at = p.field(key);
    let v = m.get(key).ok_or_else(|| WireError::Missing {
        path: at.to_string(),
    })?;
    let s = v.as_str().ok_or_else(|| type_error(&at, "a string", v))?;
    if names.contains(&s) {
        Ok(s)
    } else {
        Err(WireError::Variant {
            path: at.to_string(),
            expected: names.join(", "),
            found: found(v),
        })
    }
}

/// A unit name (a status, an error kind) from a table of `(name, value)`.
pub fn name<T: Copy>(v: &Value, p: &Path, table: &[(&str, T)]) -> Result<T, WireError> {
    let s = v.as_str().ok_or_else(|| type_error(p, "a string", v))?;
    table
        .iter()
        .find(|(n, _)| *n == s)
        .map(|(_, x)| *x)
        .ok_or_else(|| WireError::Variant {
            path: p.to_string(),
            expected: table.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", "),
            found: found(v),
        })
}

/// Defines a struct of the protocol from one list of fields, and its [`Decode`]: the encoding
/// (serde's derived `Serialize`, under the Rust names), the fields the decoder reads and the
/// names it allows are all written once, here, so none can be added to one and forgotten in
/// another.
///
/// ```text
/// wire_struct! {
///     /// An execution key (spec 3.2).
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub struct Key {
///         pub rid: u64,
///         pub bucket: u32,
///     }
/// }
/// ```
///
/// The decoder refuses a field not in the list (naming it), then reads the fields in their
/// order, each at its path, so the first error named is the first field in the list that is
/// wrong. A field is optional only by its type (`Option<T>`: absent or `null` is `None`, see
/// [`Decode::absent`]). `name: String as one_of(NAMES)` reads a string that must be one of
/// `NAMES` (a reason the protocol lists). Only doc comments and one `derive` (without
/// `Serialize`, which the macro adds) are accepted on the struct, and only doc comments on a
/// field: a serde attribute that renamed or skipped a field would make the encoding disagree
/// with the decoder, so the macro gives it no place.
macro_rules! wire_struct {
    (
        $(#[doc = $doc:literal])*
        #[derive($($derive:ident),* $(,)?)]
        pub struct $name:ident {
            $(
                $(#[doc = $field_doc:literal])*
                pub $field:ident: $ty:ty $(as one_of($names:expr))?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive,)* ::serde::Serialize)]
        pub struct $name {
            $(
                $(#[doc = $field_doc])*
                pub $field: $ty,
            )*
        }

        impl $crate::decode::Decode for $name {
            fn decode(
                v: &::serde_json::Value,
                p: &$crate::decode::Path,
            ) -> Result<Self, $crate::decode::WireError> {
                let fields = $crate::decode::object(v, p, &[$(stringify!($field)),*])?;
                Ok($name {
                    $($field: $crate::decode::read_field!(fields, p, $field $(, $names)?),)*
                })
            }
        }
    };
}
pub(crate) use wire_struct;

/// Defines an enum of the protocol tagged with a field (`op`, `type`, `kind`) from one list of
/// variants, each with its name on the wire and its fields, and its [`Decode`]:
///
/// ```text
/// wire_tagged! {
///     /// A coordinator event (spec 3.2), tagged with `type` as in the trace format.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     #[tag = "type"]
///     pub enum Event {
///         "timeout" => Timeout { key: Key },
///         "finalize" => Finalize { rid: u64 },
///         "recover" => Recover,
///     }
/// }
/// ```
///
/// The enum is encoded as serde encodes an internally tagged enum (`#[serde(tag = ...)]`, each
/// variant renamed to its name here). The decoder checks the tag first (missing, not a string,
/// or not one of the names, which the error lists in this order), then refuses a field the
/// variant does not have, then reads the variant's fields as [`wire_struct!`] does; the fields
/// take the same forms. The enum also gets `tag()`, the name of a value's variant.
macro_rules! wire_tagged {
    (
        $(#[doc = $doc:literal])*
        #[derive($($derive:ident),* $(,)?)]
        #[tag = $tag:literal]
        pub enum $name:ident {
            $(
                $(#[doc = $variant_doc:literal])*
                $wire:literal => $variant:ident $({
                    $(
                        $(#[doc = $field_doc:literal])*
                        $field:ident: $ty:ty $(as one_of($names:expr))?
                    ),* $(,)?
                })?
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive,)* ::serde::Serialize)]
        #[serde(tag = $tag)]
        pub enum $name {
            $(
                $(#[doc = $variant_doc])*
                #[serde(rename = $wire)]
                $variant $({
                    $(
                        $(#[doc = $field_doc])*
                        $field: $ty,
                    )*
                })?,
            )*
        }

        impl $name {
            #[doc = concat!("The value's `", $tag, "`, its variant's name on the wire.")]
            pub fn tag(&self) -> &'static str {
                match self {
                    $($name::$variant { .. } => $wire,)*
                }
            }
        }

        impl $crate::decode::Decode for $name {
            fn decode(
                v: &::serde_json::Value,
                p: &$crate::decode::Path,
            ) -> Result<Self, $crate::decode::WireError> {
                let m = v
                    .as_object()
                    .ok_or_else(|| $crate::decode::type_error(p, "an object", v))?;
                let name = $crate::decode::tag(m, $tag, p, &[$($wire),*])?;
                $(
                    if name == $wire {
                        #[allow(unused_variables)] // by a variant without fields
                        let fields =
                            $crate::decode::object(v, p, &[$tag $($(, stringify!($field))*)?])?;
                        return Ok($name::$variant {$($(
                            $field: $crate::decode::read_field!(fields, p, $field $(, $names)?),
                        )*)?});
                    }
                )*
                unreachable!("`tag` answers only one of the names it is given")
            }
        }
    };
}
pub(crate) use wire_tagged;

/// Defines an enum of the protocol's unit names (a status, a mode) from one list of its names on
/// the wire, and its [`Decode`] (by [`name`], whose error lists the names in this order):
///
/// ```text
/// wire_names! {
///     /// Whether an attempt is running (REBALANCING) or tracked (TIMEOUT).
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum Mode {
///         "running" => Running,
///         "tracked" => Tracked,
///     }
/// }
/// ```
macro_rules! wire_names {
    (
        $(#[doc = $doc:literal])*
        #[derive($($derive:ident),* $(,)?)]
        pub enum $name:ident {
            $(
                $(#[doc = $variant_doc:literal])*
                $wire:literal => $variant:ident
            ),* $(,)?
        }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive,)* ::serde::Serialize)]
        pub enum $name {
            $(
                $(#[doc = $variant_doc])*
                #[serde(rename = $wire)]
                $variant,
            )*
        }

        impl $name {
            /// The name on the wire, as the spec writes it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)*
                }
            }
        }

        impl $crate::decode::Decode for $name {
            fn decode(
                v: &::serde_json::Value,
                p: &$crate::decode::Path,
            ) -> Result<Self, $crate::decode::WireError> {
                $crate::decode::name(v, p, &[$(($wire, $name::$variant)),*])
            }
        }
    };
}
pub(crate) use wire_names;

/// One field of the macros above, read from `fields` at `p`.
macro_rules! read_field {
    ($fields:ident, $p:ident, $field:ident) => {
        $crate::decode::get($fields, stringify!($field), $p)?
    };
    ($fields:ident, $p:ident, $field:ident, $names:expr) => {
        $crate::decode::tag($fields, stringify!($field), $p, $names)?.to_string()
    };
}
pub(crate) use read_field;

/// Parses one line and decodes it.
pub fn line<T: Decode>(text: &str) -> Result<T, WireError> {
    let v: Value = serde_json::from_str(text).map_err(|e| WireError::NotJson(e.to_string()))?;
    T::decode(&v, &Path::Root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_render_as_dotted_fields_and_indices() {
        let root = Path::Root;
        let a = root.field("input");
        let b = Path::Index(&a, 2);
        let c = b.field("rid");
        assert_eq!(c.to_string(), "input[2].rid");
        assert_eq!(root.to_string(), "(line)");
    }

    #[test]
    fn a_long_value_is_abbreviated_in_the_error() {
        let v = Value::String("x".repeat(100));
        let e = type_error(&Path::Root, "a number", &v);
        let WireError::Type { found, .. } = e else {
            panic!("type error expected")
        };
        assert_eq!(found.len(), 40);
        assert!(found.ends_with("..."));
    }
}
