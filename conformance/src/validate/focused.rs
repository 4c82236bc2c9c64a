//! The deciding search of trace validation (spec/log-format.md, "Hidden steps as late as
//! possible"). The full search keeps, after every record, every state its hidden closure
//! reaches, so the deposed incarnation's requests, each delivered or not, multiply the set
//! after a restart. Two facts of the model let the search keep far fewer states and still find
//! every explanation:
//!
//! 1. **Deferral.** A hidden step acts at one server: it reads and writes that server's state
//!    and views and the messages to and from it (and, for R21, which servers are up, which only
//!    a server crash or restart changes). A coordinator step reads and writes the coordinator,
//!    the store and the queue, takes its input message and sends its effects. So a hidden step
//!    at a server that the record's step neither hears from nor sends to commutes with it, and
//!    with every hidden step at another server. Any path that explains the log can therefore be
//!    rearranged so that before each record only hidden steps at the record's *footprint* are
//!    taken; the others move past it, unchanged, to a later record (or past the log's end). The
//!    search takes only those ([`Foot`]).
//! 2. **Subsumption.** Among the states that explain a record, one reachable from another by
//!    hidden steps explains nothing the other does not: the other takes those steps later. The
//!    search keeps one state of each source of the graph the explaining states and their
//!    hidden steps form ([`Found::minimal`]).
//! 3. **Classes.** States that agree on everything but the servers outside the footprint have
//!    the same hidden steps at the footprint and the same step for the record: the record is
//!    searched from one of them, and the steps found are replayed from the others
//!    ([`explain_grouped`]). The set after a restart is a product of alternatives at different
//!    servers, and a record at one server meets one or two classes of it.
//!
//! Every state kept is a model state reached along a model path, so a valid verdict stands as
//! before; what deferral and subsumption add is that a rejection is a proof too, wherever no
//! bound cut the search.

use std::collections::{HashMap, HashSet};
use std::hash::{Hash, Hasher};

use rebalance_manager as mgr;
use rebalance_model::{Action, Message, RebalanceModel, ServerId, ServerSet, SystemState};

use super::product::{self, next_choice_at, part_of, with_part, Part, Product};
use super::{
    candidates, explains, fingerprint, hidden, step, successors_where, Buffered, Limits, Miss,
    Record, Stats,
};

/// The servers at which hidden steps may be taken before a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Foot {
    /// Every hidden step: a server crash or restart (R21 reads which servers are up, at every
    /// leader), or a model with a deposed coordinator, whose steps are nobody's server's.
    All,
    Servers(ServerSet),
}

impl Foot {
    fn allows(self, action: &Action) -> bool {
        match (self, hidden_server(action)) {
            (Foot::All, _) => true,
            (Foot::Servers(set), Some(x)) => set.contains(x),
            (Foot::Servers(_), None) => false,
        }
    }

    fn with(self, x: ServerId) -> Foot {
        match self {
            Foot::All => Foot::All,
            Foot::Servers(mut set) => {
                set.insert(x);
                Foot::Servers(set)
            }
        }
    }
}

/// The server a message goes to or comes from.
fn message_server(m: &Message) -> ServerId {
    match m {
        Message::Nli(n) => n.to,
        Message::NliResponse(r) => r.from,
        Message::AdjustIsr(a) => a.from,
        Message::AdjustIsrResponse(r) => r.to,
    }
}

/// The server a hidden step acts at; `None` for a deposed coordinator's step.
fn hidden_server(action: &Action) -> Option<ServerId> {
    match action {
        Action::DeliverNli { msg } => Some(msg.to),
        Action::DeliverAdjustIsrResponse { msg } => Some(msg.to),
        Action::DropMessage { msg } | Action::DuplicateMessage { msg } => Some(message_server(msg)),
        Action::ProposeIsr { server, .. } => Some(*server),
        _ => None,
    }
}

/// The server an input of the coordinator comes from, if it is a message.
fn input_server(action: &Action) -> Option<ServerId> {
    match action {
        Action::DeliverNliResponse { msg, .. } => Some(msg.from),
        Action::DeliverAdjustIsr { msg, .. } => Some(msg.from),
        _ => None,
    }
}

/// A record's footprint: the server its input comes from, the leaders its AdjustIsr answers
/// go to (R21 reads whether one is in flight), and the servers it sends a NotifyLeaderAndIsr to
/// that may already be in flight in some state of `frontier` (the network absorbs a copy of a
/// message in flight, so delivering it before the send or after leaves different networks);
/// every server for a server crash or restart, and in a model with a deposed coordinator. A
/// request not in flight is simply added: no hidden step elsewhere reads or takes it.
fn record_foot(model: &RebalanceModel, frontier: &[SystemState], record: &Record) -> Foot {
    if model.config.budgets.zombie_steps > 0 {
        return Foot::All;
    }
    let Record::Input { input, effects, .. } = record else {
        return Foot::Servers(ServerSet::EMPTY);
    };
    let id = |x: mgr::ServerId| ServerId::try_from(x).ok();
    let mut set = ServerSet::EMPTY;
    match input {
        mgr::Input::ServerCrashed(_) | mgr::Input::ServerRestarted(_) => return Foot::All,
        mgr::Input::NliResponse { from, .. } | mgr::Input::AdjustIsr { from, .. } => {
            match id(*from) {
                Some(x) => set.insert(x),
                None => return Foot::All,
            }
        }
        _ => {}
    }
    for e in effects {
        let to = match e {
            mgr::Effect::SendNli(n) if frontier.iter().any(|s| maybe_in_flight(s, n)) => n.to,
            mgr::Effect::SendAdjustIsrResponse { to, .. } => *to,
            _ => continue,
        };
        match id(to) {
            Some(x) => set.insert(x),
            None => return Foot::All,
        }
    }
    Foot::Servers(set)
}

/// Whether a request equal to `n` may be in flight in `s`: one to the same server and bucket
/// with the same epochs (a superset of equal ones, so the footprint errs on the large side).
fn maybe_in_flight(s: &SystemState, n: &mgr::Nli) -> bool {
    s.network.iter().any(|m| {
        matches!(m, Message::Nli(x)
            if u64::from(x.to) == u64::from(n.to)
                && u64::from(x.bucket) == u64::from(n.bucket)
                && u64::from(x.coordinator_epoch) == n.coordinator_epoch
                && u64::from(x.leader_epoch) == n.leader_epoch
                && u64::from(x.bucket_epoch) == n.bucket_epoch)
    })
}

