#!/usr/bin/env bash
# The figures of group commit (docs/measurements.md, "Group commit"): the `cluster` example at
# each size, on FileStore and on ZooKeeper, one write at a time and with group commit, in one run.
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/with-zookeeper.sh scripts/group-commit-figures.sh [--sizes "N ..."] [--slots K]
                                                                 [--batch N] [--latency-ms L]
                                                                 [--stores "file zk"]
                                                                 [--hosts "single group"]

For each size (default "10000 100000 1000000") and each store (a fresh FileStore directory, and a
fresh root on the ZooKeeper server at $ZK_ADDR), runs `cluster` twice, each with a coordinator
crash after 3 x size inputs:

  one write at a time   --max-inflight 1 (the default: the manager's figures before group commit)
  group commit          --max-inflight K --group-commit N --commit-latency-ms L
                        (default K = 1000, N = 1000, L = 5)

and prints one markdown table row per run: wall time, inputs, the core's store writes and their
rate, the durable operations (fsyncs or multi-ops) and their rate, the mean and 99th percentile
time from taking an input to releasing its effects, and the recovery time after the crash. Then
the ratio of the two runs' wall times per size and store. --stores and --hosts pick some of the
runs (for example `--sizes 1000000 --stores zk --hosts group` for one row); a ratio is printed
only where both runs of a size and store ran. The output of every run is kept under
a temporary directory, printed at the end.

Run it under scripts/with-zookeeper.sh, with ZK_HEAP=2g for a million buckets. One write at a time
at a million buckets takes the better part of an hour per store; run it on a quiet machine.
TEXT
}

sizes="10000 100000 1000000"
slots=1000
batch=1000
latency=5
stores="file zk"
hosts="single group"
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --sizes) sizes="${2:-}"; shift 2 ;;
    --slots) slots="${2:-}"; shift 2 ;;
    --batch) batch="${2:-}"; shift 2 ;;
    --latency-ms) latency="${2:-}"; shift 2 ;;
    --stores) stores="${2:-}"; shift 2 ;;
    --hosts) hosts="${2:-}"; shift 2 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
for n in $sizes $slots $batch $latency; do
    [[ "$n" =~ ^[0-9]+$ ]] || { echo "error: not a number: $n (see --help)" >&2; exit 2; }
done
for s in $stores; do
    [[ "$s" =~ ^(file|zk)$ ]] || { echo "error: a store is file or zk, not \`$s\` (see --help)" >&2; exit 2; }
done
for h in $hosts; do
    [[ "$h" =~ ^(single|group)$ ]] || { echo "error: a host is single or group, not \`$h\` (see --help)" >&2; exit 2; }
done
[[ " $stores " != *" zk "* ]] || [ -n "${ZK_ADDR:-}" ] || { echo "error: ZK_ADDR unset: run under scripts/with-zookeeper.sh" >&2; exit 2; }

cd "$(dirname "$0")/.."
cargo build --release -q -p rebalance-stores --example cluster
cluster="${CARGO_TARGET_DIR:-target}/release/examples/cluster"
work=$(mktemp -d)
echo "| buckets | store | host | time | inputs | store writes (/s) | durable ops (/s) | release latency mean / p99 | recovery |"
echo "|---|---|---|---|---|---|---|---|---|"
# The value after a summary line's label (the line's second column onward).
field() { grep -E "^$1 " "$2" | sed -E "s/^$1 +//"; }
for n in $sizes; do
    for store in $stores; do
        for host in $hosts; do
            out="$work/$n-$store-$host.txt"
            if [ "$store" = file ]; then
                where=(--store "file:$work/store-$n-$host")
            else
                where=(--store "zk:$ZK_ADDR" --root "/figures-$$-$n-$host")
            fi
            if [ "$host" = single ]; then
                how=(--max-inflight 1)
            else
                how=(--max-inflight "$slots" --group-commit "$batch" --commit-latency-ms "$latency")
            fi
            echo "running $n $store $host ..." >&2
            "$cluster" --buckets "$n" "${where[@]}" "${how[@]}" \
                --crash-coordinator-at $((3 * n)) >"$out" 2>"$out.err" ||
                { echo "$n $store $host FAILED: $(tail -1 "$out.err")" >&2; continue; }
            rm -rf "$work/store-$n-$host"
            # "4587 (280/s of run time)" and "12 (194/s): ..." both become "4587 (280/s)".
            count_rate() { sed -E 's/^([0-9]+) \(([0-9]+)\/s.*/\1 (\2\/s)/'; }
            printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$n" "$store" "$host" \
                "$(field time "$out")" "$(field inputs "$out" | cut -d' ' -f1)" \
                "$(field 'store writes' "$out" | count_rate)" \
                "$(field 'durable ops' "$out" | count_rate)" \
                "$(field 'release latency' "$out" | sed -E 's/ \(an input.*//')" \
                "$(field recovery "$out" | cut -d' ' -f1,2)"
        done
    done
done
echo
for n in $sizes; do
    for store in $stores; do
        a="$work/$n-$store-single.txt" b="$work/$n-$store-group.txt"
        if [ -s "$a" ] && [ -s "$b" ]; then
            ta=$(field time "$a" | cut -d' ' -f1) tb=$(field time "$b" | cut -d' ' -f1)
            echo "$n buckets on $store: one write at a time $ta s, group commit $tb s: $(echo "scale=1; $ta / $tb" | bc)x"
        fi
    done
done
echo "(every run's output: $work)"
