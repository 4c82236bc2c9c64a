//! Conformance suites: a small set of version 2 traces, with expectations taken from the model's
//! own states, that together cover every rule (spec 5, [`Rule`]), every action kind
//! ([`ActionKind`], with and without an injected store fault where it can carry one) and every
//! `SOME-*` companion reachable on a configuration (`rebalance-model suite`).
//!
//! How it is built: one breadth-first search of the whole graph (the edges Stateright follows,
//! `walk::edges`) records, for every goal, the first edge in BFS order that reaches it, so the
//! path to that edge is a shortest one. A greedy set cover over those shortest paths then picks
//! the fewest it can, and a last pass drops any path whose goals the others already cover.
//! Everything is in a fixed order (goals, candidate actions, ties broken by path length and then
//! goal order), so the same configuration always gives the same files.

use crate::check::walk;
use crate::config::Config;
use crate::state::SystemState;
use crate::step::action::{Action, ActionKind, StepOutput};
use crate::step::model::RebalanceModel;
use crate::trace::expect::{Expectation, Observation};
use crate::trace::pattern::Limits;
use crate::trace::Trace;
use crate::verdict::bug::BugSet;
use crate::verdict::rule::Rule;
use serde_json::{json, Value};
use stateright::{Expectation as Kind, Property};
use std::collections::{HashMap, VecDeque};
use std::path::Path;

/// What a suite must exercise at least once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Goal {
    /// A rule (or a numbered case of one) fired by a step; R8 is a step whose store op failed.
    Rule(Rule),
    /// An action of this kind was taken, with an injected store fault (`true`) or without.
    Kind(ActionKind, bool),
    /// A `SOME-*` companion (spec 7.2) held in a state reached.
    Companion(&'static str),
}

impl Goal {
    /// Every goal, in a fixed order: rules, action kinds, companions.
    pub fn all() -> Vec<Goal> {
        let mut goals: Vec<Goal> = Rule::ALL.into_iter().map(Goal::Rule).collect();
        for k in ActionKind::ALL {
            goals.push(Goal::Kind(k, false));
            if k.can_fail_store() {
                goals.push(Goal::Kind(k, true));
            }
        }
        for p in crate::verdict::properties::all() {
            if p.expectation == Kind::Sometimes {
                goals.push(Goal::Companion(p.name));
            }
        }
        goals
    }

    /// As the spec and the coverage tables write it: `R7.2`, `deliver_nli_response+store_fault`,
    /// `SOME-COMPLETED`.
    pub fn label(&self) -> String {
        match self {
            Goal::Rule(r) => r.label().to_string(),
            Goal::Kind(k, false) => k.name().to_string(),
            Goal::Kind(k, true) => format!("{}+store_fault", k.name()),
            Goal::Companion(name) => name.to_string(),
        }
    }

    /// The label as a file name part: `r7-2`, `deliver-nli-response-store-fault`.
    fn slug(&self) -> String {
        self.label()
            .to_ascii_lowercase()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect()
    }
}

/// Goals as indices into [`Goal::all`].
type Hits = Vec<usize>;

/// What one edge (the action, its output and the state it reaches) achieves, as indices.
struct Scorer {
    goals: Vec<Goal>,
    companions: Vec<(usize, Property<RebalanceModel>)>,
}

impl Scorer {
    fn new() -> Scorer {
        let goals = Goal::all();
        let companions = crate::verdict::properties::all()
            .into_iter()
            .filter(|p| p.expectation == Kind::Sometimes)
            .map(|p| {
                let i = goals
                    .iter()
                    .position(|g| *g == Goal::Companion(p.name))
                    .expect("every companion is a goal");
                (i, p)
            })
            .collect();
        Scorer { goals, companions }
    }

    fn index(&self, g: Goal) -> usize {
        self.goals.iter().position(|x| *x == g).expect("a goal")
    }

    fn edge(&self, action: &Action, out: &StepOutput, hits: &mut Hits) {
        for r in out.rules.iter() {
            hits.push(self.index(Goal::Rule(r)));
        }
        if out.store_failed {
            hits.push(self.index(Goal::Rule(Rule::R8)));
        }
        hits.push(self.index(Goal::Kind(action.kind(), action.fail_store_op().is_some())));
    }

    fn state(&self, model: &RebalanceModel, s: &SystemState, hits: &mut Hits) {
        for (i, p) in &self.companions {
            if (p.condition)(model, s) {
                hits.push(*i);
            }
        }
    }

    /// Every goal a path reaches, and for each step (0-based) the goals it reaches.
    fn along(&self, model: &RebalanceModel, actions: &[Action]) -> Vec<Hits> {
        let mut state = model.init_state();
        let mut per_step = Vec::new();
        for a in actions {
            let (next, out) = model.step(&state, a).expect("a recorded path");
            let mut hits = Vec::new();
            self.edge(a, &out, &mut hits);
            self.state(model, &next, &mut hits);
            per_step.push(hits);
            state = next;
        }
        per_step
    }
}