/// Whether a coordinator step taken in `pre` that sends `sent` commutes with every hidden step
/// outside `foot`: each AdjustIsr answer goes to a server of the footprint, and each request
/// either does or is not in flight in `pre` (so the send adds it, whatever is delivered).
fn sends_commute(foot: Foot, pre: &SystemState, sent: &[Message]) -> bool {
    match foot {
        Foot::All => true,
        Foot::Servers(set) => sent.iter().all(|m| {
            set.contains(message_server(m))
                || matches!(m, Message::Nli(_)) && !pre.network.contains(m)
        }),
    }
}

/// A hidden step at `foot`.
fn allowed(foot: Foot, a: &Action) -> bool {
    hidden(a) && foot.allows(a)
}

/// The states hidden steps at `foot` reach from `from`, breadth-first, with each state's level
/// (hidden steps taken).
struct Closure {
    states: Vec<SystemState>,
    level: Vec<usize>,
    /// The state each was first reached from, and the hidden step taken (`None` for a source).
    parent: Vec<Option<(usize, Action)>>,
    cut: bool,
}

impl Closure {
    /// The hidden steps from its source to state `i`, in order.
    fn path(&self, mut i: usize) -> Vec<Action> {
        let mut steps = Vec::new();
        while let Some((p, a)) = self.parent[i] {
            steps.push(a);
            i = p;
        }
        steps.reverse();
        steps
    }
}

fn closure(
    model: &RebalanceModel,
    from: &[SystemState],
    foot: Foot,
    limits: Limits,
    stats: &mut Stats,
) -> Closure {
    let mut c = Closure {
        states: Vec::new(),
        level: Vec::new(),
        parent: Vec::new(),
        cut: false,
    };
    let mut index: HashMap<u64, usize> = HashMap::new();
    for s in from {
        index.entry(fingerprint(s)).or_insert_with(|| {
            c.states.push(s.clone());
            c.level.push(0);
            c.parent.push(None);
            c.states.len() - 1
        });
    }
    let mut start = 0;
    let mut depth = 0;
    while start < c.states.len() {
        let end = c.states.len();
        if depth == limits.max_hidden || end > limits.max_states {
            // Unexpanded states remain: a longer path may exist.
            c.cut = (start..end).any(|i| {
                let mut any = false;
                successors_where(
                    model,
                    &c.states[i],
                    |a| allowed(foot, a),
                    |_, _, _| any = true,
                );
                any
            });
            break;
        }
        for i in start..end {
            let mut next = Vec::new();
            successors_where(
                model,
                &c.states[i],
                |a| allowed(foot, a),
                |a, n, _| next.push((a, n)),
            );
            for (a, n) in next {
                stats.states += 1;
                index.entry(fingerprint(&n)).or_insert_with(|| {
                    c.states.push(n);
                    c.level.push(depth + 1);
                    c.parent.push(Some((i, a)));
                    c.states.len() - 1
                });
            }
        }
        start = end;
        depth += 1;
    }
    c
}

/// The states that explain `record` from `frontier`, hidden steps taken only at the record's
/// footprint, reduced to the minimal ones; with `classes`, searched once per class of states
/// that agree at the footprint ([`explain_grouped`]).
pub(super) fn explain(
    model: &RebalanceModel,
    frontier: &[SystemState],
    record: &Record,
    limits: Limits,
    classes: bool,
    stats: &mut Stats,
) -> Result<Vec<SystemState>, Miss> {
    let mut found = Found::new();
    let mut miss = Miss::none();
    // The hidden steps that link explaining states in `Found::minimal`: those at the footprint
    // the record was searched with.
    let mut links_at = Foot::All;
    if let Record::Start { .. } = record {
        for s in frontier {
            let mut one = Found::new();
            for (foot, cuts) in start_tries(model, s, limits, stats) {
                let c = closure(model, std::slice::from_ref(s), foot, limits, stats);
                miss.cut |= c.cut;
                one.match_closure(model, &c, record, foot, &cuts, &mut miss, stats);
            }
            if one.uncovered {
                one = Found::new();
                let c = closure(model, std::slice::from_ref(s), Foot::All, limits, stats);
                miss.cut |= c.cut;
                let cuts = start_cuts_everywhere(model, &c);
                one.match_closure(model, &c, record, Foot::All, &cuts, &mut miss, stats);
            }
            found.absorb(one);
        }
    } else {
        let mut foot = record_foot(model, frontier, record);
        if let (Foot::Servers(set), true) = (foot, classes) {
            if let Some(grouped) = explain_grouped(model, frontier, record, set, limits, stats) {
                let (one, one_miss) = grouped;
                if one.posts.is_empty() {
                    return Err(one_miss);
                }
                stats.cut_now |= one_miss.cut;
                return Ok(one.undominated());
            }
        }
        loop {
            let c = closure(model, frontier, foot, limits, stats);
            found.match_closure(model, &c, record, foot, &[None], &mut miss, stats);
            if !found.uncovered || foot == Foot::All {
                miss.cut |= c.cut;
                break;
            }
            found = Found::new();
            foot = Foot::All;
        }
        links_at = foot;
    }
    if found.posts.is_empty() {
        return Err(miss);
    }
    stats.cut_now |= miss.cut;
    Ok(found.minimal(model, links_at))
}

/// `s` without what no step at the servers of `set` and no coordinator step reads or writes,
/// but for the requests such a step adds: the other servers' views of every bucket and the
/// messages to and from them. Their up flags and last coordinator epochs stay (R21 reads which
/// servers are up).
fn foot_key(model: &RebalanceModel, s: &SystemState, set: ServerSet) -> u64 {
    // Hashed field by field, not as a copy of `s` with those parts cleared: the key is computed
    // for every state of the set at every record, and the copies were 5.6 s of a 40 s search
    // (the log killed twice at seed 2).
    let mut h = Buffered::default();
    let SystemState {
        store,
        coordinator,
        servers,
        views,
        network,
        budgets,
        ghost,
        zombie,
    } = s;
    store.hash(&mut h);
    coordinator.hash(&mut h);
    servers.hash(&mut h);
    let buckets = views.len() / usize::from(model.config.servers).max(1);
    for (i, v) in views.iter().enumerate() {
        let at = u8::try_from(i / buckets.max(1)).ok();
        if at.is_some_and(|y| set.contains(y)) {
            (i, v).hash(&mut h);
        }
    }
    for m in network.iter().filter(|m| set.contains(message_server(m))) {
        m.hash(&mut h);
    }
    budgets.hash(&mut h);
    ghost.hash(&mut h);
    zombie.hash(&mut h);
    h.finish()
}

