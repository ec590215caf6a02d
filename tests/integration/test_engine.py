"""The engine against nomadsim, real git and the real sandboxed daemon:
one case per rule of detection and apply, each trying to break it."""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitlib import test_hooks_built, skip, NO_TEST_HOOKS  # noqa: E402
from enginelib import setup, job_hcl, hook_hcl, ok, wait_until  # noqa


def wait_pending(nops, jid):
    wait_until(lambda: nops.job_state(jid) == "pending_approval", 15)
    return nops.active(jid)


def complete(nops, did):
    """Let the simulated cluster make a deployment healthy."""
    return nops.wait_deploy_state(did, ("completed", "failed"), 30,
                                  sim_step=30)


def case_approval_flow():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", pre="migrate", post="smoke"),
        "nomad/migrate.nomad.hcl": hook_hcl(
            "migrate", "echo migrate $NOMAD_META_nops_job "
            "$NOMAD_META_nops_phase"),
        "nomad/smoke.nomad.hcl": hook_hcl("smoke")})
    did = wait_pending(nops, "web")
    ok("approval: a drifting approval job waits for approval", did)
    d = nops.deployment(did)
    ok("approval: nothing registered before approval",
       sim.job("web") is None)
    ok("approval: the deployment shows a redacted diff, never the spec",
       d["diff"] is not None and "spec" not in d, d)
    ok("approval: hooks are frozen into the deployment",
       [h["hook"] for h in d["hooks"]] == ["migrate", "smoke"], d["hooks"])
    st, r = nops.action(did, "approve", {"spec_hash": d["spec_hash"]})
    ok("approval: approve answers 200", st == 200, (st, r))
    done = complete(nops, did)
    d = nops.deployment(did)
    ok("approval: the deployment completes", d["state"] == "completed",
       (d["state"], d["reason"], nops.logtext()[-3000:]))
    ok("approval: the job is registered once",
       len(sim.versions("web")) == 1, sim.versions("web"))
    runs = [h["run"] for h in d["hooks"]]
    ok("approval: pre and post hooks ran and succeeded",
       all(r is not None and r["state"] == "succeeded" for r in runs), runs)
    rev = d["hooks"][0]["revision"]
    ok("approval: a hook runs as its revision <hook>-<8 hex>",
       rev.startswith("migrate-") and len(rev) == len("migrate-") + 8, rev)
    child = runs[0]["child"]
    ok("approval: the hook got the dispatch meta it declares",
       sim.job(child) is not None and sim.job(child)["Meta"].get(
           "nops_phase") == "pre", sim.job(child))
    actions = [e["action"] for e in d["events"]]
    ok("approval: every transition is in the audit trail",
       {"deployment.create", "deployment.approve",
        "deployment.complete"} <= set(actions), actions)
    wait_until(lambda: nops.job_state("web") == "in_sync", 10)
    ok("approval: after it, the job is in sync", nops.job_state("web") ==
       "in_sync", nops.job("web"))
    revs = [h["revision"] for h in d["hooks"]]
    stopped = wait_until(lambda: all(sim.job(r) and sim.job(r)["Stop"]
                                     for r in revs), 15)
    ok("hook revisions: after the cycle, revisions no active deployment "
       "needs are stopped", stopped, [sim.job(r) and sim.job(r)["Stop"]
                                      for r in revs])
    ok("approval: the managed job itself is never stopped",
       not sim.job("web")["Stop"])
    env.cleanup()


def case_auto_and_none():
    env, sim, remote, nops = setup({
        "nomad/auto.nomad.hcl": job_hcl("auto", policy="auto"),
        "nomad/manual.nomad.hcl": job_hcl("manual", policy="none")})
    did = wait_until(lambda: nops.active("auto"), 15)
    ok("auto: a deployment starts without approval", did)
    if did:
        complete(nops, did)
        ok("auto: it completes", nops.deployment(did)["state"] ==
           "completed", nops.deployment(did))
    ok("none: drift is shown, nothing deployed",
       nops.job_state("manual") == "drift" and
       not nops.deployments("manual") and sim.job("manual") is None,
       nops.job("manual"))
    env.cleanup()


