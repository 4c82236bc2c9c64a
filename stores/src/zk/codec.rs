//! The ZooKeeper node layout and the format of each node's data (spec/fluss-mapping.md,
//! "ZooKeeper node layout of ZkStore").
//!
//! Every node below the root holds `{"version":1,"data":...}`; the version is checked before the
//! data is decoded, so a node written by a newer build is refused with
//! [`StoreError::UnsupportedVersion`] rather than misread. The root holds the layout header.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use rebalance_manager::store::StoreError;
use rebalance_manager::{BucketId, PlanEntry, RebalanceId, TaskStatus};

/// The format name in the root node's header.
pub const FORMAT: &str = "fluss-rebalance-zk";
/// The node format version this build writes and reads.
pub const VERSION: u64 = 1;
/// The largest plan chunk, in bytes of JSON. ZooKeeper refuses a request over `jute.maxbuffer`
/// (1 MiB by default), so a large plan is written as several chunk nodes.
pub const PLAN_CHUNK_BYTES: usize = 256 * 1024;

/// The root node's data: what the layout below it is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RootHeader {
    /// Always [`FORMAT`].
    pub format: String,
    /// The layout version, [`VERSION`].
    pub version: u64,
    /// Buckets per page node under `buckets/` (fixed when the store is created).
    pub bucket_page: u32,
    /// The epoch stored at creation: the epoch node's data version is `epoch - epoch_base`.
    #[serde(default)]
    pub epoch_base: u64,
}

/// `task`: the task node proper; the plan is in chunk nodes under `plans/<plan>/`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskHeader {
    /// The rebalance id.
    pub id: RebalanceId,
    /// The persisted task status.
    pub status: TaskStatus,
    /// The persisted cancel intent (R2).
    pub cancel_requested: bool,
    /// Where the plan is and how to verify it.
    pub plan: PlanRef,
}

/// A reference from the task node to its plan's chunk nodes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanRef {
    /// The plan directory's name under `plans/` (a sequential node, so never reused).
    pub dir: String,
    /// Number of plan entries.
    pub entries: usize,
    /// Number of chunk nodes, named `000000`, `000001`, ...
    pub chunks: usize,
    /// CRC-32 of the chunk nodes' data, concatenated in order.
    pub crc32: u32,
}

/// One plan chunk: entries in admission order.
pub type PlanChunk = Vec<(BucketId, PlanEntry)>;

/// `deleted` markers carry no data beyond the envelope.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeletedMarker {}

/// `coordinator_epoch`: the epoch; the node's data version always equals it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EpochNode {
    /// The current coordinator epoch.
    pub epoch: u64,
}

#[derive(Serialize)]
struct EnvelopeOut<'a, T> {
    version: u64,
    data: &'a T,
}

/// Encodes `data` in the versioned envelope.
pub fn encode<T: Serialize>(data: &T) -> Vec<u8> {
    serde_json::to_vec(&EnvelopeOut {
        version: VERSION,
        data,
    })
    .expect("store nodes always serialize")
}

/// Decodes a versioned envelope read from `node`.
pub fn decode<T: DeserializeOwned>(node: &str, bytes: &[u8]) -> Result<T, StoreError> {
    let corrupt = |detail: String| StoreError::Corrupt {
        node: node.to_string(),
        detail,
    };
    let mut value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| corrupt(format!("not JSON: {e}")))?;
    let version = value
        .get("version")
        .and_then(|v| v.as_u64())
        .ok_or_else(|| corrupt("no format version".into()))?;
    if version != VERSION {
        return Err(StoreError::UnsupportedVersion {
            node: node.to_string(),
            version,
        });
    }
    let data = value
        .get_mut("data")
        .map(serde_json::Value::take)
        .ok_or_else(|| corrupt("no data field".into()))?;
    serde_json::from_value(data).map_err(|e| corrupt(e.to_string()))
}

/// Paths of one store's nodes under its root.
#[derive(Clone, Debug)]
pub struct Paths {
    /// The root, e.g. `/fluss-rebalance`.
    pub root: String,
    /// Buckets per page node.
    pub bucket_page: u32,
}

impl Paths {
    /// `<root>/coordinator_epoch`.
    pub fn epoch(&self) -> String {
        format!("{}/coordinator_epoch", self.root)
    }

    /// `<root>/task`.
    pub fn task(&self) -> String {
        format!("{}/task", self.root)
    }

    /// `<root>/plans`.
    pub fn plans(&self) -> String {
        format!("{}/plans", self.root)
    }

    /// `<root>/plans/<dir>/<i>`.
    pub fn plan_chunk(&self, dir: &str, i: usize) -> String {
        format!("{}/plans/{dir}/{i:06}", self.root)
    }

    /// `<root>/buckets`.
    pub fn buckets(&self) -> String {
        format!("{}/buckets", self.root)
    }

    /// The page node of bucket `b`: `<root>/buckets/p<b / bucket_page>`.
    pub fn page_of(&self, b: BucketId) -> String {
        format!("{}/buckets/p{}", self.root, b / self.bucket_page)
    }

    /// Bucket `b`'s node (assignment and LeaderAndIsr together, D15):
    /// `<root>/buckets/p<page>/<b>`.
    pub fn bucket(&self, b: BucketId) -> String {
        format!("{}/{b}", self.page_of(b))
    }

    /// Bucket `b`'s deleted marker: `<root>/buckets/p<page>/d<b>`.
    pub fn deleted(&self, b: BucketId) -> String {
        format!("{}/d{b}", self.page_of(b))
    }
}

/// What a child of a page node is.
pub enum PageChild {
    /// A bucket record node.
    Bucket(BucketId),
    /// A deleted marker.
    Deleted(BucketId),
}

/// Parses a page node's child name.
pub fn page_child(name: &str) -> Option<PageChild> {
    match name.strip_prefix('d') {
        Some(rest) => rest.parse().ok().map(PageChild::Deleted),
        None => name.parse().ok().map(PageChild::Bucket),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envelope_round_trip_and_newer_version_refused() {
        let bytes = encode(&EpochNode { epoch: 7 });
        assert_eq!(
            decode::<EpochNode>("/e", &bytes).unwrap(),
            EpochNode { epoch: 7 }
        );
        let newer = br#"{"version":2,"data":{"epoch":7}}"#;
        assert_eq!(
            decode::<EpochNode>("/e", newer),
            Err(StoreError::UnsupportedVersion {
                node: "/e".into(),
                version: 2
            })
        );
        assert!(matches!(
            decode::<EpochNode>("/e", b"{\"version\":1"),
            Err(StoreError::Corrupt { .. })
        ));
    }

    #[test]
    fn bucket_paths_are_paged() {
        let p = Paths {
            root: "/r".into(),
            bucket_page: 1000,
        };
        assert_eq!(p.bucket(12_345), "/r/buckets/p12/12345");
        assert_eq!(p.deleted(7), "/r/buckets/p0/d7");
        assert!(matches!(page_child("d7"), Some(PageChild::Deleted(7))));
        assert!(matches!(
            page_child("12345"),
            Some(PageChild::Bucket(12_345))
        ));
        assert!(page_child("x").is_none());
    }
}
