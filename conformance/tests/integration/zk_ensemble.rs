//! A replicated store under failover: the `cluster` host on a three-member ZooKeeper ensemble
//! on 127.0.0.1 (`scripts/with-zookeeper.sh --ensemble 3`, which the test starts and stops
//! itself, on ports of its own), whose leader is killed in the middle of a rebalance. The other
//! two members elect a new leader and the session moves to one of them; every acknowledged
//! write survives, which each new incarnation's `read` record shows and the validator checks
//! against the model's store; and the whole log is explained by the model. Then the same
//! with the host killed by SIGKILL several times as well, the leader killed between two of
//! those kills and its member started again two runs later.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStderr, ChildStdin, Command, Stdio};

use crate::process_kill::{killed_runs_are_explained_around, Around};
use crate::validate::cluster_log_is_valid_with;

/// A running ensemble; dropping it stops every member (the script's own cleanup).
struct Ensemble {
    child: Child,
    /// Held open: the script runs `cat` until it closes.
    stdin: Option<ChildStdin>,
    _stderr: BufReader<ChildStderr>,
    addr: String,
    state: String,
    script: PathBuf,
}

impl Ensemble {
    fn start(members: usize) -> Ensemble {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scripts/with-zookeeper.sh");
        let mut child = Command::new(&script)
            .args(["--ensemble", &members.to_string(), "cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("scripts/with-zookeeper.sh starts");
        let stdin = child.stdin.take();
        let mut stderr = BufReader::new(child.stderr.take().expect("stderr"));
        let mut seen = String::new();
        let (addr, state) = loop {
            let mut line = String::new();
            let n = stderr
                .read_line(&mut line)
                .expect("read the script's stderr");
            assert!(n > 0, "the ensemble did not start:\n{seen}");
            seen.push_str(&line);
            // "with-zookeeper: a ZooKeeper ensemble of 3 at ADDR (leader: member N, state DIR)"
            if let Some(rest) = line
                .split(" at ")
                .nth(1)
                .filter(|_| line.contains("ensemble of"))
            {
                let addr = rest
                    .split_whitespace()
                    .next()
                    .expect("an address")
                    .to_string();
                let state = rest
                    .rsplit("state ")
                    .next()
                    .and_then(|s| s.trim_end().strip_suffix(')'))
                    .expect("the state directory")
                    .to_string();
                break (addr, state);
            }
        };
        Ensemble {
            child,
            stdin,
            _stderr: stderr,
            addr,
            state,
            script,
        }
    }

    /// The environment a host needs to stop and start members itself.
    fn env(&self, cmd: &mut Command) {
        cmd.env("ZK_SCRIPT", &self.script)
            .env("ZK_STATE_DIR", &self.state);
    }

    /// Runs `with-zookeeper.sh ARGS` on this ensemble, as a host would.
    fn control(&self, args: &[&str]) {
        let mut cmd = Command::new(&self.script);
        self.env(&mut cmd);
        let status = cmd.args(args).status().expect("the script runs");
        assert!(status.success(), "with-zookeeper.sh {args:?}: {status}");
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        drop(self.stdin.take()); // `cat` ends, and the script stops every member
        let _ = self.child.wait();
    }
}

#[test]
fn a_cluster_on_an_ensemble_whose_leader_is_killed_loses_nothing_and_is_explained() {
    let ensemble = Ensemble::start(3);
    assert_eq!(ensemble.addr.split(',').count(), 3, "{}", ensemble.addr);
    let store = format!("zk:{}", ensemble.addr);

    // The leader killed after 25 inputs, in the middle of the rebalance, and started again 30
    // inputs later; the coordinator crashes after 60, so a new incarnation reads the store the
    // new leader serves.
    let root = format!("/ensemble-{}", std::process::id());
    let (out, err) = cluster_log_is_valid_with(
        &store,
        &[
            "--root",
            &root,
            "--zk-kill-leader-at",
            "25",
            "--crash-coordinator-at",
            "60",
        ],
        0,
        |cmd| ensemble.env(cmd),
    );
    assert!(
        err.contains("killing the ZooKeeper ensemble's leader after 25 inputs"),
        "{err}"
    );
    assert!(
        err.contains("the leader"),
        "the script named no leader: {err}"
    );
    assert!(out.contains("12 completed"), "{out}");

    // SIGKILLs of the host on the ensemble, the leader killed before the second run and its
    // member started again before the fourth.
    let root = format!("/ensemble-kill-{}", std::process::id());
    let store_args = ["--store", store.as_str(), "--root", root.as_str()];
    let mut between = |run: usize| match run {
        1 => ensemble.control(&["--stop-server", "--leader", "--kill"]),
        3 => ensemble.control(&["--start-server"]),
        _ => {}
    };
    killed_runs_are_explained_around(
        &store_args,
        6,
        &mut Around {
            setup: &|cmd| ensemble.env(cmd),
            between: &mut between,
        },
    );
}
