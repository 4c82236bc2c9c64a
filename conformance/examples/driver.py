#!/usr/bin/env python3
"""A driver of the protocol of spec/driver-protocol.md in another language (Python, stdlib only).

Two modes, both built on one strict decoder and encoder of the protocol's lines, written from
spec/driver-protocol.md alone (every request and response, every field, its JSON type and range):

One move (the default). It starts an implementation under test (by default the shipped
`rebalance-manager-stdio`), greets it, hands it a one-bucket cluster, registers a move of bucket
0 from servers [0, 1] to [1, 2], and plays the tablet servers and the coordinator's event queue
itself until the rebalance completes: every NotifyLeaderAndIsr the coordinator sends is adopted
by its server and acknowledged with the request's context, the leader proposes each new replica
into the ISR as soon as it has the request (an AdjustIsr), and the clock ticks only when nothing
else is left. Each answer is decoded against the protocol (one response per request, the kind of
response the request calls for, every field); the run ends with the final observation.

    python3 conformance/examples/driver.py [--sut COMMAND] [--show]

Relay (--relay COMMAND). It stands between a harness and an implementation under test:
it starts COMMAND, and for every request line on its stdin decodes the request, encodes it again
from what it decoded (the fields in the spec's order, compact), sends that to COMMAND, reads the
one response line, decodes it as the response the request calls for, encodes it again and writes
it to its stdout. So every line of a session passes through this second implementation of the
protocol's messages, e.g. the shipped suites:

    S=target/release/rebalance-manager-stdio
    rebalance-conformance replay conformance/suite/*/[0-9]*.json \\
        --sut "python3 conformance/examples/driver.py --relay $S"

A line the spec does not describe exactly (not UTF-8 or not JSON, an unknown or missing field,
an unknown request or value, a wrong type, a number out of range, a server set not ascending,
the wrong kind of response) is a relay error: a message with the line on stderr, and exit 1.
An `error` response is relayed, then the relay ends as the implementation must (exit 2).

--sut COMMAND    the implementation to drive (default: target/release/rebalance-manager-stdio)
--show           print every request and response (the session of spec/driver-protocol.md,
                 "Example session", is this output)
--relay COMMAND  relay mode, to the implementation COMMAND
--stats FILE     relay mode: at the end, append one JSON line to FILE counting the lines
                 relayed: requests by `op`, inputs by `type`, responses by kind, effects,
                 events and replies by their tags
COMMAND is split into a program and its arguments as a POSIX shell splits words (shlex).

Exit status: one move, 0 when the move completed and every answer was well-formed, 1
otherwise. Relay: 0 when every line was relayed and the implementation exited 0 at the end of
its input; 1 on a relay error (or the implementation's failure); 2 after relaying an `error`.
"""

import json
import shlex
import subprocess
import sys

CHECK_INTERVAL_MS = 30000

# -- The protocol's lines: decoded strictly, encoded canonically -------------------------------
#
# A decoder takes a JSON value and its field path and returns the value as this module
# represents it: for an object a fresh dict with the spec's fields in the spec's order, so that
# encoding it writes the fields in that order whatever the order they came in.


class Malformed(Exception):
    """A value that is not what the spec says, at `path` (`(line)` for the whole line)."""

    def __init__(self, path, message):
        super().__init__("field `%s`: %s" % (path or "(line)", message))
        self.path = path or "(line)"
        self.message = message


class Fraction:
    """A JSON number with a fraction or an exponent: never one of the protocol's integers."""

    def __init__(self, text):
        self.text = text


def show(v):
    if isinstance(v, Fraction):
        return v.text
    return json.dumps(v)


def field(path, name):
    return name if not path else path + "." + name


def unsigned(what, high, low=0):
    """An integer in low..=high (JSON numbers without fraction or exponent; not a boolean)."""

    def decode(v, path):
        if type(v) is not int:
            raise Malformed(path, "expected %s, found %s" % (what, show(v)))
        if not low <= v <= high:
            raise Malformed(path, "%s is not in %d..=%d (%s)" % (v, low, high, what))
        return v

    return decode


