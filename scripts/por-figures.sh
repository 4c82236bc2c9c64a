#!/usr/bin/env bash
# The partial-order reduction's figures (docs/measurements.md, "The partial-order reduction"):
# each configuration checked with the reduction and without it (--no-por), one after the other,
# as one markdown table row.
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/por-figures.sh [--timeout SECONDS] [CONFIG...]

For each configuration (a preset name or a file; default: every CI preset, then the larger
configurations the reduction reaches), runs `rebalance-model check --config CONFIG` (the
partial-order reduction, spec 9) and `rebalance-model check --config CONFIG --no-por` (the whole
graph of the same configuration), each under a time limit (default 600 s), and prints one
markdown table row:

  | CONFIG | whole: states, seconds, peak RSS | reduced: states, seconds, peak RSS | states ratio |

A run that hits the limit shows the states it had reached, marked "> N (unfinished)". Run it on
a quiet machine: the runs use both cores, and times are only comparable within one row.
Exit code 0, or 1 when a finished check reports a violation or a missing example (the verdicts
of both runs are printed in that case).
TEXT
}

limit=600
configs=()
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --timeout)
        limit="${2:-}"
        [[ "$limit" =~ ^[0-9]+$ ]] || { echo "error: --timeout takes whole seconds, not \`$limit\`" >&2; exit 2; }
        shift 2 ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
    esac
done

cd "$(dirname "$0")/.."
cargo build --release -q -p rebalance-model
model="${CARGO_TARGET_DIR:-target}/release/rebalance-model"
if [ ${#configs[@]} -eq 0 ]; then
    mapfile -t configs < <("$model" configs | awk '$1 ~ /^(tiny|ci-)/ {print $1}')
    configs+=(
        model/configs/three-buckets-tracked2-inflight2.json
        model/configs/rf3-overlap-server-crash.json
        model/configs/rf3-two-buckets-all-faults.json
        full
    )
fi

status=0
# One run: "STATES|SECONDS|PEAK_MB" or ">STATES (unfinished)|LIMIT|PEAK_MB".
run() {
    local log rc states secs peak
    log=$(mktemp)
    set +e
    /usr/bin/time -f "peak %M" timeout "$limit" "$model" check --config "$1" "${@:2}" >"$log" 2>&1
    rc=$?
    set -e
    peak=$(awk '/^peak/ {printf "%.0f", $2 / 1024}' "$log")
    if [ $rc -eq 124 ]; then
        states=$(grep -E 'unique states' "$log" | tail -1 | sed -E 's/.*\] ([0-9]+) unique.*/\1/')
        echo "> ${states:-0} (unfinished)|${limit}|${peak}"
    else
        states=$(grep -E '^unique states' "$log" | sed -E 's/^unique states ([0-9]+),.*/\1/')
        secs=$(grep -E '^unique states' "$log" | sed -E 's/.*, ([0-9.]+) s, .*/\1/')
        if [ $rc -ne 0 ]; then
            echo "check --config $1 ${*:2}: exit $rc" >&2
            grep -E 'VIOLATED|NO EXAMPLE' "$log" >&2 || true
            status=1
        fi
        echo "${states}|${secs}|${peak}"
    fi
    rm -f "$log"
}

echo "| configuration | whole graph: states | s | peak MB | reduced: states | s | peak MB | whole / reduced |"
echo "|---|---|---|---|---|---|---|---|"
for c in "${configs[@]}"; do
    IFS='|' read -r ws wt wp <<<"$(run "$c" --no-por)"
    IFS='|' read -r rs rt rp <<<"$(run "$c")"
    ratio="-"
    if [[ "$ws" =~ ^[0-9]+$ && "$rs" =~ ^[0-9]+$ && "$rs" -gt 0 ]]; then
        ratio=$(awk -v a="$ws" -v b="$rs" 'BEGIN {printf "%.1f", a / b}')
    elif [[ "$ws" == ">"* && "$rs" =~ ^[0-9]+$ ]]; then
        ratio="> $(awk -v a="${ws#> }" -v b="$rs" 'BEGIN {printf "%.1f", a / b}')"
    fi
    echo "| \`$c\` | $ws | $wt | $wp | $rs | $rt | $rp | $ratio |"
done
exit $status
