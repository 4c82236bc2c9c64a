//! The manager behind the driver protocol: one request line in, one response line out, in order.
//!
//! The server owns what the protocol says the implementation owns: the manager and its store
//! (an in-memory store with fault injection, seeded by `start`) and the snapshots the harness
//! asked for. The event queue and the clock are the harness's: it feeds events back as inputs
//! and sends `now_ms` with every input.
//!
//! The manager runs inside the library's host ([`rebalance_stores::Host`]) with batches of one
//! write: every write is durable before its input ends, so nothing is ever held, and every
//! effect an input emits is answered at once. The host's own routing (its event queue, the
//! messages it would send) is not used: the harness routes the emitted effects itself.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};

use rebalance_manager as mgr;
use rebalance_stores::{Flow, GroupCommit, Host, Observer};

use crate::convert;
use crate::decode::{self, WireError};
use crate::wire::{ErrorLine, Hello, Request, Response, PROTOCOL, VERSION};

/// Why serving stopped before the end of the input.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// A line was malformed or out of order; the error line has been sent.
    #[error("line {line}: field `{path}`: {message}")]
    Refused {
        /// 1-based line number of the request.
        line: u64,
        /// The field path.
        path: String,
        /// Why.
        message: String,
    },
    /// Reading requests or writing responses failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
}

/// The server's state between lines.
#[derive(Default)]
pub struct Server {
    greeted: bool,
    config: Option<mgr::Config>,
    host: Option<Stdio>,
    saved: HashMap<u64, Stdio>,
}

/// The manager in its host, on the in-memory store, one write a batch.
type Stdio = Host<GroupCommit<mgr::MemStore>>;

/// The host's observer here: it keeps what an input emitted, for the response.
struct Emitted(Vec<mgr::Effect>);

impl Observer<()> for Emitted {
    type Error = std::convert::Infallible;

    fn handled(&mut self, _: &(), effects: &[mgr::Effect]) -> Result<(), Self::Error> {
        self.0.extend_from_slice(effects);
        Ok(())
    }
}

fn refuse(path: &str, message: impl Into<String>) -> ErrorLine {
    ErrorLine {
        path: path.to_string(),
        message: message.into(),
    }
}

fn wire_error(e: &WireError) -> ErrorLine {
    let message = match e {
        WireError::NotJson(m) => format!("not JSON: {m}"),
        WireError::Missing { .. } => "missing".into(),
        WireError::Unknown { .. } => "unknown field".into(),
        WireError::Type {
            expected, found, ..
        } => format!("expected {expected}, found {found}"),
        WireError::Variant {
            expected, found, ..
        } => format!("unknown value {found}; expected one of {expected}"),
    };
    refuse(e.path(), message)
}

/// The largest time or duration accepted: 2^53 ms, exact as a JSON number everywhere, and far
/// enough from `u64::MAX` that the manager's sums of times and durations cannot overflow.
pub const MS_MAX: u64 = 1 << 53;

fn check_ms(value: u64, path: &str) -> Result<(), ErrorLine> {
    if value > MS_MAX {
        return Err(refuse(path, format!("{value} is above the limit {MS_MAX}")));
    }
    Ok(())
}

fn check_config(c: &crate::wire::Config) -> Result<(), ErrorLine> {
    check_ms(c.task_timeout_ms, "config.task_timeout_ms")?;
    check_ms(c.check_interval_ms, "config.check_interval_ms")?;
    check_ms(
        c.max_reconcile_backoff_ms,
        "config.max_reconcile_backoff_ms",
    )?;
    check_ms(
        c.target_unavailable_timeout_ms,
        "config.target_unavailable_timeout_ms",
    )?;
    check_ms(c.no_progress_timeout_ms, "config.no_progress_timeout_ms")
}

fn live(v: &[u32]) -> BTreeSet<mgr::ServerId> {
    v.iter().copied().collect()
}

