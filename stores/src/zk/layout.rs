//! A `ZkStore`'s node layout on the server: the root and its header, the epoch node, the bucket
//! pages read in bulk, and the populating of a new store.
//!
//! `codec` says what each node's data is and where each node is ([`Paths`]); this file holds
//! the ZooKeeper calls that walk that layout and the checks that it is one: a root that is a
//! valid path, a root header this build reads, an epoch node whose data version is the epoch
//! less the header's base. Bulk reads and creates go in multi requests of at most [`BATCH_OPS`]
//! operations, so a store of any size stays within ZooKeeper's request size limit.

use std::collections::BTreeSet;

use zookeeper_client as zk;

use rebalance_manager::store::{PersistedState, StoreError};
use rebalance_manager::Epoch;

use crate::header::{check_header, HeaderFault};

use super::codec::{decode, encode, DeletedMarker, EpochNode, Paths, RootHeader, FORMAT, VERSION};
use super::error::{Fail, ZkStoreError};
use super::session::Session;

/// Operations per multi request when pages are read or a store is populated (keeps every
/// request and response far below ZooKeeper's 1 MiB `jute.maxbuffer`).
pub(crate) const BATCH_OPS: usize = 500;

/// Checks that `root` is an absolute ZooKeeper path below `/`.
pub(crate) fn check_root(root: &str) -> Result<(), ZkStoreError> {
    let ok = root.len() > 1
        && root.starts_with('/')
        && !root.ends_with('/')
        && !root.contains("//")
        && root
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '/' | '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(ZkStoreError::BadRoot(root.to_string()))
    }
}

/// How every node of the layout is created: persistent, open to any client.
pub(crate) fn persistent() -> zk::CreateOptions<'static> {
    zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())
}

/// What the root header fixes: where the nodes are and the epoch the epoch node counts from.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub(crate) paths: Paths,
    /// The epoch stored at creation: the epoch node's data version is `epoch - epoch_base`.
    pub(crate) epoch_base: u64,
}

impl Layout {
    /// The root header of this layout, as the root node's data.
    pub(crate) fn root_header(&self) -> Vec<u8> {
        let header = RootHeader {
            format: FORMAT.to_string(),
            version: VERSION,
            bucket_page: self.paths.bucket_page,
            epoch_base: self.epoch_base,
        };
        serde_json::to_vec(&header).expect("header serializes")
    }

    /// The store's coordinator epoch and the epoch node's data version.
    pub(crate) fn read_epoch(&self, session: &mut Session) -> Result<(Epoch, i32), StoreError> {
        let path = self.paths.epoch();
        let (data, stat) = match session.call(|c| c.get_data(&path)) {
            Ok(r) => r,
            Err(Fail::Zk(zk::Error::NoNode)) => {
                return Err(StoreError::Corrupt {
                    node: path,
                    detail: "missing".into(),
                })
            }
            Err(e) => return Err(session.fail(e, "reading the coordinator epoch")),
        };
        let node: EpochNode = decode(&path, &data)?;
        if node.epoch != self.epoch_base + stat.version as u64 {
            return Err(StoreError::Corrupt {
                node: path,
                detail: format!(
                    "epoch {} but data version {} (base {})",
                    node.epoch, stat.version, self.epoch_base
                ),
            });
        }
        Ok((node.epoch, stat.version))
    }

    /// Environment setup of `create`: the initial buckets and deleted markers, in batches of
    /// creates (not fenced: nobody else knows the root yet).
    pub(crate) fn populate(
        &self,
        session: &Session,
        initial: &PersistedState,
    ) -> Result<(), ZkStoreError> {
        let paths = &self.paths;
        let mut nodes: Vec<(String, Vec<u8>)> = Vec::new();
        let mut pages = BTreeSet::new();
        for (b, rec) in &initial.cluster.buckets {
            pages.insert(b / paths.bucket_page);
            nodes.push((paths.bucket(*b), encode(rec)));
        }
        for b in &initial.cluster.deleted {
            pages.insert(b / paths.bucket_page);
            nodes.push((paths.deleted(*b), encode(&DeletedMarker {})));
        }
        let page_nodes: Vec<(String, Vec<u8>)> = pages
            .into_iter()
            .map(|p| (format!("{}/p{p}", paths.buckets()), Vec::new()))
            .collect();
        for batch in page_nodes.chunks(BATCH_OPS).chain(nodes.chunks(BATCH_OPS)) {
            let client = session.client().expect("connected by new_unopened");
            let mut w = client.new_multi_writer();
            for (path, data) in batch {
                w.add_create(path, data, &persistent())
                    .map_err(|e| ZkStoreError::Zk {
                        op: format!("creating {path}"),
                        detail: e.to_string(),
                    })?;
            }
            match session.block_on(w.commit()) {
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    return Err(ZkStoreError::Zk {
                        op: "creating the initial buckets".into(),
                        detail: e.to_string(),
                    })
                }
                None => {
                    return Err(ZkStoreError::Zk {
                        op: "creating the initial buckets".into(),
                        detail: "no answer in time".into(),
                    })
                }
            }
        }
        Ok(())
    }
}

