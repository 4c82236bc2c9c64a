//! The in-doubt protocol's decision: did a write whose answer was lost land, and what undoes it.
//!
//! A fenced write whose answer never came (connection loss, timeout, a lost session) may or may
//! not have been applied. The port requires that a failed call changed nothing, so before its
//! next operation the store reads the node back and decides from what the write intended and
//! what it finds. That decision is kept here as a pure function, apart from the ZooKeeper calls
//! that read the node and run the undo (in `mod.rs`), so that every case of it can be tested
//! without a server.

use rebalance_manager::{BucketId, Epoch};

/// A node's data and data version, as last read or written by the store: the store's cache
/// entry, what an in-doubt write replaced, and what reading the node back found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Known {
    pub(crate) version: i32,
    pub(crate) data: Vec<u8>,
}

/// Which cached node a path is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Bucket(BucketId),
    Deleted(BucketId),
    Task,
}

/// A write whose answer was lost: it may have landed.
#[derive(Clone, Debug)]
pub(crate) struct InDoubt {
    pub(crate) target: Target,
    pub(crate) path: String,
    /// The data the write tried to store.
    pub(crate) wrote: Vec<u8>,
    /// The node before the write (`None`: the write created it).
    pub(crate) before: Option<Known>,
    /// The writer's epoch (the undo is fenced by it too).
    pub(crate) epoch: Epoch,
}

/// What reading an in-doubt write's node back says about the write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// The write did not land: the node is exactly as it was before it. Nothing to undo, and
    /// the store's cached node still holds.
    NotLanded,
    /// The node is neither as it was before the write nor as the write would have left it:
    /// someone else changed it (perhaps after the write landed), so whether the write landed
    /// cannot be told. Nothing is undone (the node now holds another writer's change), and the
    /// cached node is dropped, to be read again on next use.
    Unknown,
    /// The write landed: the node is as the write left it. `undo` puts it back.
    Landed {
        /// The fenced write that undoes it.
        undo: Undo,
    },
}

/// The write that undoes a landed in-doubt write. Both forms are conditional on `version`, the
/// data version the landed write left, so an undo never overwrites a later change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Undo {
    /// The write replaced a node's data: set it back to `data`.
    Restore {
        /// The node's data version now.
        version: i32,
        /// The data the write replaced.
        data: Vec<u8>,
    },
    /// The write created the node: delete it.
    Delete {
        /// The node's data version now.
        version: i32,
    },
}

impl Undo {
    /// The node once the undo has landed (`None`: it is gone): what the store caches then.
    pub(crate) fn after(&self) -> Option<Known> {
        match self {
            Undo::Restore { version, data } => Some(Known {
                version: version + 1,
                data: data.clone(),
            }),
            Undo::Delete { .. } => None,
        }
    }
}

/// Decides whether a write landed, from the node as it was before the write (`before`, `None`
/// if the write created it), the data the write stored (`wrote`) and the node read back now
/// (`read_back`, `None` if it does not exist).
///
/// A write of an existing node landed if the node is one version further and holds `wrote`; a
/// create landed if the node exists and holds `wrote` (a created node's version is not compared:
/// whatever it is, the undo deletes at that version). A node found absent means the write did
/// not land.
pub(crate) fn decide(before: Option<&Known>, wrote: &[u8], read_back: Option<&Known>) -> Decision {
    let Some(now) = read_back else {
        // Neither a set nor a create leaves the node absent.
        return match before {
            None => Decision::NotLanded,
            Some(_) => Decision::Unknown,
        };
    };
    match before {
        None if now.data == wrote => Decision::Landed {
            undo: Undo::Delete {
                version: now.version,
            },
        },
        Some(b) if now.version == b.version + 1 && now.data == wrote => Decision::Landed {
            undo: Undo::Restore {
                version: now.version,
                data: b.data.clone(),
            },
        },
        // The version is what the store last knew: no write, ours or another's, landed since.
        Some(b) if now.version == b.version => Decision::NotLanded,
        _ => Decision::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(version: i32, data: &[u8]) -> Known {
        Known {
            version,
            data: data.to_vec(),
        }
    }

    const OLD: &[u8] = b"old";
    const NEW: &[u8] = b"new";
    const OTHER: &[u8] = b"other";

    // ---- a create (no node before the write) ----

    #[test]
    fn create_not_landed_when_node_absent() {
        assert_eq!(decide(None, NEW, None), Decision::NotLanded);
    }

    #[test]
    fn create_landed_is_undone_by_a_delete_at_the_version_read() {
        let d = decide(None, NEW, Some(&node(0, NEW)));
        assert_eq!(
            d,
            Decision::Landed {
                undo: Undo::Delete { version: 0 }
            }
        );
        // The created node's version is not compared: the undo deletes at the version found.
        assert_eq!(
            decide(None, NEW, Some(&node(3, NEW))),
            Decision::Landed {
                undo: Undo::Delete { version: 3 }
            }
        );
    }

    #[test]
    fn create_unknown_when_someone_else_created_the_node() {
        assert_eq!(decide(None, NEW, Some(&node(0, OTHER))), Decision::Unknown);
    }

    // ---- a set (a node before the write) ----

    #[test]
    fn set_not_landed_when_node_unchanged() {
        let before = node(4, OLD);
        assert_eq!(
            decide(Some(&before), NEW, Some(&node(4, OLD))),
            Decision::NotLanded
        );
        // The version alone says nobody wrote: the data is not compared.
        assert_eq!(
            decide(Some(&before), NEW, Some(&node(4, NEW))),
            Decision::NotLanded
        );
    }

    #[test]
    fn set_landed_is_undone_by_restoring_the_old_data() {
        let before = node(4, OLD);
        let d = decide(Some(&before), NEW, Some(&node(5, NEW)));
        assert_eq!(
            d,
            Decision::Landed {
                undo: Undo::Restore {
                    version: 5,
                    data: OLD.to_vec()
                }
            }
        );
    }

    #[test]
    fn set_unknown_when_the_next_version_holds_other_data() {
        let before = node(4, OLD);
        assert_eq!(
            decide(Some(&before), NEW, Some(&node(5, OTHER))),
            Decision::Unknown
        );
    }

    #[test]
    fn set_unknown_when_the_node_moved_further() {
        let before = node(4, OLD);
        // Two versions on, even holding our data: another write came after (or instead of) ours.
        assert_eq!(
            decide(Some(&before), NEW, Some(&node(6, NEW))),
            Decision::Unknown
        );
        // An older version than known: the node was deleted and created again.
        assert_eq!(
            decide(Some(&before), NEW, Some(&node(0, OLD))),
            Decision::Unknown
        );
    }

    #[test]
    fn set_unknown_when_the_node_is_gone() {
        let before = node(4, OLD);
        assert_eq!(decide(Some(&before), NEW, None), Decision::Unknown);
    }

    // ---- the node after an undo ----

    #[test]
    fn a_restore_leaves_the_old_data_one_version_on() {
        let undo = Undo::Restore {
            version: 5,
            data: OLD.to_vec(),
        };
        assert_eq!(undo.after(), Some(node(6, OLD)));
    }

    #[test]
    fn a_delete_leaves_no_node() {
        assert_eq!(Undo::Delete { version: 0 }.after(), None);
    }
}
