//! The manager behind the driver protocol: one request line in, one response line out, in order.
//!
//! The server owns what the protocol says the implementation owns: the manager and its store
//! (an in-memory store with fault injection, seeded by `start`) and the snapshots the harness
//! asked for. The event queue and the clock are the harness's: it feeds events back as inputs
//! and sends `now_ms` with every input.

use std::collections::{BTreeSet, HashMap};
use std::io::{BufRead, BufReader, Read, Write};

use rebalance_manager as mgr;

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
    manager: Option<mgr::Manager<mgr::MemStore>>,
    saved: HashMap<u64, mgr::Manager<mgr::MemStore>>,
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
                check_ms(now_ms, "now_ms")?;
                let config = convert::config_from(&config);
                let store = mgr::MemStore::with_state(convert::store_from(&store));
                Ok(self.start(config, store, live(&l), now_ms))
            }
            Request::Restart { live: l, now_ms } => {
                check_ms(now_ms, "now_ms")?;
                let (Some(config), Some(m)) = (self.config.clone(), self.manager.take()) else {
                    return Err(refuse("op", "`restart` before `start`"));
                };
                // R17: the incarnation's memory is gone; its store stays.
                let store = m.into_store();
                Ok(self.start(config, store, live(&l), now_ms))
            }
            Request::FailStoreOp { nth } => {
                if nth == 0 || nth > u64::from(u32::MAX) {
                    return Err(refuse("nth", format!("{nth} is not in 1..={}", u32::MAX)));
                }
                self.current(op)?.store_mut().fail_nth_op(nth);
                Ok(Response::Done(op.into()))
            }
            Request::Input { now_ms, input } => {
                check_ms(now_ms, "now_ms")?;
                let effects = self
                    .current(op)?
                    .handle(now_ms, convert::input_from(&input));
                Ok(Response::Effects(
                    effects.iter().map(convert::effect).collect(),
                ))
            }
            Request::State => Ok(Response::State(Box::new(convert::observation(
                self.current(op)?,
            )))),
            Request::Snapshot { id } => {
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
                self.manager = Some(copy);
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
        match mgr::Manager::start(config, store, live, now_ms) {
            Ok((m, effects)) => {
                self.manager = Some(m);
                Response::Effects(effects.iter().map(convert::effect).collect())
            }
            Err(e) => {
                self.manager = None;
                Response::Refused(e.to_string())
            }
        }
    }

    fn current(&mut self, op: &str) -> Result<&mut mgr::Manager<mgr::MemStore>, ErrorLine> {
        self.manager
            .as_mut()
            .ok_or_else(|| refuse("op", format!("`{op}` before a successful `start`")))
    }
}

/// Serves requests from `input` until it ends, answering on `output`. Responses are flushed
/// whenever no further request is already buffered, so a harness that sends a step's requests
/// at once gets their answers in one write.
pub fn serve(mut input: BufReader<impl Read>, mut output: impl Write) -> Result<(), ServeError> {
    let mut server = Server::default();
    let mut line = String::new();
    let mut number = 0u64;
    loop {
        line.clear();
        if input.read_line(&mut line)? == 0 {
            output.flush()?;
            return Ok(());
        }
        number += 1;
        let text = line.trim_end_matches(['\n', '\r']);
        match server.answer(text) {
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
