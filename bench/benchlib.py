"""What the benchmarks share: job files, nomadsim with TCP_NODELAY, a
cluster that already runs them, waiting for detection to settle, and the
memory of each nopsd process.

Built on tests/integration (enginelib, gitlib).  Benchmarks print what
they measured; they assert nothing about time.
"""
import http.client
import json
import os
import subprocess
import sys
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
import enginelib  # noqa: E402
from enginelib import Sim  # noqa: E402,F401


def job_id(r, j):
    return "r%02d-j%04d" % (r, j)


def job_file(r, j, image="nginx:1.26"):
    return """job "%s" {
  datacenters = ["dc1"]
  meta {
    nops_managed = "true"
    nops_policy  = "none"
    owner        = "team-%d"
  }
  group "app" {
    count = 1
    network {
      port "http" { to = 8080 }
    }
    task "server" {
      driver = "docker"
      config {
        image = "%s"
        ports = ["http"]
      }
      env {
        LOG_LEVEL = "info"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
""" % (job_id(r, j), r, image)


class Conn:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, url, timeout=60):
        u = urllib.parse.urlsplit(url)
        self.c = http.client.HTTPConnection(u.hostname, u.port,
                                            timeout=timeout)

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json"} if data else {}
        self.c.request(method, path, body=data, headers=headers)
        r = self.c.getresponse()
        return r.status, r.read()


class FastSim(Sim):
    """nomadsim with TCP_NODELAY on its connections.  Stock nomadsim
    writes a response's headers and body in two sends, so on a keep-alive
    connection Nagle's algorithm holds the body until the client's delayed
    ACK (about 40 ms a request); that would measure TCP timers, not nops
    or the simulator."""

    def __init__(self, env):
        self.env = env
        code = ("import sys; sys.path.insert(0, %r); "
                "from nomadsim import cli, server; "
                "server.Handler.disable_nagle_algorithm = True; "
                "sys.argv = ['nomadsim'] + sys.argv[1:]; "
                "sys.exit(cli.main())" % os.path.dirname(
                    os.path.dirname(enginelib.NOMADSIM)))
        self.log = env.path("nomadsim.log")
        self.proc = env.start([sys.executable, "-c", code, "--port", "0",
                               "--speed", "0"],
                              stdout=subprocess.PIPE,
                              stderr=open(self.log, "w"), text=True)
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            raise RuntimeError("nomadsim did not start: " + line)
        self.url = line.split()[-1].strip()


def register_all(sim, nrepos, nfiles):
    """Register job_file(r, j) of every repository in nomadsim, as git has
    it, so that nothing drifts.  Nomad parses one file per repository;
    the others differ from it only in their ID and Name."""
    c = Conn(sim.url)
    for r in range(nrepos):
        st, body = c.call("POST", "/v1/jobs/parse", {
            "JobHCL": job_file(r, 0), "Canonicalize": True})
        if st != 200:
            sys.exit("parse: %s %s" % (st, body[:200]))
        proto = json.loads(body)
        for j in range(nfiles):
            job = dict(proto, ID=job_id(r, j), Name=job_id(r, j))
            st, body = c.call("POST", "/v1/jobs", {"Job": job})
            if st != 200:
                sys.exit("register %s: %s %s" % (job_id(r, j), st,
                                                 body[:200]))


def settle(nops, step=0.5):
    """Wait for the cycles the first snapshots queued to end."""
    last = -1
    while True:
        e = nops.engine()
        if not e["detecting"] and e["cycles"] == last:
            return e
        last = e["cycles"]
        time.sleep(step)


def wait_cycle_after(nops, cycles, timeout=600):
    """Wait for a cycle after the count cycles to end."""
    if not enginelib.wait_until(
            lambda: (lambda e: e["cycles"] > cycles and not e["detecting"])(
                nops.engine()), timeout, step=0.1):
        sys.exit("no detection cycle ended in %d s" % timeout)
    return nops.engine()


def mem(pid):
    """VmHWM (peak RSS), VmRSS and Pss (shared pages divided among the
    processes that map them) of pid, in KiB."""
    out = {}
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmHWM", "VmRSS"):
                    out[k] = int(v.split()[0])
        with open("/proc/%d/smaps_rollup" % pid) as f:
            for line in f:
                k, _, v = line.partition(":")
                if k == "Pss":
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def nopsd_procs(nops):
    """[(name, pid)] of the master and its workers."""
    st = nops.status()
    return [("master", st["pid"])] + [(w["name"], w["pid"])
                                       for w in st["workers"]]
