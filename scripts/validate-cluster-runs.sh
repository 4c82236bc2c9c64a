#!/usr/bin/env bash
# Runs the `cluster` example with several seeds, each with a coordinator crash at a seeded
# point, writes each run's coordinator log and validates it against the model
# (spec/log-format.md). Part of scripts/scheduled-checks.sh; CI validates two runs
# (conformance/tests/integration/validate.rs).
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/validate-cluster-runs.sh [--seeds N] [--buckets B] [--zk [--leader]] [--kills K]
                                       [--group-commit N]

Runs `cluster --buckets B --seed S --crash-coordinator-at T --log FILE` for S = 1..N (default
N = 20, B = 16, the model's largest; T = 5 + 4 S), with 5% of the messages lost and 30% of the
buckets with slow followers, on a fresh file store, or with --zk on the
ZooKeeper server at $ZK_ADDR (run under scripts/with-zookeeper.sh), killed after T + 5
inputs and started again once three store operations failed (with --leader, on an ensemble
started by scripts/with-zookeeper.sh --ensemble 3: only the ensemble's leader killed, and its
member started again 30 inputs later), and validates each log with
`rebalance-conformance validate`. Prints one line per run and a summary with the total records
and the validation time.

With --kills K, each seed's run is instead a real process crash test: the host is killed by
SIGKILL right after its P-th store operation (`--kill-at-store-op P`, P drawn from 1..30 by the
seed), K times, each time run again on the same store and log, and then left to finish; the one
log of all those processes is validated. (No ZooKeeper outage in this mode.)

With --group-commit N, each run uses group commit (batches of at most N writes, 4 slots) and
also loses one batch (`--fail-flush-at F`, F = 2 + S mod 5): the log holds only the inputs whose
effects were released, and a lost batch must read as a crash before its inputs (spec/protocol.md,
"Group commit"). Not with --kills (a kill between a flush and its log records is not covered).

Exit code: 0 when every log is valid; 1 when some run failed or some log is not; 2 on bad usage.
TEXT
}

seeds=20
buckets=16
zk=0
leader=0
kills=0
group_commit=0
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --seeds)
        seeds="${2:-}"
        [[ "$seeds" =~ ^[1-9][0-9]*$ ]] || { echo "error: --seeds takes a positive number" >&2; exit 2; }
        shift 2 ;;
    --buckets)
        buckets="${2:-}"
        [[ "$buckets" =~ ^[1-9][0-9]*$ ]] && [ "$buckets" -le 16 ] ||
            { echo "error: --buckets takes 1 to 16 (the model's limit)" >&2; exit 2; }
        shift 2 ;;
    --zk) zk=1; shift ;;
    --leader) leader=1; shift ;;
    --group-commit)
        group_commit="${2:-}"
        [[ "$group_commit" =~ ^[1-9][0-9]*$ ]] || { echo "error: --group-commit takes a positive number" >&2; exit 2; }
        shift 2 ;;
    --kills)
        kills="${2:-}"
        [[ "$kills" =~ ^[1-9][0-9]*$ ]] || { echo "error: --kills takes a positive number" >&2; exit 2; }
        shift 2 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ "$group_commit" -gt 0 ] && [ "$kills" -gt 0 ]; then
    echo "error: --group-commit and --kills do not go together (see --help)" >&2
    exit 2
fi
if [ $zk -eq 1 ] && [ -z "${ZK_ADDR:-}" ]; then
    echo "error: --zk needs ZK_ADDR: run under scripts/with-zookeeper.sh" >&2
    exit 2
fi
if [ $leader -eq 1 ] && { [ $zk -eq 0 ] || [[ "${ZK_ADDR:-}" != *,* ]]; }; then
    echo "error: --leader needs --zk on an ensemble: run under scripts/with-zookeeper.sh --ensemble 3" >&2
    exit 2
fi

cd "$(dirname "$0")/.."
echo "building (release) ..." >&2
cargo build --release -q -p rebalance-conformance
cargo build --release -q -p rebalance-stores --example cluster
bin="${CARGO_TARGET_DIR:-target}/release"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
records=0
start=$(date +%s.%N)
for s in $(seq 1 "$seeds"); do
    crash=$((5 + 4 * s))
    if [ $zk -eq 1 ]; then
        fault=(--zk-outage-at $((crash + 5)))
        [ $leader -eq 1 ] && fault=(--zk-kill-leader-at $((crash + 5)))
        store=(--store "zk:$ZK_ADDR" --root "/validate-runs-$$-$s" "${fault[@]}")
    else
        store=(--store "file:$work/store-$s")
    fi
    log="$work/run-$s.log"
    run=("$bin/examples/cluster" --buckets "$buckets" --seed "$s"
        --loss-per-million 50000 --slow-per-million 300000 "${store[@]}" --log "$log")
    if [ "$group_commit" -gt 0 ]; then
        run+=(--group-commit "$group_commit" --max-inflight 4 --fail-flush-at $((2 + s % 5)))
    fi
    if [ "$kills" -gt 0 ]; then
        # Kill points from the seed; a run that finishes before its point ends the series.
        [ $zk -eq 1 ] && store=(--store "zk:$ZK_ADDR" --root "/validate-kills-$$-$s")
        run=("$bin/examples/cluster" --buckets "$buckets" --seed "$s"
            --loss-per-million 50000 --slow-per-million 300000 "${store[@]}" --log "$log")
        RANDOM=$s
        points=()
        finished=0
        for _ in $(seq 1 "$kills"); do
            p=$((RANDOM % 30 + 1))
            set +e
            "${run[@]}" --kill-at-store-op "$p" >/dev/null 2>"$work/err"
            rc=$?
            set -e
            if [ $rc -eq 0 ]; then finished=1; break; fi
            if [ $rc -ne 137 ]; then
                echo "seed $s: cluster FAILED after kills at ${points[*]}: $(tail -1 "$work/err")"
                status=1
                continue 2
            fi
            points+=("$p")
        done
        if [ $finished -eq 0 ] && ! "${run[@]}" >/dev/null 2>"$work/err"; then
            echo "seed $s: cluster FAILED after kills at ${points[*]}: $(tail -1 "$work/err")"
            status=1
            continue
        fi
        crash="kills after store operations ${points[*]:-none}"
    elif ! "${run[@]}" --crash-coordinator-at "$crash" >/dev/null 2>"$work/err"; then
        echo "seed $s: cluster FAILED: $(tail -1 "$work/err")"
        status=1
        continue
    else
        crash="crash after $crash inputs"
        if [ $leader -eq 1 ]; then
            if grep -q "killing the ZooKeeper ensemble's leader" "$work/err"; then
                crash="$crash, leader killed"
            else
                crash="$crash, the run ended before its leader kill"
            fi
        fi
    fi
    set +e
    out=$("$bin/rebalance-conformance" validate "$log")
    rc=$?
    set -e
    echo "seed $s ($crash): $out"
    [ $rc -eq 0 ] || status=1
    records=$((records + $(wc -l <"$log") - 1))
done
end=$(date +%s.%N)
echo "cluster runs: $seeds seeds, $records records in all, $(echo "$end - $start" | bc) s with the runs"
exit $status