/// A store whose metadata no coordinator could have written is refused at `start`: a leader
/// outside its bucket's assignment, or an ISR member outside it (spec 3.1: the ISR is a subset
/// of the assignment, the leader a member of both when there is one).
fn check_store(s: &crate::wire::Store) -> Result<(), ErrorLine> {
    for (i, b) in s.buckets.iter().enumerate() {
        if let Some(x) = b.lai.isr.iter().find(|x| !b.assignment.contains(x)) {
            return Err(refuse(
                &format!("store.buckets[{i}].lai.isr"),
                format!(
                    "server {x} is in bucket {}'s ISR but not in its assignment {:?}",
                    b.bucket, b.assignment
                ),
            ));
        }
        if let Some(l) = b.lai.leader.filter(|l| !b.assignment.contains(l)) {
            return Err(refuse(
                &format!("store.buckets[{i}].lai.leader"),
                format!(
                    "server {l} leads bucket {} but is not in its assignment {:?}",
                    b.bucket, b.assignment
                ),
            ));
        }
    }
    Ok(())
}

/// The clock is the harness's, and it never goes back: an input or a restart at a time before
/// the one the coordinator has reached is refused (after a `restore`, the time of the restored
/// state counts).
fn check_clock(m: &mgr::Manager<GroupCommit<mgr::MemStore>>, now_ms: u64) -> Result<(), ErrorLine> {
    if now_ms < m.now_ms() {
        return Err(refuse(
            "now_ms",
            format!(
                "{now_ms} is before {}, the time the coordinator has reached: the clock never goes back",
                m.now_ms()
            ),
        ));
    }
    Ok(())
}

/// A server going down must be up, one coming up must be down (the live set is the
/// coordinator's, R19 and R20).
fn check_server_change(
    m: &mgr::Manager<GroupCommit<mgr::MemStore>>,
    input: &crate::wire::Input,
) -> Result<(), ErrorLine> {
    match input {
        crate::wire::Input::ServerCrashed { server } if !m.live().contains(server) => Err(refuse(
            "input.server",
            format!("server {server} is not live, so it cannot go down"),
        )),
        crate::wire::Input::ServerRestarted { server } if m.live().contains(server) => Err(refuse(
            "input.server",
            format!("server {server} is already live"),
        )),
        _ => Ok(()),
    }
}

impl Server {
    /// The answer to one line: a response, or the error line after which the server stops.
    pub fn answer(&mut self, line: &str) -> Result<Response, ErrorLine> {
        let request: Request = decode::line(line).map_err(|e| wire_error(&e))?;
        if !self.greeted {
            let Request::Hello { protocol, version } = request else {
                return Err(refuse("op", "the first line must be `hello`"));
            };
            if protocol != PROTOCOL {
                return Err(refuse(
                    "protocol",
                    format!("this implementation speaks `{PROTOCOL}`"),
                ));
            }
            if version != VERSION {
                return Err(refuse(
                    "version",
                    format!("this implementation speaks version {VERSION}"),
                ));
            }
            self.greeted = true;
            return Ok(Response::Hello(Hello {
                protocol: PROTOCOL.into(),
                version: VERSION,
                implementation: format!("rebalance-manager-stdio {}", env!("CARGO_PKG_VERSION")),
            }));
        }
        let op = request.op();
        match request {
            Request::Hello { .. } => Err(refuse("op", "`hello` was already sent")),
            Request::Start {
                config,
                store,
                live: l,
                now_ms,
            } => {
                check_config(&config)?;
                check_store(&store)?;
                check_ms(now_ms, "now_ms")?;
                let config = convert::config_from(&config);
                let store = mgr::MemStore::with_state(convert::store_from(&store));
                Ok(self.start(config, store, live(&l), now_ms))
            }
            Request::Restart { live: l, now_ms } => {
                check_ms(now_ms, "now_ms")?;
                let (Some(config), Some(h)) = (self.config.clone(), self.host.take()) else {
                    return Err(refuse("op", "`restart` before `start`"));
                };
                if let Err(e) = check_clock(h.manager(), now_ms) {
                    self.host = Some(h);
                    return Err(e);
                }
                // R17: the incarnation's memory is gone; its store stays.
                let store = h.stop().store.into_inner();
                Ok(self.start(config, store, live(&l), now_ms))
            }
            Request::FailStoreOp { nth } => {
                if nth == 0 || nth > u64::from(u32::MAX) {
                    return Err(refuse("nth", format!("{nth} is not in 1..={}", u32::MAX)));
                }
                self.current(op)?.store_mut().inner_mut().fail_nth_op(nth);
                Ok(Response::Done(op.into()))
            }
            Request::Input { now_ms, input } => {
                check_ms(now_ms, "now_ms")?;
                let h = self.current(op)?;
                check_clock(h.manager(), now_ms)?;
                check_server_change(h.manager(), &input)?;
                let mut emitted = Emitted(Vec::new());
                let Ok(flow) = h.offer(now_ms, convert::input_from(&input), &mut emitted, |_| ());
                // One write a batch: each write is the store's own call, whose failure the core
                // handles (R8); no batch is ever flushed, so none is lost.
                debug_assert_eq!(flow, Flow::Going);
                debug_assert!(!h.holding(), "a batch of one holds nothing");
                // The harness routes the effects: the host's copies are dropped.
                h.take_outgoing();
                while h.next_event().is_some() {}
                Ok(Response::Effects(
                    emitted.0.iter().map(convert::effect).collect(),
                ))
            }
            Request::State => {
                let h = self.current(op)?;
                Ok(Response::State(Box::new(convert::observation(
                    h.manager(),
                    h.adapter().inner(),
                ))))
            }
            Request::Snapshot { id } => {
                if self.saved.contains_key(&id) {
                    return Err(refuse(
                        "id",
                        format!("snapshot {id} exists: `release` it before reusing its id"),
                    ));
                }
                let copy = self.current(op)?.clone();
                self.saved.insert(id, copy);
                Ok(Response::Done(op.into()))
            }
            Request::Restore { id } => {
                let copy = self
                    .saved
                    .get(&id)
                    .ok_or_else(|| refuse("id", format!("no snapshot {id}")))?
                    .clone();
                self.host = Some(copy);
                Ok(Response::Done(op.into()))
            }
            Request::Release { id } => {
                self.saved
                    .remove(&id)
                    .ok_or_else(|| refuse("id", format!("no snapshot {id}")))?;
                Ok(Response::Done(op.into()))
            }
        }
    }

