"""HTTP plumbing: request parsing, encoding, errors, ACLs, blocking, faults.

One ThreadingHTTPServer; each request takes the store lock for its whole
handler, then writes the response outside it.  Streams (events, followed
logs) use chunked transfer encoding like Go's net/http.
"""

import email.utils
import json
import os
import random
import re
import signal
import socket
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import acl, admin, api, jobs, lifecycle, runner, scheduler
from .errors import CodedError
from .gojson import encode
from .lookup import uses_exec
from .request import Resp, Stream, parse_wait
from .state import Clock, Store


class Req:
    def __init__(self, sim, method, path, query, headers, body):
        self.sim, self.method, self.path = sim, method, path
        self.query, self.headers, self.body = query, headers, body
        self.next_token = None
        self._token = None
        self._resolved = False

    def q(self, name, default=None):
        v = self.query.get(name)
        return v[0] if v else default

    def qall(self, name):
        return self.query.get(name, [])

    @property
    def ns(self):
        return self.q("namespace") or "default"

    @property
    def token(self):
        if not self._resolved:
            self._resolved = True
            if self.sim.acl_enabled:
                self._token = acl.resolve(self.sim.store, self.secret())
        return self._token

    def secret(self):
        s = self.headers.get("X-Nomad-Token")
        if s:
            return s.strip()
        auth = self.headers.get("Authorization") or ""
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return ""

    def json(self):
        if not self.body:
            raise CodedError(400, "Request body is empty")
        try:
            return json.loads(self.body)
        except ValueError as e:
            raise CodedError(400, _go_json_error(self.body, e))


def _go_json_error(body, err):
    pos = getattr(err, "pos", None)
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if pos is None or pos >= len(text):
        return "unexpected EOF"
    return "invalid character %r looking for beginning of value" % text[pos]


class Sim:
    """The simulator: the store plus server-wide settings."""

    def __init__(self, store, acl_enabled=False, heartbeat=30.0, state_dir=None):
        self.store = store
        self.acl_enabled = acl_enabled
        self.heartbeat = heartbeat
        self.state_dir = state_dir
        self.httpd = None
        self.stopping = threading.Event()

    # ACL helpers used by the handlers.
    def check(self, req, ns, *caps):
        acl.check(self.store, self.acl_enabled, req.token, ns, *caps)

    def allowed(self, req, ns, *caps):
        try:
            self.check(req, ns, *caps)
            return True
        except acl.Denied:
            return False

    def is_management(self, req):
        return acl.is_management(self.store, self.acl_enabled, req.token)

    def blocking(self, req, fn, query_meta=False):
        """Run fn() until its index passes ?index= or ?wait= runs out."""
        min_index, wait = parse_wait(req)
        # Nomad adds up to wait/16 of jitter so that many waiters spread
        # out (nomad/rpc.go blockingRPC, lib.RandomStagger).
        deadline = time.monotonic() + wait + random.uniform(0, wait / 16)
        while True:
            body, index = fn()
            left = deadline - time.monotonic()
            if (min_index == 0 or index > min_index or left <= 0
                    or self.store.shutting_down):
                break
            self.store.cond.wait(min(left, 1.0))
        index = max(index or 0, 1)
        if isinstance(body, CodedError):
            body.index = index
            raise body
        if query_meta:
            body = dict(body, Index=index, LastContact=0, KnownLeader=True,
                        NextToken=req.next_token or "")
        return Resp(body, index=index, read=True)

    def take_fault(self, method, path):
        with self.store.lock:
            for f in self.store.faults:
                if f["Method"] not in ("*", method):
                    continue
                m, p = f["Match"], f["Path"]
                if ((m == "exact" and path != p) or (m == "prefix" and not path.startswith(p))
                        or (m == "regex" and not re.search(p, path))):
                    continue
                f["Count"] -= 1
                if f["Count"] <= 0:
                    self.store.faults.remove(f)
                f["Hits"] = f.get("Hits", 0) + 1
                return dict(f)
        return None