U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
SERVER = unsigned("a server (an unsigned 32-bit integer)", U32_MAX)
BUCKET = unsigned("a bucket (an unsigned 32-bit integer)", U32_MAX)
EPOCH = unsigned("an epoch (an unsigned 64-bit integer)", U64_MAX)
RID = unsigned("a rebalance id (an unsigned 64-bit integer)", U64_MAX)
MS = unsigned("milliseconds (an unsigned integer at most 2^53)", 2**53)  # in requests
AT_MS = unsigned("milliseconds (an unsigned 64-bit integer)", U64_MAX)  # in the observation
COUNT = unsigned("a count (an unsigned 64-bit integer)", U64_MAX)
NTH = unsigned("a store operation's number (1 to 2^32 - 1)", U32_MAX, 1)


def boolean(v, path):
    if type(v) is not bool:
        raise Malformed(path, "expected true or false, found %s" % show(v))
    return v


def string(v, path):
    if type(v) is not str:
        raise Malformed(path, "expected a string, found %s" % show(v))
    if any(0xD800 <= ord(c) <= 0xDFFF for c in v):
        raise Malformed(path, "a lone surrogate is not a Unicode scalar value")
    return v


def one_of(*names):
    def decode(v, path):
        if type(v) is not str or v not in names:
            raise Malformed(path, "unknown value %s; expected one of %s"
                            % (show(v), ", ".join(names)))
        return v

    return decode


def nullable(decode):
    """`null` or the value; an absent field of this type is `null` too (see `obj`)."""

    def d(v, path):
        return None if v is None else decode(v, path)

    d.optional = True
    return d


def array(decode, ascending=None):
    """A list; `ascending`, a function of an element, makes it strictly ascending by that."""

    def d(v, path):
        if type(v) is not list:
            raise Malformed(path, "expected a list, found %s" % show(v))
        out = [decode(x, "%s[%d]" % (path, i)) for i, x in enumerate(v)]
        if ascending is not None:
            for i in range(1, len(out)):
                if not ascending(out[i - 1]) < ascending(out[i]):
                    raise Malformed("%s[%d]" % (path, i), "the list is not strictly ascending: %s"
                                    % show(v))
        return out

    return d


def fields(v, path, spec, tag=None):
    """The object `v` with exactly the fields `spec` (name, decoder) lists, besides `tag`."""
    if type(v) is not dict:
        raise Malformed(path, "expected an object, found %s" % show(v))
    known = {name for name, _ in spec}
    for name in v:
        if name not in known and name != tag:
            raise Malformed(field(path, name), "unknown field")
    out = {}
    for name, decode in spec:
        if name in v:
            out[name] = decode(v[name], field(path, name))
        elif getattr(decode, "optional", False):
            out[name] = None
        else:
            raise Malformed(field(path, name), "missing")
    return out


def obj(*spec):
    return lambda v, path: fields(v, path, spec)


def tagged(tag, variants):
    """An object tagged by its field `tag`: the variant's fields after the tag."""

    def d(v, path):
        if type(v) is not dict:
            raise Malformed(path, "expected an object, found %s" % show(v))
        if tag not in v:
            raise Malformed(field(path, tag), "missing")
        name = v[tag]
        if type(name) is not str or name not in variants:
            raise Malformed(field(path, tag), "unknown value %s; expected one of %s"
                            % (show(name), ", ".join(variants)))
        out = {tag: name}
        out.update(fields(v, path, variants[name], tag))
        return out

    return d


SERVERS = array(SERVER, ascending=lambda s: s)  # a server set: isr, live
REPLICAS = array(SERVER)  # a replica list, ordered: assignment, ors, trs, replicas
KEY = obj(("rid", RID), ("bucket", BUCKET))
EVENT = tagged("type", {
    "timeout": [("key", KEY)],
    "reconcile": [("key", KEY)],
    "finalize": [("rid", RID)],
    "recover": [],
})
LAI = obj(("leader", nullable(SERVER)), ("leader_epoch", EPOCH), ("isr", SERVERS),
          ("bucket_epoch", EPOCH), ("coordinator_epoch", EPOCH))
CONFIG = obj(
    ("task_timeout_ms", MS), ("check_interval_ms", MS), ("max_reconcile_backoff_ms", MS),
    ("target_unavailable_timeout_ms", MS), ("no_progress_timeout_ms", MS),
    ("max_tracked_timed_out", COUNT), ("max_inflight", COUNT),
)
ENTRY = obj(("bucket", BUCKET), ("ors", REPLICAS), ("trs", REPLICAS),
            ("old_leader", nullable(SERVER)), ("new_leader", SERVER))
