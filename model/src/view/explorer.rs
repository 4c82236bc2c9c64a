//! The Explorer for people: the Stateright Explorer (`rebalance-model explore --ui
//! stateright`) over [`ExplorerModel`], the model whose states print as the spec and the trace format write them
//! (the state panel shows `Debug` text, so [`ExplorerState`]'s `Debug` is that rendering), and
//! the SVG picture of the buckets ([`svg`]). [`ExplorerModel`] steps exactly as
//! [`RebalanceModel`] does, in the same action order and with the same state hash, so an
//! Explorer address `#/steps/0/3/1` names the same path in both. The default Explorer is our
//! own pages ([`crate::view::web`]), which say why.

use super::{describe, render};
use crate::state::types::{BucketId, Replicas, ServerId, ServerSet};
use crate::state::{Coordinator, SystemState};
use crate::step::action::Action;
use crate::step::model::RebalanceModel;
use serde_json::json;
use stateright::{Model, Path, Property};
use std::collections::HashSet;
use std::fmt::{self, Write};
use std::sync::{Mutex, OnceLock};

/// The Explorer's address of a path given as action indices in `Model::actions` order:
/// `http://ADDR/steps/0/3/1`, the leading `0` being the (only) initial state: the route of our
/// Explorer's pages ([`crate::view::web`]). Stateright's own UI (`explore --ui stateright`)
/// takes the same indices after `#`: `http://ADDR/#/steps/0/3/1` ([`stateright_address`]); our
/// page at `/` forwards that form.
pub fn address(addr: &str, indices: &[usize]) -> String {
    format!("http://{addr}{}", route(indices))
}

/// The address of the same path in Stateright 0.31.0's UI (`ui/app.js` fetches `/.states/0/3`
/// and picks the step whose `actionIndex` is 1).
pub fn stateright_address(addr: &str, indices: &[usize]) -> String {
    format!("http://{addr}/#{}", route(indices))
}

/// The route of a path on our Explorer's pages: `/steps/0/3/1`. It lives here, below the
/// pages, because both the addresses above and the pages' links are built from it.
pub fn route(indices: &[usize]) -> String {
    let mut out = String::from("/steps/0");
    for i in indices {
        let _ = write!(out, "/{i}");
    }
    out
}

/// A state as the Explorer shows it: `Debug` is [`state_text`].
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ExplorerState(pub SystemState);

impl fmt::Debug for ExplorerState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&state_text(&self.0))
    }
}

/// [`RebalanceModel`] with [`ExplorerState`] for states.
pub struct ExplorerModel(pub RebalanceModel);

fn properties() -> &'static [Property<RebalanceModel>] {
    static ALL: OnceLock<Vec<Property<RebalanceModel>>> = OnceLock::new();
    ALL.get_or_init(crate::verdict::properties::all)
}

/// A property's condition on [`ExplorerModel`]: `Property` takes a plain `fn`, so one function
/// per index of [`properties`].
fn holds<const I: usize>(m: &ExplorerModel, s: &ExplorerState) -> bool {
    (properties()[I].condition)(&m.0, &s.0)
}

type Condition = fn(&ExplorerModel, &ExplorerState) -> bool;
const CONDITIONS: [Condition; 53] = [
    holds::<0>,
    holds::<1>,
    holds::<2>,
    holds::<3>,
    holds::<4>,
    holds::<5>,
    holds::<6>,
    holds::<7>,
    holds::<8>,
    holds::<9>,
    holds::<10>,
    holds::<11>,
    holds::<12>,
    holds::<13>,
    holds::<14>,
    holds::<15>,
    holds::<16>,
    holds::<17>,
    holds::<18>,
    holds::<19>,
    holds::<20>,
    holds::<21>,
    holds::<22>,
    holds::<23>,
    holds::<24>,
    holds::<25>,
    holds::<26>,
    holds::<27>,
    holds::<28>,
    holds::<29>,
    holds::<30>,
    holds::<31>,
    holds::<32>,
    holds::<33>,
    holds::<34>,
    holds::<35>,
    holds::<36>,
    holds::<37>,
    holds::<38>,
    holds::<39>,
    holds::<40>,
    holds::<41>,
    holds::<42>,
    holds::<43>,
    holds::<44>,
    holds::<45>,
    holds::<46>,
    holds::<47>,
    holds::<48>,
    holds::<49>,
    holds::<50>,
    holds::<51>,
    holds::<52>,
];

