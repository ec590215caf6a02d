#!/usr/bin/env python3
"""GET /metrics of the real daemon with nomadsim and deployments in
several states (pending approval, failed, awaiting promotion, completed),
a paused job, a blocked job and a file that does not parse.  promtool
check metrics must pass (its exit 1, a parse error, and 3, lint
problems, both fail); the values must match what the API says; the
metrics token rule and, without a token, the ACL's read are checked.
"""
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import enginelib  # noqa: E402
import gitlib  # noqa: E402
import opslib  # noqa: E402
from enginelib import job_hcl, hook_hcl  # noqa: E402
from opslib import ok, wait_until, http, metric  # noqa: E402

TOKEN = "mtok-5b2f8e1c-metrics-test-token"
CTYPE = "text/plain; version=0.0.4; charset=utf-8"
UPDATE = "    update {\n      canary = 1\n      max_parallel = 1\n    }\n"

env = gitlib.Env()
sim = enginelib.Sim(env)
remote = gitlib.Remote(env, "infra")
remote.commit({
    # pending approval
    "nomad/web.nomad.hcl": job_hcl("web", policy="approval"),
    # failed at once (a hook that does not exist), then blocked
    "nomad/lost.nomad.hcl": job_hcl("lost", policy="auto",
                                    pre="nonexistent"),
    # completes, then waits for canary promotion after a change
    "nomad/canary.nomad.hcl": job_hcl("canary", policy="auto"),
    # drifts with policy none; paused below
    "nomad/idle.nomad.hcl": job_hcl("idle", policy="none"),
    # does not parse
    "nomad/broken.nomad.hcl": 'job "broken" {\n',
}, "initial")
token_path = opslib.secret_file(env, "metrics.token", TOKEN + "\n")


class Nops(enginelib.Nops):
    metrics_token = True

    def write_conf(self, repos):
        super().write_conf(repos)
        with open(self.conf, "a") as f:
            if self.metrics_token:
                f.write('metrics token file "%s"\n' % token_path)
            # For the ACL case: anonymous clients may read "web" only.
            f.write('policy "viewer" {\n\tnamespace "web" { read }\n}\n')
            f.write('anonymous policy "viewer"\n')


n = Nops(env, sim, [{"name": "infra", "url": "file://" + remote.bare,
                     "path": "nomad", "poll": "1h"}])
port = opslib.tcp_port(n.conf)
ok("the daemon starts with a metrics token", n.wait_commit(
    "infra", remote.head()), n.logtext()[-2000:])


def scrape_local():
    st, text = n.curl("GET", "/metrics")
    return st, text if isinstance(text, str) else str(text)


def samples():
    st, text = scrape_local()
    return opslib.parse_metrics(text) if st == 200 else {}


# --- bring deployments into their states
pending = wait_until(lambda: n.job_state("web") == "pending_approval" and
                     n.active("web"), 20)
failed = wait_until(lambda: [d for d in n.deployments("lost")
                             if d["state"] == "failed"], 20)
first = wait_until(lambda: n.active("canary"), 20)
if first:
    n.wait_deploy_state(first, "completed", 30, sim_step=30)
n.push_and_fetch(remote, {"nomad/canary.nomad.hcl": job_hcl(
    "canary", policy="auto", image="nginx:2", group_extra=UPDATE)})
second = wait_until(lambda: n.active("canary") not in (None, first) and
                    n.active("canary"), 20)
promo = second and n.wait_deploy_state(second, "awaiting_promotion", 30,
                                       sim_step=10)
st, _ = n.job_action("idle", "pause", {"reason": "metrics test"})
n.wait_cycle()
wait_until(lambda: n.job_state("lost") == "blocked", 15)
ok("setup: pending approval, failed, completed, awaiting promotion",
   pending and failed and promo and st == 200,
   (pending, failed, first, second, st, n.deployments()))

# --- promtool
st, text = scrape_local()
rc, out = opslib.promtool(text)
ok("scrape: 200 over the control socket", st == 200, text[:300])
ok("promtool check metrics passes (not 1: parse, not 3: lint)", rc == 0,
   "exit %d\n%s" % (rc, out))
try:
    s = opslib.parse_metrics(text)
    ok("the text parses as samples", len(s) > 20)
except ValueError as e:
    s = {}
    ok("the text parses as samples", False, e)