/// The record explained once per class of frontier states with the same [`foot_key`], and the
/// explanation carried to the class's other states by replaying its steps there.
///
/// The states of a class differ only at servers outside the footprint. The hidden steps at the
/// footprint and the record's step read nothing there (deferral), so the same steps are enabled
/// from every state of a class and explain the record from each or from none: the class's first
/// state is searched, its minimal explaining states are kept, and the path to each (hidden
/// steps, then the record's step) is replayed from every other state of the class with the
/// model's own `step`. Each state so found is a model state reached by a model path. Should a
/// replay not be enabled or not explain the record, the premise did not hold, and `None` sends
/// the record to the search of every state. After the deposed incarnations of a log killed
/// twice, the frontier is the product of their requests' fates at different servers (each
/// delivered before its server saw the new epoch, or not), and a record at one server meets one
/// or two classes, not the whole product.
fn explain_grouped(
    model: &RebalanceModel,
    frontier: &[SystemState],
    record: &Record,
    set: ServerSet,
    limits: Limits,
    stats: &mut Stats,
) -> Option<(Found, Miss)> {
    // A set larger than the bound: the search of every state stops before its first hidden
    // step, and so does this one (by leaving the record to it), whatever the classes.
    if frontier.len() > limits.max_states {
        return None;
    }
    let foot = Foot::Servers(set);
    let mut classes: Vec<Vec<usize>> = Vec::new();
    let mut by_key: HashMap<u64, usize> = HashMap::new();
    for (m, s) in frontier.iter().enumerate() {
        let c = *by_key.entry(foot_key(model, s, set)).or_insert_with(|| {
            classes.push(Vec::new());
            classes.len() - 1
        });
        classes[c].push(m);
    }
    let mut miss = Miss::none();
    let mut found = Found::new();
    let mut best = None;
    for members in &classes {
        let first = &frontier[members[0]];
        let c = closure(model, std::slice::from_ref(first), foot, limits, stats);
        miss.cut |= c.cut;
        let mut one = Found::new();
        one.best = best;
        one.match_closure(model, &c, record, foot, &[None], &mut miss, stats);
        if one.uncovered {
            return None;
        }
        // The class's other states were tried too, each standing in for its own closure.
        miss.candidates += c.states.len() * (members.len() - 1);
        best = one.best;
        let origin = std::mem::take(&mut one.origin);
        // Links by steps at the footprint only, so that each one holds from every state of
        // the class as well.
        let kept = one.minimal(model, foot);
        let mut paths = Vec::with_capacity(kept.len());
        for k in kept {
            let (i, action) = *origin.get(&fingerprint(&k))?;
            paths.push((c.path(i), action, c.level[i]));
            found.keep(k, c.level[i], None);
        }
        for &m in &members[1..] {
            for (path, action, level) in &paths {
                let post = replay(model, &frontier[m], path, *action, record, foot)?;
                stats.states += path.len() + 1;
                found.keep(post, *level, None);
            }
        }
    }
    Some((found, miss))
}

/// The record explained from a set kept as a product ([`Product`]): searched once per
/// combination of the parts at the footprint's servers, the other servers taking their first
/// parts, as [`explain_grouped`] searches one state per class. What the search found is then
/// replayed with each other part of each server outside the footprint, one server at a time,
/// and must leave that server's part as the first part's replay leaves it but for the
/// messages the record's step sends there, and everything else as it was; the answer is again
/// a product: the explaining states found, which must agree outside the footprint and form a
/// product of their parts there, times each outside server's parts after the record. `None`
/// when any of that does not hold (a replay not enabled or not explaining the record, a step
/// whose sends do not commute, explaining states that are not a product), and the record goes
/// to the search of the set kept whole, which is always right.
///
/// Replaying one server's parts at a time, not every combination, rests on the premise of the
/// classes: a hidden step at the footprint and the record's step read nothing outside it, so
/// they cannot read two outside servers together; a step that read one would show it in that
/// server's replays.
pub(super) fn explain_product(
    model: &RebalanceModel,
    p: &Product,
    record: &Record,
    limits: Limits,
    stats: &mut Stats,
) -> Option<Result<Product, Miss>> {
    if matches!(record, Record::Start { .. }) {
        return None;
    }
    let Foot::Servers(set) = record_foot_of(model, p, record) else {
        return None;
    };
    let foot = Foot::Servers(set);
    let servers = p.servers();
    let (inside, outside): (Vec<usize>, Vec<usize>) =
        (0..servers).partition(|&x| set.contains(x as ServerId));
    // The combinations searched, each with its own closure within `--max-states`: more of them
    // than that, and the set is searched as before, which reports the bound.
    if p.combinations(&inside) > limits.max_states {
        return None;
    }
    let others = p.combinations(&outside);
    let mut miss = Miss::none();
    let mut best = None;
    // The explaining states found (their outside parts the first parts' after the record),
    // and each outside server's parts after the record, by the index of the part before it.
    let mut found = Found::new();
    let mut after: Vec<Vec<Option<Part>>> = (0..servers)
        .map(|x| vec![None; p.parts(x as ServerId).len()])
        .collect();
    let mut choice = vec![0; servers];
    loop {
        let rep = p.state(&choice);
        let (c, mut one) = search_from(
            model,
            &rep,
            record,
            foot,
            &[None],
            limits,
            &mut best,
            &mut miss,
            stats,
        )?;
        miss.candidates += c.states.len() * (others - 1);
        let origin = std::mem::take(&mut one.origin);
        for k in one.minimal(model, foot) {
            let (i, action) = *origin.get(&fingerprint(&k))?;
            let now = parts_after(
                model,
                p,
                &rep,
                &k,
                &outside,
                &c.path(i),
                None,
                action,
                record,
                foot,
                stats,
            )?;
            // Every explaining state must leave each outside part as the others do.
            for &x in &outside {
                for (j, part) in now[x].iter().enumerate() {
                    match &after[x][j] {
                        Some(seen) if seen != part => return None,
                        Some(_) => {}
                        None => after[x][j] = Some(part.clone()),
                    }
                }
            }
            found.keep(k, c.level[i], None);
        }
        // Only the footprint's servers change combination; the others keep their first parts.
        if !next_choice_at(&mut choice, &inside, |x| p.parts(x as ServerId).len()) {
            break;
        }
    }
    if found.posts.is_empty() {
        return Some(Err(miss));
    }
    stats.cut_now |= miss.cut;
    // The explaining states: one common part, and a product of their parts at the footprint.
    let posts: Vec<SystemState> = {
        let mut v: Vec<(u64, SystemState)> = found
            .posts
            .into_iter()
            .map(|(fp, (s, _))| (fp, s))
            .collect();
        v.sort_by_key(|(fp, _)| *fp);
        v.into_iter().map(|(_, s)| s).collect()
    };
    let common = product::common_of(&posts[0]);
    let mut parts: Vec<Vec<Part>> = vec![Vec::new(); servers];
    for s in &posts {
        if product::common_of(s) != common {
            return None;
        }
        for &x in &inside {
            let part = part_of(s, x as ServerId);
            if !parts[x].contains(&part) {
                parts[x].push(part);
            }
        }
        for &x in &outside {
            if part_of(s, x as ServerId) != *after[x][0].as_ref()? {
                return None;
            }
        }
    }
    let inside_size = inside
        .iter()
        .try_fold(1usize, |n, &x| n.checked_mul(parts[x].len()))?;
    if inside_size != posts.len() {
        return None;
    }
    for &x in &outside {
        parts[x] = std::mem::take(&mut after[x])
            .into_iter()
            .collect::<Option<Vec<_>>>()?;
    }
    Some(Ok(Product::new(common, parts).undominated(dominates)))
}

