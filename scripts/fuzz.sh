#!/usr/bin/env bash
# Coverage-guided fuzzing of every decoder that reads outside input, with the cargo-fuzz targets
# of fuzz/ (docs/testing.md, "Fuzzing"). CI runs it for seconds per target, the scheduled checks
# for minutes.
set -euo pipefail

ALL_TARGETS=(trace_loader config_loader wire_line driver_server coordinator_log
    file_store_journal file_store_snapshot file_store_records file_store_body zk_node)

usage() {
    cat <<'TEXT'
usage: scripts/fuzz.sh [OPTIONS] [TARGET...]
       scripts/fuzz.sh --self-check
       scripts/fuzz.sh --list

Builds the cargo-fuzz targets of fuzz/ as `cargo fuzz build -s none` does (coverage
instrumentation, no sanitizer; with cargo-fuzz when it is installed, otherwise with plain cargo
and the same flags), seeds a corpus per target from the repository (traces, suites,
configurations, fuzz/seeds/) and runs each target with libFuzzer. Default: every target.

Targets: trace_loader config_loader wire_line driver_server coordinator_log
         file_store_journal file_store_snapshot file_store_records file_store_body zk_node

Options:
  --seconds N        run each target for N seconds (-max_total_time; default 60)
  --runs N           run each target for N executions instead (-runs); deterministic for a
                     given --seed, where --seconds depends on the machine's speed
  --seed N           libFuzzer's -seed (default 1); printed either way
  --max-len BYTES    the longest input (-max_len; default 65536, five times the largest seed)
  --timeout SECONDS  the hang bound: one input running longer is a failure (-timeout; default 10)
  --rss-limit-mb MB  the process's memory bound (-rss_limit_mb; default 2048)
  --corpus DIR       keep the corpora in DIR/TARGET and grow them across runs (cargo fuzz's
                     own is fuzz/corpus); default: a fresh temporary one per run, so that a run
                     depends only on the repository and the seed
  --no-build         use the binaries already built
  --quick-build      build at -Copt-level=0 with 256 codegen units and no line tables instead
                     (in TARGET_DIR/quick), for CI: a cold build in about a third of the time,
                     the targets run slower; not what cargo fuzz builds
  --self-check       plant a panic, an allocation beyond the bound and a hang
                     (REBALANCE_FUZZ_PLANT) in one target and check that each is caught, with
                     its input saved; exit 0 when all three are
  --list             print the targets, one a line
  -h, --help         this text

Every execution of a target may hold at most 256 MiB of heap above what was live before it
(fuzz/src/lib.rs; the allocation that would cross it aborts with a message, a crash). Artifacts
(the inputs that crashed, hung or ran out of memory) go to fuzz/artifacts/TARGET/.
CARGO_TARGET_DIR is honoured; the default is fuzz/target, as with cargo fuzz.

Prints one line per target: executions, executions per second, coverage (libFuzzer's cov and
ft), corpus size, peak RSS and the slowest input's time, and then either `ok` or the failure
with the path of the input that caused it.

Exit code: 0 when no target crashed, hung or ran out of memory; 1 when one did; 2 on bad usage
or a failed build.
TEXT
}

die_usage() {
    echo "error: $1 (see --help)" >&2
    exit 2
}

seconds=60 runs="" seed=1 max_len=65536 timeout=10 rss_limit=2048 corpus_root="" build=1
self_check=0 quick=0 targets=()
number() { [[ "${2:-}" =~ ^[0-9]+$ ]] || die_usage "$1 takes a whole number, not \`${2:-}\`"; }
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help) usage; exit 0 ;;
    --list) printf '%s\n' "${ALL_TARGETS[@]}"; exit 0 ;;
    --seconds) number "$1" "${2:-}"; seconds="$2"; runs=""; shift 2 ;;
    --runs) number "$1" "${2:-}"; runs="$2"; shift 2 ;;
    --seed) number "$1" "${2:-}"; seed="$2"; shift 2 ;;
    --max-len) number "$1" "${2:-}"; max_len="$2"; shift 2 ;;
    --timeout) number "$1" "${2:-}"; timeout="$2"; shift 2 ;;
    --rss-limit-mb) number "$1" "${2:-}"; rss_limit="$2"; shift 2 ;;
    --corpus) [ -n "${2:-}" ] || die_usage "--corpus takes a directory"; corpus_root="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --quick-build) quick=1; shift ;;
    --self-check) self_check=1; shift ;;
    -*) die_usage "unknown option $1" ;;
    *)
        printf '%s\n' "${ALL_TARGETS[@]}" | grep -qx -- "$1" ||
            die_usage "unknown target \`$1\` (scripts/fuzz.sh --list)"
        targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=("${ALL_TARGETS[@]}")
