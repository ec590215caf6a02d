"""What an operator meets (issue 12): the engine's behaviour when Nomad
reverts, scales or fails a call mid-apply, deploy-now, and what nops shows
while it waits.  Driven through the API and nopsctl, Nomad through the
simulator's admin API (/_sim/)."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, job_hcl, hook_hcl, wait_until  # noqa
import gitlib  # noqa: E402


def ok(name, cond, detail=""):
    """gitlib.ok with the detail cut short: a deployment is long."""
    return gitlib.ok(name, cond, str(detail)[-1500:])


def complete(nops, did, timeout=30):
    return nops.wait_deploy_state(did, ("completed", "failed"), timeout,
                                  sim_step=30)


def later_deployments(nops, jid, did):
    return [x for x in nops.deployments(jid) if x["id"] > did]


def next_active(nops, jid, prev):
    return wait_until(lambda: nops.active(jid) not in (None, prev) and
                      nops.active(jid), 15)


def case_auto_revert():
    """A Nomad deployment that fails and is auto-reverted fails the nops
    deployment, and nops does not deploy the same spec again."""
    update = ("    update {\n      max_parallel = 1\n"
              "      auto_revert = true\n    }\n")
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=2,
                                       group_extra=update)})
    did = wait_until(lambda: nops.active("web"), 15)
    complete(nops, did)
    ok("auto_revert: the first version deploys",
       nops.deployment(did)["state"] == "completed", nops.deployment(did))
    # From now on every new allocation crashes at start (a bad image).
    st, r = sim.call("POST", "/_sim/job/break", {"JobID": "web",
                                                 "ExitCode": 1})
    ok("auto_revert: the simulator breaks new allocations", st == 200,
       (st, r))
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=2, image="nginx:broken",
        group_extra=update)}, "a bad image")
    did2 = next_active(nops, "web", did)
    nops.wait_deploy_state(did2, "waiting_health", 15)
    # The new allocation crashes; Nomad fails the deployment at its
    # progress deadline and rolls back to the stable version.
    nops.wait_deploy_state(did2, ("completed", "failed"), 40, sim_step=60)
    d = nops.deployment(did2)
    ok("auto_revert: a deployment Nomad failed and reverted ends failed",
       d["state"] == "failed", (d["state"], d["reason"]))
    reason = d["reason"] or ""
    ok("auto_revert: the reason says Nomad failed and rolled back",
       "rolling back" in reason or "revert" in reason, reason)
    ok("auto_revert: the reason names what was unhealthy",
       "app" in reason and "exit code 1" in reason, reason)
    nops.wait_cycle()
    nops.wait_cycle()
    ok("auto_revert: the same spec is not deployed again",
       later_deployments(nops, "web", did2) == [],
       later_deployments(nops, "web", did2))
    ok("auto_revert: the job is blocked until git changes",
       nops.job_state("web") == "blocked", nops.job("web"))
    vs = sim.versions("web")
    ok("auto_revert: nops registered nothing after the revert",
       len(vs) == 3, [(v["Version"], v["Stable"]) for v in vs])
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=2, image="nginx:1.27",
        group_extra=update)}, "a good image")
    did3 = next_active(nops, "web", did2)
    ok("auto_revert: a new commit deploys again", did3)
    env.cleanup()


def case_manual_health():
    """health_check = "manual" and nobody sets health: the deployment
    fails at Nomad's progress deadline, and is not deployed again."""
    manual = ('    update {\n      max_parallel = 1\n'
              '      health_check = "manual"\n'
              '      progress_deadline = "2m"\n'
              '      auto_revert = true\n    }\n')
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1)})
    did = wait_until(lambda: nops.active("web"), 15)
    complete(nops, did)
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:2",
        group_extra=manual)}, "manual health")
    did2 = next_active(nops, "web", did)
    nops.wait_deploy_state(did2, "waiting_health", 15)
    st = nops.wait_deploy_state(did2, ("completed", "failed"), 40,
                                sim_step=20)
    d = nops.deployment(did2)
    ok("manual health: nobody set health, the deployment fails at the "
       "deadline", d["state"] == "failed", (d["state"], d["reason"]))
    ok("manual health: the reason names the group without healthy "
       "allocations", "app" in (d["reason"] or "") and "deadline" in
       (d["reason"] or ""), d["reason"])
    nops.wait_cycle()
    nops.wait_cycle()
    ok("manual health: not deployed again", later_deployments(
        nops, "web", did2) == [], later_deployments(nops, "web", did2))
    env.cleanup()


