#!/usr/bin/env bash
# The whole test suite, as CI runs it (README, "Set up"; docs/testing.md): every test of the workspace,
# release build, against a real ZooKeeper server (scripts/with-zookeeper.sh).
set -euo pipefail

case "${1:-}" in
-h | --help)
    cat <<'TEXT'
usage: scripts/test-all.sh [NEXTEST_ARGS...]

Starts a ZooKeeper server (scripts/with-zookeeper.sh) and, under it, runs every test of the
workspace with cargo-nextest in the release profile, then the doc tests, which nextest does not
run. nextest runs each test in its own process, two at a time on 2 cores, so the single-threaded
tests and the ZooKeeper tests that wait on the server overlap the two-threaded exhaustive checks
instead of queueing behind them, as they do under `cargo test`. Arguments go to `cargo nextest
run` (a filter, say: `scripts/test-all.sh exhaustive_ci`).

Installs Debian's python3, chromium and zookeeper packages where missing
(scripts/install-test-deps.sh): the Explorer's browser test (model/tests/integration/browser.rs)
renders its pages in headless Chromium, and fails without it.

`cargo test --workspace --release` under scripts/with-zookeeper.sh runs the same tests, one test
binary after another.
TEXT
    exit 0
    ;;
esac
command -v cargo-nextest >/dev/null || {
    echo "error: cargo-nextest is not installed (cargo install cargo-nextest --locked)" >&2
    exit 2
}
cd "$(dirname "$0")/.."
# The Debian packages the tests use (python3, chromium for the Explorer's browser test,
# zookeeper), installed where missing; one script for this and .ci/run.
scripts/install-test-deps.sh
# Both under one server: the doc tests build with the same REBALANCE_ZK_TESTS as the tests
# (stores/build.rs), so the crate is not compiled twice.
exec scripts/with-zookeeper.sh bash -c \
    'cargo nextest run --workspace --release --no-fail-fast "$@" && cargo test --workspace --release --doc' \
    test-all "$@"
