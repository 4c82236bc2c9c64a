//! The child process behind `--sut`: started with its arguments, greeted with `hello`, fed
//! request lines in batches (one step's requests at once) and read back one response line per
//! request, each batch within the step timeout.
//!
//! The harness never blocks on the child: a thread reads its stdout into a channel that the
//! harness waits on with a deadline, and another keeps the tail of its stderr for reports. On a
//! timeout the child is killed by its id. Every failure is a [`DriverError`] that quotes the
//! request and, if one came, the line the child sent.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rebalance_manager_stdio::decode::{self, WireError};
use rebalance_manager_stdio::wire::{Request, Response, PROTOCOL, VERSION};

use super::command::{self, CommandError};

/// How to start an implementation under test.
#[derive(Clone, Debug)]
pub struct SutCommand {
    /// The command as given (for messages).
    pub text: String,
    /// The program and its arguments.
    pub argv: Vec<String>,
    /// How long one step's requests may take in all.
    pub step_timeout: Duration,
}

impl SutCommand {
    /// `command` split into words (see [`command::split`]).
    pub fn parse(command: &str, step_timeout: Duration) -> Result<SutCommand, CommandError> {
        Ok(SutCommand {
            text: command.to_string(),
            argv: command::split(command)?,
            step_timeout,
        })
    }
}

/// Longest request or response quoted in a message.
const QUOTE_MAX: usize = 300;

/// `line`, cut to `QUOTE_MAX` characters.
pub fn quote(line: &str) -> String {
    match line.char_indices().nth(QUOTE_MAX) {
        Some((end, _)) => format!("{}... ({} bytes)", &line[..end], line.len()),
        None => line.to_string(),
    }
}

/// A failure of the implementation under test (not a divergence: it did not get as far as
/// answering). Requests and lines are quoted, cut to a few hundred characters.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// The command could not be started.
    #[error("could not start `{command}`: {error}")]
    Spawn { command: String, error: String },
    /// No complete answer within the step timeout; the child was killed.
    #[error(
        "no answer to `{request}` within {timeout_ms} ms; killed the implementation (pid {pid})"
    )]
    Timeout {
        request: String,
        timeout_ms: u128,
        pid: u32,
    },
    /// The child closed its output (exited) before answering.
    #[error("the implementation exited ({status}) without answering `{request}`{stderr}")]
    Exited {
        request: String,
        status: String,
        /// The tail of its stderr, prefixed for the message.
        stderr: String,
    },
    /// The child sent a line that is not a response of the protocol.
    #[error("the implementation answered `{request}` with a malformed line `{line}`: {error}")]
    Malformed {
        request: String,
        line: String,
        error: WireError,
    },
    /// The child sent a response, but not the one the request calls for.
    #[error("the implementation answered `{request}` with `{line}`; expected {expected}")]
    Unexpected {
        request: String,
        line: String,
        expected: String,
    },
    /// The child refused the request with an error line.
    #[error("the implementation refused `{request}`: field `{path}`: {message}")]
    Refused {
        request: String,
        path: String,
        message: String,
    },
    /// A handle to a state the implementation no longer has (a harness bug).
    #[error("internal: {0}")]
    Internal(String),
}

/// The child and the threads around it.
pub struct Driver {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Lines from the reader thread, in the chunks it read them.
    lines: Receiver<Vec<String>>,
    /// Lines received and not yet consumed.
    received: VecDeque<String>,
    stderr: Arc<Mutex<String>>,
    timeout: Duration,
    /// Set once the child failed; every later exchange fails the same way.
    failed: Option<DriverError>,
    out: String,
}

/// Stderr kept for reports, in bytes.
const STDERR_TAIL: usize = 2000;

