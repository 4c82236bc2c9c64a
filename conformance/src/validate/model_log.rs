//! The log a coordinator behaving exactly as the model does would write along a path of the
//! model, bug switches included: what an old behaviour looks like to trace validation. A log of
//! the model with a switch on, validated against the model without it, must be rejected at the
//! record where the switch acts (`conformance/tests/integration/validate.rs`).
//!
//! The model lists each kind of effect apart (messages, events, reply), so the log writes a
//! step's reply first, then its messages, then its events: the one order across kinds the
//! comparison reads (a Register's reply before every other effect) holds.

use std::collections::BTreeSet;

use rebalance_manager as mgr;
use rebalance_model::{
    Action, AdjustIsrResult, CancelReply, ClientReply, Message, RebalanceModel, RegisterReply,
    StepOutput,
};
use rebalance_wire::log::{LogWriter, StoreOps};

use crate::translate;

/// A model path's log, and for each step the line of its record (`None` for a hidden step).
pub struct ModelLog {
    pub text: String,
    pub line_of_step: Vec<Option<usize>>,
}

/// The log of `steps` from `model`'s initial state; an error names a step that is not enabled.
pub fn model_log(model: &RebalanceModel, steps: &[Action]) -> Result<ModelLog, String> {
    let config = serde_json::to_value(&model.config).map_err(|e| e.to_string())?;
    let mut w = LogWriter::new(Vec::new(), Some(config)).map_err(|e| e.to_string())?;
    let mut line = 2; // the next line to write: the header is line 1
    let mut state = model.init_state();
    let live = |s: &rebalance_model::SystemState| -> BTreeSet<mgr::ServerId> {
        s.coordinator.live.iter().map(mgr::ServerId::from).collect()
    };
    let io = |e: std::io::Error| e.to_string();
    let recover = [mgr::Effect::Enqueue(mgr::Event::Recover)];
    w.start(
        0,
        state.coordinator.ce.into(),
        &live(&state),
        &recover,
        Some(&translate::store(&state)),
    )
    .map_err(io)?;
    line += 1;
    if state.coordinator.events.is_empty() {
        let ops = StoreOps {
            ops: 1,
            failed: None,
            failures: 0,
        };
        w.input(0, &mgr::Input::Event(mgr::Event::Recover), &[], ops)
            .map_err(io)?;
        line += 1;
    }
    let mut now = 0u64;
    let mut line_of_step = Vec::with_capacity(steps.len());
    for (i, action) in steps.iter().enumerate() {
        let (post, out) = model
            .step(&state, action)
            .ok_or_else(|| format!("step {} is not enabled", i + 1))?;
        let effects = effects(&out, state.coordinator.rid);
        let store = StoreOps {
            ops: out.store_ops.into(),
            failed: action.fail_store_op().map(u64::from),
            failures: u64::from(action.fail_store_op().is_some()),
        };
        let input = match action {
            Action::Register { plan, .. } => {
                let targets = plan.unwrap_or(&model.config.plan);
                Some(mgr::Input::Register {
                    plan: translate::plan(&model.register_plan(&state, targets)),
                })
            }
            Action::Cancel { .. } => Some(mgr::Input::Cancel),
            Action::ProcessEvent { event, .. } => Some(mgr::Input::Event(translate::event(event))),
            Action::DeliverNliResponse { msg, .. } => Some(translate::nli_response(msg)),
            Action::DeliverAdjustIsr { msg, .. } => Some(translate::adjust_isr(msg)),
            Action::CrashServer { server, .. } => Some(mgr::Input::ServerCrashed((*server).into())),
            Action::RestartServer { server, .. } => {
                Some(mgr::Input::ServerRestarted((*server).into()))
            }
            Action::DeleteBucket { bucket, .. } => {
                Some(mgr::Input::BucketDeleted((*bucket).into()))
            }
            Action::Tick { .. } => {
                now += model.config.tick_ms();
                Some(mgr::Input::Tick)
            }
            Action::CrashCoordinator => {
                w.start(
                    now,
                    post.coordinator.ce.into(),
                    &live(&post),
                    &effects,
                    Some(&translate::store(&post)),
                )
                .map_err(io)?;
                None
            }
            _ => None, // a server's, the network's or a deposed coordinator's step
        };
        let shown = matches!(action, Action::CrashCoordinator) || input.is_some();
        if let Some(input) = input {
            w.input(now, &input, &effects, store).map_err(io)?;
        }
        line_of_step.push(shown.then_some(line));
        if shown {
            line += 1;
        }
        // Responses the step delivered because they can never be current (spec 9): a host
        // hands each to the coordinator, which ignores it.
        for r in &out.delivered_dead {
            let none = StoreOps::default();
            w.input(now, &translate::nli_response(r), &[], none)
                .map_err(io)?;
            line += 1;
        }
        state = post;
    }
    // A path that ends with the coordinator idle ends as a host that stops would end it.
    if state.coordinator.events.is_empty() && model.step(&state, &Action::TICK).is_none() {
        w.end(now).map_err(io)?;
    }
    let text = String::from_utf8(w.get_ref().clone()).map_err(|e| e.to_string())?;
    Ok(ModelLog { text, line_of_step })
}

/// The step's effects as a manager emits them: reply, messages, events.
fn effects(out: &StepOutput, rid: Option<u8>) -> Vec<mgr::Effect> {
    let mut v = Vec::new();
    if let Some(r) = &out.reply {
        let reply = match r {
            ClientReply::Register(RegisterReply::Accepted(id)) => {
                mgr::Reply::Accepted((*id).into())
            }
            ClientReply::Register(RegisterReply::RejectedInProgress) => {
                mgr::Reply::Rejected(mgr::RejectReason::InProgress)
            }
            ClientReply::Register(RegisterReply::RejectedInvalidPlan) => mgr::Reply::Rejected(
                mgr::RejectReason::InvalidPlan(mgr::PlanError::DuplicateBucket(0)),
            ),
            ClientReply::Register(RegisterReply::StoreError)
            | ClientReply::Cancel(CancelReply::StoreError) => mgr::Reply::StoreError,
            ClientReply::Cancel(CancelReply::Accepted) => {
                mgr::Reply::Accepted(rid.unwrap_or(0).into())
            }
            ClientReply::Cancel(CancelReply::NothingToCancel) => mgr::Reply::NothingToCancel,
        };
        v.push(mgr::Effect::Reply(reply));
    }
    for m in &out.sent {
        match m {
            Message::Nli(n) => v.push(mgr::Effect::SendNli(mgr::Nli {
                to: n.to.into(),
                bucket: n.bucket.into(),
                replicas: translate::servers(&n.replicas),
                leader: n.leader.map(mgr::ServerId::from),
                leader_epoch: n.leader_epoch.into(),
                isr: translate::server_set(n.isr),
                bucket_epoch: n.bucket_epoch.into(),
                coordinator_epoch: n.coordinator_epoch.into(),
                exec_key: n.exec_key.map(translate::key),
            })),
            Message::AdjustIsrResponse(r) => v.push(mgr::Effect::SendAdjustIsrResponse {
                to: r.to.into(),
                bucket: r.bucket.into(),
                result: match &r.result {
                    AdjustIsrResult::Ok(l) => Ok(translate::lai(l)),
                    AdjustIsrResult::Err => Err(mgr::AdjustIsrError::NoChange),
                },
            }),
            _ => {}
        }
    }
    v.extend(
        out.enqueued
            .iter()
            .map(|e| mgr::Effect::Enqueue(translate::event(e))),
    );
    v
}
