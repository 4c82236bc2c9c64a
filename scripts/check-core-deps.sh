#!/usr/bin/env bash
# The protocol core's crate (rebalance-manager) may link nothing that can do I/O, keep time or
# spawn threads: its normal and build dependency tree must hold only the crates listed below.
# An allow-list rather than a ban-list, so that a new dependency of any kind (tokio, a
# ZooKeeper client, a clock crate, a logging crate that writes files) fails CI until it is
# argued for and added here. Clippy's bans in impl/clippy.toml cover std's own clock, file,
# socket and thread paths; this covers everything else.
set -euo pipefail
case "${1:-}" in
-h | --help)
    sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
    echo
    echo "usage: scripts/check-core-deps.sh    (exit 0: only allowed crates; 1: lists the others)"
    exit 0
    ;;
esac
cd "$(dirname "$0")/.."
allowed=(
    rebalance-manager
    # serialisation of the plan, the task node and the configuration (no I/O of its own)
    serde serde_core serde_derive serde_json itoa memchr ryu zmij
    # error types
    thiserror thiserror-impl
    # what the derive macros are built with, at compile time only
    proc-macro2 quote syn unicode-ident
)
found=$(cargo tree -p rebalance-manager --edges normal,build --prefix none --format '{p}' |
    awk '{print $1}' | sort -u)
bad=()
for crate in $found; do
    ok=0
    for a in "${allowed[@]}"; do [[ $crate == "$a" ]] && ok=1 && break; done
    ((ok)) || bad+=("$crate")
done
if ((${#bad[@]})); then
    echo "error: rebalance-manager (the protocol core) depends on crates outside its allow-list:" >&2
    printf '  %s\n' "${bad[@]}" >&2
    echo "the core does no I/O; put adapters in rebalance-stores, or argue for the crate in $0" >&2
    exit 1
fi
echo "rebalance-manager's dependency tree: $(echo $found | wc -w) crates, all allowed"
