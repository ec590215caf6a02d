"""Nomad outages against the engine: nomadsim answers 5xx, stalls or
drops the connection (/_sim/faults) during detection (parse, read,
plan), the register, the health wait and the hooks, or is down
altogether.  Nothing may be lost: deployments wait, or fail saying why;
job states show the error; and once the faults end, detection resumes
on its own (the drift interval) and a later cycle shows the right state.

    python3 test_engine_outage.py [case ...]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import (Env, Sim, StatefulSim, Nops, setup_with,  # noqa
                       job_hcl, hook_hcl, ok, wait_until)

TERMINAL = ("completed", "failed", "rejected", "superseded")
DRIFT = "2s"


class DriftNops(Nops):
    """nopsd whose detection also runs every DRIFT, so that a test sees
    detection resume by itself once Nomad answers again; with a
    replan-interval of 1s every cycle plans every job (nothing is answered
    from the last plan), so that the read and plan faults are met."""

    def write_conf(self, repos):
        super().write_conf(repos)
        with open(self.conf) as f:
            text = f.read()
        with open(self.conf, "w") as f:
            f.write(text.replace("drift-interval 1h",
                                 "drift-interval " + DRIFT +
                                 "\nreplan-interval 1s"))


def start(files, sim_class=Sim, **kw):
    env = Env()
    sim = sim_class(env)
    remote, nops = setup_with(sim, files, DriftNops, **kw)
    return env, sim, remote, nops


def fault(sim, method, path, action="status", status=500, count=1000,
          match="exact", seconds=0, body=None):
    f = {"Method": method, "Path": path, "Match": match, "Count": count,
         "Action": action, "Status": status, "Seconds": seconds}
    if body:
        f["Body"] = body
    st, r = sim.call("POST", "/_sim/faults", f)
    if st != 200:
        raise RuntimeError("fault refused: %s %s" % (st, r))
    return r["ID"]


def clear(sim):
    sim.call("DELETE", "/_sim/faults")


def registers(sim, jid="web"):
    st, evs = sim.call("GET", "/v1/job/%s/evaluations" % jid)
    if st != 200:
        return 0
    return sum(1 for e in evs if e.get("TriggeredBy") == "job-register")


def file_errors(nops):
    st, r = nops.api("GET", "/api/v1/files/errors")
    return {e["path"]: e["error"] for e in r["items"]} if st == 200 else {}


def deployment_of(nops, commit, jid="web"):
    ds = [d for d in nops.deployments(jid) if d["commit"] == commit]
    return ds[0] if ds else None


def drive(nops, did, timeout=30):
    return nops.wait_deploy_state(did, TERMINAL, timeout, sim_step=5)


def holds(fn, seconds, step=0.3):
    """fn() stays true for seconds (checked every step)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if not fn():
            return False
        time.sleep(step)
    return bool(fn())


