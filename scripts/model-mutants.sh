#!/usr/bin/env bash
# Mutation testing of the model itself: which rules of the model could be broken without any
# property noticing (spec/findings.md, "Mutation testing of the model").
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/model-mutants.sh [--shard K/N | --again FILE] [--timeout SECONDS] [OUT_DIR]

Mutates the model's protocol code (model/src/step/coordinator/*.rs, step/environment.rs,
step/transition.rs, verdict/properties.rs) with cargo-mutants and judges each mutant by verdicts only
(.cargo/mutants-model.toml):

  model/tests/ci_presets.rs       every CI preset: no property violated, every applicable SOME-*
                                  has an example, LIVE-* checked at some fair end state; and the
                                  progress check (spec 7.3): no fair cycle with a goal false
  model/tests/switch_verdicts.rs  every bug switch and Fluss variant still violates its property
  model/tests/reductions.rs       every message a search reduction removes is dead (its delivery
                                  a no-op) or superseded (harmless), and no dead one is left in
                                  flight, on five CI presets
  model/tests/invariant_teeth.rs  a state built to break a state invariant's clause breaks it
  model/tests/not_applicable.rs   each n/a reason holds where it decides (no example there)
  model/tests/variant_acts.rs     each Fluss variant that redefines a predicate of spec 4 acts
                                  as spec 10's row says, at every step where it acts
  model/tests/step_labels.rs      every coordinator step names the rule it ran (spec 5)
  model/tests/transition_teeth.rs a step made to break a history invariant is flagged
  model/tests/client_rules.rs     R1's numbering and R2's own finalize, which no verdict reads
  model/tests/move_rules.rs       R11's shrink, where the planned-leader design needs it
  model/tests/action_kinds.rs     every kind of action is taken on some preset
  model/tests/canonical_states.rs every set-like field of a reachable state is in its order
  model/tests/timer_rules.rs      ages, reconcile counts and queue flags move as spec 3.2 says
  model/tests/rest_premise.rs     every step of the whole model is matched by the abstract model
                                  of spec 9 ("One bucket against the rest of the plan"), and
                                  every state of the abstract model is its own abstraction
  model/tests/liveness_rules.rs   R19 and R20 touch only the buckets the server hosts

State counts and counterexample lengths are not consulted (REBALANCE_VERDICTS_ONLY=1 turns
ci_presets.rs's count comparisons off): a mutant that only changes a count survives.

  --shard K/N   run only every N-th mutant starting at K (round-robin over the files, so a
                shard is a sample of every file); the whole set is 815 mutants (3 December
                2026): a caught one takes seconds, a survivor the whole gate, so about 2.3
                minutes each on average on 2 cores, some 30 hours for all
  --again FILE  judge again only the mutants FILE names, one per line as cargo-mutants writes
                them (a shard's missed.txt or timeout.txt): after the oracle changed, whether
                it now kills them. cargo-mutants 27.1 adds the two field deletions of
                `register` to every such selection (its name filters skip that kind of
                mutant); both are equivalent (spec/findings.md F18) and cost a whole gate each
  --timeout S   a mutant's test run that takes longer than S seconds counts as a timeout
                (default 600: a survivor's whole gate takes about 400 s on 2 idle cores; give
                more where the machine is shared)
  OUT_DIR       where cargo-mutants writes (default: mutants-runs/model at the repository
                root, ignored by git); OUT_DIR/mutants.out holds caught.txt, missed.txt,
                timeout.txt and unviable.txt

Prints caught, missed, timeout and unviable counts and the score caught / (caught + missed +
timeout). Needs `cargo install cargo-mutants` (27.1 was used). The whole set runs as shards of
eight, one after another; add each shard's mutants, finished or stopped, to the ledger:
  scripts/mutants-ledger.sh OUT_DIR K/8 COMMIT >> docs/mutants-model.tsv
TEXT
}

shard=()
label=""
test_timeout=600
while [ $# -gt 0 ]; do
    case "$1" in
    -h | --help)
        usage
        exit 0
        ;;
    --shard)
        [[ "${2:-}" =~ ^[0-9]+/[0-9]+$ ]] || {
            echo "error: --shard takes K/N, as 0/10 (see --help)" >&2
            exit 2
        }
        shard=(--shard "$2" --sharding round-robin)
        label=" (shard $2)"
        shift 2
        ;;
    --again)
        [ -f "${2:-}" ] || {
            echo "error: --again takes a file of mutant names, as OUT/mutants.out/missed.txt (see --help)" >&2
            exit 2
        }
        # Each name as a whole-line regular expression, its metacharacters escaped.
        while IFS= read -r name; do
            [ -n "$name" ] || continue
            shard+=(--re "^$(printf '%s' "$name" | sed 's/[][\\.^$*+?(){}|]/\\&/g')\$")
        done <"$2"
        [ ${#shard[@]} -gt 0 ] || {
            echo "error: $2 names no mutant" >&2
            exit 2
        }
        label=" (again: $2)"
        shift 2
        ;;
    --timeout)
        [[ "${2:-}" =~ ^[1-9][0-9]*$ ]] || {
            echo "error: --timeout takes a number of seconds, as 1200 (see --help)" >&2
            exit 2
        }
        test_timeout=$2
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
mutants_out mutants-runs/model "$@"

# The baseline is skipped: the unmutated tree passes both tests in CI, and the explicit timeout
# replaces the one cargo-mutants would derive from it. Exit 2 means some mutant was missed: an
# outcome here, not a failure of the script.
status=0
export REBALANCE_VERDICTS_ONLY=1 NEXTEST_PROFILE=mutants
cargo mutants --config .cargo/mutants-model.toml --baseline=skip --timeout "$test_timeout" \
    --build-timeout 600 -o "$out" "${shard[@]}" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ] && [ "$status" -ne 3 ]; then
    echo "error: cargo mutants failed (exit $status)" >&2
    exit 1
fi

count() { if [ -f "$1" ]; then grep -c . "$1" || true; else echo 0; fi; }
d="$out/mutants.out"
caught=$(count "$d/caught.txt")
missed=$(count "$d/missed.txt")
timeout=$(count "$d/timeout.txt")
unviable=$(count "$d/unviable.txt")
viable=$((caught + missed + timeout))
echo "== model mutants${label}"
printf 'caught %s  missed %s  timeout %s  unviable %s\n' "$caught" "$missed" "$timeout" "$unviable"
if [ "$viable" -gt 0 ]; then
    echo "score: $caught of $viable viable mutants killed ($((100 * caught / viable))%)"
fi
echo "missed:"
cat "$d/missed.txt" 2>/dev/null || true
