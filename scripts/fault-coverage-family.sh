#!/usr/bin/env bash
# The fault-pair table of spec 9 ("Fault coverage") for the fault-combination family: every pair
# of fault kinds on the move and on the leader-only bucket (72 configurations), each walked to
# the end or to --max-states. Writes docs/fault-coverage-family.md (or the file given).
# 4 December 2026, 2 idle cores: 45 min 40 s, dominated by the move configurations with a
# zombie, which stop at 30 M states.
set -euo pipefail
if [ "${1:-}" = -h ] || [ "${1:-}" = --help ]; then
    echo "usage: scripts/fault-coverage-family.sh [OUT_FILE]   (default docs/fault-coverage-family.md)"
    exit 0
fi
cd "$(dirname "$0")/.."
out=${1:-docs/fault-coverage-family.md}
kinds=(register cancel coordinator-crash server-crash store-failure loss duplication deletion zombie)
args=()
for shape in move leader-only; do
    for ((i = 0; i < ${#kinds[@]}; i++)); do
        for ((j = i + 1; j < ${#kinds[@]}; j++)); do
            args+=(--config "faults-$shape-${kinds[i]}+${kinds[j]}")
        done
    done
done
cargo build --release -q -p rebalance-model
exec target/release/rebalance-model faults "${args[@]}" --max-states 30000000 --out "$out"