[ "$seconds" -gt 0 ] || [ -n "$runs" ] || die_usage "--seconds must be at least 1"

cd "$(dirname "$0")/.."
root=$(pwd)
[ -z "$corpus_root" ] || corpus_root=$(mkdir -p "$corpus_root" && cd "$corpus_root" && pwd)
triple=$(rustc -vV | sed -n 's/^host: //p')
target_dir=${CARGO_TARGET_DIR:-$root/fuzz/target}
[ $quick -eq 0 ] || target_dir="$target_dir/quick"
bin_dir="$target_dir/$triple/release"

# What `cargo fuzz build -s none` (cargo-fuzz 0.13) passes in release mode, which is its
# default: sancov instrumentation with inline 8-bit counters, PC table, compare tracing and stack
# depth, --cfg fuzzing, debug assertions (so overflow checks), one codegen unit, line tables,
# for --target HOST so that build scripts are not instrumented. The same flags give the same
# fingerprints, so the two ways of building share one target directory without rebuilding.
fuzz_rustflags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4"
fuzz_rustflags+=" -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
fuzz_rustflags+=" -Cllvm-args=-sanitizer-coverage-pc-table"
fuzz_rustflags+=" -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing"
fuzz_rustflags+=" -Cllvm-args=-simplifycfg-branch-fold-threshold=0"
fuzz_rustflags+=" -Cllvm-args=-sanitizer-coverage-stack-depth -Cdebug-assertions -Ccodegen-units=1"

if [ $build -eq 1 ]; then
    start=$(date +%s)
    extra=""
    # Not optimising is most of the saving (a cold build took 227 s at -Copt-level=1 with 16
    # codegen units, 128 s at 0 with 256, on this 2-core machine, idle); many codegen units let
    # the long crates (the model, the conformance harness) use both cores, and no line tables.
    [ $quick -eq 0 ] || extra=" -Copt-level=0 -Ccodegen-units=256"
    if [ $quick -eq 0 ] && cargo fuzz --version >/dev/null 2>&1; then
        how="cargo fuzz build -s none"
        echo "building with $how ($(cargo fuzz --version)) ..." >&2
        (cd fuzz && CARGO_TARGET_DIR="$target_dir" cargo fuzz build -s none) || exit 2
    else
        debug='"line-tables-only"'
        [ $quick -eq 0 ] || debug=0
        how="cargo build with cargo-fuzz's flags${extra}"
        echo "building with $how (cargo-fuzz is not installed) ..." >&2
        RUSTFLAGS="$fuzz_rustflags$extra${RUSTFLAGS:+ $RUSTFLAGS}" cargo build --manifest-path fuzz/Cargo.toml \
            --target "$triple" --release --config "profile.release.debug=$debug" \
            --bins --locked --target-dir "$target_dir" || exit 2
    fi
    echo "built in $(($(date +%s) - start)) s ($how)" >&2
fi
for t in "${targets[@]}"; do
    [ -x "$bin_dir/$t" ] || { echo "error: $bin_dir/$t is not built" >&2; exit 2; }
done

