# Shared by scripts/mutants.sh and scripts/model-mutants.sh (sourced, not run): checks what is
# left on the command line after the options, and sets `root` (the repository) and `out` (the
# absolute OUT_DIR, created), with `default` under the root when no OUT_DIR was given.
# Usage: mutants_out DEFAULT_SUBDIR "$@"
mutants_out() {
    local default="$1"
    shift
    if [ $# -gt 1 ]; then
        echo "error: at most one OUT_DIR (see --help)" >&2
        exit 2
    fi
    root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
    out="$(realpath -m "${1:-$root/$default}")"
    command -v cargo-mutants >/dev/null || {
        echo "error: cargo-mutants is not installed (cargo install cargo-mutants)" >&2
        exit 2
    }
    cd "$root"
    mkdir -p "$out"
}
