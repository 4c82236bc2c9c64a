//! `rebalance-model catalogue`: the catalogue of configurations
//! (`model/src/config/catalogue.rs`) for people, for `scripts/scheduled-checks.sh`, and for the
//! tables of `docs/model.md`.

use std::path::Path;
use std::process::ExitCode;

use rebalance_model::config::catalogue::{update_tables, How, Table, CATALOGUE};

/// One line per configuration: where it runs, its pinned states, what is caught on it.
pub fn list() {
    for e in CATALOGUE {
        let runs = match (e.ci, e.scheduled) {
            (true, true) => "CI, scheduled",
            (true, false) => "CI",
            (false, true) => "scheduled",
            (false, false) => "a switch's test",
        };
        let states = e
            .states
            .map(|s| {
                format!(
                    "; {} reduced, {} whole, {} progress",
                    s.reduced, s.whole, s.progress
                )
            })
            .unwrap_or_default();
        let bound = e
            .cycle_bound
            .map(|b| format!("; cycle search bound {b}"))
            .unwrap_or_default();
        println!("{} ({runs}{states}{bound})", e.config_arg());
        for c in e.caught {
            let switches: Vec<String> = c.switches.iter().map(|b| b.to_string()).collect();
            let how = match c.how {
                How::InAState { shortest: Some(n) } => format!(" in {n} steps"),
                How::InAState { shortest: None } => String::new(),
                How::OnAFairCycle { .. } => " on a fair cycle".to_string(),
            };
            println!("    {} violates {}{how}", switches.join(" + "), c.property);
        }
    }
}

/// What `scripts/scheduled-checks.sh` checks, one `--config` argument a line.
pub fn scheduled() {
    for e in CATALOGUE.iter().filter(|e| e.scheduled) {
        println!("{}", e.config_arg());
    }
}

/// The presets whose fair-cycle search CI keeps within a bound, one a line.
pub fn bounded() {
    for e in CATALOGUE.iter().filter(|e| e.cycle_bound.is_some()) {
        println!("{}", e.config_arg());
    }
}

/// One of the tables of `docs/model.md`.
pub fn table(table: Table) {
    print!("{}", table.markdown());
}

/// Rewrites the catalogue's tables in `path` between their markers; exit 2 when the file
/// cannot be read or written or has no markers.
pub fn update_docs(path: &Path) -> ExitCode {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => return super::usage(&format!("cannot read {}: {e}", path.display())),
    };
    let updated = match update_tables(&text) {
        Ok(u) => u,
        Err(why) => return super::usage(&format!("{}: {why}", path.display())),
    };
    if updated == text {
        eprintln!("{}: the tables are the catalogue's already", path.display());
        return ExitCode::SUCCESS;
    }
    if let Err(e) = std::fs::write(path, updated) {
        return super::usage(&format!("cannot write {}: {e}", path.display()));
    }
    eprintln!("{}: tables rewritten from the catalogue", path.display());
    ExitCode::SUCCESS
}
