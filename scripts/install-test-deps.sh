#!/usr/bin/env bash
# Installs, where missing, the Debian packages the test suite uses: python3 (the example driver
# conformance/examples/driver.py), chromium (the Explorer's browser test) and zookeeper (the
# ZkStore tests). One `apt-get update`, one `apt-get install` for all of them.
#
#   scripts/install-test-deps.sh
#
# .ci/run starts it in the background while the workspace compiles, and waits for it before the
# tests; scripts/test-all.sh runs it first (a no-op then), so that test-all.sh alone installs
# the same packages (scripts/with-zookeeper.sh keeps its own check, for when it runs alone).
# Exits 0 when everything is present, 2 when something is missing and this is not root, and
# apt-get's status when an install fails.
set -euo pipefail

case "${1:-}" in
-h | --help)
    sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
"") ;;
*)
    echo "install-test-deps: unexpected argument $1 (see --help)" >&2
    exit 2
    ;;
esac

missing=()
command -v python3 >/dev/null || missing+=(python3)
[ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null || missing+=(chromium)
{ dpkg -s zookeeper >/dev/null 2>&1 && [ -e /usr/share/java/zookeeper.jar ]; } || missing+=(zookeeper)

if [ ${#missing[@]} -eq 0 ]; then
    echo "install-test-deps: python3, chromium and zookeeper are present"
    exit 0
fi
if [ "$(id -u)" != 0 ]; then
    echo "install-test-deps: missing ${missing[*]} and this is not root: apt-get install ${missing[*]}" >&2
    exit 2
fi
echo "install-test-deps: installing ${missing[*]}"
apt-get update >/dev/null
DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null
echo "install-test-deps: installed ${missing[*]}"