impl Model for ExplorerModel {
    type State = ExplorerState;
    type Action = Action;

    fn init_states(&self) -> Vec<ExplorerState> {
        vec![ExplorerState(self.0.init_state())]
    }

    fn actions(&self, state: &ExplorerState, actions: &mut Vec<Action>) {
        self.0.candidate_actions(&state.0, actions);
    }

    fn next_state(&self, state: &ExplorerState, action: Action) -> Option<ExplorerState> {
        self.0
            .step(&state.0, &action)
            .map(|(s, _)| ExplorerState(s))
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let all = properties();
        assert!(
            all.len() <= CONDITIONS.len(),
            "add conditions for {} properties",
            all.len()
        );
        all.iter()
            .zip(CONDITIONS)
            .map(|(p, condition)| Property {
                expectation: p.expectation.clone(),
                name: explorer_name(p, &self.0.config),
                condition,
            })
            .collect()
    }

    fn within_boundary(&self, state: &ExplorerState) -> bool {
        self.0.within_bound_counted(&state.0)
    }

    fn format_action(&self, action: &Action) -> String {
        describe::short_action(action)
    }

    fn format_step(&self, last_state: &ExplorerState, action: Action) -> Option<String> {
        describe::step(&self.0, &last_state.0, &action)
    }

    fn as_svg(&self, path: Path<ExplorerState, Action>) -> Option<String> {
        let mut states = path.into_states();
        let last = states.pop()?;
        Some(svg_step(&self.0, states.last().map(|p| &p.0), &last.0))
    }
}

/// A property's name in the Explorer: a property that `check` reports as n/a on this
/// configuration says so, with the reason, so that the Explorer's "Example not found" is not read
/// as a missing example (`check` requires none). Stateright's `Property` wants a `&'static str`
/// and its server asks for the properties on every request, so each such name is made once and
/// interned for the process (there are at most as many as companions times n/a reasons).
fn explorer_name(p: &Property<RebalanceModel>, config: &crate::config::Config) -> &'static str {
    static INTERNED: OnceLock<Mutex<HashSet<&'static str>>> = OnceLock::new();
    let Some(why) = crate::verdict::properties::property_not_applicable(p, config) else {
        return p.name;
    };
    let name = format!("{} (n/a here: {why})", p.name);
    let mut interned = INTERNED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    match interned.get(name.as_str()) {
        Some(kept) => kept,
        None => {
            let kept: &'static str = Box::leak(name.into_boxed_str());
            interned.insert(kept);
            kept
        }
    }
}