def case_scale_during_pre_hooks():
    """An autoscaler moves a count while pre hooks run: the register still
    goes, with the autoscaler's count."""
    scaling = "    scaling {\n      min = 1\n      max = 10\n    }\n"
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto", count=4,
                                       group_extra=scaling, pre="gate"),
        "nomad/gate.nomad.hcl": hook_hcl("gate", "exit 0")})
    did = wait_until(lambda: nops.active("api"), 15)
    complete(nops, did)
    ok("scale: the first version deploys with 4",
       nops.deployment(did)["state"] == "completed" and
       sim.job("api")["TaskGroups"][0]["Count"] == 4, nops.deployment(did))
    gate = env.path("gate-open")
    nops.push_and_fetch(remote, {
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto", count=4,
                                       group_extra=scaling, pre="gate",
                                       image="nginx:1.27"),
        "nomad/gate.nomad.hcl": hook_hcl(
            "gate", "while [ ! -e %s ]; do sleep 0.2; done" % gate)},
        "new image; the gate waits")
    did2 = next_active(nops, "api", did)

    def running():
        sim.advance(5)
        d = nops.deployment(did2)
        return d["state"] == "pre_hooks" and d["hooks"][0]["run"] and \
            d["hooks"][0]["run"]["state"] == "running"
    ok("scale: the pre hook runs", wait_until(running, 20, step=0.3),
       nops.deployment(did2))
    st, r = sim.call("POST", "/_sim/job/scale", {
        "JobID": "api", "Group": "app", "Count": 6})
    ok("scale: the autoscaler moved 4 -> 6 while the hook ran", st == 200,
       (st, r))
    open(gate, "w").close()
    complete(nops, did2)
    d = nops.deployment(did2)
    ok("scale: the deployment still registers and completes",
       d["state"] == "completed", (d["state"], d["reason"]))
    live = sim.job("api")
    ok("scale: the live count stays the autoscaler's 6 with the new image",
       live["TaskGroups"][0]["Count"] == 6 and
       live["TaskGroups"][0]["Tasks"][0]["Config"]["image"] ==
       "nginx:1.27", live["TaskGroups"][0])
    env.cleanup()


def case_dispatch_transient():
    """One 503 on a hook dispatch: the dispatch is repeated with the same
    idempotency token and the deployment completes with one run."""
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", pre="prep"),
        "nomad/prep.nomad.hcl": hook_hcl("prep")})
    did = wait_until(lambda: nops.active("web"), 15)
    st, f = sim.call("POST", "/_sim/faults", {
        "Method": "*", "Path": "^/v1/job/prep-[0-9a-f]+/dispatch",
        "Match": "regex", "Count": 1, "Action": "status",
        "Status": 503, "Body": "No cluster leader"})
    ok("dispatch 503: the fault is armed", st == 200, (st, f))
    st, r = nops.action(did, "approve")
    complete(nops, did, 40)
    d = nops.deployment(did)
    ok("dispatch 503: the deployment completes",
       d["state"] == "completed", (d["state"], d["reason"]))
    st, left = sim.call("GET", "/_sim/faults")
    ok("dispatch 503: the fault was hit", left == [], left)
    rev = d["hooks"][0]["revision"]
    children = [j for j in sim.jobs(rev + "/dispatch-")
                if j.get("ParentID") == rev]
    ok("dispatch 503: exactly one run of the hook", len(children) == 1,
       [c["ID"] for c in children])
    run = d["hooks"][0]["run"] or {}
    ok("dispatch 503: the run succeeded", run.get("state") == "succeeded",
       run)
    ok("dispatch 503: the retry was logged with its token",
       "%d:pre:0" % did in nops.logtext(), nops.logtext()[-2000:])
    env.cleanup()


