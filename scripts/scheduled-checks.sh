#!/usr/bin/env bash
# Scheduled (not per-commit) checks: the configurations too large for CI, model-checked and,
# where the model check finishes, walked edge by edge against the manager.
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/scheduled-checks.sh [--timeout SECONDS] [--no-conformance] [CONFIG...]

Runs `rebalance-model check` (with the partial-order reduction, spec 9) on each configuration (a
preset name or a file; default: what the catalogue marks scheduled, `rebalance-model catalogue
--scheduled`: the large configurations of docs/model.md's "Larger configurations" table, `full`,
and the CI presets whose reduced graphs CI's conformance walk samples within a bound), each under a time limit (default 1800 s), and then `rebalance-conformance
exhaustive` (on the same reduced graph) on each one whose check finished with every property
holding. Prints one summary line per configuration:

  CONFIG  check: STATES states, SECONDS s, PEAK KB (holds | VIOLATED | timed out)
          conformance: EDGES edges agree (SECONDS s) | DIVERGENCE | skipped

Then runs the progress check (rebalance-model check --no-give-up, spec 7.3) without a bound on the
CI presets whose fair-cycle search CI bounds (`rebalance-model catalogue --bounded`), regenerates every shipped suite under
conformance/suite/ and diffs it, walks three CI presets
with group commit in the loop (rebalance-conformance exhaustive --group-commit), validates the logs
of 50 seeded `cluster` runs (and 20 on ZooKeeper when ZK_ADDR is set), and of 50 with group commit
and a lost batch each, runs the seeded simulation (a swarm of 500 seeds at 10,000 buckets, swarms of 1,000 at 50, 200
and 1,000 buckets, and one run of the day's seed at a million buckets, every fault on or off by
the seed), fuzzes every decoder
(fuzz_decoders, 500,000 executions each, and the cargo-fuzz targets, 10 minutes each with
scripts/fuzz.sh), compares the verdicts with and without the superseded-request reduction on
every replicated preset, and compares the whole and the reduced graph of every CI preset, and of
every bug switch at its home configuration, state by state (model/tests/integration/por.rs with
POR_PRESETS=all), and checks the reasons spec 9 gives for the fault family's empty pair cells on
the move members with a server crash too (model/tests/integration/fault_coverage.rs with
FAULT_COVERAGE=all), and matches every step of three larger graphs in the abstract rest of a
plan (spec 9; model/tests/rest_premise.rs with REST_PREMISE=all).

Exit code: 0 when every finished check holds, every walk agrees, the suites regenerate unchanged,
every simulated run passes, no fuzz target fails and the verdicts agree; 1 otherwise. A check that
hits the time limit is reported, not counted as a failure (the configuration is too large for
the limit). Takes hours with the defaults on 2 cores; run one at a time on a quiet machine.
TEXT
}

limit=1800
conformance=1
configs=()
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --timeout)
        limit="${2:-}"
        [[ "$limit" =~ ^[0-9]+$ ]] || { echo "error: --timeout takes whole seconds, not \`$limit\`" >&2; exit 2; }
        shift 2 ;;
    --no-conformance) conformance=0; shift ;;
    -*) echo "error: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) configs+=("$1"); shift ;;
    esac
done

cd "$(dirname "$0")/.."
echo "building (release) ..." >&2
cargo build --release -q -p rebalance-model -p rebalance-conformance
bin="${CARGO_TARGET_DIR:-target}/release"
model=$bin/rebalance-model
walker=$bin/rebalance-conformance
if [ ${#configs[@]} -eq 0 ]; then
    # The catalogue (model/src/config/catalogue.rs) says what the scheduled checks run: the
    # larger configuration files, `full`, and the CI presets whose reduced graphs CI's
    # conformance walk only samples. (The files that were bounded or collected variants of a
    # preset before the partial-order reduction are that preset now and are not in it;
    # model/tests/integration/api.rs checks that they are the same.)
    mapfile -t configs < <("$model" catalogue --scheduled)
fi
status=0
for c in "${configs[@]}"; do
    echo "== $c (started $(date -u +%H:%M:%S))" >&2
    log=$(mktemp)
    set +e
    /usr/bin/time -f "peak %M KB" timeout "$limit" "$model" check --config "$c" >"$log" 2>&1
    rc=$?
    set -e
    line=$(grep -E '^unique states' "$log" | tail -1 || true)
    peak=$(grep -E '^peak' "$log" | tail -1 || true)
    if [ $rc -eq 124 ]; then
        last=$(grep -E 'unique states' "$log" | tail -1 || true)
        echo "$c  check: timed out after ${limit} s; last progress: $last"
        rm -f "$log"
        continue
    fi
    if [ $rc -ne 0 ]; then
        echo "$c  check: $line, $peak: VIOLATED or no example (exit $rc); see below"
        grep -E 'VIOLATED|NO EXAMPLE' "$log" || true
        status=1
        rm -f "$log"
        continue
    fi
    echo "$c  check: $line, $peak: holds"
    rm -f "$log"
    if [ $conformance -eq 1 ] && grep -qE '"(planned_leader|remote_plan|session_lost_on_store_failure)": true' "$c" 2>/dev/null; then
        # A design Fluss proposes, in the model only (spec/fluss-designs.md): the manager does
        # not implement it, and rebalance-conformance refuses its configuration.
        echo "$c  conformance: not walked (a design the manager does not implement)"
    elif [ $conformance -eq 1 ]; then
        set +e
        out=$("$walker" exhaustive --config "$c" 2>/dev/null | tail -1)
        rc=$?
        set -e
        if [ $rc -eq 0 ]; then
            echo "$c  conformance: $out"
        else
            echo "$c  conformance: DIVERGENCE (exit $rc): $out"
            status=1
        fi
    fi
done

# The progress check (spec 7.3, "Progress"), unbounded, on the presets whose fair-cycle search
# CI keeps within a bound (model/tests/common's cycle_bound): R14.3 off, restarts obligatory,
# the whole graph searched for a fair cycle on which LIVE-PROGRESS or another goal never holds.
# The presets come from the catalogue (`rebalance-model catalogue --bounded`).
for c in $("$model" catalogue --bounded); do
    set +e
    out=$(timeout "$limit" "$model" check --config "$c" --no-give-up 2>/dev/null)
    rc=$?
    set -e
    line=$(grep -m1 -E '^fair-cycle search' <<<"$out" || true)
    case $rc in
    0) echo "$c  progress check: $line" ;;
    124) echo "$c  progress check: timed out after ${limit} s" ;;
    *)
        echo "$c  progress check: VIOLATED (exit $rc): $line"
        grep -E 'VIOLATED' <<<"$out" || true
        status=1
        ;;
    esac
done

# The shipped suites regenerate to the same files (CI regenerates only the smaller ones).
for dir in conformance/suite/*/; do
    preset=$(basename "$dir")
    "$model" suite --config "$preset" --out "$dir" >/dev/null
done
if git diff --quiet -- conformance/suite; then
    echo "suites: every shipped suite regenerates unchanged"
else
    echo "suites: REGENERATED DIFFERENTLY (git diff -- conformance/suite)"
    status=1
fi

# Group commit in the conformance loop (spec/protocol.md, "Group commit"): batches of three with a
# seeded flush schedule, and batches flushed only when a step needs a held effect.
for walk in "ci-server-crash --group-commit 3" "ci-rf2-server-crash --group-commit 3 --flush-seed 2" \
    "ci-liveness-store --group-commit 1000 --flush-per-mille 0"; do
    # shellcheck disable=SC2086 # the preset and its flags, split on purpose
    if out=$("$walker" exhaustive --config $walk 2>/dev/null | tail -1); then
        echo "group commit: $out"
    else
        echo "group commit: DIVERGENCE ($walker exhaustive --config $walk): $out"
        status=1
    fi
done

# Real runs of the cluster example validated against the model (spec/log-format.md): file store,
# and ZooKeeper when run under scripts/with-zookeeper.sh.
if scripts/validate-cluster-runs.sh --seeds 50 | tail -1; then :; else
    echo "cluster logs: SOME LOG NOT VALID (scripts/validate-cluster-runs.sh --seeds 50)"
    status=1
fi
if scripts/validate-cluster-runs.sh --seeds 50 --kills 4 | tail -1; then :; else
    echo "killed cluster logs: SOME LOG NOT VALID (scripts/validate-cluster-runs.sh --seeds 50 --kills 4)"
    status=1
fi
if [ -n "${ZK_ADDR:-}" ]; then
    if scripts/validate-cluster-runs.sh --seeds 20 --zk | tail -1; then :; else
        echo "cluster logs on ZooKeeper: SOME LOG NOT VALID"
        status=1
    fi
    if scripts/validate-cluster-runs.sh --seeds 20 --zk --kills 4 | tail -1; then :; else
        echo "killed cluster logs on ZooKeeper: SOME LOG NOT VALID"
        status=1
    fi
fi
# A replicated store under failover: an ensemble of its own, whose leader each run kills.
if scripts/with-zookeeper.sh --ensemble 3 scripts/validate-cluster-runs.sh --seeds 20 --zk --leader 2>/dev/null | tail -1; then :; else
    echo "cluster logs on a ZooKeeper ensemble with its leader killed: SOME LOG NOT VALID (scripts/with-zookeeper.sh --ensemble 3 scripts/validate-cluster-runs.sh --seeds 20 --zk --leader)"
    status=1
fi

if scripts/validate-cluster-runs.sh --seeds 50 --group-commit 6 | tail -1; then :; else
    echo "cluster logs with group commit: SOME LOG NOT VALID (scripts/validate-cluster-runs.sh --seeds 50 --group-commit 6)"
    status=1
fi

# The seeded simulation (stores/examples/simulate): a swarm of small clusters, then the day's seed
# at a million buckets. A failing seed prints the line that reproduces it.
cargo build --release -q -p rebalance-stores --example simulate
sim="$bin/examples/simulate"
if "$sim" --swarm 500 --buckets 10000 --quiet | grep -E '^(FAILED|swarm)'; then :; else
    status=1
fi
# Swarms of 1,000 at the sizes issue 33 measured (docs/measurements.md, "The seeded simulation").
for n in 50 200 1000; do
    if "$sim" --swarm 1000 --buckets "$n" --quiet | grep -E '^(FAILED|swarm)'; then :; else
        status=1
    fi
done
sim_seed=$(date -u +%Y%m%d)
if out=$("$sim" --seed "$sim_seed" --buckets 1000000 --quiet); then
    echo "simulation at 1M buckets: $out"
else
    echo "simulation at 1M buckets: $out"
    status=1
fi

# Seeded mutation fuzzing of every decoder, 25 times CI's executions per target.
if FUZZ_ITERATIONS=500000 cargo test --release -q -p rebalance-conformance --test integration -- fuzz_decoders:: >/dev/null 2>&1; then
    echo "fuzzing: 500,000 executions per decoder, no panic and no allocation beyond the bound"
else
    echo "fuzzing: A DECODER FAILED (FUZZ_ITERATIONS=500000 cargo test --release -p rebalance-conformance --test integration -- fuzz_decoders::)"
    status=1
fi

# Coverage-guided fuzzing of the same decoders with the cargo-fuzz targets of fuzz/, 10 minutes
# each, from the day's seed, growing the corpora in fuzz/corpus across runs.
fuzz_seed=$(date -u +%Y%m%d)
if scripts/fuzz.sh --seconds 600 --seed "$fuzz_seed" --corpus fuzz/corpus | sed 's/^/fuzzing: /'; then :; else
    echo "fuzzing: A TARGET FAILED (scripts/fuzz.sh --seconds 600 --seed $fuzz_seed --corpus fuzz/corpus; inputs in fuzz/artifacts/)"
    status=1
fi

# The superseded-request reduction changes no verdict on any replicated preset.
if SUPERSEDED_PRESETS=all cargo test --release -q -p rebalance-model --test integration -- superseded:: >/dev/null 2>&1; then
    echo "superseded: same verdicts with and without, on every replicated preset"
else
    echo "superseded: VERDICTS DIFFER (SUPERSEDED_PRESETS=all cargo test --release -p rebalance-model --test integration -- superseded::)"
    status=1
fi
# The partial-order reduction keeps every coordinator-side state, fair end, coordinator step and
# verdict of the whole graph, on every CI preset and every switch at its home (spec 9).
if POR_PRESETS=all cargo test --release -q -p rebalance-model --test integration -- por:: >/dev/null 2>&1; then
    echo "por: every CI preset whose whole graph finishes, and every switch at home, keeps the whole graph's states, fair ends and verdicts"
else
    echo "por: THE REDUCTION LOST SOMETHING (POR_PRESETS=all cargo test --release -p rebalance-model --test integration -- por:: --nocapture)"
    status=1
fi
# The reasons spec 9 gives for the fault family's empty pair cells hold edge by edge, including
# on the move members with a server crash, which CI leaves out for their size.
if FAULT_COVERAGE=all cargo test --release -q -p rebalance-model --test integration -- fault_coverage::the_empty_cells_at_origin >/dev/null 2>&1; then
    echo "fault coverage: every stated reason for an empty pair cell holds, server crashes included"
else
    echo "fault coverage: A REASON FOR AN EMPTY CELL FAILED (FAULT_COVERAGE=all cargo test --release -p rebalance-model --test integration -- fault_coverage::the_empty_cells_at_origin)"
    status=1
fi
# Spec 9's one bucket against the rest of the plan: every step of the whole model is matched in
# the abstract one, on the graphs CI leaves out for their size.
if REST_PREMISE=all cargo test --release -q -p rebalance-model --test rest_premise -- the_larger_graphs_when_asked >/dev/null 2>&1; then
    echo "rest of the plan: every step of the larger premise graphs is matched by the abstract model's"
else
    echo "rest of the plan: A STEP THE ABSTRACT MODEL DOES NOT MATCH (REST_PREMISE=all cargo test --release -p rebalance-model --test rest_premise -- the_larger_graphs_when_asked)"
    status=1
fi
exit $status