def case_parse():
    env, sim, remote, nops = start({
        "nomad/web.nomad.hcl": job_hcl("web"),
        "nomad/api.nomad.hcl": job_hcl("api")})
    did = wait_until(lambda: nops.job_state("web") == "pending_approval" and
                     nops.active("web"), 15)
    api = nops.active("api")
    ok("parse 5xx: a deployment waits before the outage", did and api)

    # Every attempt fails (the nomadworker retries a read three times).
    fault(sim, "POST", "/v1/jobs/parse", status=500,
          body="injected: parse unavailable")
    remote.commit({"nomad/web.nomad.hcl": job_hcl("web", image="nginx:2")},
                  "bump web during the outage")
    nops.fetch("infra")
    # An outage is not an error in the file: the jobs say Nomad could
    # not parse, with its answer, and the file is not blamed.
    errs = wait_until(lambda: "parse unavailable" in (
        nops.job("web")["note"] or ""), 15)
    ok("parse 5xx: the outage shows on the job with Nomad's answer, not "
       "as an error in the file", errs and
       "nomad/web.nomad.hcl" not in file_errors(nops),
       (nops.job("web"), file_errors(nops)))
    ok("parse 5xx: the waiting deployment is kept (a file that does not "
       "parse is not a removed job)", holds(
           lambda: nops.deployment(did)["state"] == "pending_approval", 3),
       nops.deployment(did))
    ok("parse 5xx: a job whose file is unchanged keeps its deployment",
       nops.deployment(api)["state"] == "pending_approval",
       nops.deployment(api))
    st, orph = nops.api("GET", "/api/v1/orphans")
    ok("parse 5xx: orphans are not known meanwhile", not orph["complete"],
       orph)

    clear(sim)
    new = wait_until(lambda: not file_errors(nops) and
                     nops.active("web") not in (None, did) and
                     nops.active("web"), 15)
    ok("parse 5xx: once Nomad answers, detection resumes by itself and "
       "sees the change", new, (file_errors(nops), nops.job("web")))
    ok("parse 5xx: the change supersedes the old deployment then",
       nops.deployment(did)["state"] == "superseded", nops.deployment(did))
    ok("parse 5xx: the unchanged job is back with the same deployment",
       wait_until(lambda: nops.job_state("api") == "pending_approval" and
                  nops.active("api") == api, 15), nops.job("api"))

    # Dropped connections: no answer at all.
    fault(sim, "POST", "/v1/jobs/parse", action="drop")
    remote.commit({"nomad/web.nomad.hcl": job_hcl("web", image="nginx:3")},
                  "bump again")
    nops.fetch("infra")
    errs = wait_until(lambda: nops.job_state("web") == "error" and
                      "parse" in (nops.job("web")["note"] or ""), 15)
    ok("parse dropped: the job shows the outage, the file is not blamed",
       errs and "nomad/web.nomad.hcl" not in file_errors(nops),
       (nops.job("web"), file_errors(nops)))
    ok("parse dropped: the waiting deployment is kept",
       nops.deployment(new)["state"] == "pending_approval",
       nops.deployment(new))
    clear(sim)
    newer = wait_until(lambda: not file_errors(nops) and
                       nops.active("web") not in (None, new) and
                       nops.active("web"), 15)
    ok("parse dropped: detection resumes after it", newer,
       (file_errors(nops), nops.job("web")))

    # A blip the nomadworker's retries absorb: no error at all.
    fault(sim, "POST", "/v1/jobs/parse", status=503, count=1)
    fault(sim, "POST", "/v1/jobs/parse", action="drop", count=1)
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", image="nginx:4")}, "bump once more")
    nops.fetch("infra")
    last = wait_until(lambda: [d for d in nops.deployments("web")
                               if d["commit"] == commit], 15)
    ok("parse blip: a 503 and a dropped connection are retried, the cycle "
       "sees the change", last and not file_errors(nops),
       (file_errors(nops), nops.job("web")))
    env.cleanup()


def case_plan_and_read():
    env, sim, remote, nops = start({"nomad/web.nomad.hcl": job_hcl("web")})
    did = wait_until(lambda: nops.job_state("web") == "pending_approval" and
                     nops.active("web"), 15)
    fault(sim, "POST", "/v1/job/web/plan", status=503,
          body="injected: no cluster leader")
    got = wait_until(lambda: nops.job_state("web") == "error", 15)
    j = nops.job("web")
    ok("plan 5xx: the job's state is error", got, j)
    ok("plan 5xx: its note says what Nomad answered",
       j and "no cluster leader" in (j["note"] or ""), j)
    ok("plan 5xx: the waiting deployment is kept", holds(
       lambda: nops.deployment(did)["state"] == "pending_approval", 3),
       nops.deployment(did))
    clear(sim)
    ok("plan 5xx: a later cycle shows the right state again",
       wait_until(lambda: nops.job_state("web") == "pending_approval" and
                  nops.active("web") == did, 15), nops.job("web"))

    fault(sim, "GET", "/v1/job/web", action="drop")
    got = wait_until(lambda: nops.job_state("web") == "error", 15)
    j = nops.job("web")
    ok("read dropped: the job's state is error, saying so",
       got and "reading the live job" in (j["note"] or ""), j)
    ok("read dropped: the waiting deployment is kept",
       nops.deployment(did)["state"] == "pending_approval")
    clear(sim)
    ok("read dropped: a later cycle shows the right state again",
       wait_until(lambda: nops.job_state("web") == "pending_approval" and
                  nops.active("web") == did, 15), nops.job("web"))

    # A stall: the cycle waits; the API serves the last complete cycle.
    # The stall (8 s) outlasts the 2 s watched below by enough to absorb
    # a loaded machine's delay between the plan arriving and the watch.
    fid = fault(sim, "POST", "/v1/job/web/plan", action="stall", seconds=8,
                count=1)
    wait_until(lambda: not any(f["ID"] == fid for f in
                               sim.call("GET", "/_sim/faults")[1]), 10,
               step=0.05)
    cycles = nops.engine()["cycles"]
    ok("plan stalled: the cycle waits for the answer", holds(
       lambda: nops.engine()["detecting"] and
       nops.engine()["cycles"] == cycles, 2), nops.engine())
    ok("plan stalled: meanwhile the last complete cycle is served",
       nops.job_state("web") == "pending_approval", nops.job("web"))
    ok("plan stalled: the cycle ends with the right state",
       wait_until(lambda: nops.engine()["cycles"] > cycles and
                  nops.job_state("web") == "pending_approval" and
                  nops.active("web") == did, 15), nops.job("web"))
    env.cleanup()


