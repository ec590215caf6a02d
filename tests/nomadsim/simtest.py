"""Test helpers: start a simulator on a free port, talk HTTP to it.

Each test class starts its own nomadsim (port 0, manual clock) and stops it
by its process handle.
"""

import http.client
import json
import os
import subprocess
import sys
import time
import unittest
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))


class Sim:
    def __init__(self, *args, speed=0):
        env = dict(os.environ)
        cmd = [sys.executable, os.path.join(HERE, "nomadsim"), "--port", "0",
               "--speed", str(speed), "--heartbeat", "0.5"] + list(args)
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, env=env,
                                     cwd=HERE)
        line = self.proc.stdout.readline().decode()
        if not line.startswith("nomadsim listening on http://"):
            self.proc.kill()
            raise RuntimeError("nomadsim did not start: %r" % line)
        self.addr = line.split("http://", 1)[1].strip()
        self.host, port = self.addr.rsplit(":", 1)
        self.port = int(port)
        self.token = None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()

    def conn(self, timeout=30):
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def request(self, method, path, body=None, token=None, headers=None,
                timeout=30, raw=False):
        """-> (status, headers dict, decoded JSON or text)."""
        c = self.conn(timeout)
        h = dict(headers or {})
        tok = token if token is not None else self.token
        if tok:
            h["X-Nomad-Token"] = tok
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, str)) else json.dumps(body)
            if isinstance(data, str):
                data = data.encode()
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        payload = r.read()
        hdrs = {k.lower(): v for k, v in r.getheaders()}
        c.close()
        if raw:
            return r.status, hdrs, payload
        if hdrs.get("content-type", "").startswith("application/json") and payload:
            return r.status, hdrs, json.loads(payload)
        return r.status, hdrs, payload.decode("utf-8", "replace")

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def put(self, path, body=None, **kw):
        return self.request("PUT", path, body, **kw)

    def post(self, path, body=None, **kw):
        return self.request("POST", path, body, **kw)

    def ok(self, method, path, body=None, **kw):
        st, h, b = self.request(method, path, body, **kw)
        if st != 200:
            raise AssertionError("%s %s -> %d %r" % (method, path, st, b))
        return b

    def advance(self, seconds):
        return self.ok("POST", "/_sim/clock", {"Advance": seconds})

    def register(self, job, ns=None, **extra):
        body = dict({"Job": job}, **extra)
        path = "/v1/jobs" + ("?namespace=" + ns if ns else "")
        return self.ok("PUT", path, body)

    def allocs(self, job_id, ns="default"):
        return self.ok("GET", "/v1/job/%s/allocations?namespace=%s"
                       % (urllib.parse.quote(job_id, safe=""), ns))

    def deployment(self, job_id, ns="default"):
        return self.ok("GET", "/v1/job/%s/deployment?namespace=%s"
                       % (urllib.parse.quote(job_id, safe=""), ns))

    def wait_for(self, fn, timeout=15.0, what="condition"):
        """Poll (real time) for things real processes decide."""
        end = time.monotonic() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.monotonic() > end:
                raise AssertionError("timed out waiting for " + what)
            time.sleep(0.05)


def service_job(jid="web", count=2, image="nginx:1.25", canary=0,
                auto_promote=False, auto_revert=False, meta=None, env=None,
                max_parallel=1, progress_deadline=None, groups=None):
    upd = {"MaxParallel": max_parallel, "Canary": canary,
           "AutoPromote": auto_promote, "AutoRevert": auto_revert,
           "MinHealthyTime": 10_000_000_000, "HealthyDeadline": 300_000_000_000}
    if progress_deadline is not None:
        upd["ProgressDeadline"] = progress_deadline
    tgs = groups or [{
        "Name": "web", "Count": count, "Update": upd,
        "Tasks": [{"Name": "app", "Driver": "docker",
                   "Config": {"image": image, "ports": ["http"]},
                   "Env": env if env is not None else {"PORT": "8080"},
                   "Resources": {"CPU": 100, "MemoryMB": 128}}]}]
    return {"ID": jid, "Name": jid, "Type": "service", "Datacenters": ["dc1"],
            "Meta": meta if meta is not None else {"git_sha": "abc123"},
            "TaskGroups": tgs}


def batch_job(jid="report", command="/bin/sh", args=None, parameterized=None,
              meta=None, payload_file=None, attempts=0):
    task = {"Name": "gen", "Driver": "raw_exec",
            "Config": {"command": command, "args": args or ["-c", "echo hi"]},
            "Resources": {"CPU": 100, "MemoryMB": 64}}
    if payload_file:
        task["DispatchPayload"] = {"File": payload_file}
    job = {"ID": jid, "Name": jid, "Type": "batch", "Datacenters": ["dc1"],
           "Meta": meta,
           "TaskGroups": [{"Name": "gen", "Count": 1,
                           "RestartPolicy": {"Attempts": attempts,
                                             "Interval": 86_400_000_000_000,
                                             "Delay": 15_000_000_000,
                                             "Mode": "fail"},
                           "Tasks": [task]}]}
    if parameterized is not None:
        job["ParameterizedJob"] = parameterized
    return job


class SimTestCase(unittest.TestCase):
    """One simulator per test class, manual clock."""

    sim_args = ()

    @classmethod
    def setUpClass(cls):
        cls.sim = Sim(*cls.sim_args)

    @classmethod
    def tearDownClass(cls):
        cls.sim.stop()
