#!/usr/bin/env python3
"""The Nomad client end to end: the real daemon (sandbox on) against
nomadsim, through the test-only route POST /api/v1/debug/nomad, which turns
a JSON description into one master-side nomad_* call and answers with its
result.  Needs a build with --enable-test-hooks.

Covers parse (+ the cache), plan with diff, check-and-set register and
Nomad's exact CAS errors, reads, promote, idempotent dispatch, logs, stop,
retries of reads and not of writes, timeouts, dropped connections, the
token, the https rule, reload, and a nomadworker killed with requests in
flight.  Prints "ok - NAME" / "not ok - NAME" per case.
"""

import json
import select
import os
import pwd
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "4b6f0c8e-3d2a-4e51-9a7b-1c2d3e4f5a6b"

sys.path.insert(0, HERE)
import gitlib  # noqa: E402
import enginelib  # noqa: E402

gitlib.need_test_hooks("the Nomad client through POST /api/v1/debug/nomad")

# The one harness (gitlib, enginelib): its directory, the simulator and the
# daemon this test starts, stopped by pid when it ends.
env = gitlib.Env()
T = env.dir
SIM = None      # enginelib.Sim
NOPS = None     # Client, below


def ok(name):
    gitlib.ok(name, True)


def notok(name, why=""):
    gitlib.ok(name, False, why)


def check(name, cond, why=""):
    return gitlib.ok(name, cond, why)


def api(method, path, body=None):
    return NOPS.curl(method, path, None if body is None else json.dumps(body))


def nomad(op, **kw):
    """One call through the master's Nomad client; its result as a dict."""
    kw["op"] = op
    status, j = api("POST", "/api/v1/debug/nomad", kw)
    if status != 200:
        return {"status": -1, "error": "API %d: %s" % (status, j),
                "json": None, "attempts": 0, "cached": False}
    return j


def sim(method, path, body=None):
    return SIM.call(method, path, body)


def fault(**f):
    st, j = sim("POST", "/_sim/faults", f)
    assert st == 200, j
    return j["ID"]


def faults():
    return sim("GET", "/_sim/faults")[1]


def clear_faults():
    sim("DELETE", "/_sim/faults")


def status_json():
    return api("GET", "/api/v1/status")[1]


def worker(name):
    for w in status_json()["workers"]:
        if w["name"] == name:
            return w
    return None


def wait_for(seconds, fn):
    return gitlib.wait_until(fn, seconds)


def write_token(content):
    path = os.path.join(T, "nomad.token")
    with open(path, "w") as f:
        f.write(content)
    os.chmod(path, 0o600)
    # Changed while nopsd runs: the master (_nopsd) reads it at a reload.
    os.chown(path, pwd.getpwnam("_nopsd").pw_uid, -1)



def tls_proxy(backend_port):
    """A TLS front for nomadsim with a fresh self-signed certificate for
    127.0.0.1: returns (port, CA file)."""
    crt, key = os.path.join(T, "tls.crt"), os.path.join(T, "tls.key")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048",
                    "-nodes", "-keyout", key, "-out", crt, "-days", "1",
                    "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"],
                   check=True, capture_output=True)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(crt, key)
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(16)

    def pipe(a, b):
        try:
            while True:
                r, _, _ = select.select([a, b], [], [], 60)
                if not r:
                    break
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (b if s is a else a).sendall(data)
        except OSError:
            pass
        finally:
            a.close()
            b.close()

    def serve():
        while True:
            c, _ = ls.accept()
            try:
                t = ctx.wrap_socket(c, server_side=True)
            except (OSError, ssl.SSLError):
                c.close()
                continue
            b = socket.create_connection(("127.0.0.1", backend_port))
            threading.Thread(target=pipe, args=(t, b), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1], crt


class Client(enginelib.Nops):
    """nopsd whose nomad block reaches the simulator with the token file,
    an address and CA file the test changes (configure, then reload)."""

    def __init__(self, address, ca=None):
        self.address, self.ca = address, ca
        super().__init__(env, None, [], apply_timeout="10m")

    def write_conf(self, repos):
        gitlib.Nopsd.write_conf(self, repos)
        with open(self.conf, "a") as f:
            f.write("drift-interval 5m\nengine-interval 5s\n"
                    "apply-timeout %s\n" % self.apply_timeout)
            f.write('nomad {\n\taddress "%s"\n\ttoken file "%s"\n'
                    % (self.address, os.path.join(T, "nomad.token")))
            if self.ca:
                f.write('\tca file "%s"\n' % self.ca)
            f.write('\tnamespaces { "default" "apps" }\n}\n')