def case_cas_conflict():
    if not test_hooks_built():
        skip("cas: the register's check-and-set, with the watches off",
             NO_TEST_HOOKS)
        return
    # The watches would see the change by hand within a round trip and
    # supersede the waiting deployment (test_detect_watch): turned off,
    # the change lands between the last look and the register, which the
    # check-and-set must catch.
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web")},
        extra_env={"NOPS_TEST_NO_WATCH": "1"})
    did = wait_pending(nops, "web")
    # A person runs the job by hand between detection and approval.
    st, _ = sim.call("POST", "/_sim/job/register", {
        "Job": {"ID": "web", "Name": "web", "Datacenters": ["dc1"],
                "TaskGroups": [{"Name": "app", "Count": 1, "Tasks": [{
                    "Name": "server", "Driver": "docker",
                    "Config": {"image": "nginx:by-hand"}}]}]}})
    before = len(sim.versions("web"))
    st, r = nops.action(did, "approve")
    # No detection ran since: the approval is accepted, and the apply
    # must notice the change when it plans again before the register.
    ok("cas: the approval is accepted", st == 200, (st, r))
    wait_until(lambda: nops.deployment(did)["state"] == "failed", 15)
    d = nops.deployment(did)
    ok("cas: a job changed behind nops' back fails the deployment",
       d["state"] == "failed", d)
    ok("cas: the failure says why", d["reason"] and ("changed" in
       d["reason"]), d["reason"])
    ok("cas: nothing was registered over the person's change",
       len(sim.versions("web")) == before and
       sim.job("web")["TaskGroups"][0]["Tasks"][0]["Config"]["image"] ==
       "nginx:by-hand")
    # The job purged by hand between detection and approval.
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", image="nginx:1.30")}, "bump")
    did2 = wait_until(lambda: nops.active("web"), 15)
    sim.call("POST", "/_sim/job/stop", {"Namespace": "default",
                                        "JobID": "web", "Purge": True})
    st, r = nops.action(did2, "approve") if did2 else (0, None)
    wait_until(lambda: nops.deployment(did2)["state"] == "failed", 15)
    d = nops.deployment(did2) if did2 else {}
    ok("cas: a job purged behind nops' back fails the deployment, nothing "
       "registered", d.get("state") == "failed" and sim.job("web") is None,
       (st, d.get("state"), d.get("reason")))
    env.cleanup()


def case_supersede():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web"),
        "nomad/other.nomad.hcl": job_hcl("other", policy="none")})
    did = wait_pending(nops, "web")
    nops.push_and_fetch(remote, {"nomad/other.nomad.hcl": job_hcl(
        "other", policy="none", image="nginx:2")}, "unrelated")
    nops.wait_cycle()
    ok("supersede: an unrelated commit keeps the waiting deployment",
       nops.active("web") == did and
       nops.deployment(did)["state"] == "pending_approval")
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", image="nginx:1.27")}, "bump web")
    wait_until(lambda: nops.deployment(did)["state"] == "superseded", 15)
    d = nops.deployment(did)
    ok("supersede: a spec change supersedes the waiting deployment",
       d["state"] == "superseded" and "git" in (d["reason"] or ""), d)
    new = wait_until(lambda: nops.active("web") not in (None, did) and
                     nops.active("web"), 15)
    ok("supersede: and a new one waits", new and
       nops.deployment(new)["state"] == "pending_approval")
    st, r = nops.action(did, "approve")
    ok("stale approval: approving a superseded deployment is a conflict",
       st == 409 and r["error"]["code"] == "conflict", (st, r))
    st, r = nops.action(new, "approve", {"spec_hash": "0" * 64})
    ok("stale approval: a spec hash that is not the one shown is a "
       "conflict", st == 409, (st, r))
    env.cleanup()