def case_deploy_now():
    """deploy-now deploys a waiting job without approval, and refuses with
    a reason when there is nothing it may do."""
    env, sim, remote, nops = setup({
        "nomad/wait.nomad.hcl": job_hcl("wait"),
        "nomad/sync.nomad.hcl": job_hcl("sync", policy="auto"),
        "nomad/blk.nomad.hcl": job_hcl("blk", policy="auto", pre="bad"),
        "nomad/bad.nomad.hcl": hook_hcl("bad", "exit 2")})
    pend = wait_until(lambda: nops.job_state("wait") == "pending_approval"
                      and nops.active("wait"), 15)
    sdid = wait_until(lambda: nops.active("sync"), 15)
    bdid = wait_until(lambda: nops.active("blk"), 15)
    complete(nops, sdid)
    nops.wait_deploy_state(bdid, "failed", 30, sim_step=30)
    nops.wait_cycle()

    # Pending approval: deploy now, without waiting for approval.
    rc, out, err = nops.ctl("deploy-now", "default/wait")
    ok("deploy-now: accepted for a job pending approval", rc == 0,
       (rc, out, err))
    d = nops.deployment(pend)
    ok("deploy-now: the waiting deployment starts without approval",
       d["state"] not in ("pending_approval", "superseded"), d)
    acts = [(e["action"], e["actor"]) for e in d["events"]]
    ok("deploy-now: the audit log records who deployed it now",
       any(a == "deployment.deploy_now" for a, _ in acts), acts)
    complete(nops, pend)
    ok("deploy-now: it completes", nops.deployment(pend)["state"] ==
       "completed", nops.deployment(pend))

    # In sync: nothing to deploy.
    st, r = nops.job_action("sync", "deploy-now")
    ok("deploy-now: an in-sync job is refused with 409",
       st == 409 and "in sync" in r["error"]["message"], (st, r))
    rc, out, err = nops.ctl("deploy-now", "default/sync")
    ok("deploy-now: nopsctl says why and exits 1",
       rc == 1 and "in sync" in err, (rc, out, err))

    # Blocked by a failure: retry is the way.
    st, r = nops.job_action("blk", "deploy-now")
    ok("deploy-now: a blocked job is refused with 409 naming retry",
       st == 409 and "blocked" in r["error"]["message"] and "retry" in
       r["error"]["message"], (st, r))
    # A pause shows at once in jobs, before the cycle it starts.
    nops.job_action("sync", "pause", {"reason": "freeze"})
    rc, out, err = nops.ctl("jobs")
    row = [ln for ln in out.splitlines() if "sync" in ln.split()[:2] or
           "default/sync" in ln]
    ok("jobs: a pause shows at once", nops.job("sync")["state"] ==
       "paused" and row and "paused" in row[0], (row, out))
    # A pause and a resume make detection run again.
    nops.job_action("blk", "pause", {"reason": "cycle"})
    nops.job_action("blk", "resume")
    nops.wait_cycle()
    ok("deploy-now: nothing was queued for the blocked job",
       later_deployments(nops, "blk", bdid) == [] and
       nops.job_state("blk") == "blocked",
       (later_deployments(nops, "blk", bdid), nops.job("blk")))
    env.cleanup()