TASK_STATUS = one_of("NOT_STARTED", "REBALANCING", "COMPLETED", "FAILED", "CANCELED")
STORE = obj(
    ("coordinator_epoch", EPOCH),
    ("task", nullable(obj(("id", RID), ("status", TASK_STATUS), ("cancel_requested", boolean),
                          ("plan", array(ENTRY))))),
    ("buckets", array(obj(("bucket", BUCKET), ("assignment", REPLICAS), ("lai", LAI),
                          ("deleted", boolean)), ascending=lambda b: b["bucket"])),
)
INPUT = tagged("type", {
    "register": [("plan", array(ENTRY))],
    "cancel": [],
    "tick": [],
    "event": [("event", EVENT)],
    "nli_response": [("from", SERVER), ("bucket", BUCKET), ("ok", boolean),
                     ("context", obj(("coordinator_epoch", EPOCH), ("leader", nullable(SERVER)),
                                     ("leader_epoch", EPOCH), ("bucket_epoch", EPOCH),
                                     ("exec_key", nullable(KEY))))],
    "adjust_isr": [("from", SERVER), ("bucket", BUCKET), ("leader_epoch", EPOCH),
                   ("bucket_epoch", EPOCH), ("isr", SERVERS)],
    "server_crashed": [("server", SERVER)],
    "server_restarted": [("server", SERVER)],
    "bucket_deleted": [("bucket", BUCKET)],
})
SNAPSHOT_ID = unsigned("a snapshot id (an unsigned 64-bit integer)", U64_MAX)
REQUEST = tagged("op", {
    "hello": [("protocol", one_of("rebalance-driver")),
              ("version", unsigned("version 2", 2, 2))],
    "start": [("config", CONFIG), ("store", STORE), ("live", SERVERS), ("now_ms", MS)],
    "restart": [("live", SERVERS), ("now_ms", MS)],
    "fail_store_op": [("nth", NTH)],
    "input": [("now_ms", MS), ("input", INPUT)],
    "state": [],
    "snapshot": [("id", SNAPSHOT_ID)],
    "restore": [("id", SNAPSHOT_ID)],
    "release": [("id", SNAPSHOT_ID)],
})


def adjust_isr_result(v, path):
    """`{"ok": LeaderAndIsr}` or `{"err": REASON}`: an object with exactly one of the two."""
    if type(v) is not dict or len(v) != 1:
        raise Malformed(path, "expected {\"ok\": LeaderAndIsr} or {\"err\": REASON}, found %s"
                        % show(v))
    (name, value), = v.items()
    if name == "ok":
        return {"ok": LAI(value, field(path, "ok"))}
    if name == "err":
        return {"err": one_of("UNKNOWN_BUCKET", "NOT_LEADER", "FENCED_LEADER_EPOCH",
                              "INVALID_BUCKET_EPOCH", "INELIGIBLE_REPLICA", "NO_CHANGE",
                              "STORE_ERROR")(value, field(path, "err"))}
    raise Malformed(field(path, name), "unknown field; expected ok or err")


REPLY = tagged("kind", {
    "accepted": [("rid", RID)],
    "rejected_in_progress": [],
    "nothing_to_cancel": [],
    "store_error": [],
    "rejected_invalid_plan": [
        ("reason", one_of("DUPLICATE_BUCKET", "EMPTY_TARGET", "NEW_LEADER_NOT_FIRST_TARGET",
                          "DUPLICATE_REPLICA", "UNKNOWN_BUCKET", "DELETED_BUCKET",
                          "NOT_AT_ORIGIN")),
        ("bucket", BUCKET),
    ],
})
EFFECT = tagged("type", {
    "send_nli": [("to", SERVER), ("bucket", BUCKET), ("replicas", REPLICAS),
                 ("leader", nullable(SERVER)), ("leader_epoch", EPOCH), ("isr", SERVERS),
                 ("bucket_epoch", EPOCH), ("coordinator_epoch", EPOCH),
                 ("exec_key", nullable(KEY))],
    "send_adjust_isr_response": [("to", SERVER), ("bucket", BUCKET),
                                 ("result", adjust_isr_result)],
    "enqueue": [("event", EVENT)],
    "reply": [("reply", REPLY)],
})
BUCKET_STATUS = one_of("NOT_STARTED", "REBALANCING", "TIMEOUT", "COMPLETED", "FAILED",
                       "CANCELED")
