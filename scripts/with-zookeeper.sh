#!/usr/bin/env bash
# Runs a command with a ZooKeeper server on 127.0.0.1, standalone or a replicated ensemble, for
# the ZkStore tests, the example and CI:
#
#   scripts/with-zookeeper.sh cargo test --workspace --release
#   scripts/with-zookeeper.sh --ensemble 3 cargo run --release -p rebalance-stores --example cluster -- ...
#
# Installs Debian's `zookeeper` package (and so Java) if it is missing, starts a server bound to
# 127.0.0.1 on a free port with a temporary data directory (AdminServer off), waits until `srvr`
# reports `Mode: standalone`, runs the command with
#
#   ZK_ADDR=127.0.0.1:PORT     the server (for an ensemble, every member's, comma-separated)
#   REBALANCE_ZK_TESTS=1       turns the ZooKeeper tests on (stores/build.rs)
#   ZK_STATE_DIR=DIR           each member's config, data directory, log and pid file
#   ZK_SCRIPT=PATH             this script, for fault tests that stop and restart the server
#
# and always stops every server by its process id on exit, even when the command fails. Exits
# with the command's exit code. ZK_HEAP sets each server's Java heap (default 256m; a store of a
# million buckets needs about 2g).
#
# `--ensemble N` (N odd, 3 to 7) starts N members of one ensemble instead, each with its own
# client, quorum and election ports on 127.0.0.1, and waits until one member reports
# `Mode: leader` and every other `Mode: follower`.
#
# Inside such a run, a fault test stops or restarts servers on the same ports and data
# directories (both use ZK_STATE_DIR):
#
#   scripts/with-zookeeper.sh --stop-server [--kill]            # every member: SIGTERM (or SIGKILL)
#   scripts/with-zookeeper.sh --stop-server --leader [--kill]   # the ensemble's current leader only
#   scripts/with-zookeeper.sh --start-server                    # every stopped member, and waits
#                                                               # until all of them serve again
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

members() {
  cat "$ZK_STATE_DIR/members"
}

member_pid() {
  cat "$ZK_STATE_DIR/m$1/pid" 2>/dev/null || true
}

member_port() {
  cat "$ZK_STATE_DIR/m$1/port"
}

# The mode a member reports (standalone, leader or follower), or nothing while it does not serve.
member_mode() {
  { four_letter "$(member_port "$1")" srvr || true; } | sed -n 's/^Mode: //p'
}