class ChunkedWriter:
    def __init__(self, wfile):
        self.wfile = wfile

    def write(self, data):
        if not data:
            return
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def close(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class Handler(BaseHTTPRequestHandler):
    # Headers and body go out in two sends: without TCP_NODELAY, Nagle
    # holds the second until the client's delayed ACK (~40 ms a request).
    disable_nagle_algorithm = True

    protocol_version = "HTTP/1.1"
    server_version = "nomadsim"

    def log_message(self, fmt, *args):
        if os.environ.get("NOMADSIM_DEBUG"):
            super().log_message(fmt, *args)

    def _body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(size)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _handle(self):
        sim = self.server.sim
        u = urllib.parse.urlsplit(self.path)
        path = urllib.parse.unquote(u.path)
        query = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        body = self._body()
        if path.startswith("/_sim/"):
            return self._send_resp(admin.handle(sim, self.command, path, query, body))
        fault = sim.take_fault(self.command, path)
        if fault is not None:
            if fault["Action"] == "drop":
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            if fault["Action"] == "stall":
                time.sleep(float(fault.get("Seconds") or 0))
            elif fault["Action"] == "status":
                return self._send_error(int(fault.get("Status") or 500),
                                        fault.get("Body") or "injected fault")
        req = Req(sim, self.command, path, query, self.headers, body)
        store = sim.store
        with store.lock:
            try:
                resp = api.route(sim, req)
            except CodedError as e:
                return self._send_error(e.code, e.msg, getattr(e, "index", None))
            except acl.Denied as e:
                return self._send_error(403, e.msg)
            if isinstance(resp, Resp) and resp.raw is None:
                payload = encode(resp.body, pretty=_pretty(query))
            else:
                payload = None
        if isinstance(resp, Stream):
            return self._send_stream(resp, path)
        if resp.raw is not None:
            payload = resp.raw
        self.send_response_only(resp.code)
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.send_header("Content-Type", resp.content_type)
        if resp.index is not None:
            self.send_header("X-Nomad-Index", str(resp.index))
        if resp.read:
            self.send_header("X-Nomad-Knownleader", "true")
            self.send_header("X-Nomad-Lastcontact", "0")
            if req.next_token:
                self.send_header("X-Nomad-Nexttoken", req.next_token)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_resp(self, res):
        code, obj = res
        if code >= 400:
            return self._send_error(code, obj)
        payload = encode(obj)
        self.send_response_only(code)
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _send_error(self, code, msg, index=None):
        data = msg.encode() if isinstance(msg, str) else msg
        self.send_response_only(code)
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        if index is not None:
            self.send_header("X-Nomad-Index", str(index))
            self.send_header("X-Nomad-Knownleader", "true")
            self.send_header("X-Nomad-Lastcontact", "0")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _send_stream(self, stream, path):
        self.send_response_only(200)
        self.send_header("Date", email.utils.formatdate(usegmt=True))
        self.send_header("Content-Type", getattr(stream, "content_type",
                                                 "application/json"))
        if path == "/v1/event/stream":
            self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        w = ChunkedWriter(self.wfile)
        try:
            stream.fn(w)
            w.close()
        except (BrokenPipeError, ConnectionResetError, OSError):
            self.close_connection = True

    def _guard(self):
        try:
            self._handle()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except Exception as e:  # an internal bug answers 500, like Nomad's wrap
            import traceback
            traceback.print_exc()
            try:
                self._send_error(500, "nomadsim internal error: %r" % e)
            except OSError:
                pass

    do_GET = do_PUT = do_POST = do_DELETE = do_PATCH = _guard


def _pretty(query):
    v = query.get("pretty")
    return v is not None and v[0] != "0"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128


def make_sim(port=0, bind="127.0.0.1", acl_enabled=False, state_dir=None,
             speed=1.0, start_ns=None, nodes=3, heartbeat=30.0, exec_tasks=True,
             bootstrap_token=None):
    clock = Clock(start_ns, speed)
    store = Store(clock)
    # The eval broker and the deployment watcher's job endpoint (evals.py,
    # deployments.py): the modules below the scheduler reach it this way.
    store.scheduler = scheduler.evaluate
    store.revert_job = lambda st, job: jobs.register(st, job, revert=True)
    sim = Sim(store, acl_enabled, heartbeat, state_dir)
    loaded = False
    with store.lock:
        if state_dir:
            os.makedirs(state_dir, exist_ok=True)
            loaded = store.load(state_dir)
        if not loaded:
            admin.upsert_ns(store, "default", "Default shared namespace")
            if acl_enabled:
                acl.make_token(store, "Bootstrap Token", "management",
                               secret=bootstrap_token)
        if not store.nodes:
            admin.make_nodes(store, nodes)
    runner.setup(os.path.join(state_dir, "allocs") if state_dir else None,
                 exec_tasks)
    if loaded:
        _recover(store)
    httpd = Server((bind, port), Handler)
    httpd.sim = sim
    sim.httpd = httpd
    return sim


def _recover(store):
    """After a restart, real processes are gone: their tasks are lost."""
    with store.lock:
        for a in store.allocs.values():
            if a["ClientStatus"] == "pending":
                aid = a["ID"]
                store.after(0, lambda aid=aid: lifecycle.start_alloc(store, aid))
            elif a["ClientStatus"] == "running" and any(
                    uses_exec(t) for t in
                    _group(a)["Tasks"]):
                lifecycle.fail_alloc(store, a, 1, "task lost across a nomadsim restart")


def _group(a):
    return next(g for g in a["Job"]["TaskGroups"] if g["Name"] == a["TaskGroup"])


def ticker(sim):
    """Fire virtual-clock timers and persist state."""
    store = sim.store
    last_saved = -1
    next_save = time.monotonic() + 1.0
    while not sim.stopping.is_set():
        with store.lock:
            store.run_due()
            if sim.state_dir and time.monotonic() >= next_save and store.index != last_saved:
                store.save(sim.state_dir)
                last_saved = store.index
        if time.monotonic() >= next_save:
            next_save = time.monotonic() + 1.0
        sim.stopping.wait(0.02)


def serve(sim):
    """Serve until SIGTERM/SIGINT, then stop tasks and save state."""
    t = threading.Thread(target=ticker, args=(sim,), daemon=True, name="ticker")
    t.start()

    def stop(*_):
        if sim.stopping.is_set():
            return
        sim.stopping.set()
        with sim.store.lock:
            sim.store.shutting_down = True
            sim.store.cond.notify_all()
        threading.Thread(target=sim.httpd.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    try:
        sim.httpd.serve_forever(poll_interval=0.1)
    finally:
        stop()
        # No timer may start a task once the task directories go away.
        t.join(timeout=2)
        runner.shutdown()
        if sim.state_dir:
            with sim.store.lock:
                sim.store.save(sim.state_dir)
        else:
            runner.cleanup()
        sim.httpd.server_close()
