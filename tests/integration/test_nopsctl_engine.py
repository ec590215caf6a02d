#!/usr/bin/env python3
"""The engine through nopsctl only: the real daemon (sandbox on) against
nomadsim (manual clock) and a file:// git remote.

The approval flow end to end: jobs and deployments list what waits, show
renders the redacted diff and the hooks, a stale --hash is refused with
409, approve carries the deployment through its pre hook, register and
health; a change with a canary waits for promote; reject and retry; pause
(a reason is required) and resume; deploy-now of a job whose policy is
none; orphans once a deployed job leaves git; errors once a file fails to
parse; -j prints JSON everywhere; usage errors exit 2.  Prints "ok - NAME"
or "not ok - NAME" per case.  Starts and stops only its own processes.
"""
import json
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import enginelib  # noqa: E402
import gitlib  # noqa: E402
from gitlib import Env, Remote, ok, wait_until  # noqa: E402
from enginelib import Sim  # noqa: E402

NOPSCTL = os.environ["NOPSCTL"]

# The secret in the job's env must never reach nopsctl's output.
SECRET = "hunter2-do-not-show"


def web_hcl(image, canary=0):
    return """job "web" {
  datacenters = ["dc1"]
  meta {
    nops_managed  = "true"
    nops_policy   = "approval"
    nops_pre_hook = "web-migrate"
  }
  group "web" {
    count = 1
    update {
      max_parallel      = 1
      canary            = %d
      auto_promote      = false
      min_healthy_time  = "1s"
      healthy_deadline  = "1m"
      progress_deadline = "2m"
    }
    task "app" {
      driver = "docker"
      config {
        image = "%s"
      }
      env {
        DB_PASSWORD = "%s"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
""" % (canary, image, SECRET)


HOOK_HCL = """job "web-migrate" {
  type        = "batch"
  datacenters = ["dc1"]
  meta {
    nops_role = "hook"
  }
  parameterized {}
  group "m" {
    task "migrate" {
      driver = "docker"
      config {
        image = "migrate:1"
      }
    }
  }
}
"""


def simple_hcl(name, policy):
    return """job "%s" {
  datacenters = ["dc1"]
  meta {
    nops_managed = "true"
    nops_policy  = "%s"
  }
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = "%s:1"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
""" % (name, policy, name)


BROKEN_HCL = 'job "broken" {\n  group "g" {\n'


class Daemon(enginelib.Nops):
    """nopsd reading the remote's nomad/ directory every second, drift
    checked every 2 s, against the simulator."""

    def __init__(self, env, sim, remote):
        super().__init__(env, sim, [{"name": "infra",
                                     "url": "file://" + remote.bare,
                                     "branch": "main", "path": "nomad",
                                     "poll": "1s"}])

    def write_conf(self, repos):
        gitlib.Nopsd.write_conf(self, repos)
        with open(self.conf, "a") as f:
            f.write("drift-interval 2s\nengine-interval 1s\n"
                    "apply-timeout 10m\n")
            f.write('nomad {\n\taddress "%s"\n\tnamespaces { "default" }'
                    "\n}\n" % self.sim.url)

    def ctl(self, *args, page=None):
        env = dict(os.environ)
        if page is not None:
            env["NOPSCTL_TEST_PAGE"] = str(page)
        r = subprocess.run([NOPSCTL, "-s", self.sock] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env, timeout=60)
        return r.returncode, r.stdout, r.stderr

    def j(self, *args, page=None):
        """-j output, parsed; raises if it is not JSON or rc != 0."""
        rc, out, err = self.ctl("-j", *args, page=page)
        if rc != 0:
            raise RuntimeError("nopsctl -j %s: %d: %s" %
                               (" ".join(args), rc, err))
        return json.loads(out)


def job_row(d, job):
    for j in d.j("jobs")["items"]:
        if j["namespace"] == "default" and j["id"] == job:
            return j
    return None


def job_state(d, job):
    j = job_row(d, job)
    return j and j["state"]


def line_with(text, *words):
    for line in text.splitlines():
        if all(w in line.split() for w in words):
            return line
    return None


