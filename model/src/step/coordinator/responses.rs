//! Responses and ISR changes: R12 (NliResponse) and R18 (AdjustIsr).

use super::{Flow, Rule, Step};
use crate::state::message::{AdjustIsr, AdjustIsrResponse, AdjustIsrResult, Message, NliResponse};
use crate::state::types::{BucketStatus, PlanKind};
use crate::step::action::StepOutput;
use crate::verdict::bug::Bug;

impl Step<'_> {
    /// Whether the context of a response is current (R12): this incarnation, the current
    /// leader and epochs.
    pub fn context_current(&self, msg: &NliResponse) -> bool {
        let lai = self.lai(msg.bucket);
        msg.context.coordinator_epoch == self.s.coordinator.ce
            && msg.context.leader == lai.leader
            && msg.context.leader_epoch == lai.leader_epoch
            && msg.context.bucket_epoch == lai.bucket_epoch
    }

    /// R12 NliResponse. Only the completion part is modelled (D11).
    pub fn on_nli_response(&mut self, msg: &NliResponse) -> Flow {
        self.fired(Rule::R12);
        let b = msg.bucket;
        let Some(key) = self.key_of(b) else {
            return Ok(());
        };
        let fenced = self.context_current(msg) && msg.context.exec_key == Some(key);
        if !msg.ok {
            return Ok(());
        }
        if !fenced {
            self.s.ghost.last.stale_response_ignored = !self.bug(Bug::NoRequestFencing);
            if !self.bug(Bug::NoRequestFencing) {
                return Ok(());
            }
        }
        let e = self.entry(b);
        let lai = self.lai(b);
        match e.kind() {
            PlanKind::LeaderOnly => {
                if msg.from == e.new_leader && lai.leader == Some(e.new_leader) {
                    self.finish(b, BucketStatus::Completed)?;
                }
                Ok(())
            }
            PlanKind::Move => {
                if self.final_state(b) {
                    if Some(msg.from) == lai.leader {
                        self.finish(b, BucketStatus::Completed)?;
                    }
                    Ok(())
                } else {
                    self.try_complete(b)
                }
            }
            PlanKind::NoOp => Ok(()),
        }
    }

    /// A response whose context R12 can never find current again: an older coordinator epoch,
    /// or leader or bucket epochs below the store's (all three only grow; the cache equals the
    /// store, and under `split-bucket-writes` it is never behind the store and falls back no
    /// lower than it).
    pub fn response_dead(&self, msg: &NliResponse) -> bool {
        let lai = self.s.store.buckets.lai[msg.bucket as usize];
        msg.context.coordinator_epoch < self.s.coordinator.ce
            || msg.context.leader_epoch < lai.leader_epoch
            || msg.context.bucket_epoch < lai.bucket_epoch
    }

    /// Delivers every dead response now (spec 9, "dead messages"): R12 ignores it in every
    /// later state, so this merges states that differ only by when it arrives, while the
    /// delivery itself, and the manager's fencing of it, is still a step of the graph.
    pub fn deliver_dead_responses(&mut self) {
        loop {
            let dead = self.s.network.iter().find_map(|m| match m {
                Message::NliResponse(r) if self.response_dead(r) => Some(*r),
                _ => None,
            });
            let Some(r) = dead else {
                return;
            };
            self.s.take(&Message::NliResponse(r));
            self.out.delivered_dead.push(r);
            let _ = self.on_nli_response(&r);
        }
    }

    /// R18 AdjustIsr.
    pub fn on_adjust_isr(&mut self, msg: &AdjustIsr) -> Flow {
        self.fired(Rule::R18);
        let b = msg.bucket;
        let lai = self.lai(b);
        let live = self.s.coordinator.live;
        let assigned = crate::state::types::ServerSet::from_servers(self.assignment(b));
        let reject = self.deleted(b)
            || Some(msg.from) != lai.leader
            || msg.leader_epoch != lai.leader_epoch
            || msg.bucket_epoch != lai.bucket_epoch
            || !msg.isr.is_subset(live.intersect(assigned))
            || msg.isr == lai.isr;
        if reject {
            self.reply_adjust_isr(msg, AdjustIsrResult::Err);
            self.s.ghost.last.adjust_isr_rejected = true;
            return Ok(());
        }
        let assignment = *self.assignment(b);
        if let Err(abort) = self.write_bucket(b, assignment, lai.leader, msg.isr) {
            // R8: a failed write answers Err to the leader.
            self.reply_adjust_isr(msg, AdjustIsrResult::Err);
            return Err(abort);
        }
        self.reply_adjust_isr(msg, AdjustIsrResult::Ok(self.lai(b)));
        let active_move = self.key_of(b).is_some() && self.entry(b).kind() == PlanKind::Move;
        if active_move {
            if self.final_state(b) {
                // So the leader's ack of the final metadata can complete it (R12).
                self.send_current(b);
            } else {
                self.try_complete(b)?;
            }
        }
        Ok(())
    }

    fn reply_adjust_isr(&mut self, msg: &AdjustIsr, result: AdjustIsrResult) {
        let m = Message::AdjustIsrResponse(AdjustIsrResponse {
            to: msg.from,
            bucket: msg.bucket,
            result,
        });
        self.out.sent.push(m);
        self.s.send(m);
    }
}

/// Whether R18 accepted the AdjustIsr in this step (its reply was Ok).
pub fn adjust_isr_accepted(out: &StepOutput) -> bool {
    out.sent.iter().any(|m| {
        matches!(
            m,
            Message::AdjustIsrResponse(AdjustIsrResponse {
                result: AdjustIsrResult::Ok(_),
                ..
            })
        )
    })
}
