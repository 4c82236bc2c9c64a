//! The catalogue: every configuration the project runs, with its facts in one place: whether
//! CI or the scheduled checks run it, its row in the documentation, the state counts the tests
//! pin, the bound of its fair-cycle search, and what each bug switch and Fluss variant does on
//! it. The tests (`model/tests/common/mod.rs`, `model/tests/switch_verdicts.rs`,
//! `model/tests/integration/bugs.rs`), `scripts/scheduled-checks.sh` and the tables of
//! `docs/model.md` read it (`rebalance-model catalogue --help`); a new configuration is one
//! entry here and one `rebalance-model catalogue --update-docs docs/model.md`.

use crate::verdict::bug::Bug;

/// One configuration and what is known of it.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// A preset's name, or a file under `model/configs/`.
    pub name: &'static str,
    /// CI's tests check it whole and pin its state counts.
    pub ci: bool,
    /// `scripts/scheduled-checks.sh` checks it, and walks every edge against the manager when
    /// the check finishes (a file, `full`, or a CI preset whose graph CI's walk only samples).
    pub scheduled: bool,
    /// Its row in `docs/model.md`: the CI presets' table for a CI preset, the larger
    /// configurations' for a file. `None`: documented elsewhere.
    pub what: Option<&'static str>,
    /// The state counts CI's tests pin.
    pub states: Option<States>,
    /// The `max_network` the fair-cycle search keeps in CI, where the whole graph is too large
    /// without it (the bound the configuration had before the partial-order reduction).
    pub cycle_bound: Option<u8>,
    /// What the switches and variants do on it.
    pub caught: &'static [Caught],
}

/// The unique states of a configuration's graphs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct States {
    /// The graph `check` explores (the partial-order reduction's, spec 9).
    pub reduced: usize,
    /// The whole graph, as the fair-cycle search reads it (within the cycle bound).
    pub whole: usize,
    /// The whole graph of the progress check (`no_give_up`, spec 7.3), within the bound.
    pub progress: usize,
}

/// A property that switches violate on a configuration.
#[derive(Clone, Copy, Debug)]
pub struct Caught {
    /// The switches (bugs or Fluss variants) turned on together.
    pub switches: &'static [Bug],
    /// The property they violate.
    pub property: &'static str,
    /// Where the violation shows.
    pub how: How,
}

/// Where a violation shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// In a reachable state; `shortest`, where pinned, is the shortest counterexample's length.
    InAState {
        /// Steps of the shortest counterexample, where the tests pin it.
        shortest: Option<usize>,
    },
    /// On a fair cycle only (a livelock); a switch that strands a bucket is searched in the
    /// progress check ([`Bug::needs_progress_check`]).
    OnAFairCycle {
        /// The prefix and cycle lengths of the lasso the search keeps, where the tests pin it.
        lasso: Option<(usize, usize)>,
    },
}

impl Entry {
    /// What `--config` takes for it: the preset's name, or the file's path from the repository
    /// root.
    pub fn config_arg(&self) -> String {
        if self.is_file() {
            format!("model/configs/{}", self.name)
        } else {
            self.name.to_string()
        }
    }

    /// Whether it is a file under `model/configs/`.
    pub fn is_file(&self) -> bool {
        self.name.ends_with(".json")
    }
}

/// The entry of a preset or file name.
pub fn entry(name: &str) -> Option<&'static Entry> {
    CATALOGUE.iter().find(|e| e.name == name)
}

impl Caught {
    /// Whether the switch tables show it: a pinned length, or a fair cycle.
    fn shown(&self) -> bool {
        !matches!(self.how, How::InAState { shortest: None })
    }

    /// The property cell of its row.
    fn property_cell(&self) -> String {
        match self.how {
            How::InAState { .. } => self.property.to_string(),
            How::OnAFairCycle { .. } if self.switches.iter().any(|b| b.needs_progress_check()) => {
                format!(
                    "{} on a fair cycle of the progress check (`--no-give-up`; with give-ups on \
                     nothing fails)",
                    self.property
                )
            }
            How::OnAFairCycle { .. } => format!(
                "{} on a fair cycle (`--liveness cycles`; no state violates anything)",
                self.property
            ),
        }
    }

