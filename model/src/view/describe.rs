//! Actions and steps in spec vocabulary, for counterexamples and the Explorer. Messages and
//! stored metadata are written as trace JSON (`render`), so they can be pasted into a trace.

use crate::state::message::Message;
use crate::state::types::BucketStatus;
use crate::state::{Event, SystemState};
use crate::step::action::{Action, StepOutput};
use crate::step::model::RebalanceModel;
use crate::view::render;

fn fail(k: &Option<u8>) -> String {
    k.map(|k| format!(" [store op {k} fails]"))
        .unwrap_or_default()
}

pub fn event(e: &Event) -> String {
    match e {
        Event::Timeout { key } => format!("Timeout({key})"),
        Event::Reconcile { key } => format!("Reconcile({key})"),
        Event::Finalize { rid } => format!("Finalize(r{rid})"),
        Event::Recover => "Recover".into(),
    }
}

/// A message as its kind and the JSON a trace names it by (the `msg` of its `deliver_*` step).
pub fn message(m: &Message) -> String {
    let kind = match m {
        Message::Nli(_) => "Nli",
        Message::NliResponse(_) => "NliResponse",
        Message::AdjustIsr(_) => "AdjustIsr",
        Message::AdjustIsrResponse(_) => "AdjustIsrResponse",
    };
    format!("{kind} {}", render::message_body(m))
}

/// A message by its identity, as the spec writes it: its kind, its bucket, its epochs and key;
/// `Nli b0 le0 be1 ce1 r1,b0`, `AdjustIsr b0 isr [0,1] le0 be1`. No two messages that can be in
/// flight together have the same identity (the epochs change with every write), so this names
/// one message among an Explorer state's actions (`explorer` tests it).
pub fn message_id(m: &Message) -> String {
    let key = |k: &Option<crate::state::types::Key>| k.map_or("no key".into(), |k| k.to_string());
    let leader = |l: Option<crate::state::types::ServerId>| l.map_or("-".into(), |l| l.to_string());
    match m {
        Message::Nli(n) => format!(
            "Nli b{} leader {} isr {} le{} be{} ce{} {}",
            n.bucket,
            leader(n.leader),
            render::json(&n.isr),
            n.leader_epoch,
            n.bucket_epoch,
            n.coordinator_epoch,
            key(&n.exec_key)
        ),
        Message::NliResponse(r) => format!(
            "NliResponse b{} {} le{} be{} ce{} {}",
            r.bucket,
            if r.ok { "ok" } else { "refused" },
            r.context.leader_epoch,
            r.context.bucket_epoch,
            r.context.coordinator_epoch,
            key(&r.context.exec_key)
        ),
        Message::AdjustIsr(a) => format!(
            "AdjustIsr b{} isr {} le{} be{}",
            a.bucket,
            render::json(&a.isr),
            a.leader_epoch,
            a.bucket_epoch
        ),
        Message::AdjustIsrResponse(r) => match &r.result {
            crate::state::message::AdjustIsrResult::Ok(l) => format!(
                "AdjustIsrResponse b{} ok isr {} le{} be{}",
                r.bucket,
                render::json(&l.isr),
                l.leader_epoch,
                l.bucket_epoch
            ),
            crate::state::message::AdjustIsrResult::Err => {
                format!("AdjustIsrResponse b{} err", r.bucket)
            }
        },
    }
}

/// "actor: what" for one action, each message by its identity ([`message_id`]): the Explorer's
/// action labels, short enough to read in a list. A counterexample prints [`action`], whose
/// messages are whole trace JSON, to be pasted into a trace.
pub fn short_action(a: &Action) -> String {
    let from = |s: crate::state::types::ServerId| format!("s{s}");
    match a {
        Action::DeliverNli { msg } => {
            format!(
                "{}: handles {}",
                from(msg.to),
                message_id(&Message::Nli(*msg))
            )
        }
        Action::DeliverNliResponse { msg, fail_store_op } => format!(
            "coordinator: handles {} from {}{}",
            message_id(&Message::NliResponse(*msg)),
            from(msg.from),
            fail(fail_store_op)
        ),
        Action::DeliverAdjustIsr { msg, fail_store_op } => format!(
            "coordinator: handles {} from {}{}",
            message_id(&Message::AdjustIsr(*msg)),
            from(msg.from),
            fail(fail_store_op)
        ),
        Action::DeliverAdjustIsrResponse { msg } => format!(
            "{}: handles {}",
            from(msg.to),
            message_id(&Message::AdjustIsrResponse(*msg))
        ),
        Action::DropMessage { msg } => format!("network: loses {}", addressed(msg)),
        Action::DuplicateMessage { msg } => format!("network: duplicates {}", addressed(msg)),
        Action::ZombieDeliverNliResponse { msg } => format!(
            "deposed coordinator: handles {} from {}",
            message_id(&Message::NliResponse(*msg)),
            from(msg.from)
        ),
        other => action(other),
    }
}