impl Driver {
    /// Starts the command and exchanges `hello`.
    pub fn spawn(sut: &SutCommand) -> Result<Driver, DriverError> {
        let mut child = Command::new(&sut.argv[0])
            .args(&sut.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| DriverError::Spawn {
                command: sut.text.clone(),
                error: e.to_string(),
            })?;
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            // Every complete line already read is sent at once, so a step's answers wake the
            // harness once.
            let mut reader = BufReader::new(stdout);
            loop {
                let mut chunk = Vec::new();
                loop {
                    let mut line = String::new();
                    match reader.read_line(&mut line) {
                        Ok(0) | Err(_) => {
                            let _ = tx.send(chunk);
                            return;
                        }
                        Ok(_) => chunk.push(line),
                    }
                    if !reader.buffer().contains(&b'\n') {
                        break;
                    }
                }
                if tx.send(chunk).is_err() {
                    return;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let tail = Arc::clone(&stderr);
        thread::spawn(move || {
            let mut pipe = stderr_pipe;
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                let mut t = tail.lock().expect("stderr tail");
                t.push_str(&String::from_utf8_lossy(&buf[..n]));
                if t.len() > 2 * STDERR_TAIL {
                    let mut cut = t.len() - STDERR_TAIL;
                    while !t.is_char_boundary(cut) {
                        cut += 1;
                    }
                    t.drain(..cut);
                }
            }
        });
        let mut driver = Driver {
            stdin: child.stdin.take(),
            child,
            lines,
            received: VecDeque::new(),
            stderr,
            timeout: sut.step_timeout,
            failed: None,
            out: String::new(),
        };
        let hello = Request::Hello {
            protocol: PROTOCOL.into(),
            version: VERSION,
        };
        let mut answers = driver.exchange(std::slice::from_ref(&hello))?;
        let (line, response) = answers.pop().expect("one answer per request");
        match response {
            Response::Hello(h) if h.protocol == PROTOCOL && h.version == VERSION => Ok(driver),
            _ => Err(driver.fail(DriverError::Unexpected {
                request: quote(&hello.to_line()),
                line: quote(&line),
                expected: format!(
                    "{{\"hello\": {{\"protocol\": \"{PROTOCOL}\", \"version\": {VERSION}, ...}}}}"
                ),
            })),
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Records `e` as the child's failure (later exchanges fail with it) and kills the child.
    pub fn fail(&mut self, e: DriverError) -> DriverError {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.failed = Some(e.clone());
        e
    }

    /// Sends `requests` at once and reads one response per request, all within the step
    /// timeout. Returns each response with the line it came in. An error line from the child
    /// is [`DriverError::Refused`].
    pub fn exchange(
        &mut self,
        requests: &[Request],
    ) -> Result<Vec<(String, Response)>, DriverError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let deadline = Instant::now() + self.timeout;
        self.out.clear();
        for r in requests {
            self.out.push_str(&r.to_line());
            self.out.push('\n');
        }
        let wrote = match self.stdin.as_mut() {
            Some(stdin) => stdin
                .write_all(self.out.as_bytes())
                .and_then(|()| stdin.flush()),
            None => Err(std::io::ErrorKind::BrokenPipe.into()),
        };
        let mut answers = Vec::with_capacity(requests.len());
        for r in requests {
            let request = || quote(&r.to_line());
            let line = match self.next_line(deadline) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    let pid = self.pid();
                    return Err(self.fail(DriverError::Timeout {
                        request: request(),
                        timeout_ms: self.timeout.as_millis(),
                        pid,
                    }));
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let e = self.exited(request());
                    return Err(self.fail(e));
                }
            };
            let text = line.trim_end_matches(['\n', '\r']);
            match decode::line::<Response>(text) {
                Ok(Response::Error(e)) => {
                    return Err(self.fail(DriverError::Refused {
                        request: request(),
                        path: e.path,
                        message: e.message,
                    }))
                }
                Ok(response) => answers.push((text.to_string(), response)),
                Err(error) => {
                    return Err(self.fail(DriverError::Malformed {
                        request: request(),
                        line: quote(text),
                        error,
                    }))
                }
            }
        }
        if let Err(e) = wrote {
            // Every answer came, yet the write failed: the child closed its input early.
            let e = DriverError::Exited {
                request: quote(&requests.last().map(Request::to_line).unwrap_or_default()),
                status: format!("closed its input: {e}"),
                stderr: String::new(),
            };
            return Err(self.fail(e));
        }
        Ok(answers)
    }

    /// The next line of the child's output, waiting until `deadline` at most.
    fn next_line(&mut self, deadline: Instant) -> Result<String, RecvTimeoutError> {
        loop {
            if let Some(line) = self.received.pop_front() {
                return Ok(line);
            }
            let wait = deadline.saturating_duration_since(Instant::now());
            self.received.extend(self.lines.recv_timeout(wait)?);
        }
    }

    /// The error for a child whose output ended before answering `request`.
    fn exited(&mut self, request: String) -> DriverError {
        // The output is closed; the process is exiting or has exited. Wait for it briefly.
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.to_string(),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
                Ok(None) => break "closed its output, still running".to_string(),
                Err(e) => break e.to_string(),
            }
        };
        // Give the stderr thread a moment to collect the last words.
        thread::sleep(Duration::from_millis(20));
        let tail = self.stderr.lock().expect("stderr tail").trim().to_string();
        DriverError::Exited {
            request,
            status,
            stderr: if tail.is_empty() {
                String::new()
            } else {
                format!("; its stderr ends with: {}", quote(&tail))
            },
        }
    }
}

impl Drop for Driver {
    /// Closes the child's input (a protocol implementation exits at the end of its input) and
    /// reaps it; one that is still running shortly after is killed.
    fn drop(&mut self) {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_millis(500);
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return,
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(2)),
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    return;
                }
            }
        }
    }
}