    /// Its length: the shortest counterexample's steps, or the lasso's.
    fn length_cell(&self) -> String {
        match self.how {
            How::InAState { shortest: Some(1) } => "1 step".to_string(),
            How::InAState { shortest: Some(n) } => format!("{n} steps"),
            How::OnAFairCycle {
                lasso: Some((prefix, cycle)),
            } => format!("lasso: {prefix} steps, then a cycle of {cycle}"),
            _ => "not pinned".to_string(),
        }
    }
}

/// Which table of `docs/model.md`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    /// "The CI presets".
    CiPresets,
    /// "Larger configurations".
    Larger,
    /// "Historical bugs as switches".
    Switches,
    /// "Fluss's own choices as variants".
    Variants,
}

impl Table {
    /// Every table, in the order of the document.
    pub const ALL: [Table; 4] = [
        Table::CiPresets,
        Table::Larger,
        Table::Switches,
        Table::Variants,
    ];

    /// The name of its markers in the document.
    pub fn marker(self) -> &'static str {
        match self {
            Table::CiPresets => "ci-presets",
            Table::Larger => "larger-configurations",
            Table::Switches => "switches",
            Table::Variants => "variants",
        }
    }

    /// The table in Markdown: one row per entry that has one, or, for the switch tables, one row
    /// per switch (or switches together) and configuration, the first shown property leading and
    /// the others after it as "also".
    pub fn markdown(self) -> String {
        match self {
            Table::Switches => return switch_table(false),
            Table::Variants => return switch_table(true),
            Table::CiPresets | Table::Larger => {}
        }
        let mut out = match self {
            Table::CiPresets => "| preset | what |\n|---|---|\n",
            _ => "| file | what |\n|---|---|\n",
        }
        .to_string();
        for e in CATALOGUE {
            let here = match self {
                Table::CiPresets => e.ci,
                _ => !e.ci && e.is_file(),
            };
            if let (true, Some(what)) = (here, e.what) {
                out.push_str(&format!("| `{}` | {what} |\n", e.name));
            }
        }
        out
    }
}

/// The table of the historical switches, or of the Fluss variants, in [`Bug::ALL`]'s order.
fn switch_table(variants: bool) -> String {
    let mut out = if variants {
        "| switch | departs from | configuration | violated property | shortest counterexample |\n"
    } else {
        "| switch | history (spec 12) | preset | violated property | shortest counterexample |\n"
    }
    .to_string();
    out.push_str("|---|---|---|---|---|\n");
    for bug in Bug::ALL.into_iter().filter(|b| b.is_variant() == variants) {
        for e in CATALOGUE {
            let mut rows: Vec<(&[Bug], Vec<&Caught>)> = Vec::new();
            for c in e
                .caught
                .iter()
                .filter(|c| c.switches[0] == bug && c.shown())
            {
                match rows.iter_mut().find(|(s, _)| *s == c.switches) {
                    Some((_, cs)) => cs.push(c),
                    None => rows.push((c.switches, vec![c])),
                }
            }
            for (switches, cs) in rows {
                let names: Vec<String> =
                    switches.iter().map(|b| format!("`{}`", b.name())).collect();
                let mut property = cs[0].property_cell();
                let also: Vec<String> = cs[1..]
                    .iter()
                    .map(|c| format!("{}, {}", c.property_cell(), c.length_cell()))
                    .collect();
                if !also.is_empty() {
                    property.push_str(&format!(" (also {})", also.join("; ")));
                }
                out.push_str(&format!(
                    "| {} | {} | `{}` | {property} | {} |\n",
                    names.join(" with "),
                    bug.origin(),
                    e.config_arg(),
                    cs[0].length_cell()
                ));
            }
        }
    }
    out
}

/// `text` with each table between its markers replaced by the catalogue's. Err names a marker
/// that is missing.
pub fn update_tables(text: &str) -> Result<String, String> {
    let mut text = text.to_string();
    for table in Table::ALL {
        let begin = format!("<!-- catalogue: {} -->\n", table.marker());
        let end = "<!-- end of catalogue table -->";
        let Some(b) = text.find(&begin) else {
            return Err(format!("no `{}` marker", begin.trim_end()));
        };
        let from = b + begin.len();
        let Some(len) = text[from..].find(end) else {
            return Err(format!("no `{end}` after `{}`", begin.trim_end()));
        };
        text.replace_range(from..from + len, &table.markdown());
    }
    Ok(text)
}

