//! The property group commit exists to keep (spec/protocol.md, "Group commit",
//! `INV-RELEASED-DURABLE`): an effect released by the host depends on no write that is not
//! durable. A check for simulations, conformance walks and tests; O(1) per effect.

use rebalance_manager::{Effect, PersistedState, Reply};

/// Whether `effect`, released now, is backed by `durable`, the store's durable state now (which
/// may be newer than the effect: epochs only grow). A NotifyLeaderAndIsr carries a bucket's
/// stored metadata, an AdjustIsr answer the LeaderAndIsr just written, and `Accepted(id)` the
/// task `id`: each must be in the store already, at its epochs or later ones. Events are the
/// incarnation's own and need nothing.
pub fn released_durable(effect: &Effect, durable: &PersistedState) -> Result<(), String> {
    match effect {
        Effect::SendNli(nli) => {
            if durable.coordinator_epoch < nli.coordinator_epoch {
                return Err(format!(
                    "NotifyLeaderAndIsr of coordinator epoch {} released while the store's epoch \
                     is {}",
                    nli.coordinator_epoch, durable.coordinator_epoch
                ));
            }
            let Some(rec) = durable.cluster.buckets.get(&nli.bucket) else {
                return Err(format!(
                    "NotifyLeaderAndIsr of bucket {} released, which the store does not hold",
                    nli.bucket
                ));
            };
            let lai = &rec.lai;
            let same = rec.assignment == nli.replicas
                && lai.leader == nli.leader
                && lai.leader_epoch == nli.leader_epoch
                && lai.isr == nli.isr;
            if lai.bucket_epoch < nli.bucket_epoch
                || (lai.bucket_epoch == nli.bucket_epoch && !same)
            {
                return Err(format!(
                    "NotifyLeaderAndIsr of bucket {} at bucket epoch {} (replicas {:?}, leader \
                     {:?}, ISR {:?}) released while the store holds bucket epoch {} (replicas \
                     {:?}, leader {:?}, ISR {:?})",
                    nli.bucket,
                    nli.bucket_epoch,
                    nli.replicas,
                    nli.leader,
                    nli.isr,
                    lai.bucket_epoch,
                    rec.assignment,
                    lai.leader,
                    lai.isr
                ));
            }
            Ok(())
        }
        Effect::SendAdjustIsrResponse {
            bucket,
            result: Ok(sent),
            ..
        } => {
            let stored = durable.cluster.buckets.get(bucket).map(|r| &r.lai);
            match stored {
                Some(lai)
                    if lai.bucket_epoch > sent.bucket_epoch
                        || (lai.bucket_epoch == sent.bucket_epoch && lai == sent) =>
                {
                    Ok(())
                }
                other => Err(format!(
                    "AdjustIsr answer Ok({sent:?}) for bucket {bucket} released while the store \
                     holds {other:?}"
                )),
            }
        }
        Effect::Reply(Reply::Accepted(id)) => match &durable.task {
            Some(t) if t.id >= *id => Ok(()),
            other => Err(format!(
                "Accepted({id}) released while the store's task is {:?}",
                other.as_ref().map(|t| t.id)
            )),
        },
        Effect::SendAdjustIsrResponse { result: Err(_), .. }
        | Effect::Enqueue(_)
        | Effect::Reply(_) => Ok(()),
    }
}