KEY_ORDER = lambda k: (k["rid"], k["bucket"])  # noqa: E731
COORDINATOR = obj(
    ("coordinator_epoch", EPOCH), ("now_ms", AT_MS), ("live", SERVERS), ("rid", nullable(RID)),
    ("overall", nullable(one_of("REBALANCING", "COMPLETED", "FAILED", "CANCELED"))),
    ("status", array(obj(("bucket", BUCKET), ("status", BUCKET_STATUS)),
                     ascending=lambda s: s["bucket"])),
    ("pending", array(BUCKET)),
    ("attempts", array(obj(
        ("bucket", BUCKET), ("key", KEY), ("mode", one_of("running", "tracked")),
        ("started_ms", AT_MS), ("last_progress_ms", AT_MS),
        ("blocked_since_ms", nullable(AT_MS)), ("reconciles", COUNT),
        ("next_reconcile_ms", AT_MS),
        ("observed", obj(("assignment", REPLICAS), ("leader", nullable(SERVER)),
                         ("isr", SERVERS))),
    ), ascending=lambda a: a["bucket"])),
    ("queued_timeouts", array(KEY, ascending=KEY_ORDER)),
    ("queued_reconciles", array(KEY, ascending=KEY_ORDER)),
    ("flags", obj(("cancel_requested", boolean), ("finalize_pending", boolean),
                  ("finalize_queued", boolean), ("recovery_pending", boolean),
                  ("recovery_queued", boolean))),
    ("restored", COUNT),
)
OBSERVATION = obj(("store", STORE), ("coordinator", COORDINATOR), ("store_ops", COUNT),
                  ("fault_pending", boolean), ("invariant_violation", nullable(string)))
RESPONSE_BODY = {
    "hello": obj(("protocol", string),
                 ("version", unsigned("a version (an unsigned 64-bit integer)", U64_MAX)),
                 ("implementation", string)),
    "effects": array(EFFECT),
    "refused": string,
    "state": OBSERVATION,
    "done": one_of("fail_store_op", "snapshot", "restore", "release"),
    "error": obj(("path", string), ("message", string)),
}
# The responses each request calls for, besides `error`, which answers any request.
ANSWERS = {
    "hello": ("hello",), "start": ("effects", "refused"), "restart": ("effects", "refused"),
    "fail_store_op": ("done",), "input": ("effects",), "state": ("state",),
    "snapshot": ("done",), "restore": ("done",), "release": ("done",),
}


def no_duplicates(pairs):
    out = {}
    for name, value in pairs:
        if name in out:
            raise Malformed(None, "the field %s appears twice in an object" % json.dumps(name))
        out[name] = value
    return out


def reject_constant(name):
    raise Malformed(None, "%s is not JSON" % name)


def parse(raw):
    """A line (bytes, without its newline) as a JSON value; Malformed unless UTF-8 JSON."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Malformed(None, "not UTF-8 (%s)" % e)
    try:
        return json.loads(text, object_pairs_hook=no_duplicates, parse_float=Fraction,
                          parse_constant=reject_constant)
    except ValueError as e:
        raise Malformed(None, "not JSON (%s)" % e)


def decode_request(value):
    """A request line's JSON value, decoded: Malformed unless the spec describes it exactly."""
    return REQUEST(value, "")


def decode_response(value, request):
    """A response's JSON value, decoded as an answer to the decoded `request`."""
    if type(value) is not dict or len(value) != 1:
        raise Malformed(None, "a response is an object with exactly one key, found %s"
                        % show(value))
    (kind, body), = value.items()
    if kind not in RESPONSE_BODY:
        raise Malformed(None, "unknown response %s; expected one of %s"
                        % (json.dumps(kind), ", ".join(RESPONSE_BODY)))
    expected = ANSWERS[request["op"]] + ("error",)
    if kind not in expected:
        raise Malformed(kind, "a `%s` response to `%s`; expected %s"
                        % (kind, request["op"], " or ".join("`%s`" % k for k in expected)))
    decoded = RESPONSE_BODY[kind](body, kind)
    if kind == "done" and decoded != request["op"]:
        raise Malformed(kind, "\"%s\" answers `%s`; expected \"%s\""
                        % (decoded, request["op"], request["op"]))
    return {kind: decoded}


