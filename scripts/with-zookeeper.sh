#!/usr/bin/env bash
# Runs a command with a standalone ZooKeeper server on 127.0.0.1, for the ZkStore tests, the
# example and CI:
#
#   scripts/with-zookeeper.sh cargo test --workspace --release
#
# Installs Debian's `zookeeper` package (and so Java) if it is missing, starts a server bound to
# 127.0.0.1 on a free port with a temporary data directory (AdminServer off), waits until `srvr`
# reports `Mode: standalone`, runs the command with
#
#   ZK_ADDR=127.0.0.1:PORT     the server
#   REBALANCE_ZK_TESTS=1       turns the ZooKeeper tests on (stores/build.rs)
#   ZK_STATE_DIR=DIR           the server's config, data directory, log and pid file
#   ZK_SCRIPT=PATH             this script, for fault tests that stop and restart the server
#
# and always stops the server by its process id on exit, even when the command fails. Exits with
# the command's exit code. ZK_HEAP sets the server's Java heap (default 256m; a store of a million
# buckets needs about 2g).
#
# Inside such a run, a fault test stops or restarts the server on the same port and data
# directory (both use ZK_STATE_DIR):
#
#   scripts/with-zookeeper.sh --stop-server [--kill]   # SIGTERM (or SIGKILL), waits until gone
#   scripts/with-zookeeper.sh --start-server           # starts again, waits for standalone
set -euo pipefail

usage() {
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"
}

die() {
  echo "with-zookeeper: $*" >&2
  exit 2
}

install_if_missing() {
  if dpkg -s zookeeper >/dev/null 2>&1 && [ -e /usr/share/java/zookeeper.jar ]; then
    return
  fi
  [ "$(id -u)" = 0 ] || die "ZooKeeper is not installed and this is not root: apt-get install zookeeper"
  echo "with-zookeeper: installing Debian's zookeeper package" >&2
  apt-get update >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends zookeeper >/dev/null
}

port_in_use() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

free_port() {
  local p i
  for i in $(seq 1 50); do
    p=$((20000 + (RANDOM * 32768 + RANDOM + $$ + i) % 40000))
    if ! port_in_use "$p"; then
      echo "$p"
      return
    fi
  done
  die "no free port found"
}

# Sends a four-letter command and prints the answer.
four_letter() {
  local port=$1 cmd=$2
  (
    exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 1
    printf '%s' "$cmd" >&3
    timeout 2 cat <&3
  ) 2>/dev/null
}

server_pid() {
  cat "$ZK_STATE_DIR/pid" 2>/dev/null || true
}

start_server() {
  local state=$ZK_STATE_DIR port
  port=$(cat "$state/port")
  local classpath="$state/conf"
  for jar in /usr/share/java/*.jar; do
    classpath="$classpath:$jar"
  done
  # Output goes to a file and stdin is closed, so the server holds none of the caller's pipes.
  # Started from a subshell, so it is nobody's job: a kill prints no job notice.
  (
    java -Xmx"${ZK_HEAP:-256m}" -Dzookeeper.log.dir="$state" -cp "$classpath" \
      org.apache.zookeeper.server.ZooKeeperServerMain "$state/conf/zoo.cfg" \
      </dev/null >>"$state/server.log" 2>&1 &
    echo $! >"$state/pid"
  )
  local i
  for i in $(seq 1 600); do
    if ! kill -0 "$(server_pid)" 2>/dev/null; then
      tail -20 "$state/server.log" >&2
      die "ZooKeeper exited during start (log above)"
    fi
    if four_letter "$port" srvr | grep -q 'Mode: standalone'; then
      return
    fi
    sleep 0.1
  done
  tail -20 "$state/server.log" >&2
  die "ZooKeeper did not report Mode: standalone within 60 s"
}

stop_server() {
  local signal=${1:-TERM} pid i
  pid=$(server_pid)
  [ -n "$pid" ] || return 0
  kill "-$signal" "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  fi
  rm -f "$ZK_STATE_DIR/pid"
}

case "${1:-}" in
  "" | -h | --help)
    usage
    [ -n "${1:-}" ] && exit 0 || exit 2
    ;;
  --stop-server)
    [ -n "${ZK_STATE_DIR:-}" ] || die "--stop-server runs inside scripts/with-zookeeper.sh (ZK_STATE_DIR unset)"
    if [ "${2:-}" = --kill ]; then stop_server KILL; else stop_server TERM; fi
    exit 0
    ;;
  --start-server)
    [ -n "${ZK_STATE_DIR:-}" ] || die "--start-server runs inside scripts/with-zookeeper.sh (ZK_STATE_DIR unset)"
    [ -z "$(server_pid)" ] || die "the server is running (pid $(server_pid))"
    start_server
    exit 0
    ;;
  --*)
    die "unknown option $1 (try --help)"
    ;;
esac

install_if_missing
command -v java >/dev/null || die "java not found after installing zookeeper"

ZK_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/with-zookeeper.XXXXXX")
export ZK_STATE_DIR
cleanup() {
  stop_server TERM
  rm -rf "$ZK_STATE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

port=$(free_port)
echo "$port" >"$ZK_STATE_DIR/port"
mkdir -p "$ZK_STATE_DIR/conf" "$ZK_STATE_DIR/data"
cat >"$ZK_STATE_DIR/conf/zoo.cfg" <<EOF
tickTime=2000
dataDir=$ZK_STATE_DIR/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
maxSessionTimeout=60000
EOF
if [ -e /etc/zookeeper/conf_example/log4j.properties ]; then
  cp /etc/zookeeper/conf_example/log4j.properties "$ZK_STATE_DIR/conf/"
fi

start_server
export ZK_ADDR="127.0.0.1:$port"
export REBALANCE_ZK_TESTS=1
ZK_SCRIPT="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
export ZK_SCRIPT
echo "with-zookeeper: ZooKeeper standalone at $ZK_ADDR (pid $(server_pid), state $ZK_STATE_DIR)" >&2

set +e
"$@"
rc=$?
set -e
exit "$rc"