fn yes(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

/// The plan entry of bucket `b`: the coordinator's, else the stored task's (a coordinator that
/// has not recovered yet has none).
fn plan_of(s: &SystemState, b: BucketId) -> Option<crate::state::types::PlanEntry> {
    s.coordinator.plan_entry(b).copied().or_else(|| {
        s.store
            .task
            .as_ref()?
            .plan
            .iter()
            .find(|e| e.bucket == b)
            .copied()
    })
}

fn coordinator_line(c: &Coordinator) -> String {
    format!(
        "  rebalance {}, overall {}, cancel_requested {}, finalize pending {} (queued {}), \
         recovery pending {} (queued {})",
        c.rid.map_or("none".to_string(), |r| r.to_string()),
        c.overall
            .as_ref()
            .map_or("null".to_string(), render::status),
        c.cancel_requested,
        yes(c.finalize_pending),
        yes(c.finalize_queued),
        yes(c.recovery_pending),
        yes(c.recovery_queued),
    )
}

/// The state panel's text: the store, the coordinator, then per bucket the store's metadata,
/// the coordinator's status and attempt and each server's view, then the in-flight messages,
/// the budgets left and any violated history invariant. Values are the JSON of
/// `spec/trace-format.md`, statuses as the spec names them.
pub fn state_text(s: &SystemState) -> String {
    let c = &s.coordinator;
    let meta = &s.store.buckets;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "store (coordinator epoch {})",
        s.store.coordinator_epoch
    );
    match &s.store.task {
        None => out.push_str("  task null\n"),
        Some(t) => {
            let _ = writeln!(
                out,
                "  task {}",
                render::json(&json!({
                    "id": t.id,
                    "status": t.status,
                    "cancel_requested": t.cancel_requested,
                }))
            );
            for e in t.plan.iter() {
                let _ = writeln!(out, "  plan {}", render::json(e));
            }
        }
    }
    let _ = writeln!(
        out,
        "coordinator (epoch {}, live {})",
        c.ce,
        render::json(&c.live)
    );
    out.push_str(&coordinator_line(c));
    out.push('\n');
    let pending: Vec<_> = c.pending.iter().collect();
    let _ = writeln!(out, "  pending {}", render::json(&pending));
    let events: Vec<_> = c.events.iter().collect();
    let _ = writeln!(out, "  events {}", render::json(&events));
    if c.cache != s.store.buckets {
        out.push_str("  its cache differs from the store (INV-CONTEXT-COHERENT)\n");
    }
    for b in 0..meta.assignment.len() {
        let lai = meta.lai[b];
        let _ = write!(out, "bucket {b}");
        if let Some(e) = plan_of(s, b as BucketId) {
            let _ = write!(
                out,
                " (plan {} -> {}, leader {} -> {})",
                render::json(&e.ors),
                render::json(&e.trs),
                e.old_leader,
                e.new_leader
            );
        }
        out.push('\n');
        let _ = writeln!(
            out,
            "  store        {}",
            render::json(&json!({
                "assignment": meta.assignment[b],
                "leader": lai.leader,
                "isr": lai.isr,
                "leader_epoch": lai.leader_epoch,
                "bucket_epoch": lai.bucket_epoch,
                "deleted": meta.deleted[b],
            }))
        );
        let status = c
            .status_of(b as BucketId)
            .as_ref()
            .map_or("null".to_string(), render::status);
        let _ = write!(out, "  coordinator  {status}");
        if let Some(a) = c.attempt(b as BucketId) {
            let _ = write!(out, ", attempt {}", render::json(a));
        }
        out.push('\n');
        for (sv, st) in s.servers.iter().enumerate() {
            let up = if st.up { "up" } else { "down" };
            let view = s
                .view(sv as ServerId, b as BucketId)
                .map_or("no view".to_string(), |v| render::json(&v));
            let _ = writeln!(out, "  s{sv} ({up:<4})    {view}");
        }
    }
    let _ = writeln!(out, "network ({} in flight)", s.network.len());
    for m in s.network.iter() {
        let _ = writeln!(out, "  {}", render::message(m));
    }
    let _ = writeln!(out, "budgets left {}", render::json(&s.budgets));
    let violated: Vec<&str> = violation_names(s);
    if !violated.is_empty() {
        let _ = writeln!(out, "violated history invariants: {}", violated.join(", "));
    }
    out
}

/// The sticky violation flags that are set, by their field names.
fn violation_names(s: &SystemState) -> Vec<&'static str> {
    let v = serde_json::to_value(s.ghost.violations).expect("flags serialize");
    FLAGS
        .iter()
        .copied()
        .filter(|f| v[*f] == json!(true))
        .collect()
}

const FLAGS: &[&str] = &[
    "admitted_while_capped",
    "stale_timeout_acted",
    "stale_reconcile_acted",
    "unfenced_completion",
    "completed_unacked",
    "canceled_before_persist",
    "admitted_after_final",
    "new_work_after_cancel",
    "canceled_off_origin",
    "epoch_without_change",
    "change_without_epoch",
    "unfenced_adjust_isr",
    "cancel_effects_incomplete",
];

const ORIGIN: &str = "#d95f02";
const TARGET: &str = "#1b9e77";
const BOTH: &str = "#444";
const ISR: &str = "#9cf";
/// The band behind a bucket that the last step changed, and the mark of a changed server.
const CHANGED: &str = "#fff3b0";
const CHANGED_LINE: &str = "#b8860b";

/// A replica's place in its bucket's plan: origin only, target only, both, or neither.
fn role(ors: ServerSet, trs: ServerSet, s: u8) -> (&'static str, &'static str) {
    match (ors.contains(s), trs.contains(s)) {
        (true, false) => ("O", ORIGIN),
        (false, true) => ("T", TARGET),
        (true, true) => ("OT", BOTH),
        (false, false) => ("", "black"),
    }
}