    fn start(
        &mut self,
        config: mgr::Config,
        store: mgr::MemStore,
        live: BTreeSet<mgr::ServerId>,
        now_ms: u64,
    ) -> Response {
        self.config = Some(config.clone());
        match Host::start(config, GroupCommit::new(store, 1), live, now_ms) {
            Ok((mut h, effects)) => {
                while h.next_event().is_some() {} // the harness's queue gets them
                self.host = Some(h);
                Response::Effects(effects.iter().map(convert::effect).collect())
            }
            Err(e) => {
                self.host = None;
                Response::Refused(e.to_string())
            }
        }
    }

    fn current(&mut self, op: &str) -> Result<&mut Stdio, ErrorLine> {
        self.host
            .as_mut()
            .ok_or_else(|| refuse("op", format!("`{op}` before a successful `start`")))
    }
}

/// Serves requests from `input` until it ends, answering on `output`. Responses are flushed
/// whenever no further request is already buffered, so a harness that sends a step's requests
/// at once gets their answers in one write.
pub fn serve(mut input: BufReader<impl Read>, mut output: impl Write) -> Result<(), ServeError> {
    let mut server = Server::default();
    let mut line = Vec::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            output.flush()?;
            return Ok(());
        }
        number += 1;
        // A line that is not UTF-8 is a malformed line like any other: an error line, exit 2.
        let answer = match std::str::from_utf8(&line) {
            Ok(text) => server.answer(text.trim_end_matches(['\n', '\r'])),
            Err(e) => Err(refuse(
                "(line)",
                format!("not UTF-8 (invalid byte at offset {})", e.valid_up_to()),
            )),
        };
        match answer {
            Ok(response) => {
                output.write_all(response.to_line().as_bytes())?;
                output.write_all(b"\n")?;
                if input.buffer().is_empty() {
                    output.flush()?;
                }
            }
            Err(error) => {
                let refused = ServeError::Refused {
                    line: number,
                    path: error.path.clone(),
                    message: error.message.clone(),
                };
                output.write_all(Response::Error(error).to_line().as_bytes())?;
                output.write_all(b"\n")?;
                output.flush()?;
                return Err(refused);
            }
        }
    }
}