/// The labels of every goal a path reaches, in goal order: what a suite's manifest says the
/// trace `covers`.
pub fn covers(model: &RebalanceModel, actions: &[Action]) -> Vec<String> {
    let scorer = Scorer::new();
    let mut set = vec![false; scorer.goals.len()];
    for h in scorer.along(model, actions).iter().flatten() {
        set[*h] = true;
    }
    (0..set.len())
        .filter(|g| set[*g])
        .map(|g| scorer.goals[g].label())
        .collect()
}

/// The result of the search: for every goal, a shortest path to it, if reachable.
struct Reach {
    states: usize,
    shortest: Vec<Option<Vec<Action>>>,
}

/// Breadth-first over the whole graph; every state once, every edge once.
fn reach(model: &RebalanceModel, scorer: &Scorer) -> Reach {
    let init = model.init_state();
    let init_fp = walk::fingerprint(&init);
    // fingerprint -> (parent fingerprint, action index); the root points at itself.
    let mut links: HashMap<u64, (u64, u32)> = HashMap::from([(init_fp, (init_fp, u32::MAX))]);
    // goal -> (source state's fingerprint, action index), the first edge in BFS order.
    let mut first: Vec<Option<(u64, u32)>> = vec![None; scorer.goals.len()];
    let mut queue = VecDeque::from([(init, init_fp)]);
    let mut hits = Vec::new();
    while let Some((state, fp)) = queue.pop_front() {
        let mut children = Vec::new();
        walk::edges(model, &state, |i, a, next, out| {
            hits.clear();
            scorer.edge(&a, &out, &mut hits);
            let nfp = walk::fingerprint(&next);
            let new = !links.contains_key(&nfp);
            if new {
                scorer.state(model, &next, &mut hits);
            }
            for &g in &hits {
                first[g].get_or_insert((fp, i as u32));
            }
            if new {
                links.insert(nfp, (fp, i as u32));
                children.push((next, nfp));
            }
        });
        queue.extend(children);
    }
    let path_to = |mut fp: u64, last: u32| -> Vec<Action> {
        let mut indices = vec![last as usize];
        while let Some(&(parent, i)) = links.get(&fp) {
            if i == u32::MAX {
                break;
            }
            indices.push(i as usize);
            fp = parent;
        }
        indices.reverse();
        let mut state = model.init_state();
        let mut actions = Vec::new();
        for i in indices {
            let mut candidates = Vec::new();
            crate::check::por::search_actions(model, &state, &mut candidates);
            let a = candidates[i];
            state = model.step(&state, &a).expect("a recorded edge").0;
            actions.push(a);
        }
        actions
    };
    Reach {
        states: links.len(),
        shortest: first
            .into_iter()
            .map(|hit| hit.map(|(fp, i)| path_to(fp, i)))
            .collect(),
    }
}

/// One trace of a suite and what it covers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteTrace {
    /// `03-r7-2.json`: the order in the suite and the goal whose shortest path this is.
    pub file: String,
    pub trace: Trace,
    /// Labels of every goal the trace reaches, in goal order.
    pub covers: Vec<String>,
    /// Labels of the goals no earlier trace of the suite reaches.
    pub adds: Vec<String>,
}

/// A suite for one configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    /// The preset name or configuration file it was built for.
    pub name: String,
    /// Distinct states of the graph searched (the same count `check` reports).
    pub states: usize,
    pub traces: Vec<SuiteTrace>,
    /// Labels of the goals some trace reaches, in goal order.
    pub covered: Vec<String>,
    /// Labels of the goals no path of this configuration reaches.
    pub unreachable: Vec<String>,
}