/// A message by its identity and its sender or receiver.
fn addressed(m: &Message) -> String {
    let peer = match m {
        Message::Nli(n) => format!("to s{}", n.to),
        Message::NliResponse(r) => format!("from s{}", r.from),
        Message::AdjustIsr(a) => format!("from s{}", a.from),
        Message::AdjustIsrResponse(r) => format!("to s{}", r.to),
    };
    format!("{} {peer}", message_id(m))
}

/// "actor: what" for one action.
pub fn action(a: &Action) -> String {
    match a {
        Action::Register {
            plan: None,
            fail_store_op,
        } => format!("client: Register{}", fail(fail_store_op)),
        Action::Register {
            plan: Some(targets),
            fail_store_op,
        } => format!(
            "client: Register plan {}{}",
            render::json(targets),
            fail(fail_store_op)
        ),
        Action::Cancel { fail_store_op } => format!("client: Cancel{}", fail(fail_store_op)),
        Action::ProcessEvent {
            event: e,
            fail_store_op,
        } => format!("coordinator: {}{}", event(e), fail(fail_store_op)),
        Action::DeliverNli { msg } => {
            format!("s{}: handles {}", msg.to, message(&Message::Nli(*msg)))
        }
        Action::DeliverNliResponse { msg, fail_store_op } => format!(
            "coordinator: handles {}{}",
            message(&Message::NliResponse(*msg)),
            fail(fail_store_op)
        ),
        Action::DeliverAdjustIsr { msg, fail_store_op } => format!(
            "coordinator: handles {}{}",
            message(&Message::AdjustIsr(*msg)),
            fail(fail_store_op)
        ),
        Action::DeliverAdjustIsrResponse { msg } => format!(
            "s{}: handles {}",
            msg.to,
            message(&Message::AdjustIsrResponse(*msg))
        ),
        Action::DropMessage { msg } => format!("network: loses {}", render::message(msg)),
        Action::DuplicateMessage { msg } => {
            format!("network: duplicates {}", render::message(msg))
        }
        Action::ProposeIsr { server, bucket } => {
            format!("s{server}: proposes an ISR expansion of b{bucket}")
        }
        Action::CrashServer {
            server,
            fail_store_op,
        } => format!("s{server}: crashes{}", fail(fail_store_op)),
        Action::RestartServer {
            server,
            fail_store_op,
        } => format!("s{server}: restarts{}", fail(fail_store_op)),
        Action::CrashCoordinator => "coordinator: crashes and restarts".into(),
        Action::DeleteBucket {
            bucket,
            fail_store_op,
        } => format!("admin: deletes b{bucket}{}", fail(fail_store_op)),
        Action::Tick { fail_store_op } => format!("clock: tick{}", fail(fail_store_op)),
        Action::ZombieProcessEvent { event: e } => format!("deposed coordinator: {}", event(e)),
        Action::ZombieDeliverNliResponse { msg } => format!(
            "deposed coordinator: handles {}",
            message(&Message::NliResponse(*msg))
        ),
        Action::ZombieCancel => "client: Cancel to the deposed coordinator".into(),
        Action::Rest {
            step,
            fail_store_op,
        } => format!("rest of the plan: {}{}", rest(step), fail(fail_store_op)),
    }
}

/// One step of the abstract rest of the plan (spec 9).
fn rest(step: &crate::step::action::RestStep) -> String {
    use crate::step::action::{RestFault, RestStep};
    match step {
        RestStep::Move { bucket } => format!("b{bucket}'s metadata leaves or regains its origin"),
        RestStep::Progress { bucket } => format!("b{bucket}'s metadata changes (progress)"),
        RestStep::Finish { bucket } => format!("b{bucket}'s final request acked: completed"),
        RestStep::Fault { fault } => match fault {
            RestFault::MessageLoss => "a message of its own lost".into(),
            RestFault::MessageDuplication => "a message of its own duplicated".into(),
            RestFault::StoreFailure => "a store write of its own failed".into(),
        },
        RestStep::RaiseEpoch { server, epoch } => {
            format!("s{server} takes a request of coordinator epoch {epoch}")
        }
    }
}

/// The remote plan storage (the `remote_plan` design): each object as `key: r<content>`, with
/// `partial` for one a failed write left, or `none`.
fn plan_objects(plans: &crate::state::PlanObjects) -> String {
    if plans.is_empty() {
        return "none".into();
    }
    let objects: Vec<String> = plans
        .iter()
        .map(|o| {
            let whole = if o.whole { "" } else { " partial" };
            format!("{}: r{}{whole}", o.key, o.content)
        })
        .collect();
    format!("{{{}}}", objects.join(", "))
}