bad = subprocess.run(["promtool", "check", "metrics"],
                     input="# TYPE x_total counter\nx_total{ 1\n",
                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                     text=True).returncode
ok("promtool does fail on a broken text (the check can fail)", bad != 0)

# --- the values match the API
status = n.status()
ok("nops_build_info carries the version", metric(
    s, "nops_build_info", version=status["version"]) == 1.0)
want = {}
for d in n.deployments():
    want[d["state"]] = want.get(d["state"], 0) + 1
states = ["pending_approval", "pre_hooks", "registering", "waiting_health",
          "awaiting_promotion", "post_hooks", "completed", "failed",
          "rejected", "superseded"]
got = {x: metric(s, "nops_deployments", state=x) for x in states}
ok("nops_deployments by state matches the API, every state present",
   all(got[x] == float(want.get(x, 0)) for x in states), (got, want))
ok("there are deployments in four states",
   all(want.get(x, 0) >= 1 for x in ("pending_approval", "failed",
                                     "completed", "awaiting_promotion")),
   want)


def ts(iso):
    return datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(
        tzinfo=timezone.utc).timestamp()


now = time.time()
dp = n.deployment(pending)
age = metric(s, "nops_oldest_pending_approval_age_seconds")
ok("oldest pending approval: its age, from created_at",
   age is not None and abs(age - (now - ts(dp["created_at"]))) <= 5,
   (age, dp["created_at"], now))
dc = n.deployment(second)
age = metric(s, "nops_oldest_awaiting_promotion_age_seconds")
ok("oldest awaiting promotion: its age, from when it entered the state",
   age is not None and abs(age - (now - ts(dc["updated_at"]))) <= 5,
   (age, dc["updated_at"], now))
st, errs = n.api("GET", "/api/v1/files/errors")
ok("nops_unparsed_files matches /api/v1/files/errors", metric(
    s, "nops_unparsed_files") == len(errs["items"]) == 1, errs)
st, orph = n.api("GET", "/api/v1/orphans")
ok("nops_orphan_jobs matches /api/v1/orphans", metric(
    s, "nops_orphan_jobs") == len(orph["items"]), orph)
jobs = n.jobs()
mism = []
for (ns, jid), j in jobs.items():
    if j["role"] != "managed":
        continue
    for name, want_v in (("nops_job_drift", 1.0 if j["drift"] else 0.0),
                         ("nops_job_blocked", 1.0 if j["state"] ==
                          "blocked" else 0.0)):
        if metric(s, name, namespace=ns, job=jid) != want_v:
            mism.append((name, ns, jid, want_v))
    paused = n.job(jid, ns)["paused"] is not None
    if metric(s, "nops_job_paused", namespace=ns, job=jid) != \
            (1.0 if paused else 0.0):
        mism.append(("nops_job_paused", ns, jid, paused))
ok("per-job drift, paused and blocked match the API", mism == [], mism)
ok("the paused and the blocked job are 1", metric(
    s, "nops_job_paused", namespace="default", job="idle") == 1.0 and
   metric(s, "nops_job_blocked", namespace="default", job="lost") == 1.0)
repo = n.repo("infra")
ok("repository: fetch errors and last success match the API",
   metric(s, "nops_repository_fetch_errors_total",
          repository="infra") == repo["errors"] and
   metric(s, "nops_repository_last_fetch_success_timestamp_seconds",
          repository="infra") == ts(repo["checked_at"]), repo)
eng = n.engine()
ok("loops: last detection and apply timestamps match the API",
   metric(s, "nops_detection_last_success_timestamp_seconds") >=
   ts(eng["last_detection"]) - 0 and
   metric(s, "nops_apply_last_success_timestamp_seconds") > 0, eng)
# The plan skip's counters: the last cycle's as the API says them (no
# cycle ran between the two reads: the engine's cycle count is the same),
# and sums that hold at least the last cycle's.
for _ in range(20):
    s = samples()
    eng2 = n.engine()
    if eng2["cycles"] == metric(s, "nops_detection_cycles_total") and \
            not eng2["detecting"]:
        break
    time.sleep(0.2)