def case_health_progress():
    """While waiting for health: the Nomad deployment's progress per group
    and allocation, in the API and nopsctl show, and it moves."""
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=2)})
    st, r = sim.call("POST", "/_sim/health/hold", {"JobID": "web"})
    did = wait_until(lambda: nops.active("web"), 15)
    nops.wait_deploy_state(did, "waiting_health", 15)

    def placed():
        sim.advance(20)
        h = nops.deployment(did)["health"]
        return h and h["groups"] and h["groups"][0]["placed"] >= 1 and h
    h = wait_until(placed, 20, step=0.3)
    ok("health: the API shows the Nomad deployment's progress per group",
       h and h["nomad_deployment"]["status"] == "running" and
       h["groups"][0]["name"] == "app" and
       h["groups"][0]["desired"] == 2 and h["groups"][0]["healthy"] == 0,
       h)
    ok("health: and its allocations, not healthy yet, with task events",
       h and h["allocations"] and h["allocations"][0]["healthy"] is None
       and h["allocations"][0]["events"] and
       h["allocations"][0]["group"] == "app", h and h["allocations"])
    rc, out, err = ctl("show", str(did), env={"NOPS_SOCKET": nops.sock})
    ok("health: nopsctl show (socket from NOPS_SOCKET) prints the progress",
       rc == 0 and "health (as of" in out and "UNHEALTHY" in out and
       "not yet" in out, out[-1500:])
    sim.call("POST", "/_sim/health/hold", {"JobID": "web", "Hold": False})

    def moved():
        sim.advance(20)
        h = nops.deployment(did)["health"]
        return h and h["groups"][0]["healthy"] > 0 and h
    h2 = wait_until(moved, 20, step=0.3)
    ok("health: the progress moves as allocations become healthy", h2, h2)
    complete(nops, did)
    d = nops.deployment(did)
    ok("health: the deployment completes and keeps its last progress",
       d["state"] == "completed" and d["health"]["groups"][0]["healthy"] ==
       2, (d["state"], d["health"]))
    nops.stop()
    nops.restart()
    d2 = nops.deployment(did)
    ok("health: the last progress survives a restart of nopsd",
       d2["health"] == d["health"], (d["health"], d2["health"]))
    rc, out, err = nops.ctl("show", str(did))
    ok("health: nopsctl show prints it after the restart",
       rc == 0 and "health (as of" in out, out[-1500:])
    env.cleanup()


def failed_listed(nops):
    st, o = nops.api("GET", "/api/v1/overview")
    return [x["id"] for x in o["attention"]["failed"]["items"]]


def case_failed_attention():
    """A failed deployment stays under Needs attention until a later one of
    its job completes or someone acknowledges it."""
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", pre="check"),
        "nomad/check.nomad.hcl": hook_hcl("check", "exit 2")})
    d1 = wait_until(lambda: nops.job_state("web") == "pending_approval"
                    and nops.active("web"), 15)
    nops.action(d1, "approve")
    nops.wait_deploy_state(d1, "failed", 30, sim_step=30)
    ok("attention: the failed deployment is listed", d1 in
       failed_listed(nops), failed_listed(nops))
    ok("attention: a failed deployment offers acknowledge and retry",
       set(a["id"] for a in nops.deployment(d1)["actions"]
           if a["enabled"]) == {"acknowledge", "retry"},
       nops.deployment(d1)["actions"])
    nops.push_and_fetch(remote, {"nomad/check.nomad.hcl": hook_hcl(
        "check", "exit 0")}, "fix the hook")
    d2 = next_active(nops, "web", d1)
    ok("attention: it stays listed while a later deployment waits",
       d2 and d1 in failed_listed(nops), (d2, failed_listed(nops)))
    ok("attention: retry is not offered once a later deployment exists",
       "retry" not in [a["id"] for a in nops.deployment(d1)["actions"]
                      if a["enabled"]],
       nops.deployment(d1)["actions"])
    nops.action(d2, "approve")
    complete(nops, d2)
    ok("attention: a later deployment that completes takes it off",
       nops.deployment(d2)["state"] == "completed" and
       d1 not in failed_listed(nops), failed_listed(nops))
    nops.push_and_fetch(remote, {
        "nomad/web.nomad.hcl": job_hcl("web", pre="check", image="nginx:3"),
        "nomad/check.nomad.hcl": hook_hcl("check", "exit 4")}, "again")
    d3 = next_active(nops, "web", d2)
    nops.action(d3, "approve")
    nops.wait_deploy_state(d3, "failed", 30, sim_step=30)
    ok("attention: a new failure is listed", d3 in failed_listed(nops),
       failed_listed(nops))
    rc, out, err = nops.ctl("acknowledge", str(d3), "--reason",
                            "known, fixing")
    ok("attention: nopsctl acknowledge is accepted",
       rc == 0 and "acknowledged" in out, (rc, out, err))
    ok("attention: an acknowledged failure is off the Overview",
       d3 not in failed_listed(nops), failed_listed(nops))
    acts = [(e["action"], e["actor"], e["detail"])
            for e in nops.deployment(d3)["events"]]
    ok("attention: the acknowledgement is in the audit log with its reason",
       any(a == "deployment.acknowledge" and "fixing" in (det or "")
           for a, _, det in acts), acts)
    st, o = nops.api("GET", "/api/v1/overview")
    ok("attention: the job is still shown blocked",
       any(x["id"] == "web" for x in o["attention"]["blocked"]["items"]),
       o["attention"]["blocked"])
    st, r = nops.action(d3, "acknowledge")
    ok("attention: acknowledging twice is a conflict", st == 409, (st, r))
    st, r = nops.action(d2, "acknowledge")
    ok("attention: only a failed deployment is acknowledged", st == 409,
       (st, r))
    env.cleanup()


