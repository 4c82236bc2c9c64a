//! The fenced write (D7) and the one mapping of its failure to the port's error.
//!
//! Every write of a `ZkStore` is one multi-op whose first operation checks the
//! `coordinator_epoch` node's data version against the writer's epoch, so a deposed
//! coordinator's write fails as a whole with [`StoreError::Fenced`] and changes nothing. This
//! file builds and sends that request and classifies how it failed ([`WriteFail`]); what the
//! store does about a write in doubt is decided in `doubt` and done in `mod.rs`.

use zookeeper_client as zk;

use rebalance_manager::store::StoreError;
use rebalance_manager::Epoch;

use super::error::Fail;
use super::layout::Layout;
use super::session::Session;

/// One operation of a multi-op, after the epoch check.
pub(crate) enum Op<'a> {
    Create(&'a str, &'a [u8], zk::CreateMode),
    Set(&'a str, &'a [u8], i32),
    Delete(&'a str, i32),
}

/// Why a fenced multi-op failed.
pub(crate) enum WriteFail {
    /// The whole request failed with this port error (fenced, unavailable, ...) and changed
    /// nothing.
    Store(StoreError),
    /// The request's answer was lost (this port error says how): the write may have landed.
    InDoubt(StoreError),
    /// An operation after the check failed with this client error (the check passed).
    Op(zk::Error),
}

impl From<StoreError> for WriteFail {
    fn from(e: StoreError) -> Self {
        WriteFail::Store(e)
    }
}

impl WriteFail {
    /// The port's error for a failed fenced write of the node `path`: the request's own error
    /// as it is, and an operation's failure after the epoch check passed (a version or
    /// existence condition of `path` did not hold) as [`StoreError::Conflict`]. The one place
    /// this mapping is made; callers that read an operation's failure otherwise match it first.
    pub(crate) fn into_store_error(self, path: &str) -> StoreError {
        match self {
            WriteFail::Store(e) | WriteFail::InDoubt(e) => e,
            WriteFail::Op(e) => StoreError::Conflict(format!("{path} ({e})")),
        }
    }
}

/// One multi-op: check that the epoch node is at `writer_epoch`, then `ops`.
pub(crate) fn write(
    session: &mut Session,
    layout: &Layout,
    writer_epoch: Epoch,
    ops: &[Op<'_>],
) -> Result<Vec<zk::MultiWriteResult>, WriteFail> {
    let epoch_path = layout.paths.epoch();
    let version = writer_epoch
        .checked_sub(layout.epoch_base)
        .and_then(|v| i32::try_from(v).ok());
    let Some(version) = version else {
        let (store_epoch, _) = layout.read_epoch(session)?;
        return Err(WriteFail::Store(StoreError::Fenced {
            writer_epoch,
            store_epoch,
        }));
    };
    let Some(client) = session.client() else {
        return Err(WriteFail::Store(StoreError::Unavailable(
            "no session".into(),
        )));
    };
    let mut w = client.new_multi_writer();
    let build = (|| {
        w.add_check_version(&epoch_path, version)?;
        for op in ops {
            match op {
                Op::Create(p, d, mode) => {
                    w.add_create(p, d, &mode.with_acls(zk::Acls::anyone_all()))?
                }
                Op::Set(p, d, v) => w.add_set_data(p, d, Some(*v))?,
                Op::Delete(p, v) => w.add_delete(p, Some(*v))?,
            }
        }
        Ok::<(), zk::Error>(())
    })();
    if let Err(e) = build {
        return Err(WriteFail::Store(StoreError::Io(format!(
            "building a ZooKeeper request: {e}"
        ))));
    }
    match session.block_on(w.commit()) {
        Some(Ok(results)) => Ok(results.into_iter().skip(1).collect()),
        Some(Err(zk::MultiWriteError::OperationFailed { index: 0, source })) => match source {
            zk::Error::BadVersion => {
                let (store_epoch, _) = layout.read_epoch(session)?;
                Err(WriteFail::Store(StoreError::Fenced {
                    writer_epoch,
                    store_epoch,
                }))
            }
            zk::Error::NoNode => Err(WriteFail::Store(StoreError::Corrupt {
                node: epoch_path,
                detail: "missing".into(),
            })),
            e => Err(WriteFail::Store(
                session.fail(Fail::Zk(e), "a fenced write"),
            )),
        },
        Some(Err(zk::MultiWriteError::OperationFailed { source, .. })) => {
            Err(WriteFail::Op(source))
        }
        Some(Err(zk::MultiWriteError::RequestFailed { source })) => {
            let f = Fail::Zk(source);
            let unknown = f.outcome_unknown();
            let e = session.fail(f, "a fenced write");
            Err(if unknown {
                WriteFail::InDoubt(e)
            } else {
                WriteFail::Store(e)
            })
        }
        None => Err(WriteFail::InDoubt(
            Fail::TimedOut.to_store("a fenced write"),
        )),
    }
}
