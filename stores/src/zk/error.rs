//! Why a [`super::ZkStore`] could not be opened or created, and how the client's errors become
//! the port's [`StoreError`].

use zookeeper_client as zk;

use rebalance_manager::store::StoreError;

/// Why a [`super::ZkStore`] could not be opened or created. Nothing was written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ZkStoreError {
    /// The address is not `HOST:PORT`, nor a comma-separated list of them.
    #[error("bad ZooKeeper address {0:?}: expected HOST:PORT, e.g. 127.0.0.1:2181, or an ensemble's HOST:PORT,HOST:PORT,...")]
    BadAddress(String),
    /// The root is not an absolute ZooKeeper path below `/`.
    #[error("bad ZooKeeper root {0:?}: expected an absolute path such as /fluss-rebalance")]
    BadRoot(String),
    /// No session could be established with the server.
    #[error("ZooKeeper at {addr} is unreachable: {detail}")]
    Unreachable {
        /// The address tried.
        addr: String,
        /// The client's error.
        detail: String,
    },
    /// No store under the root.
    #[error("no store under {0}")]
    NotFound(String),
    /// `create` under a root that already exists.
    #[error("a node already exists at {0}")]
    AlreadyExists(String),
    /// A node does not decode.
    #[error("corrupt store node {node}: {detail}")]
    Corrupt {
        /// The node.
        node: String,
        /// What failed to verify.
        detail: String,
    },
    /// A node of a format version this build does not know.
    #[error(
        "store node {node} has unsupported format version {version} (this build reads {})",
        super::codec::VERSION
    )]
    UnsupportedVersion {
        /// The node.
        node: String,
        /// The version found.
        version: u64,
    },
    /// Any other failure of a ZooKeeper operation.
    #[error("ZooKeeper {op} failed: {detail}")]
    Zk {
        /// What the store was doing.
        op: String,
        /// The cause.
        detail: String,
    },
}

impl From<StoreError> for ZkStoreError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Corrupt { node, detail } => ZkStoreError::Corrupt { node, detail },
            StoreError::UnsupportedVersion { node, version } => {
                ZkStoreError::UnsupportedVersion { node, version }
            }
            other => ZkStoreError::Zk {
                op: "setup".into(),
                detail: other.to_string(),
            },
        }
    }
}

/// A failed ZooKeeper call: the client's error, or no answer within the operation timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fail {
    /// The client's error.
    Zk(zk::Error),
    /// No answer within [`super::ZkStoreOptions::op_timeout`].
    TimedOut,
}

impl Fail {
    /// True if the session is gone and the client must be replaced.
    pub(crate) fn session_lost(&self) -> bool {
        matches!(
            self,
            Fail::Zk(
                zk::Error::SessionExpired
                    | zk::Error::SessionMoved
                    | zk::Error::ClientClosed
                    | zk::Error::AuthFailed
            )
        )
    }

    /// True if a write's outcome is unknown: it may or may not have been applied.
    pub(crate) fn outcome_unknown(&self) -> bool {
        matches!(
            self,
            Fail::TimedOut | Fail::Zk(zk::Error::ConnectionLoss | zk::Error::Timeout)
        ) || self.session_lost()
    }

    /// The port's error for this failure while doing `what`.
    pub(crate) fn to_store(&self, what: &str) -> StoreError {
        match self {
            Fail::TimedOut => StoreError::Unavailable(format!("{what}: no answer in time")),
            Fail::Zk(e) if self.session_lost() => {
                StoreError::SessionExpired(format!("{what}: {e}"))
            }
            Fail::Zk(
                e @ (zk::Error::ConnectionLoss
                | zk::Error::Timeout
                | zk::Error::NoHosts
                | zk::Error::Throttled),
            ) => StoreError::Unavailable(format!("{what}: {e}")),
            Fail::Zk(e) => StoreError::Io(format!("ZooKeeper {what}: {e}")),
        }
    }
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Fail::Zk(e) => write!(f, "{e}"),
            Fail::TimedOut => write!(f, "no answer in time"),
        }
    }
}
