#!/usr/bin/env bash
# Prints one line per mutant judged in a cargo-mutants output directory, for the ledger of the
# whole-model run (docs/mutants-model.tsv): shard, commit, outcome, mutant. Works on a run that
# was stopped before its end, since cargo-mutants rewrites outcomes.json after every mutant.
set -euo pipefail

usage() {
    cat <<'TEXT'
usage: scripts/mutants-ledger.sh OUT_DIR SHARD COMMIT

  OUT_DIR   the directory given to scripts/model-mutants.sh (holding mutants.out/outcomes.json)
  SHARD     the shard it ran, as 1/8, or a name for a run of `--again` over names from
            several shards, as again-1 (lowercase letters, digits and dashes)
  COMMIT    the commit of the tree it mutated

Prints tab-separated lines `SHARD COMMIT OUTCOME MUTANT` (OUTCOME: caught, missed, timeout or
unviable), in the order the mutants were judged. Append them to docs/mutants-model.tsv:
  scripts/mutants-ledger.sh /tmp/m 1/8 3084879 >> docs/mutants-model.tsv
TEXT
}

case "${1:-}" in -h | --help) usage; exit 0 ;; esac
[ $# -eq 3 ] || { echo "error: three arguments: OUT_DIR SHARD COMMIT (see --help)" >&2; exit 2; }
json="$1/mutants.out/outcomes.json"
[ -f "$json" ] || { echo "error: $json does not exist (see --help)" >&2; exit 2; }
[[ "$2" =~ ^([0-9]+/[0-9]+|[a-z][a-z0-9-]*)$ ]] || { echo "error: SHARD is K/N, as 1/8, or a name, as again-1 (see --help)" >&2; exit 2; }
python3 - "$json" "$2" "$3" <<'PY'
import json, sys
path, shard, commit = sys.argv[1:]
names = {"CaughtMutant": "caught", "MissedMutant": "missed", "Timeout": "timeout",
         "Unviable": "unviable"}
for o in json.load(open(path))["outcomes"]:
    scenario = o.get("scenario")
    if not isinstance(scenario, dict) or "Mutant" not in scenario:
        continue  # the baseline, if one ran
    outcome = names.get(o["summary"], o["summary"])
    print(f"{shard}\t{commit}\t{outcome}\t{scenario['Mutant']['name']}")
PY