work=$(mktemp -d)
# The file-store targets' scratch directories: in memory where the machine has it.
scratch=$(mktemp -d -p /dev/shm rebalance-fuzz.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$scratch"' EXIT
export REBALANCE_FUZZ_SCRATCH="$scratch"

# The seeds of a target, copied into DIR: the repository's own files, and fuzz/seeds/TARGET
# (what conformance/tests/integration/fuzz_decoders.rs makes: a store, a log, nodes, lines).
seed_corpus() {
    local t=$1 dir=$2
    mkdir -p "$dir"
    case "$t" in
    trace_loader)
        find conformance/traces model/traces conformance/suite -name '*.json' ! -name suite.json \
            -print0 | while IFS= read -r -d '' f; do cp "$f" "$dir/$(echo "$f" | tr / _)"; done ;;
    config_loader)
        for f in model/configs/*.json; do cp "$f" "$dir/$(echo "$f" | tr / _)"; done ;;
    # Past the checksums: the journal as it is (the target rewrites each line's checksum), the
    # snapshot without its header line (the target frames the body).
    file_store_records)
        for f in fuzz/seeds/file_store_journal/*; do cp "$f" "$dir/seed-$(basename "$f")"; done ;;
    file_store_body)
        for f in fuzz/seeds/file_store_snapshot/*; do tail -n +2 "$f" >"$dir/body-$(basename "$f")"; done ;;
    esac
    if [ -d "fuzz/seeds/$t" ]; then
        for f in "fuzz/seeds/$t"/*; do cp "$f" "$dir/seed-$(basename "$f")"; done
    fi
}

# Runs one target; prints its summary line and returns 0 (ok) or 1 (a failure).
run_target() {
    local t=$1 corpus log rc artifacts
    if [ -n "$corpus_root" ]; then corpus="$corpus_root/$t"; else corpus="$work/corpus/$t"; fi
    seed_corpus "$t" "$corpus"
    artifacts="$root/fuzz/artifacts/$t"
    mkdir -p "$artifacts"
    log="$work/$t.log"
    local limit=(-max_total_time="$seconds")
    [ -z "$runs" ] || limit=(-runs="$runs")
    set +e
    "$bin_dir/$t" -seed="$seed" "${limit[@]}" -max_len="$max_len" -timeout="$timeout" \
        -rss_limit_mb="$rss_limit" -print_final_stats=1 -artifact_prefix="$artifacts/" \
        "$corpus" >"$log" 2>&1
    rc=$?
    set -e
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -1; }
    local execs rate rss slowest cov ft corp
    execs=$(stat number_of_executed_units)
    rate=$(stat average_exec_per_sec)
    rss=$(stat peak_rss_mb)
    slowest=$(stat slowest_unit_time_sec)
    # The last status line (`#N DONE cov: C ft: F corp: U/SIZE ...`) has the coverage.
    cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    corp=$(grep -oE 'corp: [0-9]+' "$log" | tail -1 | cut -d' ' -f2)
    printf '%-20s %10s execs %7s exec/s  cov %5s  ft %6s  corpus %5s  rss %5s MB  slowest %3s s  ' \
        "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "${rss:-?}" "${slowest:-?}"
    if [ $rc -eq 0 ]; then
        echo ok
        return 0
    fi
    local what input
    what=$(grep -m1 -oE 'ERROR: libFuzzer: [a-z-]+|allocation bound exceeded|panicked at' "$log" || true)
    input=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    echo "FAILED (exit $rc: ${what:-see the log}); input: ${input:-none saved}"
    echo "---- $t: the end of libFuzzer's output" >&2
    grep -vE '^#[0-9]+' "$log" | tail -40 >&2
    [ -z "$input" ] || echo "reproduce: $bin_dir/$t $input" >&2
    return 1
}

if [ $self_check -eq 1 ]; then
    # One target, each planted fault, from a seed that starts with the marker
    # (PLANT_MARKER in fuzz/src/lib.rs); the fault must fail the run and save an input.
    t=zk_node status=0
    for plant in panic alloc hang; do
        dir="$work/plant-$plant"
        mkdir -p "$dir"
        printf 'PLANTED-FAULT {"version":1}' >"$dir/planted"
        set +e
        REBALANCE_FUZZ_PLANT=$plant "$bin_dir/$t" -seed="$seed" -runs=1000 -timeout=2 \
            -rss_limit_mb="$rss_limit" -artifact_prefix="$work/plant-$plant-" "$dir" \
            >"$work/plant.log" 2>&1
        rc=$?
        set -e
        case $plant in
        panic) expect='a planted panic' ;;
        alloc) expect='allocation bound exceeded' ;;
        hang) expect='ERROR: libFuzzer: timeout' ;;
        esac
        saved=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$work/plant.log" | tail -1)
        if [ $rc -ne 0 ] && grep -q "$expect" "$work/plant.log" && [ -n "$saved" ] &&
            head -c 13 "$saved" | grep -q PLANTED-FAULT; then
            echo "self-check: planted $plant caught (exit $rc, \`$expect\`, input saved)"
        else
            echo "self-check: planted $plant NOT CAUGHT (exit $rc)"
            tail -20 "$work/plant.log" >&2
            status=1
        fi
    done
    exit $status
fi

if [ -n "$runs" ]; then budget="$runs runs"; else budget="$seconds s"; fi
echo "fuzzing ${#targets[@]} target(s), $budget each, seed $seed, max_len $max_len, timeout" \
    "$timeout s, rss limit $rss_limit MB, allocation bound 256 MiB per execution"
status=0
for t in "${targets[@]}"; do
    run_target "$t" || status=1
done
exit $status