def case_register():
    env, sim, remote, nops = start({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1)})
    did = wait_until(lambda: nops.active("web"), 15)
    drive(nops, did)

    before = registers(sim)
    fault(sim, "POST", "/v1/job/web", status=500, count=2,
          body="injected: raft apply failed")
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:2")}, "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    # Once nops has seen the 500, the deployment still waits.
    waited = wait_until(lambda: "raft apply failed" in nops.logtext(), 10)
    ok("register 5xx: the deployment does not fail, it is tried again",
       d and waited and nops.deployment(d["id"])["state"] != "failed",
       d and nops.deployment(d["id"]))
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("register 5xx: it is tried again and completes",
       d["state"] == "completed", (d, nops.logtext()[-2000:]))
    ok("register 5xx: registered once", registers(sim) - before == 1,
       registers(sim) - before)

    before = registers(sim)
    fault(sim, "POST", "/v1/job/web", action="drop", count=1)
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:3")}, "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("register dropped: planned again, registered, completed",
       d["state"] == "completed" and registers(sim) - before == 1,
       (d, registers(sim) - before))

    before = registers(sim)
    fault(sim, "POST", "/v1/job/web", status=400, count=1,
          body="injected: job validation failed")
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:4")}, "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("register 4xx: the deployment fails, with Nomad's reason",
       d["state"] == "failed" and "job validation failed" in
       (d["reason"] or ""), d)
    ok("register 4xx: nothing registered", registers(sim) == before)
    env.cleanup()


def case_health():
    env, sim, remote, nops = start({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1)})
    did = wait_until(lambda: nops.active("web"), 15)
    drive(nops, did)
    before = registers(sim)
    fault(sim, "GET", "/v1/job/web/deployment", status=500,
          body="injected: rpc error")
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:2")}, "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    reached = nops.wait_deploy_state(d["id"], "waiting_health", 15)

    def still_waiting():
        sim.advance(10)
        return nops.deployment(d["id"])["state"] == "waiting_health"
    ok("health 5xx: the deployment waits, though the cluster is healthy",
       reached and holds(still_waiting, 3), nops.deployment(d["id"]))
    clear(sim)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("health 5xx: once Nomad answers, it completes",
       d["state"] == "completed", d)

    fault(sim, "GET", "/v1/job/web/deployment", action="stall", seconds=2,
          count=2)
    fault(sim, "GET", "/v1/job/web/deployment", action="drop", count=2)
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:3")}, "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("health stalled and dropped: it completes",
       d["state"] == "completed", d)
    ok("health: one register per deployment", registers(sim) - before == 2,
       registers(sim) - before)
    env.cleanup()


REV = "^/v1/job/pre-[0-9a-f]{8}"


def hook_files(tag):
    return {"nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1,
                                           image="nginx:" + tag, pre="pre"),
            "nomad/pre.nomad.hcl": hook_hcl("pre", "echo " + tag)}


def runs(sim, d):
    rev = d["hooks"][0]["revision"]
    return [j["ID"] for j in sim.jobs(rev + "/dispatch-")
            if j["ParentID"] == rev]