def case_duplicates_and_parse_errors():
    env, sim, remote, nops = setup({
        "nomad/a.nomad.hcl": job_hcl("dup", policy="auto"),
        "nomad/b.nomad.hcl": job_hcl("dup", policy="auto"),
        "nomad/gone.nomad.hcl": job_hcl("gone", policy="auto")})
    nops.wait_cycle()
    j = nops.job("dup")
    ok("duplicates: a job in two files is ignored with an error",
       j["state"] == "error" and "declared twice" in (j["error"] or ""), j)
    ok("duplicates: and nothing is deployed", not nops.deployments("dup")
       and sim.job("dup") is None)
    did = wait_until(lambda: nops.active("gone"), 15)
    complete(nops, did)
    # Remove gone.nomad.hcl and break another file in the same commit.
    nops.push_and_fetch(remote, {"nomad/gone.nomad.hcl": None,
                                 "nomad/broken.nomad.hcl": "job {"})
    nops.wait_cycle()
    st, orph = nops.api("GET", "/api/v1/orphans")
    st, errs = nops.api("GET", "/api/v1/files/errors")
    ok("parse error: the broken file is reported",
       any(e["path"] == "nomad/broken.nomad.hcl" for e in errs["items"]),
       errs)
    ok("parse error: a removed job is not treated as removed meanwhile",
       not orph["complete"] and not any(o["id"] == "gone" for o in
                                        orph["items"]), orph)
    nops.push_and_fetch(remote, {"nomad/broken.nomad.hcl": None})
    wait_until(lambda: nops.api("GET", "/api/v1/orphans")[1]["complete"],
               15)
    st, orph = nops.api("GET", "/api/v1/orphans")
    ok("orphans: a deployed job gone from git is listed",
       any(o["id"] == "gone" for o in orph["items"]), orph)
    ok("orphans: and never stopped", sim.job("gone") is not None and
       not sim.job("gone")["Stop"])
    env.cleanup()


def case_autoscaler():
    scaling = "    scaling {\n      min = 1\n      max = 10\n    }\n"
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto",
                                       group_extra=scaling)})
    did = wait_until(lambda: nops.active("api"), 15)
    complete(nops, did)
    st, r = sim.call("POST", "/_sim/job/scale", {
        "JobID": "api", "Group": "app", "Count": 5})
    ok("autoscaler: the simulator scaled the group", st == 200, (st, r))
    nops.job_action("api", "pause", {"reason": "probe"})
    nops.job_action("api", "resume")
    nops.wait_cycle()
    j = nops.job("api")
    ok("autoscaler: a count changed by an autoscaler is not drift",
       j["state"] == "in_sync", j)
    ok("autoscaler: nops left the count alone",
       sim.job("api")["TaskGroups"][0]["Count"] == 5)
    # A real change: nops deploys it and keeps the live count.
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": job_hcl(
        "api", policy="auto", image="nginx:1.27", group_extra=scaling)})
    did2 = wait_until(lambda: nops.active("api"), 15)
    if did2:
        complete(nops, did2)
    live = sim.job("api")
    ok("autoscaler: a deploy keeps the live count of a scaling group",
       live["TaskGroups"][0]["Count"] == 5 and
       live["TaskGroups"][0]["Tasks"][0]["Config"]["image"] ==
       "nginx:1.27", live["TaskGroups"][0])
    env.cleanup()