def write_conf(address, ca=None):
    NOPS.address, NOPS.ca = address, ca
    NOPS.write_conf([])


def reload():
    st, j = api("POST", "/api/v1/reload", {})
    return st == 200


WEB_HCL = """
variable "image" {
  type = string
}

job "web" {
  namespace   = "apps"
  datacenters = ["dc1"]
  meta {
    nops_managed = "true"
  }
  group "web" {
    count = 2
    update {
      max_parallel      = 1
      canary            = 1
      min_healthy_time  = "1s"
      healthy_deadline  = "1m"
      progress_deadline = "2m"
      auto_promote      = false
    }
    task "app" {
      driver = "docker"
      config {
        image = var.image
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
"""

REPORT_HCL = """
job "report" {
  type        = "batch"
  datacenters = ["dc1"]
  parameterized {
    payload       = "optional"
    meta_optional = ["customer"]
  }
  group "g" {
    task "gen" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello-$NOMAD_META_customer; echo oops >&2"]
      }
    }
  }
}
"""


def main():
    global SIM, SIM_PORT, NOPS
    # nomadsim with ACLs on, at wall speed: every call must carry the token.
    SIM = enginelib.Sim(env, acl=True, token=TOKEN, speed=1)
    SIM_PORT = urllib.parse.urlsplit(SIM.url).port
    sim("POST", "/_sim/namespace", {"Name": "apps"})
    sim("POST", "/_sim/config", {"start_delay": 0.2, "batch_duration": 0.2})

    write_token(TOKEN + "\n")
    address = "http://127.0.0.1:%d" % SIM_PORT
    NOPS = Client(address)
    up = wait_for(10, lambda: worker("nomadworker")["state"] == "running")
    if not check("daemon with a nomad block starts; nomadworker runs", up):
        sys.stdout.write("".join("# " + ln for ln in
                                 NOPS.logtext().splitlines(True)))
        return

    run_cases(address, NOPS.proc)