/// What changed: bucket statuses, overall, store task, the remote plan objects, assignments,
/// reply and sends.
pub fn effects(pre: &SystemState, post: &SystemState, out: &StepOutput) -> String {
    let mut parts = Vec::new();
    let (c0, c1) = (&pre.coordinator, &post.coordinator);
    for (b, st) in &c1.status {
        let was = c0.status_of(*b);
        let tracked = c1.is_tracked(*b) && !c0.is_tracked(*b);
        if was != Some(*st) || tracked {
            let mut t = format!("b{b} {}", status(*st));
            if tracked {
                t.push_str(", tracked");
            }
            parts.push(t);
        }
    }
    if c0.overall != c1.overall {
        parts.push(format!(
            "overall {}",
            c1.overall.as_ref().map_or("none".into(), render::status)
        ));
    }
    if pre.store.task != post.store.task {
        if let Some(t) = &post.store.task {
            parts.push(format!(
                "store task r{} {}{}",
                t.id,
                render::status(&t.status),
                if t.cancel_requested {
                    " cancel_requested"
                } else {
                    ""
                }
            ));
        }
    }
    if pre.store.plans != post.store.plans {
        parts.push(format!("plan objects {}", plan_objects(&post.store.plans)));
    }
    for b in 0..post.store.buckets.assignment.len() {
        let (a0, a1) = (
            &pre.store.buckets.assignment[b],
            &post.store.buckets.assignment[b],
        );
        let (l0, l1) = (pre.store.buckets.lai[b], post.store.buckets.lai[b]);
        if a0 != a1 || l0 != l1 {
            parts.push(format!(
                "store b{b} {}",
                render::json(&serde_json::json!({
                    "assignment": a1,
                    "leader": l1.leader,
                    "isr": l1.isr,
                    "leader_epoch": l1.leader_epoch,
                    "bucket_epoch": l1.bucket_epoch,
                }))
            ));
        }
        if !pre.store.buckets.deleted[b] && post.store.buckets.deleted[b] {
            parts.push(format!("b{b} deleted"));
        }
    }
    if let Some(r) = &out.reply {
        parts.push(format!("reply {}", render::reply(r)));
    }
    if out.store_failed {
        parts.push("store op failed".into());
    }
    for e in &out.enqueued {
        parts.push(format!("enqueue {}", event(e)));
    }
    let nli = out
        .sent
        .iter()
        .filter(|m| matches!(m, Message::Nli(_)))
        .count();
    if nli > 0 {
        parts.push(format!("{nli} Nli sent"));
    }
    for m in out.sent.iter().chain(&out.server_sent) {
        if !matches!(m, Message::Nli(_)) {
            parts.push(format!("sends {}", message(m)));
        }
    }
    // A server's own state, where a step changed only that: a refused proposal (R24) parks
    // the leader until a newer request, which a stranded bucket never gets (finding F22).
    for (i, (v0, v1)) in pre.views.iter().zip(post.views.iter()).enumerate() {
        let (Some(v0), Some(v1)) = (v0, v1) else {
            continue;
        };
        let (server, bucket) = (
            i / pre.store.buckets.lai.len(),
            i % pre.store.buckets.lai.len(),
        );
        if v1.isr_rejected && !v0.isr_rejected {
            parts.push(format!(
                "s{server} marks its proposal for b{bucket} refused and waits for a newer request"
            ));
        } else if v1.isr != v0.isr
            && v1.bucket_epoch != v0.bucket_epoch
            && out.server_sent.is_empty()
        {
            parts.push(format!(
                "s{server} adopts ISR {} for b{bucket} at bucket epoch {}",
                render::json(&serde_json::json!(v1.isr)),
                v1.bucket_epoch
            ));
        }
    }
    if parts.is_empty() {
        let c = &post.coordinator;
        let rescheduled = c.attempts.iter().find(|(b, a)| {
            pre.coordinator
                .attempt(*b)
                .is_some_and(|p| a.reconcile_in > p.reconcile_in)
        });
        parts.push(match rescheduled {
            Some((b, a)) => format!("b{b} reconciled again in {} ticks", a.reconcile_in),
            None if pre.coordinator.attempts != c.attempts => "ages advance".into(),
            None => "no change".into(),
        });
    }
    parts.join("; ")
}

fn status(s: BucketStatus) -> String {
    render::status(&s)
}

/// "actor: what -> effects \[rules\]".
pub fn step(model: &RebalanceModel, pre: &SystemState, a: &Action) -> Option<String> {
    let (post, out) = model.step(pre, a)?;
    Some(format!(
        "{} -> {} [{}]",
        action(a),
        effects(pre, &post, &out),
        out.rules
            .iter()
            .map(|r| r.label())
            .collect::<Vec<_>>()
            .join(",")
    ))
}
