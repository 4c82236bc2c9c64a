#!/usr/bin/env python3
"""A driver of the protocol of spec/driver-protocol.md in another language (Python, stdlib only).

It starts an implementation under test (by default the shipped `rebalance-manager-stdio`),
greets it, hands it a one-bucket cluster, registers a move of bucket 0 from servers [0, 1] to
[1, 2], and plays the tablet servers and the coordinator's event queue itself until the
rebalance completes: every NotifyLeaderAndIsr the coordinator sends is adopted by its server and
acknowledged with the request's context, the leader proposes each new replica into the ISR as
soon as it has the request (an AdjustIsr), and the clock ticks only when nothing else is left.
Each answer is checked against the protocol (one response per request, the kind of response the
request calls for, the effect and reply shapes); the run ends with the final observation.

    python3 conformance/examples/driver.py [--sut COMMAND] [--show]

--sut COMMAND   the implementation to drive (default: target/release/rebalance-manager-stdio)
--show          print every request and response (the session of spec/driver-protocol.md,
                "Example session", is this output)

Exit status: 0 when the move completed and every answer was well-formed; 1 otherwise.
"""

import json
import shlex
import subprocess
import sys

CHECK_INTERVAL_MS = 30000


class Sut:
    """The implementation under test, one request line in, one response line out."""

    def __init__(self, command, show):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.show = show

    def ask(self, request, expect):
        line = json.dumps(request, separators=(",", ":"))
        if self.show:
            print("> " + line)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            fail("the implementation closed its output after " + line)
        if self.show:
            print("< " + answer.rstrip("\n"))
        response = json.loads(answer)
        if len(response) != 1:
            fail("a response has exactly one key: " + answer)
        (kind, body), = response.items()
        if kind != expect:
            fail("expected a `%s` response to %s, got %s" % (expect, line, answer))
        return body

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait()


def fail(why):
    print("driver.py: " + why, file=sys.stderr)
    sys.exit(1)


class Servers:
    """The tablet servers: each server's view of bucket 0, and what it sends back."""

    def __init__(self):
        self.views = {}  # server -> the request it adopted last
        self.last_ce = {}

    def deliver(self, nli):
        """A NotifyLeaderAndIsr reaches its server: adopted unless its coordinator is older."""
        s = nli["to"]
        if nli["coordinator_epoch"] < self.last_ce.get(s, 0):
            return []
        self.last_ce[s] = nli["coordinator_epoch"]
        self.views[s] = dict(nli)
        ack = {
            "type": "nli_response", "from": s, "bucket": nli["bucket"], "ok": True,
            "context": {
                "coordinator_epoch": nli["coordinator_epoch"], "leader": nli["leader"],
                "leader_epoch": nli["leader_epoch"], "bucket_epoch": nli["bucket_epoch"],
                "exec_key": nli["exec_key"],
            },
        }
        out = [ack]
        # The leader: every replica of the request has caught up at once; propose the ISR.
        if nli["leader"] == s:
            isr = sorted(set(nli["isr"]) | set(nli["replicas"]))
            if isr != nli["isr"]:
                out.append({
                    "type": "adjust_isr", "from": s, "bucket": nli["bucket"],
                    "leader_epoch": nli["leader_epoch"], "bucket_epoch": nli["bucket_epoch"],
                    "isr": isr,
                })
        return out

    def answer(self, response):
        """The coordinator's answer to an AdjustIsr: the leader adopts the new ISR."""
        ok = response["result"].get("ok")
        view = self.views.get(response["to"])
        if ok is not None and view is not None:
            view.update(isr=ok["isr"], leader_epoch=ok["leader_epoch"],
                        bucket_epoch=ok["bucket_epoch"])


def main(argv):
    command = ["target/release/rebalance-manager-stdio"]
    show = False
    args = list(argv)
    while args:
        a = args.pop(0)
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a == "--show":
            show = True
        elif a == "--sut" and args:
            command = shlex.split(args.pop(0))
        else:
            fail("unknown argument %s (see --help)" % a)
    sut = Sut(command, show)
    hello = sut.ask({"op": "hello", "protocol": "rebalance-driver", "version": 2}, "hello")
    if hello["version"] != 2:
        fail("the implementation speaks version %s" % hello["version"])
    config = {
        "task_timeout_ms": 10 * CHECK_INTERVAL_MS, "check_interval_ms": CHECK_INTERVAL_MS,
        "max_reconcile_backoff_ms": 4 * CHECK_INTERVAL_MS,
        "target_unavailable_timeout_ms": 10 * CHECK_INTERVAL_MS,
        "no_progress_timeout_ms": 10 * CHECK_INTERVAL_MS,
        "max_tracked_timed_out": 1, "max_inflight": 1,
    }
    # A fresh bucket: epochs 0, its metadata written by no coordinator yet (epoch 0).
    lai = {"leader": 0, "leader_epoch": 0, "isr": [0, 1], "bucket_epoch": 0,
           "coordinator_epoch": 0}
    store = {"coordinator_epoch": 0, "task": None,
             "buckets": [{"bucket": 0, "assignment": [0, 1], "lai": lai, "deleted": False}]}
    now = 0
    queue = []  # the coordinator's event queue, which the driver owns
    network = []  # what the servers send the coordinator, in order
    servers = Servers()

    def effects(body):
        for e in body:
            kind = e["type"]
            if kind == "enqueue":
                queue.append(e["event"])
            elif kind == "send_nli":
                network.extend(servers.deliver(e))
            elif kind == "send_adjust_isr_response":
                servers.answer(e)
            elif kind == "reply":
                replies.append(e["reply"])
            else:
                fail("unknown effect " + json.dumps(e))

    replies = []
    effects(sut.ask({"op": "start", "config": config, "store": store, "live": [0, 1, 2],
                     "now_ms": now}, "effects"))
    # The start enqueued Recover: it must be processed before a register is accepted.
    while queue:
        effects(sut.ask({"op": "input", "now_ms": now,
                         "input": {"type": "event", "event": queue.pop(0)}}, "effects"))
    plan = [{"bucket": 0, "ors": [0, 1], "trs": [1, 2], "old_leader": 0, "new_leader": 1}]
    effects(sut.ask({"op": "input", "now_ms": now,
                     "input": {"type": "register", "plan": plan}}, "effects"))
    if not replies or replies[0].get("kind") != "accepted":
        fail("the register was not accepted: %s" % replies)
    for _ in range(200):
        if network:
            request = network.pop(0)
        elif queue:
            request = {"type": "event", "event": queue.pop(0)}
        else:
            state = sut.ask({"op": "state"}, "state")
            if state["coordinator"]["overall"] == "COMPLETED":
                break
            now += CHECK_INTERVAL_MS
            request = {"type": "tick"}
        effects(sut.ask({"op": "input", "now_ms": now, "input": request}, "effects"))
    else:
        fail("the move did not complete within 200 inputs")
    bucket = state["store"]["buckets"][0]
    if bucket["assignment"] != [1, 2] or bucket["lai"]["leader"] != 1:
        fail("completed, but the store holds %s" % json.dumps(bucket))
    if state.get("invariant_violation"):
        fail("the implementation reports %s" % state["invariant_violation"])
    code = sut.close()
    if code != 0:
        fail("the implementation exited with %d at the end of its input" % code)
    print("driver.py: bucket 0 moved to [1, 2], led by 1, at now_ms %d" % now)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