ok("detection: the last cycle's requests, planned and unchanged jobs and "
   "full re-plan match the API, and the sums hold them",
   eng2["cycles"] == metric(s, "nops_detection_cycles_total") and
   metric(s, "nops_detection_last_nomad_requests") ==
   eng2["last_detection_requests"] and
   metric(s, "nops_detection_last_jobs_planned") ==
   eng2["last_detection_planned"] and
   metric(s, "nops_detection_last_jobs_unchanged") ==
   eng2["last_detection_unchanged"] and
   metric(s, "nops_detection_last_full") ==
   (1.0 if eng2["last_detection_full"] else 0.0) and
   metric(s, "nops_detection_nomad_requests_total") >=
   eng2["last_detection_requests"] > 0 and
   metric(s, "nops_detection_jobs_planned_total") >=
   eng2["last_detection_planned"] and
   metric(s, "nops_detection_jobs_unchanged_total") >=
   eng2["last_detection_unchanged"] and
   metric(s, "nops_detection_full_cycles_total") >= 1 and
   metric(s, "nops_detection_last_focused") ==
   (1.0 if eng2["last_detection_focused"] else 0.0) and
   metric(s, "nops_detection_last_jobs_decided") ==
   eng2["last_detection_decided"] and
   metric(s, "nops_detection_focused_cycles_total") >=
   (1.0 if eng2["last_detection_focused"] else 0.0) and
   metric(s, "nops_detection_focused_cycles_total") <=
   metric(s, "nops_detection_cycles_total"),
   (eng2, [(k, v) for k, v in s.items() if k[0].startswith(
       "nops_detection")]))

# --- worker restarts
gw = n.worker("gitworker")
os.kill(gw["pid"], signal.SIGKILL)
wait_until(lambda: n.worker("gitworker")["restarts"] == 1 and
           n.worker("gitworker")["state"] == "running", 15)
s = samples()
ok("nops_worker_restarts_total counts a killed worker",
   metric(s, "nops_worker_restarts_total", worker="gitworker") == 1.0 and
   metric(s, "nops_worker_restarts_total", worker="webworker") == 0.0, s and
   [k for k in s if k[0] == "nops_worker_restarts_total"])

# --- HTTP requests by code
before = metric(s, "nops_http_requests_total", code="404") or 0
n.api("GET", "/api/v1/no-such-thing")
s = samples()
ok("nops_http_requests_total counts answers by code",
   metric(s, "nops_http_requests_total", code="404") == before + 1 and
   metric(s, "nops_http_requests_total", code="200") > 0)

# --- the token rule
st, hdr, body = http(port, "GET", "/metrics")
ok("token: without it, 401 with WWW-Authenticate", st == 401 and
   "Bearer" in hdr.get("WWW-Authenticate", ""), (st, body[:200]))
st, _, body = http(port, "GET", "/metrics",
                   headers={"Authorization": "Bearer " + TOKEN + "x"})
ok("token: a wrong one is 401", st == 401, (st, body[:200]))
st, hdr, body = http(port, "GET", "/metrics",
                     headers={"Authorization": "Bearer " + TOKEN})
ok("token: the right one scrapes, text format 0.0.4", st == 200 and
   hdr.get("Content-Type") == CTYPE and b"nops_build_info" in body,
   (st, hdr.get("Content-Type"), body[:200]))
ok("token: the scrape with the token passes promtool",
   opslib.promtool(body.decode())[0] == 0)
ok("token: the token is in neither the log nor the database",
   opslib.grep_tree([n.log, n.db], TOKEN) == [])

# --- no token: the ACL's read, per namespace
n.metrics_token = False
n.write_conf([{"name": "infra", "url": "file://" + remote.bare,
               "path": "nomad", "poll": "1h"}])
port2 = opslib.tcp_port(n.conf)
rc = n.ctl("reload")[0]
st, _, body = http(port, "GET", "/metrics")
ok("no token: an anonymous client with read in one namespace scrapes",
   rc == 0 and st == 200, (rc, st, body[:300], n.logtext()[-1500:]))
text = body.decode(errors="replace")
ok("no token: it sees no job of a namespace it may not read",
   'job="web"' not in text and 'namespace="default"' not in text and
   "nops_deployments{" in text, text[-1500:])
st, _, body = http(port, "GET", "/metrics",
                   headers={"Authorization": "Bearer " + TOKEN})
ok("no token: the old metrics token is no credential any more",
   st == 401, (st, body[:200]))

ok("the daemon is still up", n.proc.poll() is None)
n.stop()
sim_ok = True
sys.exit(1 if gitlib.failures else 0)