/// Builds the suite of `config` (no bug switches: a suite states what a correct implementation
/// does).
pub fn build(name: &str, config: &Config) -> Suite {
    // The graph `check` searches, the partial-order reduction's (spec 9): it reaches every goal
    // the whole graph does (each rule fires on a step it takes from a state with the same
    // coordinator side, and it takes every kind of server step), in far fewer states; a path of
    // it is a path of the whole graph.
    let (model, _) = crate::check::por::reduced(config.clone(), BugSet::none());
    let scorer = Scorer::new();
    let reach = reach(&model, &scorer);
    let n = scorer.goals.len();
    // Each reachable goal's shortest path is a candidate, with every goal it reaches.
    let candidates: Vec<(usize, Vec<Action>, Vec<Hits>)> = reach
        .shortest
        .iter()
        .enumerate()
        .filter_map(|(g, p)| p.as_ref().map(|p| (g, p.clone(), scorer.along(&model, p))))
        .collect();
    let reached = |per_step: &[Hits]| {
        let mut set = vec![false; n];
        for h in per_step.iter().flatten() {
            set[*h] = true;
        }
        set
    };
    let mut uncovered: Vec<bool> = (0..n).map(|g| reach.shortest[g].is_some()).collect();
    let mut chosen: Vec<usize> = Vec::new();
    while uncovered.iter().any(|u| *u) {
        let gain = |c: &(usize, Vec<Action>, Vec<Hits>)| {
            reached(&c.2)
                .iter()
                .zip(&uncovered)
                .filter(|(r, u)| **r && **u)
                .count()
        };
        // Most new goals; then the shorter path; then the earlier goal (the candidates' order).
        let best = (0..candidates.len())
            .filter(|i| !chosen.contains(i))
            .max_by(|&a, &b| {
                let (ca, cb) = (&candidates[a], &candidates[b]);
                gain(ca)
                    .cmp(&gain(cb))
                    .then(cb.1.len().cmp(&ca.1.len()))
                    .then(b.cmp(&a))
            })
            .expect("an uncovered reachable goal has a candidate");
        for (g, r) in reached(&candidates[best].2).into_iter().enumerate() {
            if r {
                uncovered[g] = false;
            }
        }
        chosen.push(best);
    }
    // Drop, last chosen first, any path whose goals the others reach.
    for i in (0..chosen.len()).rev() {
        let others: Vec<bool> = chosen.iter().enumerate().filter(|(j, _)| *j != i).fold(
            vec![false; n],
            |mut acc, (_, &c)| {
                for (g, r) in reached(&candidates[c].2).into_iter().enumerate() {
                    acc[g] |= r;
                }
                acc
            },
        );
        let own = reached(&candidates[chosen[i]].2);
        if own.iter().zip(&others).all(|(o, x)| !*o || *x) {
            chosen.remove(i);
        }
    }
    let total = chosen.len();
    let mut covered = vec![false; n];
    let mut traces = Vec::new();
    for (k, &c) in chosen.iter().enumerate() {
        let (goal, actions, per_step) = &candidates[c];
        let own = reached(per_step);
        let adds: Vec<usize> = (0..n).filter(|g| own[*g] && !covered[*g]).collect();
        let labels = |set: &[usize]| -> Vec<String> {
            set.iter().map(|g| scorer.goals[*g].label()).collect()
        };
        let covers: Vec<usize> = (0..n).filter(|g| own[*g]).collect();
        let mut cfg = config.clone();
        cfg.description = format!(
            "suite {name}, trace {} of {total}: a shortest path to {}; adds {}",
            k + 1,
            scorer.goals[*goal].label(),
            labels(&adds).join(", ")
        );
        let trace = with_expectations(&model, cfg, actions, per_step, &adds);
        for g in &adds {
            covered[*g] = true;
        }
        traces.push(SuiteTrace {
            file: format!("{:02}-{}.json", k + 1, scorer.goals[*goal].slug()),
            trace,
            covers: labels(&covers),
            adds: labels(&adds),
        });
    }
    let pick = |want: bool| -> Vec<String> {
        (0..n)
            .filter(|g| covered[*g] == want)
            .map(|g| scorer.goals[g].label())
            .collect()
    };
    Suite {
        name: name.to_string(),
        states: reach.states,
        traces,
        covered: pick(true),
        unreachable: pick(false),
    }
}

/// The fields of an observation an expectation states: all of them after a step, the state's
/// at the end.
fn expectation(
    model: &RebalanceModel,
    observed: Value,
    path: &str,
    from: usize,
    after: usize,
    end: bool,
) -> Expectation {
    let mut v = observed;
    let o = v.as_object_mut().expect("an observation is an object");
    if end {
        o.remove("sent");
        o.remove("reply");
    }
    // The coordinator's queue, live set, stored plan and attempts became assertable after the
    // shipped suites were written; a suite states what it always stated, so that regenerating
    // one changes nothing for the implementations that pass it.
    for k in ["events", "live", "plan"] {
        o.remove(k);
    }
    if let Some(Value::Object(buckets)) = o.get_mut("buckets") {
        for b in buckets.values_mut() {
            if let Some(b) = b.as_object_mut() {
                b.remove("attempt");
            }
        }
    }
    let limits = Limits {
        servers: model.config.servers.into(),
        buckets: model.config.buckets.len() as u64,
    };
    Expectation::parse(&v, path, from, after, limits).expect("the model's own observation")
}

