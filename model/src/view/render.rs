//! One rendering for the CLIs: statuses and replies in spec vocabulary, and messages and actions
//! as the compact JSON of `spec/trace-format.md`, so that whatever is printed can be pasted back
//! into a trace.

use crate::state::message::Message;
use crate::step::action::{Action, CancelReply, ClientReply, RegisterReply};
use serde::Serialize;

/// A status (of a bucket, the task or the whole rebalance) as the spec writes it:
/// `REBALANCING`; the bug-only final timeout of H1 is `TIMEOUT_FINAL`. These are the statuses'
/// serde names, so the text is the one a trace or an expectation uses.
pub fn status<T: Serialize>(s: &T) -> String {
    match serde_json::to_value(s).expect("statuses serialize") {
        serde_json::Value::String(name) => name,
        other => other.to_string(),
    }
}

/// A client reply as R1 and R2 name it: `Accepted(1)`, `Rejected(InProgress)`, `StoreError`,
/// `Accepted`, `NothingToCancel`.
pub fn reply(r: &ClientReply) -> String {
    match r {
        ClientReply::Register(RegisterReply::Accepted(id)) => format!("Accepted({id})"),
        ClientReply::Register(RegisterReply::RejectedInProgress) => "Rejected(InProgress)".into(),
        ClientReply::Register(RegisterReply::RejectedInvalidPlan) => "Rejected(InvalidPlan)".into(),
        ClientReply::Register(RegisterReply::StoreError)
        | ClientReply::Cancel(CancelReply::StoreError) => "StoreError".into(),
        ClientReply::Cancel(CancelReply::Accepted) => "Accepted".into(),
        ClientReply::Cancel(CancelReply::NothingToCancel) => "NothingToCancel".into(),
    }
}

/// Compact JSON of any trace value.
pub fn json<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).expect("trace values serialize")
}

/// A message as the `msg` of `drop_message` (tagged with `type`).
pub fn message(m: &Message) -> String {
    json(m)
}

/// A message without its tag, as the `msg` of the `deliver_*` step of its kind.
pub fn message_body(m: &Message) -> String {
    match m {
        Message::Nli(x) => json(x),
        Message::NliResponse(x) => json(x),
        Message::AdjustIsr(x) => json(x),
        Message::AdjustIsrResponse(x) => json(x),
    }
}

/// An action as a trace step.
pub fn action(a: &Action) -> String {
    json(a)
}