/// Where the stored assignment is relative to the plan.
fn phase(assignment: &Replicas, ors: ServerSet, trs: ServerSet) -> &'static str {
    let a = ServerSet::from_servers(assignment);
    if a == ors && a == trs {
        "origin = target"
    } else if a == ors {
        "at origin"
    } else if a == trs {
        "at target"
    } else if a == ors.union(trs) {
        "union"
    } else {
        "other"
    }
}

/// The picture: one row per bucket and one column per server. A stored replica is a solid box,
/// filled blue when it is in the ISR, with a thick border and a dot when it is the leader; its
/// letter and border colour say whether the server is in the plan's origin only (O, orange),
/// the target only (T, green) or both (OT); a planned replica not in the assignment is dashed.
/// Each row says where the assignment is (at origin, union, at target), the epochs and the
/// coordinator's status; a legend and a status line close it.
pub fn svg(model: &RebalanceModel, s: &SystemState) -> String {
    svg_step(model, None, s)
}

/// Whether bucket `b` reads differently in `a` and `b_state`: its stored metadata, the
/// coordinator's status or attempt for it, or a server's view of it.
fn bucket_changed(a: &SystemState, s: &SystemState, b: usize) -> bool {
    let (ma, ms) = (&a.store.buckets, &s.store.buckets);
    let id = b as BucketId;
    ma.assignment[b] != ms.assignment[b]
        || ma.lai[b] != ms.lai[b]
        || ma.deleted[b] != ms.deleted[b]
        || a.coordinator.status_of(id) != s.coordinator.status_of(id)
        || a.coordinator.attempt(id) != s.coordinator.attempt(id)
        || (0..s.servers.len()).any(|sv| a.view(sv as ServerId, id) != s.view(sv as ServerId, id))
}