def case_hooks():
    env, sim, remote, nops = start(hook_files("1"))
    did = wait_until(lambda: nops.active("web"), 15)
    drive(nops, did)

    fault(sim, "POST", REV + "$", match="regex", status=500, count=1,
          body="injected: revision register failed")
    commit = remote.commit(hook_files("2"), "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("hook revision 5xx: registered again, run, completed",
       d["state"] == "completed" and len(runs(sim, d)) == 1,
       (d, runs(sim, d)))

    before = registers(sim)
    fault(sim, "POST", REV + "/dispatch$", match="regex", status=503,
          count=1, body="injected: dispatch unavailable")
    commit = remote.commit(hook_files("3"), "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    # One 503 is repeated with the same idempotency token: Nomad gives
    # back the same run, so there is exactly one.
    ok("hook dispatch 5xx once: repeated with its token, the deployment "
       "completes", d["state"] == "completed", d)
    ok("hook dispatch 5xx once: exactly one run", len(runs(sim, d)) == 1,
       runs(sim, d))
    fault(sim, "POST", REV + "/dispatch$", match="regex", status=400,
          count=1, body="injected: missing required meta")
    commit = remote.commit(hook_files("4"), "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("hook dispatch 4xx: fails with Nomad's reason",
       d["state"] == "failed" and "missing required meta" in
       (d["reason"] or "") and not runs(sim, d), d)

    fault(sim, "GET", REV + "/dispatch-[^/]+/allocations$", match="regex",
          status=500, body="injected: allocations unavailable")
    commit = remote.commit(hook_files("5"), "bump")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)

    def polling():
        sim.advance(10)
        return nops.deployment(d["id"])["state"] == "pre_hooks"
    ok("hook poll 5xx: the deployment waits for its hook's outcome",
       wait_until(lambda: runs(sim, nops.deployment(d["id"])), 10) and
       holds(polling, 3),
       nops.deployment(d["id"]))
    clear(sim)
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("hook poll 5xx: once Nomad answers, it completes with one run",
       d["state"] == "completed" and len(runs(sim, d)) == 1,
       (d, runs(sim, d)))
    env.cleanup()


def case_nomad_down():
    env, sim, remote, nops = start({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1),
        "nomad/other.nomad.hcl": job_hcl("other")},
        sim_class=StatefulSim)
    did = wait_until(lambda: nops.active("web"), 15)
    drive(nops, did)
    before = registers(sim)
    commit = remote.commit({"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=1, image="nginx:2")}, "bump web")
    nops.fetch("infra")
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    reached = nops.wait_deploy_state(d["id"], "waiting_health", 15)
    ok("down: a deployment waits for health when Nomad goes away", reached,
       d and nops.deployment(d["id"]))

    sim.stop()
    remote.commit({"nomad/other.nomad.hcl": job_hcl("other",
                                                    image="nginx:9")},
                  "change other while Nomad is down")
    nops.fetch("infra")
    down = wait_until(lambda: nops.job_state("web") == "error" and
                      "connect" in (nops.job("web")["note"] or "").lower(),
                      20)
    j = nops.job("web")
    ok("down: the job's state shows the error", down, j)
    ok("down: the changed file is not blamed for Nomad's outage; its job "
       "names the outage", "nomad/other.nomad.hcl" not in file_errors(nops)
       and "connect" in (nops.job("other")["note"] or "").lower(),
       (file_errors(nops), nops.job("other")))
    ok("down: the deployment waits, neither failed nor lost",
       holds(lambda: nops.deployment(d["id"])["state"] == "waiting_health",
             3), nops.deployment(d["id"]))
    ok("down: nops itself keeps answering", nops.ctl("-j", "status")[0] ==
       0)

    sim.start()
    up = wait_until(lambda: not file_errors(nops) and
                    nops.job_state("other") == "pending_approval", 20)
    ok("up again: detection resumes and shows the right state", up,
       (file_errors(nops), nops.job("other")))
    drive(nops, d["id"])
    d = nops.deployment(d["id"])
    ok("up again: the waiting deployment completes", d["state"] ==
       "completed", (d, nops.logtext()[-2000:]))
    ok("up again: registered once", registers(sim) - before == 1,
       registers(sim) - before)
    ok("up again: the job is in sync", wait_until(
       lambda: nops.job_state("web") == "in_sync", 15), nops.job("web"))
    env.cleanup()


CASES = [case_parse, case_plan_and_read, case_register, case_health,
         case_hooks, case_nomad_down]

if __name__ == "__main__":
    only = sys.argv[1:]
    for c in CASES:
        if only and c.__name__ not in only:
            continue
        try:
            c()
        except Exception:
            import traceback
            ok(c.__name__ + " ran to its end", False,
               traceback.format_exc())
    import gitlib
    sys.exit(1 if gitlib.failures else 0)