def run_cases(address, daemon):
    # --- parse, and its cache
    r = nomad("parse", namespace="apps", hcl=WEB_HCL,
              vars='image = "nginx:1.25"\n')
    job = r.get("json") or {}
    tasks = [t for g in job.get("TaskGroups") or [] for t in g.get("Tasks") or []]
    check("parse with a variables file: 200, the job with the variable's value",
          r["status"] == 200 and job.get("ID") == "web" and tasks and
          tasks[0]["Config"]["image"] == "nginx:1.25" and not r["cached"], r)
    check("parse: canonicalized (Namespace, Priority, Type set)",
          job.get("Namespace") == "apps" and job.get("Priority") == 50 and
          job.get("Type") == "service", job.get("Priority"))

    fid = fault(Method="*", Path="/v1/jobs/parse", Match="exact",
                Action="status", Status=500, Count=1)
    r2 = nomad("parse", namespace="apps", hcl=WEB_HCL,
               vars='image = "nginx:1.25"\n')
    check("parse again, same file and variables: answered from the cache",
          r2["status"] == 200 and r2["cached"] and r2["json"] == job, r2)
    check("the cached parse sent nothing to Nomad (the armed fault is untouched)",
          any(f["ID"] == fid for f in faults()), faults())
    r3 = nomad("parse", namespace="apps", hcl=WEB_HCL,
               vars='image = "nginx:1.26"\n')
    job2 = r3.get("json") or {}
    check("other variables: not cached; the injected 500 is retried (a read)",
          r3["status"] == 200 and not r3["cached"] and r3["attempts"] == 2 and
          not any(f["ID"] == fid for f in faults()), r3)

    bad = 'job "broken" {\n  group "g" {\n'
    r = nomad("parse", hcl=bad)
    check("a parse error passes through: 400 and Nomad's text",
          r["status"] == 400 and r["error"].startswith("Failed to parse job")
          and r["json"] is None, r)
    r = nomad("parse", hcl=bad)
    check("the parse error is cached too", r["status"] == 400 and r["cached"], r)

    # --- plan and check-and-set register
    r = nomad("plan", namespace="apps", id="web", job=job)
    diff = (r.get("json") or {}).get("Diff") or {}
    # Nomad answers a plan with the job's JobModifyIndex as its index.
    check("plan of a new job: 200, diff Added, JobModifyIndex and index 0",
          r["status"] == 200 and diff.get("Type") == "Added" and
          r["json"]["JobModifyIndex"] == 0 and r["index"] == 0, r)

    r = nomad("register", namespace="apps", id="web", job=job, enforce=True,
              index=0)
    jmi1 = (r.get("json") or {}).get("JobModifyIndex", 0)
    check("CAS register of a new job (index 0): 200 with its JobModifyIndex",
          r["status"] == 200 and jmi1 > 0 and r["index"] > 0 and
          r["attempts"] == 1, r)

    r = nomad("register", namespace="apps", id="web", job=job, enforce=True,
              index=0)
    check("CAS register with 0 over an existing job: Nomad's exact error",
          r["status"] == 500 and r["error"] ==
          "Enforcing job modify index 0: job already exists" and
          r["cas"]["kind"] == 2, r)

    other = dict(job, ID="web-missing", Name="web-missing")
    r = nomad("register", namespace="apps", id="web-missing", job=other,
              enforce=True, index=7)
    check("CAS register with an index of a missing job: Nomad's exact error",
          r["status"] == 500 and r["error"] ==
          "Enforcing job modify index 7: job does not exist" and
          r["cas"]["kind"] == 3, r)

    # Someone changes the job behind nops' back.
    changed = json.loads(json.dumps(job))
    changed["Meta"]["changed_by"] = "alice"
    st, j = sim("POST", "/_sim/job/register", {"Job": changed})
    jmi2 = j.get("JobModifyIndex", 0) if isinstance(j, dict) else 0
    r = nomad("register", namespace="apps", id="web", job=job2, enforce=True,
              index=jmi1)
    want = ("Enforcing job modify index %d: job exists with conflicting job "
            "modify index: %d" % (jmi1, jmi2))
    check("CAS conflict: the exact text passed through, and parsed",
          r["status"] == 500 and r["error"] == want and
          r["cas"] == {"kind": 1, "sent": jmi1, "stored": jmi2} and
          r["attempts"] == 1, "%r vs %r" % (r.get("error"), want))

    r = nomad("plan", namespace="apps", id="web", job=job2)
    pj = r.get("json") or {}
    check("plan of a changed image: diff Edited, the live JobModifyIndex",
          r["status"] == 200 and (pj.get("Diff") or {}).get("Type") == "Edited"
          and "nginx:1.26" in json.dumps(pj["Diff"]) and
          pj.get("JobModifyIndex") == jmi2 and r["index"] == jmi2, r)

    # --- reads
    r = nomad("job-read", namespace="apps", id="web")
    check("read job: 200, the job, X-Nomad-Index",
          r["status"] == 200 and r["json"]["ID"] == "web" and r["index"] > 0, r)
    r = nomad("job-read", namespace="apps", id="nope")
    check("read a missing job: 404 'job not found' passed through",
          r["status"] == 404 and r["error"] == "job not found", r)
    r = nomad("job-allocations", namespace="apps", id="web")
    check("read allocations: a list of stubs",
          r["status"] == 200 and isinstance(r["json"], list) and
          len(r["json"]) >= 1 and "ClientStatus" in r["json"][0], r)
    r = nomad("job-deployment", namespace="apps", id="nope")
    check("latest deployment of a job without one: 200 and JSON null",
          r["status"] == 200 and r["ok"] and r["json"] is None, r)

    # --- canary deployment: promote refused while unhealthy, then done
    sim("POST", "/_sim/health/hold", {"Namespace": "apps", "JobID": "web",
                                      "Hold": True})
    r = nomad("register", namespace="apps", id="web", job=job2, enforce=True,
              index=jmi2)
    check("CAS register with the live index: 200", r["status"] == 200, r)

    def canary_dep():
        d = nomad("job-deployment", namespace="apps", id="web")["json"]
        if d and d["JobVersion"] >= 2 and d["TaskGroups"]["web"]["PlacedCanaries"]:
            return d
        return None
    dep = wait_for(15, canary_dep)
    check("read the latest deployment: canaries placed", dep is not None, dep)
    depid = dep["ID"] if dep else "none"
    r = nomad("deployment-read", namespace="apps", id=depid)
    check("read a deployment by id: awaiting promotion",
          r["status"] == 200 and r["json"]["ID"] == depid and
          r["json"]["StatusDescription"] ==
          "Deployment is running but requires manual promotion", r)
    r = nomad("deployment-promote", namespace="apps", id=depid)
    check("promote before the canary is healthy: Nomad's error, not retried",
          r["status"] == 500 and
          'Task group "web" has 0/1 healthy allocations' in (r["error"] or "")
          and r["attempts"] == 1, r)
    sim("POST", "/_sim/health/hold", {"Namespace": "apps", "JobID": "web",
                                      "Hold": False})
    wait_for(10, lambda: nomad("deployment-read", namespace="apps",
                               id=depid)["json"]["TaskGroups"]["web"]
             ["HealthyAllocs"] >= 1)
    r = nomad("deployment-promote", namespace="apps", id=depid)
    check("promote a healthy canary: 200, an evaluation",
          r["status"] == 200 and r["json"]["EvalID"] != "", r)
    r = nomad("deployment-read", namespace="apps", id=depid)
    check("the deployment is promoted",
          r["status"] == 200 and r["json"]["TaskGroups"]["web"]["Promoted"], r)

    # --- dispatch with an idempotency token, the child, its logs
    r = nomad("parse", hcl=REPORT_HCL)
    rjob = r["json"]
    r = nomad("register", namespace="default", id="report", job=rjob,
              enforce=True, index=0)
    check("register a parameterized job: 200, no evaluation",
          r["status"] == 200 and r["json"]["EvalID"] == "", r)
    r1 = nomad("dispatch", namespace="default", id="report",
               payload='{"date":"2024-06-01"}', meta={"customer": "acme"},
               idempotency_token="d1:pre:1")
    child = (r1.get("json") or {}).get("DispatchedJobID", "")
    check("dispatch: a child report/dispatch-...",
          r1["status"] == 200 and child.startswith("report/dispatch-") and
          r1["json"]["EvalID"] != "" and r1["attempts"] == 1, r1)
    r2 = nomad("dispatch", namespace="default", id="report",
               payload='{"date":"2024-06-01"}', meta={"customer": "acme"},
               idempotency_token="d1:pre:1")
    check("dispatch again with the same token: the same child, no new eval",
          r2["status"] == 200 and r2["json"]["DispatchedJobID"] == child and
          r2["json"]["EvalID"] == "", r2)

    r = nomad("job-read", namespace="default", id=child)
    check("read the child (its id contains '/'): 200, its parent",
          r["status"] == 200 and r["json"]["ID"] == child and
          r["json"]["ParentID"] == "report", r)

    def child_done():
        a = nomad("job-allocations", namespace="default", id=child)["json"]
        if a and a[0]["ClientStatus"] in ("complete", "failed"):
            return a[0]
        return None
    alloc = wait_for(20, child_done)
    check("the child's allocation completes",
          alloc is not None and alloc["ClientStatus"] == "complete", alloc)
    aid = alloc["ID"] if alloc else "none"
    r = nomad("alloc-logs", namespace="default", id=aid, task="gen")
    check("stdout of the child, plain text",
          r["status"] == 200 and r["body"] == "hello-acme\n" and
          r["json"] is None, r)
    r = nomad("alloc-logs", namespace="default", id=aid, task="gen",
              stderr=True)
    check("stderr of the child", r["status"] == 200 and r["body"] == "oops\n", r)
    r = nomad("alloc-logs", namespace="default", id=aid, task="gen", tail=3)
    check("the last bytes of stdout", r["status"] == 200 and r["body"] == "me\n", r)
    r = nomad("alloc-logs", namespace="default", id=aid, task="nope")
    check("logs of an unknown task: Nomad's 400 text",
          r["status"] == 400 and r["error"] == 'unknown task name "nope"', r)

    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:pre:2")
    r = nomad("jobs-list", namespace="default", prefix="report/dispatch-")
    ids = sorted(j["ID"] for j in r.get("json") or [])
    check("list jobs by prefix: both children",
          r["status"] == 200 and len(ids) == 2 and child in ids, ids)

    # --- retries: reads yes, writes never
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="status",
          Status=500, Count=1)
    r = nomad("job-read", namespace="default", id="report")
    check("a 500 on a read is retried and the read succeeds",
          r["status"] == 200 and r["attempts"] == 2, r)
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="status",
          Status=503, Body="No cluster leader", Count=5)
    r = nomad("job-read", namespace="default", id="report")
    check("a read failing every time: 3 attempts, Nomad's error passed on",
          r["status"] == 503 and r["error"] == "No cluster leader" and
          r["attempts"] == 3, r)
    clear_faults()
    fid = fault(Method="*", Path="/v1/job/report/dispatch", Match="exact",
                Action="status", Status=500, Count=2)
    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:pre:3")
    left = [f for f in faults() if f["ID"] == fid]
    check("a 500 on a write (dispatch) is not retried",
          r["status"] == 500 and r["error"] == "injected fault" and
          r["attempts"] == 1 and left and left[0]["Count"] == 1, (r, left))
    clear_faults()

    # --- stalls and dropped connections
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="stall",
          Seconds=2, Count=1)
    r = nomad("job-read", namespace="default", id="report", timeout_ms=700)
    check("a stalled read times out and the retry succeeds",
          r["status"] == 200 and r["attempts"] == 2, r)
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="stall",
          Seconds=3, Count=3)
    t0 = time.time()
    r = nomad("job-read", namespace="default", id="report", timeout_ms=700)
    check("a read stalled every time: a clear timeout error",
          r["status"] == 0 and re.search(r"timed out", r["error"] or "", re.I)
          and "3 attempts" in r["error"] and time.time() - t0 < 8, r)
    clear_faults()
    fault(Method="POST", Path="/v1/job/report/dispatch", Match="exact",
          Action="stall", Seconds=2, Count=1)
    r = nomad("dispatch", namespace="default", id="report", timeout_ms=700,
              idempotency_token="d1:pre:4")
    check("a stalled write times out once, not retried",
          r["status"] == 0 and r["attempts"] == 1 and
          re.search(r"timed out", r["error"] or "", re.I), r)
    clear_faults()
    # Nomad carried the timed-out dispatch out late: the same token finds
    # that child instead of starting a second one.
    time.sleep(1.6)
    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:pre:4")
    check("after a timed-out dispatch, the same token returns its child",
          r["status"] == 200 and r["json"]["EvalID"] == "", r)
    # Two drops: on a kept-alive connection libcurl itself tries once more
    # (harmless for a read); either way our retry has to take over.
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="drop",
          Count=2)
    r = nomad("job-read", namespace="default", id="report")
    check("a dropped connection on a read is retried",
          r["status"] == 200 and r["attempts"] >= 2 and faults() == [], r)
    # The read above left a kept-alive connection: libcurl would re-send
    # on it by itself if a write were allowed to use it.
    fault(Method="POST", Path="/v1/job/report/dispatch", Match="exact",
          Action="drop", Count=2)
    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:pre:5")
    left = faults()
    check("a dropped connection on a write: an error, sent once",
          r["status"] == 0 and r["attempts"] == 1 and r["error"] and
          len(left) == 1 and left[0]["Count"] == 1, (r, left))
    clear_faults()
    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:pre:5")
    check("the dropped dispatch started nothing (the token finds no child)",
          r["status"] == 200 and r["json"]["EvalID"] != "", r)

    # --- a large answer crosses the channel in chunks
    big = json.loads(json.dumps(rjob))
    big["ID"] = big["Name"] = "big"
    big["Meta"] = {"blob": "x" * (3 * 1024 * 1024)}
    sim("POST", "/_sim/job/register", {"Job": big})
    r = nomad("job-read", namespace="default", id="big", brief=True)
    check("a 3 MiB answer arrives whole (chunked) and parses",
          r["status"] == 200 and r["json_bytes"] > 3 * 1024 * 1024, r)

    # --- namespaces, stop
    r = nomad("job-read", namespace="elsewhere", id="web")
    check("a namespace outside the config is refused by the nomadworker",
          r["status"] == 0 and "not one of the configured namespaces" in
          (r["error"] or ""), r)
    r = nomad("job-stop", namespace="apps", id="web")
    check("stop a job: 200, then it reads as stopped",
          r["status"] == 200 and r["attempts"] == 1 and
          nomad("job-read", namespace="apps", id="web")["json"]["Stop"] is True, r)
    r = nomad("job-stop", namespace="apps", id="web", purge=True)
    check("stop with purge: the job is gone",
          r["status"] == 200 and
          nomad("job-read", namespace="apps", id="web")["status"] == 404, r)

    # --- the token; reload re-sends the configuration
    write_token("not-the-token\n")
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("after reload with a wrong token: Nomad's 403 passed through",
          r["status"] == 403 and r["error"] == "ACL token not found", r)
    write_token(TOKEN + "\n")
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("reload with the right token: the token is sent again",
          r["status"] == 200, r)

    write_conf(address.replace("http://", "https://"))
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("https:// to a plain HTTP server fails clearly (TLS error)",
          r["status"] == 0 and r["attempts"] == 1 and
          re.search(r"SSL|TLS", r["error"] or ""), r)
    # A name, not an address: libcurl's resolver thread runs (reading
    # /etc/hosts) inside the sandbox; the TLS error shows it got through.
    name = socket.gethostname()
    try:
        resolved = socket.gethostbyname(name)
    except OSError:
        resolved = ""
    if resolved.startswith("127."):
        pid = worker("nomadworker")["pid"]
        write_conf("https://%s:%d" % (name, SIM_PORT))
        reload()
        r = nomad("job-read", namespace="default", id="report")
        check("a host name is resolved by the sandboxed resolver thread",
              r["status"] == 0 and re.search(r"SSL|TLS", r["error"] or "")
              and worker("nomadworker")["pid"] == pid, r)
    else:
        ok("a host name is resolved by the sandboxed resolver thread "
           "# SKIP %s does not resolve to loopback" % name)
    # TLS for real: the configured CA, held in memory by the worker.
    tport, ca = tls_proxy(SIM_PORT)
    write_conf("https://127.0.0.1:%d" % tport, ca)
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("https:// with the configured CA (given from memory): works",
          r["status"] == 200 and r["json"]["ID"] == "report", r)
    r = nomad("dispatch", namespace="default", id="report",
              idempotency_token="d1:tls:1")
    check("a write over https: works", r["status"] == 200, r)
    write_conf("https://127.0.0.1:%d" % tport)
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("https:// without that CA: the certificate is refused",
          r["status"] == 0 and r["attempts"] == 1 and
          re.search(r"certificate", r["error"] or "", re.I), r)
    write_conf(address)
    reload()
    r = nomad("job-read", namespace="default", id="report")
    check("back to http:// on loopback: works", r["status"] == 200, r)

    # --- the nomadworker dies with a request in flight
    fault(Method="GET", Path="/v1/job/report", Match="exact", Action="stall",
          Seconds=4, Count=1)
    res = {}

    def inflight():
        res["r"] = nomad("job-read", namespace="default", id="report",
                         timeout_ms=10000)
    th = threading.Thread(target=inflight)
    th.start()
    time.sleep(0.8)
    old = worker("nomadworker")["pid"]
    os.kill(old, signal.SIGKILL)
    th.join(30)
    r = res.get("r") or {}
    check("nomadworker killed -9: the request in flight fails at once",
          r.get("status") == 0 and "ended before answering" in
          (r.get("error") or "") and "signal 9" in (r.get("error") or ""), r)
    check("no request is left outstanding", r.get("outstanding") == 0, r)
    back = wait_for(15, lambda: worker("nomadworker")["pid"] not in (0, old)
                    and worker("nomadworker")["state"] == "running")
    check("the nomadworker is restarted", back, worker("nomadworker"))
    r = wait_for(10, lambda: (lambda x: x if x["status"] == 200 else None)(
        nomad("job-read", namespace="default", id="report")))
    check("the next request works (configuration re-sent)", r is not None, r)
    clear_faults()

    check("the master is still running", daemon.poll() is None)
    with open(os.path.join(T, "nopsd.log")) as f:
        text = f.read()
    check("the token never appears in the log", TOKEN not in text)
    check("no protocol violation in the log",
          "protocol violation" not in text and "signal 31" not in text,
          [ln for ln in text.splitlines() if "violation" in ln or "31" in ln][:3])

    # An answer to a request never made: the master kills the worker.
    env.stop(daemon)
    NOPS.restart(hook="nomadworker:nomad-stray-answer")
    w = wait_for(15, lambda: (lambda x: x if x["restarts"] >= 1 and
                              x["state"] == "running" else None)(
        worker("nomadworker")))
    check("a stray IMSG_NOMAD_RESPONSE is a protocol violation; restarted",
          w is not None and "protocol violation: IMSG_NOMAD_RESPONSE for "
          "request 2147483647, which is not outstanding" in
          (w.get("last_exit") or ""), w)
    r = wait_for(10, lambda: (lambda x: x if x["status"] == 200 else None)(
        nomad("job-read", namespace="default", id="report")))
    check("after the violation, calls work again", r is not None, r)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:
        import traceback
        traceback.print_exc()
        notok("test aborted", repr(e))
    finally:
        if gitlib.failures:
            try:
                with open(os.path.join(T, "nopsd.log")) as f:
                    lines = f.readlines()[-60:]
                sys.stdout.write("".join("# " + ln for ln in lines))
            except OSError:
                pass
        env.cleanup()
    sys.exit(1 if gitlib.failures else 0)
