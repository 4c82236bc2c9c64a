//! R19 and R20 (a server's crash and restart as the coordinator handles them) act only on the
//! buckets the server hosts: the non-deleted buckets whose assignment, as the coordinator knows
//! it, holds the server. Part of the model's mutation oracle (`.cargo/mutants-model.toml`):
//! `hosting`'s `&&` turned to `||` visited every non-deleted bucket and every deleted one the
//! server held, and changed no verdict (spec/findings.md F18, whole-set shard 4/8), since a
//! visit to another bucket writes nothing and its resend is absorbed as redundant.

mod common;
use common::each_edge;
use rebalance_model::{preset, Action, BugSet, Message, RebalanceModel};

#[test]
fn a_server_crash_or_restart_touches_only_the_buckets_it_hosts() {
    let mut not_hosted = 0;
    for name in [
        "ci-liveness-store",
        "ci-server-crash",
        "ci-rf2-server-crash",
    ] {
        let model = RebalanceModel::new(preset(name).expect("preset"), BugSet::none());
        each_edge(&model, |s, a, next, out| {
            let server = match a {
                Action::CrashServer { server, .. } | Action::RestartServer { server, .. } => {
                    *server
                }
                _ => return,
            };
            let cache = &s.coordinator.cache;
            for b in 0..cache.assignment.len() {
                let hosted = !cache.deleted[b] && cache.assignment[b].contains(&server);
                if hosted {
                    continue;
                }
                not_hosted += 1;
                assert_eq!(
                    (&s.store.buckets.assignment[b], &s.store.buckets.lai[b]),
                    (
                        &next.store.buckets.assignment[b],
                        &next.store.buckets.lai[b]
                    ),
                    "{name}: {a:?} wrote bucket {b}, which the server does not host"
                );
                // What the coordinator sent, absorbed or not (`StepOutput::sent`).
                let sent = out
                    .sent
                    .iter()
                    .find(|m| matches!(m, Message::Nli(n) if n.bucket as usize == b));
                assert!(
                    sent.is_none(),
                    "{name}: {a:?} sent {sent:?} about bucket {b}, which the server does not host"
                );
            }
        });
    }
    assert!(
        not_hosted > 0,
        "no crash or restart met a bucket its server does not host"
    );
}
