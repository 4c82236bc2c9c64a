//! A `ZkStore`'s ZooKeeper session: the server address, connecting, noticing that a session
//! ended, and running each async client call to completion.
//!
//! The client is async but the storage port is synchronous, so the store owns a tokio runtime
//! with one worker thread and blocks on each call, for at most the operation timeout. One
//! worker, not a current-thread runtime, because the session must keep sending heartbeats
//! between the manager's calls. Everything that waits on the server goes through here, so the
//! timeout and the handling of a lost session are written once.

use std::future::Future;
use std::time::Duration;

use tokio::runtime::Runtime;
use zookeeper_client as zk;

use rebalance_manager::store::StoreError;

use super::error::{Fail, ZkStoreError};

/// Checks `HOST:PORT`, or a comma-separated list of them for the members of an ensemble
/// (`127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183`; no chroot). The client connects to one
/// member and moves its session to another when that member fails.
pub fn parse_addr(addr: &str) -> Result<String, ZkStoreError> {
    let bad = || ZkStoreError::BadAddress(addr.to_string());
    let one = |member: &str| {
        let (host, port) = member.rsplit_once(':')?;
        let host_ok = !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '[' | ']' | ':'));
        port.parse::<u16>().ok().filter(|p| *p > 0 && host_ok)
    };
    if addr.split(',').all(|member| one(member).is_some()) {
        Ok(addr.to_string())
    } else {
        Err(bad())
    }
}

/// The runtime, the server's address and the current session, if any.
pub(crate) struct Session {
    rt: Runtime,
    addr: String,
    session_timeout: Duration,
    op_timeout: Duration,
    client: Option<zk::Client>,
}

impl Session {
    /// Starts the runtime for the (already checked) address `addr`; no session yet, see
    /// [`Session::connect`].
    pub(crate) fn new(
        addr: String,
        session_timeout: Duration,
        op_timeout: Duration,
    ) -> Result<Self, ZkStoreError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("zk-store")
            .enable_all()
            .build()
            .map_err(|e| ZkStoreError::Zk {
                op: "starting the client runtime".into(),
                detail: e.to_string(),
            })?;
        Ok(Session {
            rt,
            addr,
            session_timeout,
            op_timeout,
            client: None,
        })
    }

    /// The server address.
    pub(crate) fn addr(&self) -> &str {
        &self.addr
    }

    /// True if there is a client (its session may have ended since the last call).
    pub(crate) fn is_connected(&self) -> bool {
        self.client.is_some()
    }

    /// The client of the current session, if any, for requests built by the caller.
    pub(crate) fn client(&self) -> Option<&zk::Client> {
        self.client.as_ref()
    }

    /// Opens a new session.
    pub(crate) fn connect(&mut self) -> Result<(), StoreError> {
        let addr = self.addr.clone();
        let connect = zk::Client::connector()
            .with_session_timeout(self.session_timeout)
            .with_fail_eagerly()
            .connect(&addr);
        match self.block_on(connect) {
            Some(Ok(client)) => {
                self.client = Some(client);
                Ok(())
            }
            Some(Err(e)) => Err(StoreError::Unavailable(format!(
                "connecting to {addr}: {e}"
            ))),
            None => Err(StoreError::Unavailable(format!(
                "connecting to {addr}: no session within {:?}",
                self.op_timeout
            ))),
        }
    }

    /// A session for the next call. A session that ended since the last call is reported once
    /// as [`StoreError::SessionExpired`] (the manager counts it as a store failure, R8); the
    /// call after that opens a new session.
    pub(crate) fn ensure_connected(&mut self) -> Result<(), StoreError> {
        match &self.client {
            Some(c) if c.state().is_terminated() => {
                let ended = format!("session {} ended ({})", c.session_id(), c.state());
                self.client = None;
                Err(StoreError::SessionExpired(ended))
            }
            Some(_) => Ok(()),
            None => self.connect(),
        }
    }

    /// Blocks on `fut` until it completes or the operation timeout passes (`None`).
    pub(crate) fn block_on<F: Future>(&self, fut: F) -> Option<F::Output> {
        self.rt
            .block_on(async { tokio::time::timeout(self.op_timeout, fut).await })
            .ok()
    }

    /// Runs one client call to completion or the operation timeout.
    pub(crate) fn call<'a, T, F, Fut>(&'a self, f: F) -> Result<T, Fail>
    where
        F: FnOnce(&'a zk::Client) -> Fut,
        Fut: Future<Output = Result<T, zk::Error>> + 'a,
    {
        let Some(client) = self.client.as_ref() else {
            return Err(Fail::Zk(zk::Error::ClientClosed));
        };
        match self.block_on(f(client)) {
            Some(r) => r.map_err(Fail::Zk),
            None => Err(Fail::TimedOut),
        }
    }

    /// Maps a failure to the port's error, dropping a client whose session is gone.
    pub(crate) fn fail(&mut self, e: Fail, what: &str) -> StoreError {
        if e.session_lost() {
            self.client = None;
        }
        e.to_store(what)
    }

    /// Waits up to `limit` for the session to end (the client declares it expired when it could
    /// not reach the server within the session's expiry time) and says whether it did. Only
    /// the `testing` feature's hook `ZkStore::wait_for_session_end` needs it.
    #[cfg(feature = "testing")]
    pub(crate) fn wait_for_end(&self, limit: Duration) -> bool {
        let Some(client) = &self.client else {
            return true;
        };
        let mut watcher = client.state_watcher();
        let ended = self.rt.block_on(async {
            tokio::time::timeout(limit, async {
                while !watcher.state().is_terminated() {
                    watcher.changed().await;
                }
            })
            .await
        });
        ended.is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::parse_addr;

    #[test]
    fn one_server_or_an_ensemble_is_an_address() {
        for ok in [
            "127.0.0.1:2181",
            "zk-1.example:2181",
            "[::1]:2181",
            "127.0.0.1:2181,127.0.0.1:2182,127.0.0.1:2183",
        ] {
            assert_eq!(parse_addr(ok).as_deref(), Ok(ok), "{ok}");
        }
    }

    #[test]
    fn a_member_without_a_port_or_an_empty_member_is_refused() {
        for bad in [
            "",
            "127.0.0.1",
            "127.0.0.1:0",
            "127.0.0.1:2181,",
            "127.0.0.1:2181,,127.0.0.1:2182",
            "127.0.0.1:2181,127.0.0.1",
            "127.0.0.1:2181/chroot",
            "a b:2181",
        ] {
            assert!(parse_addr(bad).is_err(), "{bad:?} accepted");
        }
    }
}
