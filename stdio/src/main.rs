//! `rebalance-manager-stdio`: serves the driver protocol (`spec/driver-protocol.md`) on stdin
//! and stdout. Exit codes: 0 at the end of the input, 2 after a malformed or out-of-order line
//! (the error line names the field), 1 on an i/o error.

use std::io::{self, BufReader, BufWriter};
use std::process::ExitCode;

use rebalance_manager_stdio::server::{serve, ServeError};

fn main() -> ExitCode {
    if std::env::args().len() > 1 {
        eprintln!(
            "usage: rebalance-manager-stdio\n\nServes the driver protocol of spec/driver-protocol.md on stdin and stdout;\n\
             run it through `rebalance-conformance replay --sut rebalance-manager-stdio FILE`."
        );
        return ExitCode::from(2);
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