def encode(value):
    """The canonical line of a decoded value: compact, fields in the spec's order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


# -- Relay mode --------------------------------------------------------------------------------


class Stats:
    """Lines relayed, by kind."""

    def __init__(self):
        self.counts = {"requests": {}, "inputs": {}, "responses": {}, "effects": {},
                       "events": {}, "replies": {}}

    def count(self, group, name):
        c = self.counts[group]
        c[name] = c.get(name, 0) + 1

    def request(self, r):
        self.count("requests", r["op"])
        if r["op"] == "input":
            self.count("inputs", r["input"]["type"])
            if r["input"]["type"] == "event":
                self.count("events", r["input"]["event"]["type"])

    def response(self, r):
        (kind, body), = r.items()
        self.count("responses", kind)
        if kind == "effects":
            for e in body:
                self.count("effects", e["type"])
                if e["type"] == "enqueue":
                    self.count("events", e["event"]["type"])
                elif e["type"] == "reply":
                    self.count("replies", e["reply"]["kind"])

    def append_to(self, path):
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(self.counts, sort_keys=True) + "\n")


def relay(command, stats_path):
    """Relays stdin's requests to `command` and its responses to stdout, decoding both."""
    stats = Stats()
    try:
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        print("driver.py --relay: could not start %s: %s" % (shlex.join(command), e),
              file=sys.stderr)
        return 1

    def end(code, why=None):
        if why is not None:
            print("driver.py --relay: " + why, file=sys.stderr)
        try:
            child.stdin.close()
        except OSError:
            pass
        status = child.wait()
        if stats_path is not None:
            stats.append_to(stats_path)
        if code == 0 and status != 0:
            print("driver.py --relay: the implementation exited with %d at the end of its input"
                  % status, file=sys.stderr)
            return 1
        return code

    number = 0
    for raw in sys.stdin.buffer:
        number += 1
        raw = raw[:-1] if raw.endswith(b"\n") else raw
        shown = raw.decode("utf-8", "backslashreplace")
        try:
            request = decode_request(parse(raw))
        except Malformed as e:
            return end(1, "request line %d is not a request of spec/driver-protocol.md: %s\n"
                          "  the line: %s" % (number, e, shown))
        line = encode(request)
        stats.request(request)
        try:
            child.stdin.write(line.encode("utf-8") + b"\n")
            child.stdin.flush()
        except OSError as e:
            return end(1, "the implementation does not read request line %d (%s): %s"
                          % (number, e, line))
        answer = child.stdout.readline()
        if not answer.endswith(b"\n"):
            return end(1, "the implementation closed its output without answering request "
                          "line %d: %s" % (number, line))
        answer = answer[:-1]
        try:
            response = decode_response(parse(answer), request)
        except Malformed as e:
            return end(1, "the implementation's answer to request line %d is not the response "
                          "spec/driver-protocol.md calls for: %s\n  the request: %s\n"
                          "  the answer: %s"
                          % (number, e, line, answer.decode("utf-8", "backslashreplace")))
        stats.response(response)
        sys.stdout.buffer.write(encode(response).encode("utf-8") + b"\n")
        sys.stdout.buffer.flush()
        if "error" in response:
            # The implementation exits 2 after an error line, and so does the relay.
            status = end(2)
            if status == 2 and child.returncode != 2:
                print("driver.py --relay: the implementation exited with %d after an error "
                      "line, not 2" % child.returncode, file=sys.stderr)
                return 1
            return status
    return end(0)


# -- One move ----------------------------------------------------------------------------------


class Sut:
    """The implementation under test, one request line in, one response line out."""

    def __init__(self, command, show):
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        self.show = show

    def ask(self, request, expect):
        """Sends `request` (checked against the protocol first) and returns the body of its
        answer, decoded as the response the request calls for, which must be `expect`."""
        try:
            request = decode_request(request)
        except Malformed as e:
            fail("internal: the driver's own request is malformed: %s" % e)
        line = encode(request)
        if self.show:
            print("> " + line)
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            fail("the implementation closed its output after " + line)
        if self.show:
            print("< " + answer.rstrip("\n"))
        try:
            response = decode_response(parse(answer.rstrip("\n").encode("utf-8")), request)
        except Malformed as e:
            fail("the answer to %s is malformed: %s: %s" % (line, e, answer))
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
    relay_to = None
    stats = None
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
        elif a == "--relay" and args:
            relay_to = shlex.split(args.pop(0))
        elif a == "--stats" and args:
            stats = args.pop(0)
        else:
            fail("unknown argument %s (see --help)" % a)
    if relay_to is not None:
        if show:
            fail("--show is for the one-move mode, not --relay")
        if not relay_to:
            fail("--relay needs a command")
        return relay(relay_to, stats)
    if stats is not None:
        fail("--stats is for --relay")
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