/// [`svg`] with what changed since `prev`, the state before the last step, marked: a changed
/// bucket's row has a yellow band and the word "changed", a server that went down or came up
/// its name underlined. (The Explorer's step text says how each changed.)
pub fn svg_step(model: &RebalanceModel, prev: Option<&SystemState>, s: &SystemState) -> String {
    let servers = model.config.servers as usize;
    let rows = s.store.buckets.assignment.len();
    let x0 = 150;
    let text_x = x0 + 40 * servers + 10;
    let w = (text_x + 330).max(760);
    let h = 40 + 50 * rows + 80;
    let mut out = format!(
        "<svg version='1.1' baseProfile='full' width='{w}' height='{h}' \
         xmlns='http://www.w3.org/2000/svg' font-family='monospace' font-size='12'>\
         <rect x='0' y='0' width='{w}' height='{h}' fill='white'/>"
    );
    for sv in 0..servers {
        let x = x0 + 40 * sv;
        let up = s.servers[sv].up;
        if prev.is_some_and(|p| p.servers[sv].up != up) {
            let _ = write!(
                out,
                "<line class='changed' x1='{}' y1='23' x2='{}' y2='23' stroke='{CHANGED_LINE}' \
                 stroke-width='2'/>",
                x + 5,
                x + 25
            );
        }
        let _ = write!(
            out,
            "<text x='{}' y='20' fill='{}'>s{sv}</text>",
            x + 7,
            if up { "black" } else { "red" },
        );
        if !up {
            let _ = write!(
                out,
                "<text x='{}' y='32' fill='red' font-size='10'>down</text>",
                x + 4
            );
        }
    }
    let c = &s.coordinator;
    for b in 0..rows {
        let y = 40 + 50 * b;
        if prev.is_some_and(|p| bucket_changed(p, s, b)) {
            let _ = write!(
                out,
                "<rect class='changed' x='0' y='{}' width='{w}' height='40' fill='{CHANGED}'/>\
                 <text x='5' y='{}' font-size='10' fill='{CHANGED_LINE}'>changed</text>",
                y - 5,
                y + 33
            );
        }
        let meta = &s.store.buckets;
        let lai = meta.lai[b];
        let assignment = meta.assignment[b];
        let plan = plan_of(s, b as BucketId);
        let (ors, trs) = plan.map_or((ServerSet::EMPTY, ServerSet::EMPTY), |e| {
            (ServerSet::from_servers(&e.ors), e.trs_set())
        });
        let label = match plan {
            Some(e) => format!("b{b} {}→{}", render::json(&e.ors), render::json(&e.trs)),
            None => format!("b{b}"),
        };
        let _ = write!(out, "<text x='5' y='{}'>{label}</text>", y + 20);
        for sv in 0..servers as u8 {
            let x = x0 + 40 * sv as usize;
            let (letter, colour) = role(ors, trs, sv);
            let assigned = assignment.contains(&sv);
            if assigned {
                let fill = if lai.isr.contains(sv) { ISR } else { "white" };
                let stroke = if lai.leader == Some(sv) { 3 } else { 1 };
                let _ = write!(
                    out,
                    "<rect x='{x}' y='{y}' width='30' height='30' fill='{fill}' \
                     stroke='{colour}' stroke-width='{stroke}'/>"
                );
                if lai.leader == Some(sv) {
                    let _ = write!(
                        out,
                        "<circle cx='{}' cy='{}' r='4' fill='black'/>",
                        x + 26,
                        y + 4
                    );
                }
            } else if !letter.is_empty() {
                let _ = write!(
                    out,
                    "<rect x='{x}' y='{y}' width='30' height='30' fill='none' \
                     stroke='{colour}' stroke-dasharray='4 3'/>"
                );
            }
            if !letter.is_empty() {
                let _ = write!(
                    out,
                    "<text x='{}' y='{}' fill='{colour}'>{letter}</text>",
                    x + if letter.len() == 1 { 11 } else { 8 },
                    y + 20
                );
            }
        }
        let status = c
            .status_of(b as BucketId)
            .map_or("not in plan".to_string(), |st| render::status(&st));
        let deleted = if meta.deleted[b] { ", deleted" } else { "" };
        let where_ = plan.map_or(String::new(), |_| {
            format!("{}, ", phase(&assignment, ors, trs))
        });
        let _ = write!(
            out,
            "<text x='{text_x}' y='{}'>{status}{deleted}</text>\
             <text x='{text_x}' y='{}' font-size='10'>{where_}epochs {}/{}, isr {}</text>",
            y + 13,
            y + 27,
            lai.leader_epoch,
            lai.bucket_epoch,
            render::json(&lai.isr)
        );
    }
    // The legend.
    let ly = 40 + 50 * rows + 5;
    let key = |out: &mut String, x: usize, colour: &str, fill: &str, dash: bool, text: &str| {
        let _ = write!(
            out,
            "<rect x='{x}' y='{ly}' width='14' height='14' fill='{fill}' stroke='{colour}'{}/>\
             <text x='{}' y='{}' font-size='11'>{text}</text>",
            if dash { " stroke-dasharray='3 2'" } else { "" },
            x + 18,
            ly + 11
        );
    };
    key(&mut out, 5, ORIGIN, "white", false, "O origin");
    key(&mut out, 95, TARGET, "white", false, "T target");
    key(&mut out, 185, BOTH, "white", false, "OT both");
    key(&mut out, 265, "black", ISR, false, "in ISR");
    key(&mut out, 345, TARGET, "none", true, "planned, not assigned");
    let _ = write!(
        out,
        "<rect x='525' y='{ly}' width='14' height='14' fill='white' stroke='black' \
         stroke-width='3'/><circle cx='536' cy='{}' r='3' fill='black'/>\
         <text x='545' y='{}' font-size='11'>leader</text>",
        ly + 3,
        ly + 11
    );
    if prev.is_some() {
        key(
            &mut out,
            600,
            CHANGED_LINE,
            CHANGED,
            false,
            "changed by the step",
        );
    }
    let task = s.store.task.as_ref().map_or("no task".to_string(), |t| {
        format!(
            "task r{} {}{}",
            t.id,
            render::status(&t.status),
            if t.cancel_requested { " cancel" } else { "" }
        )
    });
    let _ = write!(
        out,
        "<text x='5' y='{}'>ce {} | {task} | overall {} | events {} | msgs {}</text></svg>",
        h - 20,
        c.ce,
        c.overall.as_ref().map_or("-".to_string(), render::status),
        c.events.len(),
        s.network.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new history invariant flag must be named in the state panel too.
    #[test]
    fn every_violation_flag_is_listed() {
        let v = serde_json::to_value(crate::state::Violations::default()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        let mut listed = FLAGS.to_vec();
        listed.sort();
        let mut keys = keys;
        keys.sort();
        assert_eq!(keys, listed);
    }

    #[test]
    fn the_address_is_the_ui_route_of_action_indices() {
        assert_eq!(
            address("127.0.0.1:3000", &[0, 3, 1]),
            "http://127.0.0.1:3000/steps/0/0/3/1"
        );
        assert_eq!(address("h:1", &[]), "http://h:1/steps/0");
        assert_eq!(stateright_address("h:1", &[2]), "http://h:1/#/steps/0/2");
    }

    /// A property `check` calls n/a says so in the Explorer, and no other does.
    #[test]
    fn n_a_companions_are_named_so() {
        for preset in ["tiny", "ci-store", "ci-server-crash"] {
            let config = crate::config::presets::preset(preset).unwrap();
            let m = ExplorerModel(RebalanceModel::new(
                config.clone(),
                crate::verdict::bug::BugSet::none(),
            ));
            let mut marked = 0;
            for (ours, p) in m.properties().iter().zip(crate::verdict::properties::all()) {
                let na = crate::verdict::properties::property_not_applicable(&p, &config).is_some();
                assert_eq!(
                    ours.name.contains("(n/a here: "),
                    na,
                    "{preset}: {}",
                    ours.name
                );
                marked += usize::from(na);
            }
            // tiny has no fault budgets, so some companions are n/a there.
            assert!(preset != "tiny" || marked > 0, "tiny: none marked n/a");
            // The server asks on every request: the same names, not new ones each time.
            let again = m.properties();
            for (a, b) in m.properties().iter().zip(&again) {
                assert!(
                    std::ptr::eq(a.name, b.name),
                    "{preset}: {} made twice",
                    a.name
                );
            }
        }
    }

    /// The Explorer's action labels name each action of a state apart from its siblings, and
    /// stay short: every state of two presets, breadth first.
    #[test]
    fn short_action_labels_are_distinct_among_a_states_actions() {
        for preset in ["ci-store", "ci-rf3-loss"] {
            let m = RebalanceModel::new(
                crate::config::presets::preset(preset).unwrap(),
                crate::verdict::bug::BugSet::none(),
            );
            let init = m.init_state();
            let mut seen = std::collections::HashSet::from([init.clone()]);
            let mut queue = std::collections::VecDeque::from([init]);
            let (mut actions, mut longest) = (Vec::new(), 0);
            while let Some(s) = queue.pop_front() {
                actions.clear();
                m.candidate_actions(&s, &mut actions);
                let mut labels = std::collections::HashSet::new();
                for a in &actions {
                    let label = describe::short_action(a);
                    longest = longest.max(label.len());
                    assert!(
                        labels.insert(label.clone()),
                        "{preset}: two actions labelled `{label}`"
                    );
                    if let Some((next, _)) = m.step(&s, a) {
                        if seen.insert(next.clone()) {
                            queue.push_back(next);
                        }
                    }
                }
            }
            assert!(longest <= 100, "{preset}: a label of {longest} characters");
            assert!(seen.len() > 10_000, "{preset}: only {} states", seen.len());
        }
    }

    /// Every property has a condition on the Explorer's model, with its name and kind.
    #[test]
    fn the_explorer_model_has_every_property() {
        let m = ExplorerModel(RebalanceModel::new(
            crate::config::presets::preset("tiny").unwrap(),
            crate::verdict::bug::BugSet::none(),
        ));
        let ours = m.properties();
        let theirs = crate::verdict::properties::all();
        assert_eq!(ours.len(), theirs.len());
        let init = m.init_states().remove(0);
        for (a, b) in ours.iter().zip(&theirs) {
            assert!(a.name.starts_with(b.name), "{} for {}", a.name, b.name);
            assert_eq!(a.expectation, b.expectation);
            assert_eq!(
                (a.condition)(&m, &init),
                (b.condition)(&m.0, &init.0),
                "{}",
                a.name
            );
        }
    }
}
