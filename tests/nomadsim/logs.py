"""GET /v1/client/fs/logs/:alloc (plain and framed) and fs/cat."""

import base64
import json
import os
import time

from . import runner
from .errors import CodedError
from .request import Resp, Stream, check_method, query_bool


def _alloc(sim, req, aid):
    if not aid:
        raise CodedError(400, "must provide a valid alloc id")
    a = sim.store.allocs.get(aid)
    if a is None:
        raise CodedError(404, 'Unknown allocation "%s"' % aid)
    sim.check(req, a["Namespace"], "read-logs", "read-fs")
    return a


def logs(sim, req, aid):
    check_method(req, "GET")
    a = _alloc(sim, req, aid)
    task = req.q("task")
    if not task:
        raise CodedError(400, "must provide task name")
    kind = req.q("type")
    if kind not in ("stdout", "stderr"):
        raise CodedError(400, "must provide log type (stdout/stderr)")
    origin = req.q("origin") or "start"
    if origin not in ("start", "end"):
        raise CodedError(400, "origin must be start or end")
    offset = 0
    if req.q("offset"):
        try:
            offset = int(req.q("offset"))
        except ValueError as e:
            raise CodedError(400, "error parsing offset: strconv.ParseInt: "
                             'parsing "%s": invalid syntax' % req.q("offset")) from e
    follow = query_bool(req, "follow")
    plain = query_bool(req, "plain")
    ts = (a["TaskStates"] or {}).get(task)
    if ts is None:
        raise CodedError(400, 'unknown task name "%s"' % task)
    if ts["StartedAt"] is None and ts["State"] == "pending":
        raise CodedError(404, 'task "%s" not started yet. No logs available' % task)
    path = runner.log_path(aid, task, kind)
    fname = "alloc/logs/%s.%s.0" % (task, kind)
    store = sim.store

    def done():
        with store.lock:
            x = store.allocs.get(aid)
            return x is None or x["TaskStates"][task]["State"] == "dead"

    def run(out):
        pos = _start(path, origin, offset)
        idle = 0.0
        while True:
            data = _read(path, pos)
            if data:
                pos += len(data)
                if plain:
                    out.write(data)
                else:
                    out.write(json.dumps({"Offset": pos, "Data": base64.b64encode(data).decode(),
                                          "File": fname}, sort_keys=True).encode())
                idle = 0.0
                continue
            if not follow or store.shutting_down:
                return
            if done() and not _read(path, pos):
                return
            time.sleep(0.05)
            idle += 0.05
            if idle >= sim.heartbeat and not plain:
                out.write(b"{}")
                idle = 0.0
    ctype = "text/plain" if plain else "application/json"
    return _stream(run, ctype)


def _stream(run, ctype):
    s = Stream(run)
    s.content_type = ctype
    return s


def _start(path, origin, offset):
    size = os.path.getsize(path) if os.path.exists(path) else 0
    if origin == "end":
        return max(0, size - offset)
    return min(offset, size) if offset else 0


def _read(path, pos, limit=64 * 1024):
    try:
        with open(path, "rb") as f:
            f.seek(pos)
            return f.read(limit)
    except FileNotFoundError:
        return b""


def cat(sim, req, aid):
    check_method(req, "GET")
    a = _alloc(sim, req, aid)
    rel = (req.q("path") or "/").lstrip("/")
    base = os.path.realpath(runner.alloc_dir(a["ID"]))
    full = os.path.realpath(os.path.join(base, rel))
    if not full.startswith(base + os.sep) or not os.path.isfile(full):
        raise CodedError(404, "file does not exist")
    with open(full, "rb") as f:
        data = f.read()
    return Resp(None, raw=data, content_type="text/plain", read=True,
                    index=sim.store.index)