/// A start explained from a set kept as a product: as [`explain_product`] explains a record,
/// for each footprint a start is searched with (the footprints and the inputs the crash may
/// have cut short, found from one state per part of each server: the inputs enabled at a
/// server's hidden steps depend only on the shared part and that server's), once per
/// combination of the parts at the footprint; what is found is replayed with each other part
/// of each other server (hidden steps, the input cut short, the crash), one server at a time,
/// with the checks of `explain_product`. The states found differ in their shared part (the
/// input cut short wrote the store), so the answer is spelled out: each found state with every
/// combination of the other servers' parts after it, reduced by subsumption over every
/// hidden step as the search of each state reduces it. `None` where a check fails, and the
/// start goes to the search of each state.
pub(super) fn explain_product_start(
    model: &RebalanceModel,
    p: &Product,
    record: &Record,
    limits: Limits,
    stats: &mut Stats,
) -> Option<Result<Vec<SystemState>, Miss>> {
    if model.config.budgets.zombie_steps > 0 {
        return None;
    }
    let servers = p.servers();
    // The footprints and their inputs cut short, from one state per part of each server.
    let mut tries: Vec<(Foot, Vec<Option<Action>>)> = Vec::new();
    for s in p.one_per_part() {
        for (foot, cuts) in start_tries(model, &s, limits, stats) {
            let at = match tries.iter().position(|(f, _)| *f == foot) {
                Some(at) => at,
                None => {
                    tries.push((foot, Vec::new()));
                    tries.len() - 1
                }
            };
            for cut in cuts {
                if !tries[at].1.contains(&cut) {
                    tries[at].1.push(cut);
                }
            }
        }
    }
    let mut miss = Miss::none();
    let mut best = None;
    let mut found = Found::new();
    for (foot, cuts) in &tries {
        let Foot::Servers(set) = *foot else {
            return None;
        };
        let (inside, outside): (Vec<usize>, Vec<usize>) =
            (0..servers).partition(|&x| set.contains(x as ServerId));
        let others = p.combinations(&outside);
        let mut choice = vec![0; servers];
        loop {
            let rep = p.state(&choice);
            let (c, mut one) = search_from(
                model, &rep, record, *foot, cuts, limits, &mut best, &mut miss, stats,
            )?;
            miss.candidates += c.states.len() * cuts.len() * (others - 1);
            for (fp, (k, level)) in std::mem::take(&mut one.posts) {
                let (i, cut, action) = match (one.origin.get(&fp), one.cut_origin.get(&fp)) {
                    (Some(&(i, Some(a))), _) => (i, None, a),
                    (_, Some(&(i, cut, a))) => (i, Some(cut), a),
                    _ => return None,
                };
                let after = parts_after(
                    model,
                    p,
                    &rep,
                    &k,
                    &outside,
                    &c.path(i),
                    cut,
                    Some(action),
                    record,
                    *foot,
                    stats,
                )?;
                // `k` with every combination of the other servers' parts after the start.
                let mut pick = vec![0; servers];
                loop {
                    let mut t = k.clone();
                    for &x in &outside {
                        t = with_part(&t, x as ServerId, &after[x][pick[x]]);
                    }
                    found.keep(t, level, None);
                    if !next_choice_at(&mut pick, &outside, |x| after[x].len()) {
                        break;
                    }
                }
            }
            if !next_choice_at(&mut choice, &inside, |x| p.parts(x as ServerId).len()) {
                break;
            }
        }
    }
    if found.posts.is_empty() {
        return Some(Err(miss));
    }
    stats.cut_now |= miss.cut;
    Some(Ok(found.minimal(model, Foot::All)))
}

/// [`replay`], with the input a crash cut short (if any) taken between the hidden steps and the
/// record's step, its sends commuting with the hidden steps outside `foot`.
fn replay_cut(
    model: &RebalanceModel,
    from: &SystemState,
    path: &[Action],
    cut: Option<Action>,
    action: Option<Action>,
    record: &Record,
    foot: Foot,
) -> Option<SystemState> {
    let Some(a) = cut else {
        return replay(model, from, path, action, record, foot);
    };
    let mut s = from.clone();
    for h in path {
        s = model.step(&s, h)?.0;
    }
    let (n, out) = model.step(&s, &a)?;
    if !sends_commute(foot, &s, &out.sent) {
        return None;
    }
    replay(model, &n, &[], action, record, foot)
}

