#!/usr/bin/env bash
# Mutation testing of the manager's protocol core, in three passes (docs/testing.md, "Mutation testing").
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/mutants.sh [--from PASS] [OUT_DIR]

Mutates the manager's rule files, impl/src/core/manager/*.rs (but observe.rs, the read-only
accessors), with cargo-mutants and judges every mutant in three passes, each run only on what the
previous pass missed:

  1. quick     the quick conformance gate (.cargo/mutants.toml: teeth, sample_walks, findings,
               cli, random_walks)
  2. full      the full conformance walk of every CI preset (.cargo/mutants-full.toml:
               exhaustive_ci)
  3. manager   the manager's own tests (.cargo/mutants-manager.toml); a mutant killed only here
               is one conformance cannot see

The conformance score is what passes 1 and 2 kill. Results go to OUT_DIR/{quick,full,manager}
(default: mutants-runs at the repository root, ignored by git); each holds cargo-mutants' usual
caught.txt, missed.txt, unviable.txt and timeout.txt. `--from full` or `--from manager` starts at
that pass, reusing the earlier passes' results in OUT_DIR (after an interrupted run). Needs `cargo install cargo-mutants` (27.1 was used). Takes about
an hour on 2 cores.
TEXT
}

from=quick
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    --from)
        from="${2:-}"
        case "$from" in
        quick | full | manager) ;;
        *)
            echo "error: --from takes quick, full or manager, not \`$from\`" >&2
            exit 2
            ;;
        esac
        shift 2
        ;;
    -*)
        echo "error: unknown option $1 (see --help)" >&2
        exit 2
        ;;
    *) break ;;
    esac
done
# shellcheck source=lib/mutants-common.sh
. "$(dirname "$0")/lib/mutants-common.sh"
mutants_out mutants-runs "$@"

# One --re per mutant name (regex-escaped), so a pass runs exactly the previous pass's misses.
filters_from() {
    local missed="$1"
    while IFS= read -r name; do
        [ -n "$name" ] || continue
        printf -- '--re\n^%s$\n' "$(printf '%s' "$name" | sed -e 's/[][\\.^$*+?(){}|]/\\&/g')"
    done <"$missed"
}

# The baseline is skipped: cargo-mutants would run it with the mutated package's tests only, not
# the conformance tests named in the config; the unmutated tree passes them in CI. cargo-mutants
# exits 2 when some mutant is missed, which is an outcome here, not a failure of the script.
pass() {
    local name="$1" config="$2" timeout="$3"
    shift 3
    echo "== pass $name ($config)"
    local status=0
    cargo mutants --config "$config" --baseline=skip --timeout "$timeout" --build-timeout 600 \
        -o "$out/$name" "$@" || status=$?
    if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then
        echo "error: cargo mutants failed in pass $name (exit $status)" >&2
        exit 1
    fi
}

count() { if [ -f "$1" ]; then grep -c . "$1" || true; else echo 0; fi; }

summary() {
    local d="$out/$1/mutants.out"
    printf '%-8s caught %4s  missed %4s  timeout %4s  unviable %4s\n' "$1" \
        "$(count "$d/caught.txt")" "$(count "$d/missed.txt")" \
        "$(count "$d/timeout.txt")" "$(count "$d/unviable.txt")"
}

# A pass's input is the previous pass's missed list; when starting later, that list must exist.
passes=(quick full manager)
# Results of this pass and later ones are from an older run: drop them so the summary is this run's.
drop=""
for p in "${passes[@]}"; do
    [ "$p" = "$from" ] && drop=1
    if [ -n "$drop" ]; then rm -rf "${out:?}/$p"; fi
done
prev=""
for next in "${passes[@]}"; do
    input="$prev"
    prev="$out/$next/mutants.out/missed.txt"
    if [ "$next" = "$from" ]; then
        from=""
    elif [ -n "$from" ]; then
        [ -f "$prev" ] || {
            echo "error: --from needs the results of pass $next in $out/$next" >&2
            exit 2
        }
        continue
    fi
    if [ "$next" = quick ]; then
        pass quick .cargo/mutants.toml 240
        continue
    fi
    if [ "$(count "$input")" -eq 0 ]; then
        prev="$input"
        break
    fi
    mapfile -t filters < <(filters_from "$input")
    if [ "$next" = full ]; then
        # exhaustive_ci is one single-threaded test, so two mutants at a time use both cores.
        pass full .cargo/mutants-full.toml 900 --jobs 2 "${filters[@]}"
    else
        pass manager .cargo/mutants-manager.toml 600 "${filters[@]}"
    fi
done

echo "== summary"
for p in quick full manager; do
    [ -d "$out/$p/mutants.out" ] && summary "$p"
done
echo "missed by every pass:"
cat "$prev"
