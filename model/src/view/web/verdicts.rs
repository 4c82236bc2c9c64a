//! The Explorer's global verdicts: the same check `rebalance-model check` runs (depth first,
//! shortest counterexamples), started from the page and run in the background, so that the
//! verdicts the page shows, and the counterexample links it gives, are the command line's.

use crate::check::checker::{self, CheckOptions, CheckReport};
use crate::step::model::RebalanceModel;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Clone)]
pub enum Status {
    NotRun,
    Running { since: Instant },
    Done(Arc<CheckReport>),
}

/// The check of one model, shared by the server's requests.
#[derive(Clone)]
pub struct Verdicts {
    status: Arc<Mutex<Status>>,
    threads: usize,
}

impl Verdicts {
    pub fn new(threads: usize) -> Self {
        Verdicts {
            status: Arc::new(Mutex::new(Status::NotRun)),
            threads,
        }
    }

    pub fn status(&self) -> Status {
        self.status
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Starts the check unless it is running or done; returns at once.
    pub fn start(&self, model: &RebalanceModel) {
        let mut status = self.status.lock().unwrap_or_else(|e| e.into_inner());
        if !matches!(*status, Status::NotRun) {
            return;
        }
        *status = Status::Running {
            since: Instant::now(),
        };
        // A model of its own: clones share the fair-end and bound counters, which the page's
        // evaluations of LIVE-* would otherwise add to.
        let model = RebalanceModel::new(model.config.clone(), model.bugs);
        let (shared, threads) = (Arc::clone(&self.status), self.threads);
        std::thread::spawn(move || {
            let opts = CheckOptions {
                shortest: true,
                ..CheckOptions::dfs(threads)
            };
            let report = checker::check(&model, &opts);
            *shared.lock().unwrap_or_else(|e| e.into_inner()) = Status::Done(Arc::new(report));
        });
    }
}