/// The closure of hidden steps at `foot` from `rep`, and the record matched in it (after each of
/// `cuts` for a start); `None` where a step's sends do not commute with the steps outside it.
#[allow(clippy::too_many_arguments)]
fn search_from(
    model: &RebalanceModel,
    rep: &SystemState,
    record: &Record,
    foot: Foot,
    cuts: &[Option<Action>],
    limits: Limits,
    best: &mut Option<usize>,
    miss: &mut Miss,
    stats: &mut Stats,
) -> Option<(Closure, Found)> {
    let c = closure(model, std::slice::from_ref(rep), foot, limits, stats);
    miss.cut |= c.cut;
    let mut one = Found::new();
    one.best = *best;
    one.match_closure(model, &c, record, foot, cuts, miss, stats);
    if one.uncovered {
        return None;
    }
    *best = one.best;
    Some((c, one))
}

/// The parts of each server of `outside` after the steps that took `rep`, a state of `p` with
/// every such server at its first part, to the explaining state `k` (the hidden steps `path`,
/// the input cut short `cut`, the record's step `action`), those steps replayed with each other
/// part of one server at a time: by server, by the index of the part before. `None` where a
/// replay is not enabled or does not explain the record, or changes anything but that server,
/// or that server's flags or views.
#[allow(clippy::too_many_arguments)]
fn parts_after(
    model: &RebalanceModel,
    p: &Product,
    rep: &SystemState,
    k: &SystemState,
    outside: &[usize],
    path: &[Action],
    cut: Option<Action>,
    action: Option<Action>,
    record: &Record,
    foot: Foot,
    stats: &mut Stats,
) -> Option<Vec<Vec<Part>>> {
    let mut after: Vec<Vec<Part>> = vec![Vec::new(); p.servers()];
    for &x in outside {
        let y = x as ServerId;
        let rest = common_but(k, y);
        for (j, part) in p.parts(y).iter().enumerate() {
            let post = if j == 0 {
                k.clone()
            } else {
                let from = with_part(rep, y, part);
                let post = replay_cut(model, &from, path, cut, action, record, foot)?;
                stats.states += path.len() + 1 + usize::from(cut.is_some());
                if common_but(&post, y) != rest {
                    return None;
                }
                post
            };
            let now = part_of(&post, y);
            if !now.same_server(part) {
                return None;
            }
            after[x].push(now);
        }
    }
    Some(after)
}

/// `s` without its part at server `y`.
fn common_but(s: &SystemState, y: ServerId) -> SystemState {
    let mut t = s.clone();
    let b = t.views.len() / t.servers.len().max(1);
    let from = usize::from(y) * b;
    t.servers[usize::from(y)] = Default::default();
    t.views[from..from + b].fill(None);
    t.network.retain(|m| message_server(m) != y);
    t
}

/// The footprint of `record` from a product: the same as from its states, since whether a
/// request may be in flight is asked of some state, and a server's parts are all in some state.
fn record_foot_of(model: &RebalanceModel, p: &Product, record: &Record) -> Foot {
    record_foot(model, &p.one_per_part(), record)
}

/// `from` after the hidden steps of `path` and the record's step `action` (`None`: a tick's
/// stutter), if each is enabled, the step explains the record, and its sends commute with the
/// hidden steps outside `foot`.
fn replay(
    model: &RebalanceModel,
    from: &SystemState,
    path: &[Action],
    action: Option<Action>,
    record: &Record,
    foot: Foot,
) -> Option<SystemState> {
    let mut s = from.clone();
    for a in path {
        s = model.step(&s, a)?.0;
    }
    let Some(a) = action else {
        return Some(s);
    };
    let (post, out) = step(model, &s, &a, record)?;
    explains(&a, &out, &post, record).ok()?;
    sends_commute(foot, &s, &out.sent).then_some(post)
}

/// For a start record from `s`: each footprint to search with the inputs a crash may have cut
/// short there (`None`: no input cut short). The input cut short is a step of the coordinator
/// whose record was never written, so its footprint is not in the log: it is the server of its
/// input, if a message, and the servers it sends to. Its candidates are the inputs enabled in
/// the hidden closure at one server (a message input appears only after its server's steps).
fn start_tries(
    model: &RebalanceModel,
    s: &SystemState,
    limits: Limits,
    stats: &mut Stats,
) -> Vec<(Foot, Vec<Option<Action>>)> {
    let mut by_foot: Vec<(Foot, Vec<Option<Action>>)> =
        vec![(Foot::Servers(ServerSet::EMPTY), vec![None])];
    let base = if model.config.budgets.zombie_steps > 0 {
        Foot::All
    } else {
        Foot::Servers(ServerSet::EMPTY)
    };
    let mut seen: HashSet<Action> = HashSet::new();
    let mut scopes = vec![base];
    if base != Foot::All {
        scopes.extend((0..model.config.servers).map(|x| base.with(x)));
    }
    for scope in scopes {
        let c = closure(model, std::slice::from_ref(s), scope, limits, stats);
        for t in &c.states {
            successors_where(model, t, Action::can_fail_store, |a, _, out| {
                if !seen.insert(a) {
                    return;
                }
                let mut foot = input_server(&a).map_or(base, |x| base.with(x));
                for m in &out.sent {
                    if !sends_commute(Foot::Servers(ServerSet::EMPTY), s, std::slice::from_ref(m)) {
                        foot = foot.with(message_server(m));
                    }
                }
                match by_foot.iter_mut().find(|(f, _)| *f == foot) {
                    Some((_, cuts)) => cuts.push(Some(a)),
                    None => by_foot.push((foot, vec![Some(a)])),
                }
            });
        }
    }
    by_foot
}

/// Every input a crash may have cut short at some state of `c` (with every hidden step
/// searched, the footprint does not matter).
fn start_cuts_everywhere(model: &RebalanceModel, c: &Closure) -> Vec<Option<Action>> {
    let mut seen: HashSet<Action> = HashSet::new();
    let mut cuts = vec![None];
    for t in &c.states {
        successors_where(model, t, Action::can_fail_store, |a, _, _| {
            if seen.insert(a) {
                cuts.push(Some(a));
            }
        });
    }
    cuts
}

/// The states found to explain a record.
struct Found {
    /// Each explaining state by fingerprint, with the lowest level it was found at.
    posts: HashMap<u64, (SystemState, usize)>,
    /// How each explaining state was first found, where no input was cut short: the closure
    /// state the record was tried from, and the record's step (`None`: a tick's stutter).
    origin: HashMap<u64, (usize, Option<Action>)>,
    /// How each explaining state was first found after an input cut short (a start): the
    /// closure state, the input cut short, and the record's step.
    cut_origin: HashMap<u64, (usize, Action, Action)>,
    best: Option<usize>,
    /// A step was found whose sends do not commute with hidden steps outside the footprint.
    uncovered: bool,
}