def case_unparsed():
    """A job whose file stops parsing stays listed, unparsed, with the
    error and its git path; a Nomad outage during parse is an outage."""
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="none")})
    wait_until(lambda: nops.job_state("web") == "drift", 15)
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl":
                                 'job "web" {\n  group "app" {\n    count = \n'
                                 '  }\n}\n'}, "break the file")
    wait_until(lambda: nops.job_state("web") == "unparsed", 15)
    j = nops.job("web")
    ok("unparsed: the job stays listed, unparsed", j is not None and
       j["state"] == "unparsed", j)
    ok("unparsed: with its git path and the parse error naming it",
       j and j["path"] == "nomad/web.nomad.hcl" and
       "nomad/web.nomad.hcl" in (j["error"] or "") and
       "input.hcl" not in (j["error"] or ""), j)
    ok("unparsed: it is in the jobs list",
       ("default", "web") in nops.jobs(), list(nops.jobs()))
    st, fe = nops.api("GET", "/api/v1/files/errors")
    ok("unparsed: the file error names the git path, not input.hcl",
       fe["items"] and fe["items"][0]["path"] == "nomad/web.nomad.hcl" and
       "input.hcl" not in fe["items"][0]["error"], fe)
    rc, out, err = nops.ctl("jobs")
    ok("unparsed: nopsctl jobs shows it", rc == 0 and "unparsed" in out,
       out)
    # Fixed again, then Nomad loses its leader while nops parses.
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="none")}, "fix the file")
    wait_until(lambda: nops.job_state("web") == "drift", 15)
    sim.call("POST", "/_sim/faults", {
        "Method": "*", "Path": "/v1/jobs/parse", "Match": "prefix",
        "Count": 1000, "Action": "status", "Status": 500,
        "Body": "No cluster leader"})
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="none", image="nginx:2")}, "a change during an outage")
    j = wait_until(lambda: nops.job("web")["state"] == "error" and
                   nops.job("web"), 15)
    ok("outage: the job is shown in error, because of Nomad", j and
       "Nomad could not parse" in (j["note"] or ""), j)
    st, fe = nops.api("GET", "/api/v1/files/errors")
    ok("outage: no parse error is blamed on the file", fe["items"] == [],
       fe)
    sim.call("DELETE", "/_sim/faults")
    nops.job_action("web", "pause", {"reason": "cycle"})
    nops.job_action("web", "resume")
    ok("outage: once Nomad is back the job is read again",
       wait_until(lambda: nops.job_state("web") == "drift", 15),
       nops.job("web"))
    env.cleanup()