/// Reads the root header from the root node's `data` and checks that this build reads it.
pub(crate) fn read_root_header(root: &str, data: &[u8]) -> Result<RootHeader, ZkStoreError> {
    let corrupt = |detail: String| ZkStoreError::Corrupt {
        node: root.to_string(),
        detail,
    };
    if data.is_empty() {
        return Err(corrupt(
            "no layout header (an interrupted create, or not a rebalance store)".into(),
        ));
    }
    let value: serde_json::Value =
        serde_json::from_slice(data).map_err(|e| corrupt(format!("header is not JSON: {e}")))?;
    match check_header(&value, FORMAT, VERSION) {
        Ok(()) => {}
        Err(HeaderFault::NotOurs) => {
            return Err(corrupt("not a rebalance store (format field)".into()))
        }
        Err(HeaderFault::NoVersion) => return Err(corrupt("header has no version".into())),
        Err(HeaderFault::Unsupported(version)) => {
            return Err(ZkStoreError::UnsupportedVersion {
                node: root.to_string(),
                version,
            })
        }
    }
    let h: RootHeader =
        serde_json::from_value(value).map_err(|e| corrupt(format!("header: {e}")))?;
    if h.bucket_page == 0 {
        return Err(corrupt("bucket_page is 0".into()));
    }
    Ok(h)
}

/// Reads every child of `dir` (a bucket page) with multi-reads of at most [`BATCH_OPS`] nodes:
/// each child's name, data and data version.
pub(crate) fn read_children(
    session: &mut Session,
    dir: &str,
) -> Result<Vec<(String, Vec<u8>, i32)>, StoreError> {
    let names = match session.call(|c| c.list_children(dir)) {
        Ok(n) => n,
        Err(e) => return Err(session.fail(e, "listing a page")),
    };
    let mut out = Vec::with_capacity(names.len());
    for batch in names.chunks(BATCH_OPS) {
        let r = session.call(|c| {
            let mut reader = c.new_multi_reader();
            let mut added = Ok(());
            for name in batch {
                if added.is_ok() {
                    added = reader.add_get_data(&format!("{dir}/{name}"));
                }
            }
            let commit = reader.commit();
            async move {
                added?;
                commit.await
            }
        });
        let results = match r {
            Ok(r) => r,
            Err(e) => return Err(session.fail(e, "reading a page")),
        };
        if results.len() != batch.len() {
            return Err(StoreError::Io(format!(
                "ZooKeeper answered {} reads for {} in {dir}",
                results.len(),
                batch.len()
            )));
        }
        for (name, result) in batch.iter().zip(results) {
            match result {
                zk::MultiReadResult::Data { data, stat } => {
                    out.push((name.clone(), data, stat.version))
                }
                zk::MultiReadResult::Error { err } => {
                    return Err(StoreError::Io(format!("reading {dir}/{name}: {err}")))
                }
                other => {
                    return Err(StoreError::Io(format!(
                        "reading {dir}/{name}: unexpected answer {other:?}"
                    )))
                }
            }
        }
    }
    Ok(out)
}

/// Deletes `path` and everything under it, unfenced (environment teardown). Absent: nothing to
/// do.
pub(crate) fn delete_recursive(session: &Session, path: &str) -> Result<(), Fail> {
    let children = match session.call(|c| c.list_children(path)) {
        Ok(ch) => ch,
        Err(Fail::Zk(zk::Error::NoNode)) => return Ok(()),
        Err(e) => return Err(e),
    };
    for child in children {
        delete_recursive(session, &format!("{path}/{child}"))?;
    }
    match session.call(|c| c.delete(path, None)) {
        Ok(()) | Err(Fail::Zk(zk::Error::NoNode)) => Ok(()),
        Err(e) => Err(e),
    }
}
