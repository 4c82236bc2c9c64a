//! The environment's own steps: tablet servers (R21, R22, R24) and the fault actions that
//! need no coordinator code (message loss and duplication).

use crate::state::message::{
    AdjustIsr, AdjustIsrResponse, AdjustIsrResult, Message, Nli, NliResponse,
};
use crate::state::types::{BucketId, ServerId, ServerSet};
use crate::state::{ReplicaView, SystemState};

/// R22: server `msg.to` handles a NotifyLeaderAndIsr. Returns the response it sends, if any.
/// A failed response is put in flight only with `failed_in_flight` (the configuration's
/// `failed_responses_in_flight`).
pub fn deliver_nli(s: &mut SystemState, msg: &Nli, failed_in_flight: bool) -> Option<Message> {
    let server = &mut s.servers[msg.to as usize];
    if !server.up {
        return None; // a down server loses the message
    }
    let ok = if msg.coordinator_epoch < server.last_ce {
        false
    } else {
        server.last_ce = msg.coordinator_epoch;
        let view = s.view_mut(msg.to, msg.bucket);
        let stale = view.as_ref().is_some_and(|v| {
            msg.bucket_epoch < v.bucket_epoch || msg.leader_epoch < v.leader_epoch
        });
        if !stale {
            *view = Some(ReplicaView {
                leader_epoch: msg.leader_epoch,
                bucket_epoch: msg.bucket_epoch,
                leader: msg.leader,
                replicas: msg.replicas,
                isr: msg.isr,
                isr_rejected: false,
            });
        }
        !stale
    };
    let response = Message::NliResponse(NliResponse {
        from: msg.to,
        bucket: msg.bucket,
        ok,
        context: msg.context(),
    });
    // By default a failed response is not put in flight: R12 ignores `ok = false` in every
    // state (only completion is modelled, D11), so delivering it changes only the network. It is
    // still returned, so a trace shows that the server answered.
    if ok || failed_in_flight {
        s.send(response);
    }
    Some(response)
}

/// Whether delivering this Nli now would change nothing but remove it (spec 3.4, "redundant
/// requests"): its server is up, has seen its coordinator epoch, holds exactly its view with no
/// rejected proposal, and the successful answer R22 would send is still in flight (so a second
/// one would be absorbed). A coordinator's resend of such a request is absorbed like a resend
/// of a request still in flight: in either order, the server adopts it once and answers once.
pub fn nli_redundant(s: &SystemState, m: &Nli) -> bool {
    let server = &s.servers[m.to as usize];
    if !server.up || server.last_ce != m.coordinator_epoch {
        return false;
    }
    let adopted = ReplicaView {
        leader_epoch: m.leader_epoch,
        bucket_epoch: m.bucket_epoch,
        leader: m.leader,
        replicas: m.replicas,
        isr: m.isr,
        isr_rejected: false,
    };
    if *s.view(m.to, m.bucket) != Some(adopted) {
        return false;
    }
    s.network.binary_search(&ok_answer(m)).is_ok()
}

/// The successful answer a server sends when it adopts `m` (R22).
pub fn ok_answer(m: &Nli) -> Message {
    Message::NliResponse(NliResponse {
        from: m.to,
        bucket: m.bucket,
        ok: true,
        context: m.context(),
    })
}

/// Whether delivering this Nli changes nothing now, and so ever: R22 refuses an Nli from an
/// older coordinator epoch, and one with older leader or bucket epochs than the view; a server's
/// `last_ce` and view epochs never decrease (R22, R24). An Nli from a newer coordinator epoch is
/// never dead, even with a stale view: accepting its epoch raises `last_ce`.
pub fn nli_dead(s: &SystemState, m: &Nli) -> bool {
    let server = &s.servers[m.to as usize];
    m.coordinator_epoch < server.last_ce
        || m.coordinator_epoch == server.last_ce
            && s.view(m.to, m.bucket)
                .is_some_and(|v| m.bucket_epoch < v.bucket_epoch || m.leader_epoch < v.leader_epoch)
}

