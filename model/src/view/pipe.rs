//! Output into a pipe whose reader has gone (`rebalance-model check | head`).
//!
//! Rust ignores SIGPIPE, so a write into a closed pipe is an error, and `println!` panics on it
//! ("failed printing to stdout: Broken pipe"), exit 101 with a backtrace: a crash report for
//! what is the reader's choice. [`end_quietly_on_broken_pipe`] makes that case end the process
//! as SIGPIPE ends a C program's: silently, exit status 141 (128 + SIGPIPE), which a shell's
//! `pipefail` still sees. Any other panic is reported as before.

/// Installs the panic hook; call first in `main`.
pub fn end_quietly_on_broken_pipe() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload_as_str().unwrap_or("");
        if message.starts_with("failed printing to std") && message.contains("Broken pipe") {
            std::process::exit(141);
        }
        report(info);
    }));
}