def case_canary():
    update = ("    update {\n      canary = 1\n      max_parallel = 1\n"
              "    }\n")
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=2)},
        apply_timeout="3s")
    did = wait_until(lambda: nops.active("web"), 15)
    complete(nops, did)
    nops.push_and_fetch(remote, {"nomad/web.nomad.hcl": job_hcl(
        "web", policy="auto", count=2, image="nginx:2",
        group_extra=update)})
    did = wait_until(lambda: nops.active("web") not in (None, did) and
                     nops.active("web"), 15)
    reached = nops.wait_deploy_state(did, "awaiting_promotion", 20,
                                     sim_step=10)
    ok("canary: canaries waiting for promotion show as "
       "awaiting_promotion", reached, nops.deployment(did))
    time.sleep(5)	# longer than apply-timeout
    d = nops.deployment(did)
    ok("canary: the apply timeout is paused while canaries wait",
       d["state"] == "awaiting_promotion", d)
    st, r = nops.action(did, "promote")
    ok("canary: promote is accepted", st == 202, (st, r))
    wait_until(lambda: nops.deployment(did)["state"] != "awaiting_promotion",
               15)
    d = nops.deployment(did)
    ok("canary: after promotion the timeout restarts in full",
       d["state"] in ("waiting_health", "completed"), d)
    complete(nops, did)
    ok("canary: then it completes", nops.deployment(did)["state"] ==
       "completed", nops.deployment(did))
    env.cleanup()


def case_hook_failure_block_retry():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", pre="check"),
        "nomad/check.nomad.hcl": hook_hcl("check", "echo no; exit 3")})
    did = wait_until(lambda: nops.active("web"), 15)
    # The simulated client restarts a failed batch task per its restart
    # policy, on the virtual clock: move it on.
    nops.wait_deploy_state(did, "failed", 30, sim_step=30)
    d = nops.deployment(did)
    ok("hook failure: a failing pre hook fails the deployment",
       d["state"] == "failed" and "exit code 3" in (d["reason"] or ""), d)
    ok("hook failure: the job was not registered", sim.job("web") is None)
    nops.wait_cycle()
    ok("block: a failed deployment blocks the job",
       nops.job_state("web") == "blocked" and nops.active("web") is None,
       nops.job("web"))
    nops.push_and_fetch(remote, {"nomad/check.nomad.hcl": hook_hcl(
        "check", "exit 0")}, "fix the hook")
    new = wait_until(lambda: nops.active("web"), 15)
    ok("block: a new commit that changes the hooks lifts the block", new)
    if new:
        complete(nops, new)
    # Retry: fail again, then retry the failure.
    nops.push_and_fetch(remote, {
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", pre="check",
                                       image="nginx:3"),
        "nomad/check.nomad.hcl": hook_hcl("check", "exit 4")})
    def failed_again():
        sim.advance(30)
        return [x for x in nops.deployments("web")
                if x["state"] == "failed" and x["id"] != did]
    f = wait_until(failed_again, 30, step=0.3)
    st, r = nops.action(f[0]["id"], "retry")
    ok("retry: a failed deployment can be retried", st == 202, (st, r))
    again = wait_until(lambda: [x for x in nops.deployments("web")
                                if x["retry_of"] == f[0]["id"]], 15)
    ok("retry: the retry is a new deployment that names the old one",
       again, nops.deployments("web"))
    env.cleanup()


def case_hook_timeout_and_missing():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", pre="slow",
                                       pre_timeout="2s"),
        "nomad/slow.nomad.hcl": hook_hcl("slow", "sleep 30"),
        "nomad/lost.nomad.hcl": job_hcl("lost", policy="auto",
                                        pre="nonexistent")})
    did = wait_until(lambda: nops.active("web"), 15)
    wait_until(lambda: nops.deployment(did)["state"] == "failed", 20)
    d = nops.deployment(did)
    ok("hook timeout: a hook over its timeout fails the deployment",
       d["state"] == "failed" and "timed out" in (d["reason"] or ""), d)
    child = d["hooks"][0]["run"]["child"] if d["hooks"][0]["run"] else None
    ok("hook timeout: its run is stopped", child and wait_until(
       lambda: sim.job(child)["Stop"], 10), child)
    lost = wait_until(lambda: nops.deployments("lost"), 15)
    ok("missing hook: fails the deployment at detection",
       lost and lost[0]["state"] == "failed" and "nonexistent" in
       (lost[0]["reason"] or ""), lost)
    env.cleanup()