def drive(sim, d, dep_id, states, timeout=40):
    """Advance the sim clock until deployment dep_id is in states."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        st = d.j("show", str(dep_id))["state"]
        if st in states:
            return st
        sim.advance(1)
        time.sleep(0.3)
    return d.j("show", str(dep_id))["state"]


def deployments_of(d, job):
    return d.j("deployments", "-J", job)["items"]


def main():
    env = Env()
    sim = Sim(env)
    remote = Remote(env, "infra")
    remote.commit({"nomad/web.nomad.hcl": web_hcl("nginx:1.25"),
                   "nomad/web-migrate.nomad.hcl": HOOK_HCL,
                   "nomad/api.nomad.hcl": simple_hcl("api", "approval"),
                   "nomad/cache.nomad.hcl": simple_hcl("cache", "none")},
                  "first jobs")
    d = Daemon(env, sim, remote)

    # --- jobs: what git holds and where each job stands ---
    ready = wait_until(lambda: job_state(d, "web") == "pending_approval"
                       and job_state(d, "api") == "pending_approval"
                       and job_state(d, "cache") == "drift", 30)
    ok("jobs -j: web and api pending_approval, cache drift", ready,
       d.ctl("jobs")[1] + d.logtext()[-3000:])
    if not ready:
        return
    rc, out, err = d.ctl("jobs")
    web_line = line_with(out, "default", "web")
    ok("jobs: a table row shows web managed, approval, pending_approval",
       rc == 0 and web_line is not None and
       "managed" in web_line.split() and "approval" in web_line.split()
       and "pending_approval" in web_line.split()
       and out.splitlines()[0].split()[:2] == ["NAMESPACE", "JOB"], out)
    hook_line = line_with(out, "web-migrate")
    ok("jobs: the hook is listed as a hook",
       hook_line is not None and "hook" in hook_line.split(), out)
    all_paged = d.j("jobs", page=1)["items"]
    ok("jobs: pages of one item followed through the cursor",
       sorted(j["id"] for j in all_paged) ==
       ["api", "cache", "web", "web-migrate"], all_paged)
    rc, out, err = d.ctl("jobs", "default/web")
    ok("jobs NS/JOB: detail with hooks and diff",
       rc == 0 and re.search(r"^state +pending_approval$", out, re.M)
       and "web-migrate" in out and 'Job: "web"' in out, out + err)
    rc, out, err = d.ctl("jobs", "web")
    ok("jobs JOB: namespace default by default",
       rc == 0 and re.search(r"^namespace +default$", out, re.M), out + err)
    rc, out, err = d.ctl("jobs", "default/nosuch")
    ok("jobs: an unknown job exits 1 with not_found (404)",
       rc == 1 and "not_found (404)" in err, (rc, out, err))

    # --- deployments: the list, filters, paging ---
    web_dep = deployments_of(d, "web")
    api_dep = deployments_of(d, "api")
    ok("deployments -J: one pending deployment each for web and api",
       len(web_dep) == 1 and len(api_dep) == 1 and
       web_dep[0]["state"] == "pending_approval" and
       api_dep[0]["state"] == "pending_approval", (web_dep, api_dep))
    web_id, api_id = web_dep[0]["id"], api_dep[0]["id"]
    rc, out, err = d.ctl("deployments")
    row = line_with(out, str(web_id), "default/web")
    ok("deployments: a table row with id, job, state and policy",
       rc == 0 and row is not None and "pending_approval" in row.split()
       and "approval" in row.split() and
       out.splitlines()[0].split()[:3] == ["ID", "JOB", "STATE"], out)
    every = d.j("deployments", page=1)
    ok("deployments: every page fetched (pages of one)",
       sorted(x["id"] for x in every["items"]) == sorted([web_id, api_id])
       and every["next"] is None, every)
    one = d.j("deployments", "-l", "1", page=1)
    ok("deployments -l 1: one item, and a cursor to go on",
       len(one["items"]) == 1 and one["next"] is not None, one)
    filt = d.j("deployments", "-s", "pending_approval", "-n", "default",
               "-J", "api")
    ok("deployments -s -n -J: the filters reach the API",
       [x["id"] for x in filt["items"]] == [api_id], filt)
    rc, out, err = d.ctl("deployments", "--namespace", "nosuch")
    ok("deployments --namespace: none there", rc == 0 and
       "no deployments" in out, (rc, out, err))
    rc, out, err = d.ctl("deployments", "-s", "bogus")
    ok("deployments -s bogus: 400 bad_request, exit 1",
       rc == 1 and "bad_request (400)" in err, (rc, out, err))

    # --- show: the redacted diff, hooks and events ---
    rc, out, err = d.ctl("show", str(web_id))
    ok("show: fields", rc == 0 and
       re.search(r"^job +default/web$", out, re.M) and
       re.search(r"^state +pending_approval$", out, re.M) and
       re.search(r"^actions +approve, reject$", out, re.M), out + err)
    ok("show: the diff as a tree (job, group, task, object, fields)",
       re.search(r'^  \+ +Job: "web"$', out, re.M) and
       re.search(r'^  \+ +Task Group: "web" \(1 create\)$', out, re.M) and
       re.search(r'^    \+ +Task: "app" \(forces create\)$', out, re.M) and
       re.search(r'^      \+ +Config \{$', out, re.M) and
       re.search(r'^        \+ +image: +"nginx:1\.25"$', out, re.M), out)
    ok("show: secrets are redacted, never shown",
       SECRET not in out and
       re.search(r'Env\[DB_PASSWORD\]: +"<redacted>"', out), out)
    hook = line_with(out, "pre", "web-migrate")
    ok("show: the frozen pre hook, not run yet",
       hook is not None and re.search(r"web-migrate-[0-9a-f]{8}", hook)
       and "not run" in hook, out)
    ok("show: events", line_with(out, "system", "deployment.create")
       is not None, out)
    shown = d.j("show", str(web_id))
    ok("show -j: the API's deployment object",
       shown["id"] == web_id and shown["spec_hash"] and
       shown["hooks"][0]["hook"] == "web-migrate" and
       SECRET not in json.dumps(shown), shown)
    rc, out, err = d.ctl("show", "999999")
    ok("show: an unknown deployment exits 1 with not_found (404)",
       rc == 1 and "not_found (404)" in err, (rc, out, err))

    # --- approve: a stale hash is refused, then the flow runs ---
    rc, out, err = d.ctl("approve", str(web_id), "--hash", "0" * 64)
    ok("approve --hash stale: exit 1, conflict (409)",
       rc == 1 and re.search(r"^nopsctl: conflict \(409\): ", err, re.M)
       and d.j("show", str(web_id))["state"] == "pending_approval",
       (rc, out, err))
    rc, out, err = d.ctl("-j", "approve", str(web_id), "--hash", "0" * 64)
    ok("approve -j stale: the error answer as JSON",
       rc == 1 and json.loads(out)["error"]["code"] == "conflict",
       (rc, out, err))
    rc, out, err = d.ctl("approve", str(web_id))
    after = d.j("show", str(web_id))
    ok("approve: the deployment moves on, approved by root",
       rc == 0 and "approved" in out and
       after["state"] in ("pre_hooks", "registering", "waiting_health",
                          "completed") and after["approved_by"] == "root",
       (rc, out, err, after["state"]))
    st = drive(sim, d, web_id, ("completed", "failed"))
    ok("approve: the sim clock carries it to completed", st == "completed",
       st + "\n" + d.logtext()[-3000:])
    rc, out, err = d.ctl("show", str(web_id))
    hook = line_with(out, "pre", "web-migrate")
    ok("show: the hook's run succeeded with exit 0",
       hook is not None and "succeeded" in hook.split() and
       "0" in hook.split() and "child:" in out, out)
    rc, out, err = d.ctl("approve", str(web_id))
    ok("approve a completed deployment: exit 1, conflict (409)",
       rc == 1 and "conflict (409)" in err, (rc, out, err))
    ok("jobs: web in sync", wait_until(
        lambda: job_state(d, "web") == "in_sync", 15), job_row(d, "web"))

    # --- a change with a canary: Edited diff, approve --hash, promote ---
    remote.commit({"nomad/web.nomad.hcl": web_hcl("nginx:1.26", canary=1)},
                  "web 1.26 with a canary")
    d.ctl("fetch", "infra")
    new = wait_until(lambda: [x for x in deployments_of(d, "web")
                              if x["state"] == "pending_approval"], 20)
    ok("a new commit makes a new deployment pending approval", new,
       deployments_of(d, "web"))
    if new:
        web2 = new[0]["id"]
        rc, out, err = d.ctl("show", str(web2))
        ok("show: an edited field as old => new",
           re.search(r'^        \+/- +image: +"nginx:1\.25" => '
                     r'"nginx:1\.26"$', out, re.M), out)
        rc, out, err = d.ctl("promote", str(web2))
        ok("promote before it waits for promotion: exit 1, 409",
           rc == 1 and "conflict (409)" in err, (rc, out, err))
        rc, out, err = d.ctl("approve", str(web2), "--hash",
                             new[0]["spec_hash"])
        ok("approve --hash with the current hash", rc == 0, (rc, out, err))
        st = drive(sim, d, web2, ("awaiting_promotion", "completed",
                                  "failed"))
        ok("the canary waits for promotion", st == "awaiting_promotion", st)
        # While canaries wait, the engine polls the Nomad deployment every
        # engine-interval; stall one poll so that the promote surely lands
        # while it is in flight.  A person's promote must still be taken.
        sim.call("POST", "/_sim/faults", {"Method": "GET", "Match": "exact",
                                          "Path": "/v1/job/web/deployment",
                                          "Count": 1, "Action": "stall",
                                          "Seconds": 3})
        time.sleep(1.5)
        rc, out, err = d.ctl("promote", str(web2))
        pending = sim.call("GET", "/_sim/faults")[1]
        ok("promote while nops polls the Nomad deployment: queued, not "
           "409 busy", rc == 0 and "queued" in out,
           (rc, out, err, "faults not yet taken: %s" % pending))
        if rc != 0:
            wait_until(lambda: d.ctl("promote", str(web2))[0] == 0, 15)
        st = drive(sim, d, web2, ("completed", "failed"))
        ok("promote: the deployment completes", st == "completed",
           st + "\n" + d.logtext()[-3000:])

    # --- reject, then retry ---
    # Text is normalised where it enters (nopsd.8, BOUNDARY): a control
    # character in the reason is dropped, the rest is kept.
    rc, out, err = d.ctl("reject", str(api_id), "--reason",
                         "not today \x1b[31mred")
    shown = d.j("show", str(api_id))
    ok("reject --reason: rejected", rc == 0 and "rejected" in out and
       shown["state"] == "rejected" and
       any(e["action"] == "deployment.reject" for e in shown["events"]),
       (rc, out, err, shown))
    ok("reject: the reason is kept, without its control character",
       shown["reason"] == "not today [31mred" and
       "\x1b" not in json.dumps(shown, ensure_ascii=False) and
       all("\x1b" not in (e.get("detail") or "") for e in shown["events"]),
       shown["reason"])
    rc, out, err = d.ctl("reject", str(api_id), "--reason", "x")
    ok("reject again: exit 1, conflict (409)",
       rc == 1 and "conflict (409)" in err, (rc, out, err))
    ok("jobs: api blocked by the rejection", wait_until(
        lambda: job_state(d, "api") == "blocked", 15), job_row(d, "api"))
    rc, out, err = d.ctl("-j", "retry", str(api_id))
    ok("retry -j: queued (202)", rc == 0 and json.loads(out)["queued"]
       is True, (rc, out, err))
    retried = wait_until(lambda: [x for x in deployments_of(d, "api")
                                  if x["retry_of"] == api_id], 15)
    ok("retry: a new deployment that retries the rejected one",
       retried and retried[0]["state"] == "pending_approval", retried)
    rc, out, err = d.ctl("retry", str(api_id))
    ok("retry while another waits: exit 1, conflict (409)",
       rc == 1 and "conflict (409)" in err, (rc, out, err))

    # --- pause and resume ---
    rc, out, err = d.ctl("pause", "default/web")
    ok("pause without --reason: usage error, exit 2",
       rc == 2 and "usage:" in err, (rc, out, err))
    rc, out, err = d.ctl("pause", "default/web", "--reason", "")
    ok("pause with an empty reason: exit 2", rc == 2, (rc, out, err))
    rc, out, err = d.ctl("pause", "web", "--reason", "change freeze")
    detail = d.j("jobs", "default/web")
    ok("pause JOB --reason: paused in namespace default",
       rc == 0 and "default/web paused" in out and
       detail["paused"] is not None and
       detail["paused"]["reason"] == "change freeze", (rc, out, err,
                                                        detail))
    rc, out, err = d.ctl("jobs", "default/web")
    ok("jobs NS/JOB: shows who paused and why",
       re.search(r"^pause reason +change freeze$", out, re.M) and
       re.search(r"^paused by +root$", out, re.M), out)
    rc, out, err = d.ctl("deploy-now", "default/web")
    ok("deploy-now of a paused job: exit 1, conflict (409)",
       rc == 1 and "conflict (409)" in err, (rc, out, err))
    rc, out, err = d.ctl("resume", "default/web")
    ok("resume: resumed", rc == 0 and "default/web resumed" in out and
       d.j("jobs", "default/web")["paused"] is None, (rc, out, err))
    rc, out, err = d.ctl("resume", "default/web")
    ok("resume when not paused: exit 1, conflict (409)",
       rc == 1 and "conflict (409)" in err, (rc, out, err))

    # --- deploy-now of a job whose policy is none ---
    ok("cache (policy none) has drift and no deployment",
       job_state(d, "cache") == "drift" and
       deployments_of(d, "cache") == [], job_row(d, "cache"))
    rc, out, err = d.ctl("deploy-now", "cache")
    ok("deploy-now: queued", rc == 0 and
       "deploy-now of default/cache queued" in out, (rc, out, err))
    cache = wait_until(lambda: deployments_of(d, "cache"), 15)
    ok("deploy-now: a deployment starts without approval",
       cache and cache[0]["state"] != "pending_approval", cache)
    if cache:
        st = drive(sim, d, cache[0]["id"], ("completed", "failed"))
        ok("deploy-now: it completes", st == "completed", st)
    rc, out, err = d.ctl("deploy-now", "default/nosuch")
    ok("deploy-now of an unknown job: exit 1, not_found (404)",
       rc == 1 and "not_found (404)" in err, (rc, out, err))

    # --- orphans: a deployed job gone from git ---
    rc, out, err = d.ctl("orphans")
    ok("orphans: none yet", rc == 0 and "no orphans" in out, (rc, out, err))
    remote.commit({"nomad/cache.nomad.hcl": None}, "drop cache")
    d.ctl("fetch", "infra")
    orph = wait_until(lambda: [o for o in d.j("orphans")["items"]
                               if o["id"] == "cache"], 20)
    ok("orphans -j: cache is listed, with its last deployment",
       orph and orph[0]["namespace"] == "default" and cache and
       orph[0]["last_deployment"] == cache[0]["id"], orph)
    rc, out, err = d.ctl("orphans")
    ok("orphans: a table row", rc == 0 and
       line_with(out, "default", "cache") is not None, out)

    # --- errors: a file that fails to parse ---
    rc, out, err = d.ctl("errors")
    ok("errors: none yet", rc == 0 and "no file errors" in out,
       (rc, out, err))
    remote.commit({"nomad/broken.nomad.hcl": BROKEN_HCL}, "broken")
    d.ctl("fetch", "infra")
    errs = wait_until(lambda: d.j("errors")["items"], 20)
    ok("errors -j: the broken file with its repository and error",
       errs and errs[0]["repository"] == "infra" and
       errs[0]["path"] == "nomad/broken.nomad.hcl" and errs[0]["error"],
       errs)
    rc, out, err = d.ctl("errors")
    ok("errors: a table row and the error under it",
       rc == 0 and line_with(out, "infra", "nomad/broken.nomad.hcl")
       and len(out.splitlines()) >= 3, out)
    rc, out, err = d.ctl("orphans")
    ok("orphans: said to be stale while a file fails to parse",
       rc == 0 and "may be stale" in out, out)

    # --- -j everywhere, usage errors ---
    bad = []
    for args in (["jobs"], ["jobs", "default/web"], ["deployments"],
                 ["show", str(web_id)], ["orphans"], ["errors"]):
        rc, out, err = d.ctl("-j", *args)
        try:
            json.loads(out)
        except ValueError:
            bad.append(args)
        if rc != 0:
            bad.append(args)
    ok("-j: every read prints JSON", not bad, bad)
    usage = []
    for args in (["show"], ["show", "abc"], ["show", "1", "2"],
                 ["approve"], ["approve", "1", "--reason", "x"],
                 ["deployments", "-l", "0"], ["deployments", "extra"],
                 ["pause", "default/"], ["nosuch"], ["orphans", "x"],
                 ["reject", "1", "--reason"]):
        rc, out, err = d.ctl(*args)
        if rc != 2:
            usage.append((args, rc))
    ok("usage errors exit 2", not usage, usage)


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # a crash is one failure, not silence
        ok("the test ran to its end", False, repr(e))
    sys.exit(1 if gitlib.failures else 0)
