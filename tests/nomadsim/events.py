"""GET /v1/event/stream: ndjson, `{}` heartbeats, topic/key/namespace filters."""

import json

from .errors import CodedError
from .request import Stream, check_method

TOPIC_CAPS = {"Job": "read-job", "Deployment": "read-job",
              "Allocation": "read-job", "Evaluation": "read-job"}


def parse_topics(req):
    topics = {}
    for t in req.qall("topic"):
        name, _, key = t.partition(":")
        topics.setdefault(name, set()).add(key or "*")
    return topics or {"*": {"*"}}


def wanted(ev, topics, ns):
    if ns != "*" and ev["Namespace"] and ev["Namespace"] != ns:
        return False
    for name in (ev["Topic"], "*"):
        keys = topics.get(name)
        if not keys:
            continue
        if "*" in keys or ev["Key"] in keys:
            return True
        if any(k in keys for k in ev["FilterKeys"] or ()):
            return True
    return False


def stream(sim, req):
    check_method(req, "GET")
    idx = req.q("index")
    start = 0
    if idx:
        try:
            start = int(idx)
        except ValueError as e:
            raise CodedError(400, "Unable to parse index: %s" % e)
    topics = parse_topics(req)
    ns = req.ns
    if "*" in topics and sim.acl_enabled and not sim.is_management(req):
        raise CodedError(403, "Permission denied")
    for name in topics:
        if name in TOPIC_CAPS and ns != "*":
            sim.check(req, ns, TOPIC_CAPS[name])
    store = sim.store
    # Nomad starts at the buffered item whose index is `index`, or the
    # closest one after it (older than the buffer: its oldest item); with
    # no index, at the buffer's head: every buffered event is sent again
    # (nomad/stream/event_broker.go Subscribe, event_buffer.go
    # StartAtClosest).
    with store.lock:
        if start:
            cursor = store.event_seq - sum(1 for e in store.events
                                           if e["Index"] >= start)
        else:
            cursor = store.event_seq - len(store.events)

    def run(out):
        nonlocal cursor
        out.write(b"{}\n")
        while True:
            with store.lock:
                if store.events and store.events[0]["_seq"] > cursor + 1:
                    # A reader too slow for the buffer: Nomad closes the
                    # subscription ("event dropped from buffer").
                    return
                batch = [e for e in store.events if e["_seq"] > cursor]
                if not batch:
                    store.cond.wait(sim.heartbeat)
                    batch = [e for e in store.events if e["_seq"] > cursor]
                    if not batch and not store.shutting_down:
                        lines = [b"{}\n"]
                    else:
                        lines = []
                else:
                    lines = []
                if batch:
                    cursor = batch[-1]["_seq"]
                    groups = []
                    for e in batch:
                        if not wanted(e, topics, ns):
                            continue
                        if not sim.allowed(req, e["Namespace"], "read-job"):
                            continue
                        pub = {k: v for k, v in e.items() if k != "_seq"}
                        if groups and groups[-1]["Index"] == e["Index"]:
                            groups[-1]["Events"].append(pub)
                        else:
                            groups.append({"Index": e["Index"], "Events": [pub]})
                    lines = [json.dumps(g, sort_keys=True,
                                        separators=(",", ":")).encode() + b"\n"
                             for g in groups]
                if store.shutting_down:
                    return
            for line in lines:
                out.write(line)
    return Stream(run)