def ctl(*args, env=None):
    import subprocess
    e = dict(os.environ)
    e.pop("NOPS_SOCKET", None)
    e.update(env or {})
    r = subprocess.run([gitlib.NOPSCTL] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=e)
    return r.returncode, r.stdout, r.stderr


def case_nopsctl():
    """nopsctl's help, version, NOPS_SOCKET and why it cannot connect."""
    import socket
    import tempfile
    rc, out, err = ctl("--help")
    ok("nopsctl --help: usage and a line per command on stdout, exit 0",
       rc == 0 and out.startswith("usage:") and "deploy-now" in out and
       "without approval" in out and "NOPS_SOCKET" in out, (rc, out, err))
    rc, out, err = ctl("show", "--help")
    ok("nopsctl show --help: its usage and what it does",
       rc == 0 and "usage: nopsctl show id" in out and "health" in out,
       (rc, out, err))
    rc, out, err = ctl("-s", "/nonexistent.sock", "log", "loud")
    ok("nopsctl: an invalid value lists the valid ones",
       rc == 2 and "verbose" in err and "brief" in err, (rc, err))
    rc, out, err = ctl("-V")
    ok("nopsctl -V prints the version", rc == 0 and
       out.startswith("nopsctl ") and out.strip()[-1].isdigit(), out)
    d = tempfile.mkdtemp(prefix="nopsctl.")
    rc, out, err = ctl("status", env={"NOPS_SOCKET": d + "/none.sock"})
    ok("nopsctl: NOPS_SOCKET names the socket; a missing one is said",
       rc == 1 and "no control socket at " + d + "/none.sock" in err and
       "-s" in err, err)
    stale = d + "/stale.sock"
    s = socket.socket(socket.AF_UNIX)
    s.bind(stale)
    s.close()
    rc, out, err = ctl("-s", stale, "status")
    ok("nopsctl: a stale socket is called stale", rc == 1 and
       "stale" in err and "refused" in err, err)
    os.unlink(stale)
    os.rmdir(d)