/// The trace of `actions` with an `expect` block after every step that reaches a goal in
/// `adds`, and one at the end; each states what the model shows there.
fn with_expectations(
    model: &RebalanceModel,
    config: Config,
    actions: &[Action],
    per_step: &[Hits],
    adds: &[usize],
) -> Trace {
    let mut states = vec![model.init_state()];
    let mut outputs = Vec::new();
    for a in actions {
        let (next, out) = model
            .step(states.last().expect("a state"), a)
            .expect("a path");
        states.push(next);
        outputs.push(out);
    }
    let mut expectations = Vec::new();
    for (i, hits) in per_step.iter().enumerate() {
        if hits.iter().any(|g| adds.contains(g)) {
            let seen = Observation::of_model(&states[i + 1], &outputs[i..=i]).to_json();
            let path = format!("steps[{i}].expect");
            expectations.push(expectation(model, seen, &path, i, i + 1, false));
        }
    }
    let last = actions.len();
    let seen = Observation::of_model(&states[last], &outputs[last.saturating_sub(1)..]).to_json();
    expectations.push(expectation(
        model,
        seen,
        "expect",
        last.saturating_sub(1),
        last,
        true,
    ));
    let mut trace = Trace::new(config, BugSet::none(), actions.to_vec());
    trace.expectations = expectations;
    trace
}

/// The name of a suite's manifest in its directory.
pub const MANIFEST: &str = "suite.json";

impl Suite {
    /// The manifest: what each trace covers, what the suite covers and what is unreachable.
    pub fn manifest(&self) -> Value {
        json!({
            "config": self.name,
            "states": self.states,
            "traces": self.traces.iter().map(|t| json!({
                "file": t.file,
                "steps": t.trace.steps.len(),
                "expectations": t.trace.expectations.len(),
                "adds": t.adds,
                "covers": t.covers,
            })).collect::<Vec<_>>(),
            "covered": self.covered,
            "unreachable": self.unreachable,
        })
    }

    /// Writes every trace and the manifest into `dir`, created if missing. A directory that
    /// holds files must hold a suite (a manifest): the files its manifest lists are replaced,
    /// anything else is an error and nothing is written.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        let io = |e: std::io::Error| format!("{}: {e}", dir.display());
        if dir.exists() {
            let old = dir.join(MANIFEST);
            let entries: Vec<_> = std::fs::read_dir(dir)
                .map_err(io)?
                .collect::<Result<_, _>>()
                .map_err(io)?;
            if !entries.is_empty() {
                let text = std::fs::read_to_string(&old).map_err(|_| {
                    format!(
                        "{}: not empty and holds no suite ({MANIFEST}); give an empty or new \
                         directory",
                        dir.display()
                    )
                })?;
                let manifest: Value =
                    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", old.display()))?;
                let listed: Vec<&str> = manifest["traces"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["file"].as_str())
                    .collect();
                for e in &entries {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    if name != MANIFEST && !listed.contains(&name.as_ref()) {
                        return Err(format!(
                            "{}: holds {name}, which its {MANIFEST} does not list; nothing written",
                            dir.display()
                        ));
                    }
                }
                for f in listed {
                    if f.contains('/') || f.contains("..") {
                        return Err(format!("{}: lists the file {f}", old.display()));
                    }
                    std::fs::remove_file(dir.join(f)).map_err(io)?;
                }
            }
        }
        std::fs::create_dir_all(dir).map_err(io)?;
        for t in &self.traces {
            t.trace
                .write(dir.join(&t.file))
                .map_err(|e| e.to_string())?;
        }
        let manifest = serde_json::to_string_pretty(&self.manifest()).expect("json") + "\n";
        std::fs::write(dir.join(MANIFEST), manifest).map_err(io)
    }

    /// A table for people: the count, each trace with what it adds, and what is unreachable.
    pub fn render(&self) -> String {
        let steps: usize = self.traces.iter().map(|t| t.trace.steps.len()).sum();
        let mut out = format!(
            "suite {}: {} traces, {} steps, {} expectations; {} states searched\n",
            self.name,
            self.traces.len(),
            steps,
            self.traces
                .iter()
                .map(|t| t.trace.expectations.len())
                .sum::<usize>(),
            self.states
        );
        for t in &self.traces {
            out.push_str(&format!(
                "  {:<44} {:>3} steps  adds {}\n",
                t.file,
                t.trace.steps.len(),
                t.adds.join(", ")
            ));
        }
        let total = self.covered.len() + self.unreachable.len();
        out.push_str(&format!(
            "covered {} of {total} goals (rules, action kinds with and without a store fault, \
             SOME-* companions)\n",
            self.covered.len()
        ));
        if self.unreachable.is_empty() {
            out.push_str("unreachable on this configuration: none\n");
        } else {
            out.push_str(&format!(
                "unreachable on this configuration: {}\n",
                self.unreachable.join(", ")
            ));
        }
        out
    }
}