/// Whether this AdjustIsrResponse can never change its leader's view: the leader epoch moved
/// on or the view already has this bucket epoch (R24 then ignores it; view epochs never
/// decrease). An `Err` answer is never dead: it marks the proposal rejected.
pub fn adjust_isr_response_dead(s: &SystemState, m: &AdjustIsrResponse) -> bool {
    let AdjustIsrResult::Ok(lai) = &m.result else {
        return false;
    };
    s.view(m.to, m.bucket)
        .is_some_and(|v| v.leader_epoch > lai.leader_epoch || v.bucket_epoch >= lai.bucket_epoch)
}

/// Whether `newer` will make `older` dead once delivered: both are Nli to the same server and
/// bucket, and `newer` comes from a newer coordinator epoch, or from the same one with a higher
/// leader or bucket epoch (the test of [`nli_dead`] against the view `newer` installs). Public
/// so that `model/tests/reductions.rs` can check that claim on every pair in flight.
pub fn supersedes(newer: &Nli, older: &Nli) -> bool {
    newer.to == older.to
        && newer.bucket == older.bucket
        && (newer.coordinator_epoch > older.coordinator_epoch
            || newer.coordinator_epoch == older.coordinator_epoch
                && (older.bucket_epoch < newer.bucket_epoch
                    || older.leader_epoch < newer.leader_epoch))
}

/// Whether a newer Nli to the same server and bucket is in flight (spec 9, "superseded
/// requests"). Delivering such an Nli first can only install a view older than the
/// coordinator's cache, whose AdjustIsr R18 refuses and whose response R12 ignores.
pub fn nli_superseded(s: &SystemState, m: &Nli) -> bool {
    s.network
        .iter()
        .any(|o| matches!(o, Message::Nli(newer) if supersedes(newer, m)))
}

/// Removes every dead server-bound message from the network (spec 9, "dead messages"):
/// delivering one would change nothing but the network, so removing it at once merges states
/// that differ only by when it is delivered. With `superseded`, superseded Nli go too.
pub fn collect_dead_server_messages(s: &mut SystemState, superseded: bool) {
    let dead = |s: &SystemState, m: &Message| match m {
        Message::Nli(n) => nli_dead(s, n) || superseded && nli_superseded(s, n),
        Message::AdjustIsrResponse(r) => adjust_isr_response_dead(s, r),
        _ => false,
    };
    if !s.network.iter().any(|m| dead(s, m)) {
        return;
    }
    let keep: Vec<bool> = s.network.iter().map(|m| !dead(s, m)).collect();
    let mut i = 0;
    s.network.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// R24: the leader handles the coordinator's answer to its AdjustIsr.
pub fn deliver_adjust_isr_response(s: &mut SystemState, msg: &AdjustIsrResponse) {
    if !s.servers[msg.to as usize].up {
        return;
    }
    let Some(view) = s.view_mut(msg.to, msg.bucket).as_mut() else {
        return;
    };
    match &msg.result {
        AdjustIsrResult::Ok(lai) => {
            if view.leader_epoch == lai.leader_epoch && view.bucket_epoch < lai.bucket_epoch {
                view.isr = lai.isr;
                view.bucket_epoch = lai.bucket_epoch;
            }
        }
        AdjustIsrResult::Err => view.isr_rejected = true,
    }
}

/// R21: the ISR expansion a leader may propose now, if any.
pub fn isr_proposal(s: &SystemState, server: ServerId, b: BucketId) -> Option<AdjustIsr> {
    if !s.servers[server as usize].up {
        return None;
    }
    let view = s.view(server, b).as_ref()?;
    if view.leader != Some(server) || view.isr_rejected {
        return None;
    }
    let in_flight = s.network.iter().any(|m| match m {
        Message::AdjustIsr(a) => a.from == server && a.bucket == b,
        Message::AdjustIsrResponse(r) => r.to == server && r.bucket == b,
        _ => false,
    });
    if in_flight {
        return None;
    }
    let live = s.live();
    let isr = view
        .isr
        .union(ServerSet::from_servers(&view.replicas).intersect(live));
    if isr == view.isr {
        return None;
    }
    Some(AdjustIsr {
        from: server,
        bucket: b,
        leader_epoch: view.leader_epoch,
        bucket_epoch: view.bucket_epoch,
        isr,
    })
}