def case_config_check():
    """nopsd -n says what a syntax error expected, asks to quote a keyword
    used as a value, and checks that the user and group exist."""
    import subprocess
    import tempfile
    d = tempfile.mkdtemp(prefix="nops-conf.")

    def check(text):
        f = os.path.join(d, "nops.conf")
        with open(f, "w") as fp:
            fp.write(text)
        r = subprocess.run([gitlib.NOPSD, "-n", "-f", f],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        return r.returncode, r.stderr
    rc, err = check("drift-interval\n")
    ok("config: a missing value says what was expected",
       rc == 1 and "nops.conf:1: syntax error: expected a duration "
       "(e.g. 5m) after drift-interval" in err, err)
    rc, err = check('user "_nops"\ndatabase database\n')
    ok("config: a keyword used as a value: quote it",
       rc == 1 and "nops.conf:2: syntax error: database is a keyword; "
       "quote it" in err,
       err)
    rc, err = check('user "nosuchuser-x"\ncontrol socket "/run/x.sock" '
                    'group "nosuchgroup-x"\n')
    ok("config: -n checks that the user and the group exist",
       rc == 1 and 'user "nosuchuser-x" does not exist' in err and
       'group "nosuchgroup-x" does not exist' in err, err)
    rc, err = check('user "_nops"\n')
    ok("config: an existing user passes", rc == 0, err)
    import shutil
    shutil.rmtree(d)


def diff_find(o, name, path=()):
    """(path, field) pairs named name anywhere in a diff."""
    out = []
    for f in o.get("Fields") or []:
        if f["Name"] == name:
            out.append((path, f))
    for k in ("Objects", "TaskGroups", "Tasks"):
        for sub in o.get(k) or []:
            out += diff_find(sub, name, path + (sub.get("Name"),))
    return out


def case_readable_diff():
    """Durations read as durations; a new job's diff marks (and nopsctl
    and the page fold) what only repeats Nomad's defaults."""
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", image="nginx:readable")})
    did = wait_until(lambda: nops.job_state("web") == "pending_approval"
                     and nops.active("web"), 15)
    d = nops.deployment(did)["diff"]
    kt = diff_find(d, "KillTimeout")
    ok("diff: a duration reads as a duration",
       kt and kt[0][1]["New"] == "5s", kt)
    delay = [f for p, f in diff_find(d, "Delay") if "RestartPolicy" in p]
    ok("diff: nested durations too", delay and delay[0]["New"] == "15s",
       delay)
    ok("diff: a field at Nomad's default is marked Default",
       kt and kt[0][1].get("Default") is True, kt)
    img = diff_find(d, "image")
    ok("diff: what git says is not marked", img and
       img[0][1]["New"] == "nginx:readable" and
       not img[0][1].get("Default"), img)
    grp = d["TaskGroups"][0]
    rp = [o for o in grp["Objects"] if o["Name"] == "RestartPolicy"]
    ok("diff: an object of nothing but defaults is marked Default",
       rp and rp[0].get("Default") is True, rp)
    rc, out, err = nops.ctl("show", str(did))
    ok("diff: nopsctl show folds the defaults and shows git's values",
       rc == 0 and "of Nomad's defaults not shown" in out and
       "nginx:readable" in out and "15000000000" not in out and
       "RestartPolicy" not in out, out[-2500:])
    st, page = nops.curl("GET", "/deployments/%d" % did)
    ok("diff: the page folds them under a details element",
       st == 200 and "of Nomad's defaults</summary>" in page and
       "15000000000" not in page, st)
    # What the file spells out is git's, even at Nomad's default value;
    # a block the file has folds only the fields it leaves out.
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": """job "api" {
  datacenters = ["dc1"]
  priority = 50
  meta {
    nops_managed = "true"
  }
  group "app" {
    restart {
      attempts = 3
    }
    task "server" {
      driver = "docker"
      kill_timeout = "5s"
      config {
        image = "nginx:api"
      }
    }
  }
}
"""}, "api")
    wait_until(lambda: (nops.job("api") or {}).get("state") == "drift", 15)
    st, j = nops.api("GET", "/api/v1/jobs/default/api")
    da = (j or {}).get("diff") or {}
    kt = diff_find(da, "KillTimeout")
    pr = diff_find(da, "Priority")
    att = [f for p, f in diff_find(da, "Attempts") if "RestartPolicy" in p]
    dl = [f for p, f in diff_find(da, "Delay") if "RestartPolicy" in p]
    rpo = [o for o in (da.get("TaskGroups") or [{}])[0].get("Objects") or []
           if o["Name"] == "RestartPolicy"]
    ok("diff: a value the file sets is not folded, even at the default",
       kt and not kt[0][1].get("Default") and pr and
       not pr[0][1].get("Default"), (kt, pr))
    ok("diff: in a block the file has, only what it leaves out folds",
       att and not att[0].get("Default") and dl and dl[0].get("Default")
       and rpo and not rpo[0].get("Default"), (att, dl, rpo))
    # An edit of a duration reads as one too.
    nops.action(did, "approve")
    complete(nops, did)
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", image="nginx:readable", group_extra="    update {\n"
        "      min_healthy_time = \"20s\"\n    }\n")}, "slower")
    d2 = next_active(nops, "web", did)
    mh = diff_find(nops.deployment(d2)["diff"], "MinHealthyTime") \
        if d2 else []
    ok("diff: an edited duration reads 10s -> 20s",
       [(f["Old"], f["New"]) for p, f in mh if "Update" in p] ==
       [("10s", "20s")], mh)
    env.cleanup()


def case_window_opens():
    """A job held outside its sync window shows held at once and is
    deployed when the window opens, not at the next drift-interval (1h
    here) or commit."""
    import time
    # The next minute, or the one after when this one is nearly over.
    now = time.time()
    t = time.gmtime(now + (120 if time.gmtime(now).tm_sec > 40 else 60))
    win = '    nops_sync_window = "%d %d * * *"\n' \
        '    nops_sync_window_duration = "10m"' % (t.tm_min, t.tm_hour)
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto",
                                       extra_meta=win)})
    ok("window: a job outside its window is held at once",
       nops.wait_job("web", "held", 15), nops.job("web"))
    rc, out, err = nops.ctl("jobs")
    ok("window: nopsctl jobs shows held", rc == 0 and "held" in out, out)
    did = wait_until(lambda: nops.active("web"), 150, step=1)
    ok("window: when the window opens the job is deployed without a "
       "commit or a fetch", did and not nops.job("web")["state"] == "held",
       nops.job("web"))
    env.cleanup()


def case_hook_output():
    """A hook run's output (the last 64 KiB, from Nomad's logs) is shown
    in the API, nopsctl show and the page, redacted like a diff."""
    script = ("echo migrating schema 42; echo password=hunter2; "
              "echo fetch https://bob:s3cr3t@git.example/x; "
              "echo tok ghp_Abcdefghijklmnop1234567890XYZ; "
              "echo warning on stderr >&2")
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", pre="migrate"),
        "nomad/migrate.nomad.hcl": hook_hcl("migrate", script)})
    did = wait_until(lambda: nops.active("web"), 15)
    complete(nops, did)

    def output():
        run = nops.deployment(did)["hooks"][0]["run"] or {}
        return run.get("output")
    out = wait_until(output, 15)
    ok("hook output: the run's output is in the API, line by line",
       out and "migrating schema 42\n" in out and
       "warning on stderr" in out, out)
    ok("hook output: secrets are redacted like in a diff",
       out and "hunter2" not in out and "s3cr3t" not in out and
       "ghp_Abcdefghijklmnop1234567890XYZ" not in out and
       "<redacted>" in out and "git.example/x" in out, out)
    rc, text, err = nops.ctl("show", str(did))
    ok("hook output: nopsctl show prints it",
       rc == 0 and "output of pre hook migrate" in text and
       "| migrating schema 42" in text and "hunter2" not in text,
       text[-1500:])
    st, page = nops.curl("GET", "/deployments/%d" % did)
    ok("hook output: the deployment page shows it, folded",
       st == 200 and "<summary>output" in page and
       "migrating schema 42" in page and "hunter2" not in page, st)
    nops.stop()
    nops.restart()
    run = nops.deployment(did)["hooks"][0]["run"] or {}
    ok("hook output: a finished run's output survives a restart",
       run.get("output") == out, run)
    st, page = nops.curl("GET", "/deployments/%d" % did)
    ok("hook output: the page shows it after the restart",
       st == 200 and "migrating schema 42" in page, st)
    env.cleanup()


CASES = [case_auto_revert, case_manual_health, case_scale_during_pre_hooks,
         case_dispatch_transient, case_deploy_now, case_health_progress,
         case_failed_attention, case_unparsed, case_nopsctl,
         case_config_check, case_readable_diff, case_hook_output]
# Cases that mostly wait for the clock (a sync window opens at the next
# whole minute): each runs in a thread of its own, beside the others, with
# a daemon and simulator of its own.
WAITING = [case_window_opens]


def run(c):
    try:
        c()
    except Exception:
        import traceback
        ok(c.__name__ + " ran to its end", False, traceback.format_exc())


if __name__ == "__main__":
    import threading
    only = sys.argv[1:]
    waiting = [threading.Thread(target=run, args=(c,)) for c in WAITING
               if not only or c.__name__ in only]
    for t in waiting:
        t.start()
    for c in CASES:
        if not only or c.__name__ in only:
            run(c)
    for t in waiting:
        t.join()
    sys.exit(1 if gitlib.failures else 0)
