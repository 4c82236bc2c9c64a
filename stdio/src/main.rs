//! `rebalance-manager-stdio`: serves the driver protocol (`spec/driver-protocol.md`) on stdin
//! and stdout. Exit codes: 0 at the end of the input, 2 after a malformed or out-of-order line
//! (the error line names the field), 1 on an i/o error.

use std::io::{self, BufReader, BufWriter};
use std::process::ExitCode;

use rebalance_manager_stdio::server::{serve, ServeError};

fn main() -> ExitCode {
    const USAGE: &str = "usage: rebalance-manager-stdio [-h | --help | -V | --version]\n\n\
        Serves the driver protocol of spec/driver-protocol.md on stdin and stdout; run it through\n\
        `rebalance-conformance replay --sut rebalance-manager-stdio FILE`.\n\n\
        Exit codes: 0 at the end of input, 1 on an I/O error, 2 on a refused request or bad usage.";
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] => {}
        ["-h" | "--help"] => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        ["-V" | "--version"] => {
            println!("rebalance-manager-stdio {}", env!("CARGO_PKG_VERSION"));
            return ExitCode::SUCCESS;
        }
        _ => {
            eprintln!("error: unexpected arguments {args:?}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    }
    let stdin = io::stdin();
    let stdout = io::stdout();
    // Buffered: the server flushes once it has answered every request it has read, so a
    // step's answers leave in one write (stdout alone would write each line).
    match serve(BufReader::new(stdin.lock()), BufWriter::new(stdout.lock())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e @ ServeError::Refused { .. }) => {
            eprintln!("rebalance-manager-stdio: {e}");
            ExitCode::from(2)
        }
        Err(e @ ServeError::Io(_)) => {
            eprintln!("rebalance-manager-stdio: {e}");
            ExitCode::from(1)
        }
    }
}
