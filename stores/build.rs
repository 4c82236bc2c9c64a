//! Turns on `cfg(zk_server)` when `REBALANCE_ZK_TESTS` is set, as `scripts/with-zookeeper.sh`
//! does after starting a server. Without it the ZooKeeper tests are compiled but ignored, with a
//! reason that names the command; they never pass without a server. A separate variable from
//! `ZK_ADDR` (whose port changes on every run) so that a new port does not rebuild the crate.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(zk_server)");
    println!("cargo::rerun-if-env-changed=REBALANCE_ZK_TESTS");
    if std::env::var_os("REBALANCE_ZK_TESTS").is_some_and(|v| !v.is_empty()) {
        println!("cargo::rustc-cfg=zk_server");
    }
}