start_member() {
  local dir=$ZK_STATE_DIR/m$1
  local classpath="$dir/conf"
  for jar in /usr/share/java/*.jar; do
    classpath="$classpath:$jar"
  done
  # Output goes to a file and stdin is closed, so the server holds none of the caller's pipes.
  # Started from a subshell, so it is nobody's job: a kill prints no job notice.
  (
    java -Xmx"${ZK_HEAP:-256m}" -Dzookeeper.log.dir="$dir" -cp "$classpath" \
      org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/conf/zoo.cfg" \
      </dev/null >>"$dir/server.log" 2>&1 &
    echo $! >"$dir/pid"
  )
}

# Waits until every member serves: standalone for one member; one leader and followers for an
# ensemble.
wait_serving() {
  local n i m mode leaders serving
  n=$(members)
  for i in $(seq 1 600); do
    leaders=0
    serving=0
    for m in $(seq 1 "$n"); do
      if ! kill -0 "$(member_pid "$m")" 2>/dev/null; then
        tail -20 "$ZK_STATE_DIR/m$m/server.log" >&2
        die "ZooKeeper member $m exited during start (log above)"
      fi
      mode=$(member_mode "$m")
      case "$mode" in
        standalone) [ "$n" = 1 ] && serving=$((serving + 1)) ;;
        leader) leaders=$((leaders + 1)); serving=$((serving + 1)) ;;
        follower) serving=$((serving + 1)) ;;
      esac
    done
    if [ "$serving" = "$n" ] && { [ "$n" = 1 ] || [ "$leaders" = 1 ]; }; then
      return
    fi
    sleep 0.1
  done
  for m in $(seq 1 "$n"); do tail -5 "$ZK_STATE_DIR/m$m/server.log" >&2; done
  die "ZooKeeper did not serve within 60 s (every member's log above)"
}

stop_member() {
  local m=$1 signal=$2 pid i
  pid=$(member_pid "$m")
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
  rm -f "$ZK_STATE_DIR/m$m/pid"
}

stop_all() {
  local m
  for m in $(seq 1 "$(members)"); do stop_member "$m" "$1"; done
}

# The member that reports `Mode: leader` now.
leader() {
  local m
  for m in $(seq 1 "$(members)"); do
    if [ "$(member_mode "$m")" = leader ]; then
      echo "$m"
      return
    fi
  done
  die "no member of the ensemble is leader now"
}

ensemble=1
case "${1:-}" in
  "" | -h | --help)
    usage
    [ -n "${1:-}" ] && exit 0 || exit 2
    ;;
  --stop-server)
    [ -n "${ZK_STATE_DIR:-}" ] || die "--stop-server runs inside scripts/with-zookeeper.sh (ZK_STATE_DIR unset)"
    shift
    only_leader=false
    signal=TERM
    for a in "$@"; do
      case "$a" in
        --leader) only_leader=true ;;
        --kill) signal=KILL ;;
        *) die "--stop-server takes --leader and --kill, not $a" ;;
      esac
    done
    if $only_leader; then
      [ "$(members)" -gt 1 ] || die "--stop-server --leader needs an ensemble (--ensemble N)"
      m=$(leader)
      stop_member "$m" "$signal"
      echo "with-zookeeper: stopped member $m, the leader" >&2
    else
      stop_all "$signal"
    fi
    exit 0
    ;;
  --start-server)
    [ -n "${ZK_STATE_DIR:-}" ] || die "--start-server runs inside scripts/with-zookeeper.sh (ZK_STATE_DIR unset)"
    started=0
    for m in $(seq 1 "$(members)"); do
      if [ -z "$(member_pid "$m")" ]; then
        start_member "$m"
        started=$((started + 1))
      fi
    done
    [ "$started" -gt 0 ] || die "every member is running"
    wait_serving
    exit 0
    ;;
  --ensemble)
    [[ "${2:-}" =~ ^[357]$ ]] || die "--ensemble takes an odd number of members, 3 to 7"
    ensemble=$2
    shift 2
    [ $# -gt 0 ] || die "no command to run (try --help)"
    ;;
  --*)
    die "unknown option $1 (try --help)"
    ;;
esac

install_if_missing
command -v java >/dev/null || die "java not found after installing zookeeper"

ZK_STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/with-zookeeper.XXXXXX")
export ZK_STATE_DIR
echo "$ensemble" >"$ZK_STATE_DIR/members"
cleanup() {
  stop_all TERM
  rm -rf "$ZK_STATE_DIR"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Each member: a client port, and for an ensemble a quorum and an election port, all distinct.
ports=()
while [ ${#ports[@]} -lt $((3 * ensemble)) ]; do
  p=$(free_port)
  case " ${ports[*]} " in *" $p "*) continue ;; esac
  ports+=("$p")
done
servers=""
if [ "$ensemble" -gt 1 ]; then
  for m in $(seq 1 "$ensemble"); do
    servers="${servers}server.$m=127.0.0.1:${ports[$((3 * m - 2))]}:${ports[$((3 * m - 1))]}
"
  done
fi
addrs=()
for m in $(seq 1 "$ensemble"); do
  dir=$ZK_STATE_DIR/m$m
  port=${ports[$((3 * m - 3))]}
  mkdir -p "$dir/conf" "$dir/data"
  echo "$port" >"$dir/port"
  [ "$ensemble" -gt 1 ] && echo "$m" >"$dir/data/myid"
  cat >"$dir/conf/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=ruok,srvr,stat,mntr
maxSessionTimeout=60000
$servers
EOF
  if [ -e /etc/zookeeper/conf_example/log4j.properties ]; then
    cp /etc/zookeeper/conf_example/log4j.properties "$dir/conf/"
  fi
  addrs+=("127.0.0.1:$port")
done
for m in $(seq 1 "$ensemble"); do start_member "$m"; done
wait_serving
ZK_ADDR=$(IFS=,; echo "${addrs[*]}")
export ZK_ADDR
export REBALANCE_ZK_TESTS=1
ZK_SCRIPT="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
export ZK_SCRIPT
if [ "$ensemble" = 1 ]; then
  echo "with-zookeeper: ZooKeeper standalone at $ZK_ADDR (pid $(member_pid 1), state $ZK_STATE_DIR)" >&2
else
  echo "with-zookeeper: a ZooKeeper ensemble of $ensemble at $ZK_ADDR (leader: member $(leader), state $ZK_STATE_DIR)" >&2
fi

set +e
"$@"
rc=$?
set -e
exit "$rc"