def case_pause_and_window():
    closed = time.gmtime(time.time() + 12 * 3600).tm_hour
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web"),
        "nomad/win.nomad.hcl": job_hcl(
            "win", policy="auto", extra_meta=(
                '    nops_sync_window = "0 %d * * *"\n'
                '    nops_sync_window_duration = "1h"' % closed))})
    did = wait_pending(nops, "web")
    st, r = nops.job_action("web", "pause", {})
    ok("pause: a pause needs a reason", st == 400, (st, r))
    st, r = nops.job_action("web", "pause", {"reason": "incident 42"})
    ok("pause: pause is accepted", st == 200, (st, r))
    wait_until(lambda: nops.deployment(did)["state"] == "superseded", 15)
    ok("pause: a pause supersedes a deployment not yet started",
       nops.deployment(did)["state"] == "superseded",
       nops.deployment(did))
    j = nops.job("web")
    ok("pause: the job shows who paused it and why",
       j["state"] == "paused" and j["paused"]["reason"] == "incident 42", j)
    st, r = nops.job_action("web", "resume")
    new = wait_until(lambda: nops.active("web"), 15)
    ok("resume: a new deployment waits again", st == 200 and new)
    nops.job_action("web", "pause", {"reason": "again"})
    st, r = nops.action(new, "approve") if new else (0, None)
    ok("pause: a paused job's deployment cannot be approved",
       st == 409, (st, r))
    ok("window: outside its sync window an auto job is held",
       nops.job_state("win") == "held" and not nops.deployments("win"),
       nops.job("win"))
    st, r = nops.job_action("win", "deploy-now")
    ok("deploy-now: is accepted", st == 202, (st, r))
    d = wait_until(lambda: nops.deployments("win"), 15)
    ok("deploy-now: deploys the drift despite the closed window",
       d and d[0]["state"] != "pending_approval", d)
    env.cleanup()


def case_left_behind():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", pre="prep"),
        "nomad/prep.nomad.hcl": hook_hcl("prep")})
    did = wait_until(lambda: nops.active("web"), 15)
    # Every stop of a hook revision fails from now on.
    sim.call("POST", "/_sim/faults", {"Method": "DELETE", "Path":
             "/v1/job/prep-", "Match": "prefix", "Count": 100,
             "Action": "status", "Status": 500, "Body": "boom"})
    complete(nops, did)
    d = nops.deployment(did)
    rev = d["hooks"][0]["revision"]
    import subprocess

    def rows():
        r = subprocess.run(["sqlite3", nops.db + "/nops.db",
                            "SELECT object, error FROM left_behind"],
                           stdout=subprocess.PIPE, text=True)
        return r.stdout.strip()
    got = wait_until(lambda: rev in rows(), 15)
    ok("left behind: a revision stop that fails is recorded", got, rows())
    ok("left behind: the deployment itself still completed",
       d["state"] == "completed", d)
    sim.call("DELETE", "/_sim/faults")
    nops.job_action("web", "pause", {"reason": "cycle"})
    nops.job_action("web", "resume")
    gone = wait_until(lambda: rev not in rows(), 15)
    ok("left behind: a later successful stop removes the record", gone,
       rows())
    env.cleanup()


CASES = [case_approval_flow, case_auto_and_none, case_cas_conflict,
         case_supersede, case_duplicates_and_parse_errors,
         case_autoscaler, case_canary, case_hook_failure_block_retry,
         case_hook_timeout_and_missing, case_pause_and_window,
         case_left_behind]

if __name__ == "__main__":
    only = sys.argv[1:]
    for c in CASES:
        if only and c.__name__ not in only:
            continue
        try:
            c()
        except Exception as e:
            import traceback
            ok(c.__name__ + " ran to its end", False,
               traceback.format_exc())
    import gitlib
    sys.exit(1 if gitlib.failures else 0)
