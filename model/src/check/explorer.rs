//! The Explorer's picture: an SVG of buckets and servers (the `Model` implementation, in
//! `model.rs`, hands it to Stateright's `as_svg`).

use crate::model::RebalanceModel;
use crate::state::SystemState;
use std::fmt::Write;

/// One row per bucket (replicas as boxes: leader bold, ISR filled, down servers crossed) and
/// the coordinator's view of it.
pub fn svg(model: &RebalanceModel, s: &SystemState) -> String {
    let servers = model.config.servers as usize;
    let rows = s.store.buckets.assignment.len();
    // At least wide enough for the status line at the bottom (about 90 monospace characters).
    let (w, h) = ((140 + 40 * servers + 260).max(680), 60 + 40 * rows + 40);
    let mut out = format!(
        "<svg version='1.1' baseProfile='full' width='{w}' height='{h}' \
         xmlns='http://www.w3.org/2000/svg' font-family='monospace' font-size='12'>"
    );
    for sv in 0..servers {
        let x = 120 + 40 * sv;
        let up = s.servers[sv].up;
        let _ = write!(
            out,
            "<text x='{x}' y='20' fill='{}'>s{sv}{}</text>",
            if up { "black" } else { "red" },
            if up { "" } else { "✗" }
        );
    }
    let c = &s.coordinator;
    for b in 0..rows {
        let y = 40 + 40 * b;
        let lai = s.store.buckets.lai[b];
        let _ = write!(
            out,
            "<text x='5' y='{}'>b{b} e{}/{}</text>",
            y + 20,
            lai.leader_epoch,
            lai.bucket_epoch
        );
        for (i, sv) in s.store.buckets.assignment[b].iter().enumerate() {
            let x = 115 + 40 * *sv as usize;
            let fill = if lai.isr.contains(*sv) {
                "#9cf"
            } else {
                "white"
            };
            let stroke = if lai.leader == Some(*sv) { 3 } else { 1 };
            let _ = write!(
                out,
                "<rect x='{x}' y='{y}' width='30' height='30' fill='{fill}' stroke='black' \
                 stroke-width='{stroke}'/><text x='{}' y='{}'>{i}</text>",
                x + 11,
                y + 20
            );
        }
        let status = c
            .status_of(b as u8)
            .map_or(String::new(), |st| super::render::status(&st));
        let deleted = if s.store.buckets.deleted[b] {
            " deleted"
        } else {
            ""
        };
        let _ = write!(
            out,
            "<text x='{}' y='{}'>{status}{deleted}</text>",
            130 + 40 * servers,
            y + 20
        );
    }
    let task = s.store.task.as_ref().map_or("no task".to_string(), |t| {
        format!(
            "task r{} {}{}",
            t.id,
            super::render::status(&t.status),
            if t.cancel_requested { " cancel" } else { "" }
        )
    });
    let _ = write!(
        out,
        "<text x='5' y='{}'>ce {} | {task} | overall {} | events {} | msgs {}</text></svg>",
        h - 10,
        c.ce,
        c.overall
            .as_ref()
            .map_or("-".to_string(), super::render::status),
        c.events.len(),
        s.network.len()
    );
    out
}