/// Every configuration, CI's presets first in preset order, then the scheduled ones, then
/// those only a switch's test reads.
pub const CATALOGUE: &[Entry] = &[
    Entry {
        name: "tiny",
        ci: true,
        scheduled: false,
        what: Some("one move, no faults"),
        states: Some(States { reduced: 366, whole: 915, progress: 340 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::TimeoutCompletes], property: "INV-COMPLETED-AT-TARGET", how: How::InAState { shortest: Some(4) } },
            Caught { switches: &[Bug::TimeoutCompletes], property: "LIVE-ADMITTED-FINISHES", how: How::InAState { shortest: None } },
            Caught { switches: &[Bug::EpochBumpOnRetry], property: "INV-EPOCH-ONLY-ON-CHANGE", how: How::InAState { shortest: Some(5) } },
        ],
    },
    Entry {
        name: "ci-messages",
        ci: true,
        scheduled: false,
        what: Some("message loss, duplication, reordering"),
        states: Some(States { reduced: 14_349, whole: 22_865, progress: 8_498 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::NoRequestFencing], property: "INV-FENCE-RESPONSE", how: How::InAState { shortest: Some(6) } },
        ],
    },
    Entry {
        name: "ci-store",
        ci: true,
        scheduled: false,
        what: Some("a store failure at any write site, a cancel"),
        states: Some(States { reduced: 6_566, whole: 16_067, progress: 5_619 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::FinalNotPersisted], property: "INV-FINAL-PERSISTED", how: How::InAState { shortest: Some(2) } },
            Caught { switches: &[Bug::UntouchedAfterCancel], property: "INV-CANCEL-EFFECTS", how: How::InAState { shortest: Some(2) } },
            Caught { switches: &[Bug::FinalNotPersisted], property: "LIVE-FINAL-STORED", how: How::InAState { shortest: None } },
            Caught { switches: &[Bug::CancelBestEffort], property: "INV-CANCEL-PERSISTED-FIRST", how: How::InAState { shortest: Some(2) } },
            Caught { switches: &[Bug::SplitBucketWrites], property: "INV-CANCEL-NO-NEW-WORK", how: How::InAState { shortest: Some(6) } },
            Caught { switches: &[Bug::SplitBucketWrites], property: "INV-CONTEXT-COHERENT", how: How::InAState { shortest: Some(1) } },
            Caught { switches: &[Bug::SplitBucketWrites], property: "INV-EPOCH-ONLY-ON-CHANGE", how: How::InAState { shortest: Some(1) } },
        ],
    },
    Entry {
        name: "ci-server-crash",
        ci: true,
        scheduled: false,
        what: Some("a server crash and restart"),
        states: Some(States { reduced: 13_733, whole: 22_717, progress: 7_364 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::EndlessReconcile], property: "LIVE-TRACKED-FINISHES", how: How::OnAFairCycle { lasso: Some((14, 2)) } },
        ],
    },
    Entry {
        name: "ci-coordinator-crash",
        ci: true,
        scheduled: false,
        what: Some("a coordinator crash and recovery, a bucket deletion"),
        states: Some(States { reduced: 10_284, whole: 11_859, progress: 4_640 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-leader",
        ci: true,
        scheduled: false,
        what: Some("leader-only bucket, a second register"),
        states: Some(States { reduced: 10_178, whole: 11_940, progress: 4_872 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::ReelectOnReconcile], property: "INV-EPOCH-ONLY-ON-CHANGE", how: How::InAState { shortest: Some(5) } },
        ],
    },
    Entry {
        name: "ci-two-buckets",
        ci: true,
        scheduled: false,
        what: Some("two buckets, tracked cap 1, crash, cancel"),
        states: Some(States { reduced: 2_270_649, whole: 82_458, progress: 9_816 }),
        cycle_bound: Some(2),
        caught: &[
            Caught { switches: &[Bug::TimeoutCompletes], property: "INV-STATUS-PROMISE", how: How::InAState { shortest: None } },
            Caught { switches: &[Bug::CancelAfterRestart], property: "INV-STATUS-PROMISE", how: How::InAState { shortest: None } },
            Caught { switches: &[Bug::UnboundedTracked], property: "INV-TRACKED-BOUND", how: How::InAState { shortest: Some(3) } },
            Caught { switches: &[Bug::CancelAfterRestart], property: "INV-CANCELED-AT-ORIGIN", how: How::InAState { shortest: Some(9) } },
            Caught { switches: &[Bug::RecoveryOrder], property: "INV-PENDING-AT-ORIGIN", how: How::InAState { shortest: Some(8) } },
            Caught { switches: &[Bug::RecoveryOrder], property: "INV-NO-STRAY-UNION", how: How::InAState { shortest: Some(8) } },
            Caught { switches: &[Bug::RecoveredShowsRebalancing], property: "INV-SLOT", how: How::InAState { shortest: Some(8) } },
            Caught { switches: &[Bug::HashOrderRecovery, Bug::RecoveryOrder], property: "INV-NO-STRAY-UNION", how: How::InAState { shortest: Some(3) } },
        ],
    },
    Entry {
        name: "ci-rf2-server-crash",
        ci: true,
        scheduled: false,
        what: Some("RF-2 move `[0,1] -> [1,2]`, a server crash (shrinks the ISR, may take the leader)"),
        states: Some(States { reduced: 155_146, whole: 590_362, progress: 195_270 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-rf2-recovery",
        ci: true,
        scheduled: false,
        what: Some("RF-2 move, a coordinator crash at any point, a store failure, a cancel"),
        states: Some(States { reduced: 167_704, whole: 219_762, progress: 74_206 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-recovery-store",
        ci: true,
        scheduled: false,
        what: Some("RF-2 move, a coordinator crash and two store failures (recovery itself can fail and retry)"),
        states: Some(States { reduced: 88_078, whole: 114_548, progress: 37_539 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::StartupReadBlocks], property: "LIVE-RECOVERED", how: How::InAState { shortest: Some(2) } },
            Caught { switches: &[Bug::StartupReadBlocks], property: "LIVE-REGISTER-ACCEPTED", how: How::InAState { shortest: None } },
            Caught { switches: &[Bug::StartupReadSkips], property: "LIVE-RECOVERED", how: How::InAState { shortest: Some(3) } },
        ],
    },
    Entry {
        name: "ci-rf3-loss",
        ci: true,
        scheduled: false,
        what: Some("RF-3 overlapping move `[0,1,2] -> [1,2,3]`, a message loss"),
        states: Some(States { reduced: 39_757, whole: 104_608, progress: 38_661 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-rf3-crash-loss",
        ci: true,
        scheduled: true,
        what: Some("RF-3 overlapping move `[0,1,2] -> [1,2,3]`, a server crash and a message loss"),
        states: Some(States { reduced: 15_119_746, whole: 3_138_381, progress: 1_037_871 }),
        cycle_bound: Some(4),
        caught: &[],
    },
    Entry {
        name: "ci-backoff",
        ci: true,
        scheduled: false,
        what: Some("one move, reconcile backoff capped at 4 ticks, a server crash, a message loss; reconciles schedule exactly the backoffs 1, 2 and 4 (`model/tests/integration/bounds.rs` walks the graph for them)"),
        states: Some(States { reduced: 430_170, whole: 513_408, progress: 42_575 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-zombie",
        ci: true,
        scheduled: false,
        what: Some("leader-only bucket; a coordinator crash after which the deposed coordinator takes one more step (spec 9), a cancel"),
        states: Some(States { reduced: 132_633, whole: 132_633, progress: 23_431 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::UnfencedTaskWrites], property: "INV-CANCEL-PERSISTED-FIRST", how: How::InAState { shortest: Some(6) } },
            Caught { switches: &[Bug::UnfencedTaskWrites], property: "INV-FINAL-PERSISTED", how: How::InAState { shortest: Some(7) } },
            Caught { switches: &[Bug::UnfencedTaskWrites], property: "LIVE-FINAL-STORED", how: How::InAState { shortest: Some(11) } },
        ],
    },
    Entry {
        name: "ci-inflight2",
        ci: true,
        scheduled: false,
        what: Some("three moves, two slots (`max_inflight` 2), one tracked timed-out attempt; Its bound `M - 1 + k` = 2 is below its three buckets: `unbounded-tracked` violates INV-TRACKED-BOUND with two slots (4 steps), and both the tracked cap and the slots block an admission. Replaced `ci-tracked2-inflight2` (`M = k = 2`, 10,118,044 states, where the bound is every bucket and cannot fail), now the scheduled `tracked2-inflight2-net4.json`"),
        states: Some(States { reduced: 240_774, whole: 1_183_286, progress: 191_491 }),
        cycle_bound: Some(4),
        caught: &[
            Caught { switches: &[Bug::UnboundedTracked], property: "INV-TRACKED-BOUND", how: How::InAState { shortest: Some(4) } },
        ],
    },
    Entry {
        name: "ci-rf2-isr-cancel-crash",
        ci: true,
        scheduled: true,
        what: Some("RF-2 move; a server crash that shrinks the ISR, a cancel and a coordinator crash"),
        states: Some(States { reduced: 18_661_884, whole: 1_449_984, progress: 474_010 }),
        cycle_bound: Some(3),
        caught: &[],
    },
    Entry {
        name: "ci-liveness-store",
        ci: true,
        scheduled: false,
        what: Some("one move; a server crash, a bucket deletion and two store failures, so R19's, R20's and the deletion's writes can fail and R23.5 retries them on Tick"),
        states: Some(States { reduced: 361_317, whole: 626_096, progress: 219_598 }),
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "ci-tracked2",
        ci: true,
        scheduled: true,
        what: Some("three moves, one slot, two tracked timed-out attempts (`max_tracked_timed_out` 2), a deletion; The one CI preset where a bucket is deleted while it waits for its slot, so R4.1 completes it at admission. `M + k` plan buckets: the tracked cap blocks an admission at `M` = 2, and `unbounded-tracked` violates INV-TRACKED-BOUND (8 steps)"),
        states: Some(States { reduced: 5_787_574, whole: 459_911, progress: 110_781 }),
        cycle_bound: Some(2),
        caught: &[
            Caught { switches: &[Bug::UnboundedTracked], property: "INV-TRACKED-BOUND", how: How::InAState { shortest: Some(8) } },
        ],
    },
    Entry {
        name: "ci-leader-crash",
        ci: true,
        scheduled: false,
        what: Some("leader-only bucket, a server crash and restart, a message loss, a cancel: the one preset where R5's election meets a live replica outside the ISR (a restarted server not caught up), added when mutating `elect` changed no verdict (`spec/findings.md` F18); with the cancel (2 December) also the one where R14.1b cancels a tracked bucket its failed-over leader put back at origin; and where the progress check found a request lost to a leader the election keeps (F22)"),
        states: Some(States { reduced: 112_478, whole: 181_673, progress: 72_769 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::NoResendOnKeptLeader], property: "LIVE-PROGRESS", how: How::OnAFairCycle { lasso: Some((13, 2)) } },
        ],
    },
    Entry {
        name: "ci-refused-leader",
        ci: true,
        scheduled: false,
        what: Some("RF-3 leader-only bucket `[0,1,2] -> [2,0,1]` with 2 outside the ISR, one server crash: the crash shrinks the ISR while the leader's proposal is in flight, and the refusal reaches the leader after it adopted the new view (the seeded simulation's F20, in the model: F22)"),
        states: Some(States { reduced: 808_321, whole: 166_557, progress: 62_354 }),
        cycle_bound: Some(3),
        caught: &[
            Caught { switches: &[Bug::NoResendOnKeptLeader], property: "LIVE-PROGRESS", how: How::OnAFairCycle { lasso: Some((18, 2)) } },
        ],
    },
    Entry {
        name: "ci-repair-after-crash",
        ci: true,
        scheduled: false,
        what: Some("no rebalance (no register budget, so every `SOME-*` is n/a): the sole replica's crash, its restart's election write failing, a coordinator crash; the repairs R17 reads back (F23)"),
        states: Some(States { reduced: 89, whole: 89, progress: 89 }),
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::RepairsLostOnRestart], property: "LIVE-METADATA-REPAIRED", how: How::InAState { shortest: Some(4) } },
        ],
    },
    Entry {
        name: "full",
        ci: false,
        scheduled: true,
        what: None,
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "rf3-overlap-server-crash.json",
        ci: false,
        scheduled: true,
        what: Some("RF-3 overlapping move, a server crash"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "three-buckets-tracked2-inflight2.json",
        ci: false,
        scheduled: true,
        what: Some("three moves, two slots, two tracked timed-out attempts, no bound: exhausted since the partial-order reduction (it passed 31.7 million states unfinished before)"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "four-buckets-inflight3-tracked1.json",
        ci: false,
        scheduled: true,
        what: Some("four moves, three slots, one tracked timed-out attempt, no bound: apache/fluss#4097's concurrency at M = 3 (spec/fluss-designs.md)"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "design-planned-leader.json",
        ci: false,
        scheduled: true,
        what: Some("apache/fluss#3869's planned leader (`planned_leader`, model only): an RF-2 move whose old leader stays in the target but is not the planned one, the planned leader's crash and restart, a coordinator crash, a cancel; `design-planned-leader-crash.json` is its crash-only graph, which `model/tests/integration/designs.rs` walks"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "design-remote-plan-move.json",
        ci: false,
        scheduled: true,
        what: Some("apache/fluss#3868's remote plan (`remote_plan`, model only): an RF-2 move, two registers, a cancel, two store failures and a coordinator crash; `design-remote-plan.json` is its leader-only graph, which `model/tests/integration/designs.rs` checks whole and on which the design's three misreadings are caught"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "design-oversized-node-move.json",
        ci: false,
        scheduled: true,
        what: Some("apache/fluss#4335's oversized node (`session_lost_on_store_failure`, model only): every failed store operation also costs the coordinator its session; an RF-2 move, three such failures, a cancel; whole graph (the reduction does not apply). `design-oversized-node.json` is its leader-only graph, which `model/tests/integration/designs.rs` checks whole, with the progress check"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "rest-rf2-recovery.json",
        ci: false,
        scheduled: true,
        what: Some("one RF-2 move against the abstract rest of its plan (`abstract_buckets`, spec 9 \"One bucket against the rest of the plan\"): a move ahead of it and a leader-only bucket behind it, both abstract; a coordinator crash, a store failure, a cancel. Safety only: the rest's steps are optional, so the LIVE-* goals do not apply. `rest-premise/` holds the concrete two-bucket graphs on which `model/tests/rest_premise.rs` matches every step of the whole model in the abstract one"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "rf3-two-buckets-all-faults.json",
        ci: false,
        scheduled: true,
        what: Some("two RF-3 overlapping moves, a server crash, a coordinator crash, a store failure, a cancel, a loss and a duplication: not exhausted (measurements.md says how far)"),
        states: None,
        cycle_bound: None,
        caught: &[],
    },
    Entry {
        name: "design-remote-plan.json",
        ci: false,
        scheduled: false,
        what: None,
        states: None,
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::ReferenceBeforePlan], property: "INV-PLAN-RESOLVES", how: How::InAState { shortest: Some(1) } },
            Caught { switches: &[Bug::ReferenceBeforePlan], property: "LIVE-RECOVERED", how: How::InAState { shortest: Some(1) } },
            Caught { switches: &[Bug::CleanupBeforeReference], property: "INV-PLAN-RESOLVES", how: How::InAState { shortest: Some(3) } },
            Caught { switches: &[Bug::OnePlanPath], property: "INV-PLAN-RESOLVES", how: How::InAState { shortest: Some(3) } },
        ],
    },
    Entry {
        name: "variant-fluss-at-origin.json",
        ci: false,
        scheduled: false,
        what: None,
        states: None,
        cycle_bound: None,
        caught: &[
            Caught { switches: &[Bug::FlussAtOrigin], property: "INV-CANCEL-NO-NEW-WORK", how: How::InAState { shortest: Some(7) } },
        ],
    },
];