impl Found {
    fn new() -> Found {
        Found {
            posts: HashMap::new(),
            origin: HashMap::new(),
            cut_origin: HashMap::new(),
            best: None,
            uncovered: false,
        }
    }

    /// Tries `record` from every state of `c` (after each of `cuts` for a start) and keeps
    /// what explains it.
    #[allow(clippy::too_many_arguments)]
    fn match_closure(
        &mut self,
        model: &RebalanceModel,
        c: &Closure,
        record: &Record,
        foot: Foot,
        cuts: &[Option<Action>],
        miss: &mut Miss,
        stats: &mut Stats,
    ) {
        for (i, s) in c.states.iter().enumerate() {
            for cut in cuts {
                let pre = match cut {
                    None => s.clone(),
                    Some(a) => match model.step(s, a) {
                        Some((n, out)) if sends_commute(foot, s, &out.sent) => n,
                        Some(_) => {
                            self.uncovered = true;
                            continue;
                        }
                        None => continue,
                    },
                };
                stats.states += 1;
                miss.candidates += 1;
                for (action, stutter) in candidates(model, &pre, record) {
                    if stutter {
                        self.keep(pre.clone(), c.level[i], cut.is_none().then_some((i, None)));
                        continue;
                    }
                    let Some((post, out)) = step(model, &pre, &action, record) else {
                        continue;
                    };
                    miss.any_enabled = true;
                    match explains(&action, &out, &post, record) {
                        Ok(()) if sends_commute(foot, &pre, &out.sent) => {
                            let origin = cut.is_none().then_some((i, Some(action)));
                            if let Some(a) = cut {
                                self.cut_origin
                                    .entry(fingerprint(&post))
                                    .or_insert((i, *a, action));
                            }
                            self.keep(post, c.level[i], origin);
                        }
                        // The footprint was read from the log's effects and the states before,
                        // so this does not happen; if it did, deferral would not be shown, and
                        // the record is searched again with every hidden step.
                        Ok(()) => self.uncovered = true,
                        Err((score, why)) => {
                            if self.best.is_none_or(|b| score < b) {
                                self.best = Some(score);
                                miss.closest = Some(match cut {
                                    Some(a) => format!(
                                        "after the input cut short by the crash, {}: {why}",
                                        rebalance_model::view::describe::action(a)
                                    ),
                                    None => why,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    fn absorb(&mut self, other: Found) {
        for (fp, (s, level)) in other.posts {
            let entry = self.posts.entry(fp).or_insert((s, level));
            entry.1 = entry.1.min(level);
        }
        if other.best.is_some_and(|b| self.best.is_none_or(|x| b < x)) {
            self.best = other.best;
        }
    }

    fn keep(&mut self, post: SystemState, level: usize, origin: Option<(usize, Option<Action>)>) {
        let fp = fingerprint(&post);
        if let Some(o) = origin {
            // The closure is breadth-first: the first origin is at the lowest level.
            self.origin.entry(fp).or_insert(o);
        }
        let entry = self.posts.entry(fp).or_insert((post, level));
        entry.1 = entry.1.min(level);
    }

    /// The explaining states that no other one reaches by hidden steps, and that no other one
    /// dominates ([`dominates`]). The states and their hidden steps form a graph; in its
    /// condensation (each strongly connected component one node, a DAG) every component is
    /// reached from a source component, one that no other component reaches. So one state
    /// of each source component is kept (the one found with the fewest hidden steps, ties by
    /// fingerprint, so every run keeps the same ones), and every state left out is a kept
    /// state after hidden steps, which a later record's search takes when it needs them
    /// (deferral). (Before 6 December 2026 the states were taken in order of level and each
    /// kept unless one kept before it reached it: a state reached from another found later,
    /// such as a request's delivery that changed no view, beside the request still in
    /// flight, was kept too, and each such pair doubled the set.) Only the hidden steps at
    /// `links_at` are links: fewer links keep more states, never fewer, so any choice is
    /// sound. After a record searched at its footprint, only steps there are tried: stepping
    /// every server's cost more than the states it saved (on the 16-bucket log killed twice at
    /// seed 2, a rejection at line 145 took 319 s with them and at most 8,192 states, and 171 s
    /// with at most 16,384 without them; at seed 1, 128 states either way and 6.6 against 4.3 s;
    /// single runs).
    /// The explaining states that no other one dominates, by fingerprint, without the search
    /// for links of [`Found::minimal`]: for the states [`explain_grouped`] found, there are
    /// none. Each is a kept state of its class's first member (which `minimal` left unlinked:
    /// an edge between two source components would make its target not a source), or that
    /// state's path replayed from another member. A hidden step at the footprint reads and
    /// writes only the footprint and the parts every member shares, so a link between two
    /// states replayed from one member would be a link between the first member's two, and no
    /// step at the footprint changes what lies outside it, where two members differ. Measured
    /// on the log killed twice at seed 2: the links of 16,384 replayed states were searched
    /// again at every record, 39 s of a 150 s rejection, and none was found.
    fn undominated(self) -> Vec<SystemState> {
        let mut kept: Vec<(u64, SystemState)> =
            self.posts.into_iter().map(|(fp, (s, _))| (fp, s)).collect();
        kept.sort_by_key(|(fp, _)| *fp);
        undominated(kept.into_iter().map(|(_, s)| s).collect())
    }

    fn minimal(self, model: &RebalanceModel, links_at: Foot) -> Vec<SystemState> {
        let mut order: Vec<(usize, u64)> =
            self.posts.iter().map(|(fp, (_, l))| (*l, *fp)).collect();
        order.sort_unstable();
        let at: HashMap<u64, usize> = order
            .iter()
            .enumerate()
            .map(|(i, (_, fp))| (*fp, i))
            .collect();
        // `i -> j`: explaining state `j` is explaining state `i` after one hidden step (of any
        // server: the later record that needs it has that server in its footprint).
        let mut links: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
        for (i, (_, fp)) in order.iter().enumerate() {
            let s = &self.posts[fp].0;
            successors_where(
                model,
                s,
                |a| allowed(links_at, a),
                |_, n, _| {
                    if let Some(&j) = at.get(&fingerprint(&n)) {
                        if j != i {
                            links[i].push(j);
                        }
                    }
                },
            );
        }
        let mut posts = self.posts;
        let mut kept = Vec::new();
        for i in source_representatives(&links) {
            let fp = order[i].1;
            if let Some((s, _)) = posts.remove(&fp) {
                kept.push((fp, s));
            }
        }
        kept.sort_by_key(|(fp, _)| *fp);
        undominated(kept.into_iter().map(|(_, s)| s).collect())
    }
}

/// One node of each source component of the graph `links` (a strongly connected component that
/// no edge from another component enters), the lowest-numbered: every node is reached from
/// one of them. In increasing order.
fn source_representatives(links: &[Vec<usize>]) -> Vec<usize> {
    let component = components(links);
    let mut entered = vec![false; links.len()];
    for (i, out) in links.iter().enumerate() {
        for &j in out {
            if component[i] != component[j] {
                entered[component[j]] = true;
            }
        }
    }
    let mut taken = vec![false; links.len()];
    let mut kept = Vec::new();
    for (i, &c) in component.iter().enumerate() {
        if !entered[c] && !taken[c] {
            taken[c] = true;
            kept.push(i);
        }
    }
    kept
}

/// The strongly connected components of the graph `links` (node `i`'s successors), as each
/// node's component number (Kosaraju's two passes, both iterative: a long chain of hidden
/// steps must not overflow the stack).
fn components(links: &[Vec<usize>]) -> Vec<usize> {
    let n = links.len();
    // First pass: nodes in order of finishing.
    let mut finished = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        let mut stack = vec![(root, 0usize)];
        while let Some((x, next)) = stack.last_mut() {
            let x = *x;
            if let Some(&y) = links[x].get(*next) {
                *next += 1;
                if !seen[y] {
                    seen[y] = true;
                    stack.push((y, 0));
                }
            } else {
                finished.push(x);
                stack.pop();
            }
        }
    }
    // Second pass, on the reversed graph, latest finished first: each search is a component.
    let mut back: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (x, out) in links.iter().enumerate() {
        for &y in out {
            back[y].push(x);
        }
    }
    let mut component = vec![usize::MAX; n];
    let mut count = 0;
    for &root in finished.iter().rev() {
        if component[root] != usize::MAX {
            continue;
        }
        component[root] = count;
        let mut stack = vec![root];
        while let Some(x) = stack.pop() {
            for &y in &back[x] {
                if component[y] == usize::MAX {
                    component[y] = count;
                    stack.push(y);
                }
            }
        }
        count += 1;
    }
    component
}

/// `a` dominates `b`: the two are equal but for the network, and `a`'s network holds `b`'s and
/// more, the more being requests and responses only. Every path from `b` is a path from `a`
/// that never delivers the extra messages: no rule's guard reads whether a NotifyLeaderAndIsr
/// or its response is in flight (R21 reads only AdjustIsr and its answer; dead-message
/// collection and the absorption of redundant requests are off in validation, `model_for`),
/// a delivery or loss in `b`'s path finds its message in `a` too, and a send that `b` adds is
/// added in `a` or absorbed by an equal copy, so the networks stay one within the other and
/// every step makes the same effects and store operations. So `b` explains nothing that `a`
/// does not. Not with a deposed coordinator, whose steps take any response of its epoch.
pub(super) fn dominates(a: &SystemState, b: &SystemState) -> bool {
    let SystemState {
        store,
        coordinator,
        servers,
        views,
        network,
        budgets,
        ghost,
        zombie,
    } = b;
    if a.zombie.is_some() || zombie.is_some() || a.network.len() <= network.len() {
        return false;
    }
    if a.store != *store
        || a.coordinator != *coordinator
        || a.servers != *servers
        || a.views != *views
        || a.budgets != *budgets
        || a.ghost.restored != ghost.restored
        || a.ghost.final_recovered != ghost.final_recovered
        || a.ghost.drained_after_cancel != ghost.drained_after_cancel
        || a.ghost.violations != ghost.violations
    {
        return false;
    }
    // Both networks are sorted: walk them together, every message of `b` matched in `a`.
    let mut extra = a.network.iter().peekable();
    for m in network {
        loop {
            match extra.next() {
                Some(x) if x == m => break,
                Some(Message::Nli(_) | Message::NliResponse(_)) => continue,
                _ => return false,
            }
        }
    }
    extra.all(|x| matches!(x, Message::Nli(_) | Message::NliResponse(_)))
}

/// A fingerprint of `s` without its network: states equal but for the network share it.
fn network_free_key(s: &SystemState) -> u64 {
    let mut t = s.clone();
    t.network.clear();
    fingerprint(&t)
}

/// The states of `set` (sorted by fingerprint) that no other one dominates, in the same order.
/// Domination is transitive, so checking against every other state, kept or not, leaves the
/// maximal ones. Only pairs that pass [`NetworkBits`]' test, a necessary condition, are
/// compared whole, and each state only with the maximal ones: in a set that is a product of message fates at many servers one group of
/// equal network-free keys held thousands of states, and comparing every pair whole took 36 s
/// of one record (the log killed twice at seed 2).
pub(super) fn undominated(set: Vec<SystemState>) -> Vec<SystemState> {
    let mut groups: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, s) in set.iter().enumerate() {
        groups.entry(network_free_key(s)).or_default().push(i);
    }
    let mut dropped = vec![false; set.len()];
    for members in groups.values().filter(|m| m.len() > 1) {
        let bits = NetworkBits::of(members.iter().map(|&i| &set[i]));
        // Most messages first: a state dominates only states with fewer, so each state is
        // compared with the undominated states before it, and, domination being a strict
        // order, a dominated state is dominated by one of those.
        let mut order: Vec<usize> = (0..members.len()).collect();
        order.sort_by_key(|&x| std::cmp::Reverse(bits.ones[x]));
        let mut maximal: Vec<usize> = Vec::new();
        for x in order {
            let b = members[x];
            if maximal
                .iter()
                .any(|&y| bits.may_dominate(y, x) && dominates(&set[members[y]], &set[b]))
            {
                dropped[b] = true;
            } else {
                maximal.push(x);
            }
        }
    }
    set.into_iter()
        .zip(dropped)
        .filter(|(_, d)| !d)
        .map(|(s, _)| s)
        .collect()
}

/// The networks of a group of states, each as a set of bits: one bit per copy of a request or
/// response (the k-th copy of a message its own bit, so that a multiset is within another
/// exactly when its bits are), and the other messages as one key that must be equal.
struct NetworkBits {
    words: usize,
    bits: Vec<u64>,
    ones: Vec<u32>,
    others: Vec<u64>,
}

impl NetworkBits {
    fn of<'a>(states: impl Iterator<Item = &'a SystemState>) -> NetworkBits {
        let mut number: HashMap<(Message, usize), usize> = HashMap::new();
        let mut sets: Vec<Vec<usize>> = Vec::new();
        let mut others = Vec::new();
        for s in states {
            let mut set = Vec::new();
            let mut other = std::collections::hash_map::DefaultHasher::new();
            let mut copy = 0;
            for (k, m) in s.network.iter().enumerate() {
                // The network is sorted: equal messages are adjacent.
                copy = if k > 0 && s.network[k - 1] == *m {
                    copy + 1
                } else {
                    0
                };
                if matches!(m, Message::Nli(_) | Message::NliResponse(_)) {
                    let next = number.len();
                    set.push(*number.entry((*m, copy)).or_insert(next));
                } else {
                    m.hash(&mut other);
                }
            }
            sets.push(set);
            others.push(other.finish());
        }
        let words = number.len().div_ceil(64).max(1);
        let mut bits = vec![0u64; words * sets.len()];
        let mut ones = Vec::with_capacity(sets.len());
        for (i, set) in sets.iter().enumerate() {
            for &n in set {
                bits[i * words + n / 64] |= 1 << (n % 64);
            }
            ones.push(set.len() as u32);
        }
        NetworkBits {
            words,
            bits,
            ones,
            others,
        }
    }

    /// Whether state `a` of the group may dominate state `b`: the same other messages, and
    /// `b`'s requests and responses a proper part of `a`'s. Implied by [`dominates`].
    fn may_dominate(&self, a: usize, b: usize) -> bool {
        let w = self.words;
        self.ones[a] > self.ones[b]
            && self.others[a] == self.others[b]
            && self.bits[b * w..(b + 1) * w]
                .iter()
                .zip(&self.bits[a * w..(a + 1) * w])
                .all(|(x, y)| x & !y == 0)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::{components, dominates, source_representatives, undominated};
    use crate::validate::{model_for, successors_where};
    use rebalance_model::{BugSet, Message, SystemState};

    /// Messages of some reachable states of a small preset, requests and responses and others.
    pub(in crate::validate) fn message_pool() -> (SystemState, Vec<Message>) {
        let config = rebalance_model::config::presets::preset("ci-store").expect("a preset");
        let model = model_for(config, BugSet::none());
        let init = model.init_state();
        let mut level = vec![init.clone()];
        let mut pool: Vec<Message> = Vec::new();
        for _ in 0..10 {
            let mut next = Vec::new();
            for s in &level {
                successors_where(&model, s, |_| true, |_, n, _| next.push(n));
            }
            for s in &next {
                for m in &s.network {
                    if !pool.contains(m) {
                        pool.push(*m);
                    }
                }
            }
            next.truncate(64);
            level = next;
        }
        pool.sort();
        (init, pool)
    }

    #[test]
    fn only_the_states_no_other_dominates_are_kept_as_the_pairwise_definition_keeps_them() {
        let (base, pool) = message_pool();
        let requests = |m: &Message| matches!(m, Message::Nli(_) | Message::NliResponse(_));
        assert!(
            pool.iter().filter(|m| requests(m)).count() >= 3 && pool.iter().any(|m| !requests(m)),
            "the pool has requests or responses and other messages: {pool:?}"
        );
        // Four requests or responses and up to three other messages.
        let (mut pool, others): (Vec<Message>, Vec<Message>) = pool.into_iter().partition(requests);
        pool.truncate(4);
        pool.extend(others.into_iter().take(3));
        // Networks drawn from the pool, each message zero to two times (splitmix64, seed 7).
        let mut x: u64 = 7;
        let mut draw = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut set: Vec<SystemState> = Vec::new();
        for _ in 0..400 {
            let mut s = base.clone();
            s.network.clear();
            let r = draw();
            for (i, m) in pool.iter().enumerate() {
                for _ in 0..(r >> (2 * i)) % 3 {
                    s.network.push(*m);
                }
            }
            s.network.sort();
            if !set.contains(&s) {
                set.push(s);
            }
        }
        let pairwise: Vec<SystemState> = set
            .iter()
            .filter(|b| !set.iter().any(|a| dominates(a, b)))
            .cloned()
            .collect();
        let kept = undominated(set.clone());
        assert_eq!(kept, pairwise);
        assert!(
            !kept.is_empty() && kept.len() < set.len(),
            "some states dominated and some not: {} of {}",
            kept.len(),
            set.len()
        );
    }

    #[test]
    fn a_cycle_is_one_component_and_what_it_reaches_is_not() {
        // 0 -> 1 -> 2 -> 0, 2 -> 3; 5 -> 4.
        let links = vec![vec![1], vec![2], vec![0, 3], vec![], vec![], vec![4]];
        let c = components(&links);
        assert_eq!(c[0], c[1]);
        assert_eq!(c[1], c[2]);
        assert_ne!(c[2], c[3]);
        assert_ne!(c[4], c[5]);
        assert_ne!(c[3], c[4]);
    }

    #[test]
    fn a_state_reached_from_one_numbered_after_it_is_not_kept() {
        // The first version kept 0 (found with fewer hidden steps) and then 1, which no state
        // kept before it reaches, although 1 reaches 0: each such pair doubled the set.
        assert_eq!(source_representatives(&[vec![], vec![0]]), vec![1]);
        // A cycle is represented once, by its lowest node; a node it reaches is left out.
        assert_eq!(
            source_representatives(&[vec![1], vec![0, 2], vec![]]),
            vec![0]
        );
        // Nodes nothing links are each their own source.
        assert_eq!(
            source_representatives(&[vec![], vec![], vec![1]]),
            vec![0, 2]
        );
    }

    #[test]
    fn a_long_chain_of_hidden_steps_does_not_overflow_the_stack() {
        let n = 1_000_000;
        let links: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        assert_eq!(source_representatives(&links), vec![0]);
    }
}
