"""Actions as data and the suspend toggle, against nomadsim, real git and
the real daemon: the lists of a job and of a deployment, the generic
procedure, every row of seed 003's error table for suspend, suspend then a
new commit, and unsuspend after a failed deployment."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, job_hcl, ok, wait_until  # noqa: E402


def complete(nops, did):
    return nops.wait_deploy_state(did, ("completed", "failed"), 30,
                                  sim_step=30)


def batch_hcl(jid):
    return """job "%s" {
  type = "batch"
  datacenters = ["dc1"]
  meta {
    nops_managed = "true"
    nops_policy = "auto"
  }
  group "b" {
    task "t" {
      driver = "docker"
      config {
        image = "busybox:1"
      }
    }
  }
}
""" % jid


def last_id(nops, jid):
    items = nops.deployments(job=jid)
    return items[0]["id"] if items else None


def by_id(actions):
    return {a["id"]: a for a in actions}


def deployed(nops, jid):
    """Wait for the job's deployment to end; its id and state."""
    wait_until(lambda: nops.active(jid) is not None, 15)
    did = nops.active(jid)
    if did is None:
        return None, None
    complete(nops, did)
    return did, nops.deployment(did)["state"]


def case_lists_and_generic():
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web"),
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto")})
    wait_until(lambda: nops.job_state("web") == "pending_approval", 15)
    did = nops.active("web")
    d = nops.deployment(did)
    acts = d["actions"]
    ok("list: a deployment's actions are objects in display order",
       [a["id"] for a in acts] == ["approve", "reject", "retry",
                                    "acknowledge", "promote"], acts)
    a = by_id(acts)
    ok("list: each has title, description, enabled, scope; no kind for "
       "built-ins", all(set(("id", "title", "description", "enabled",
                             "scope")) <= set(x) and "kind" not in x
                        for x in acts), acts)
    ok("list: approve and reject are enabled while pending approval",
       a["approve"]["enabled"] and a["reject"]["enabled"], a)
    ok("list: retry is disabled, with the state as the reason",
       not a["retry"]["enabled"] and "pending_approval" in
       a["retry"]["disabled_reason"] and "failed" in
       a["retry"]["disabled_reason"], a["retry"])
    ok("list: approve's input schema names the spec hash shown",
       a["approve"]["input_schema"]["properties"]["spec_hash"]["const"] ==
       d["spec_hash"], a["approve"])
    st, j = nops.api("POST", "/api/v1/deployments/%d/actions/nosuch" % did,
                     {})
    ok("generic: an unknown action is not_found (404)",
       st == 404 and j["error"]["code"] == "not_found", (st, j))
    st, j = nops.api("POST", "/api/v1/deployments/%d/actions/pause" % did,
                     {})
    ok("generic: a job's action on a deployment is not_found, and says "
       "where it is", st == 404 and "/api/v1/jobs/" in
       j["error"]["message"], (st, j))
    st, j = nops.api("POST", "/api/v1/deployments/%d/actions/promote" % did,
                     {})
    ok("generic: an action from a state its row does not leave: 409",
       st == 409 and j["error"]["code"] == "conflict", (st, j))
    # While reject is allowed (a rejected deployment answers 409 first).
    st, j = nops.api("POST", "/api/v1/deployments/%d/actions/reject" % did,
                     {"input": "text"})
    ok("generic: an input that is not an object: 400", st == 400 and
       j["error"]["code"] == "bad_request", (st, j))
    st, j = nops.api("POST", "/api/v1/deployments/%d/actions/reject" % did,
                     {"input": {"reason": "through input"}})
    ok("generic: {\"input\": {...}} reaches the procedure",
       st == 200 and j["state"] == "rejected" and
       j["reason"] == "through input", (st, j))

    # A job's list.
    j = nops.job("web")
    ids = [x["id"] for x in j["actions"]]
    ok("job list: deploy-now, pause, resume, suspend, unsuspend",
       ids == ["deploy-now", "pause", "resume", "suspend", "unsuspend"],
       ids)
    a = by_id(j["actions"])
    ok("job list: suspend is a toggle with a confirmation question",
       a["suspend"]["kind"] == "toggle" and a["suspend"]["confirm"], a)
    ok("job list: resume is disabled: not paused",
       not a["resume"]["enabled"] and "not paused" in
       a["resume"]["disabled_reason"], a["resume"])
    ok("job list: suspend is disabled: nothing deployed",
       not a["suspend"]["enabled"] and "nothing deployed" in
       a["suspend"]["disabled_reason"], a["suspend"])
    st, _ = nops.job_action("web", "pause", {"input": {"reason": "x"}})
    a = by_id(nops.job("web")["actions"])
    ok("job list: once paused, pause is disabled and resume enabled",
       st == 200 and not a["pause"]["enabled"] and a["resume"]["enabled"],
       (st, a))
    st, j = nops.job_action("web", "deploy-now")
    ok("generic: deploy-now of a paused job: 409", st == 409, (st, j))
    st, j = nops.job_action("web", "nosuch")
    ok("generic: an unknown job action: 404", st == 404 and
       j["error"]["code"] == "not_found", (st, j))
    st, j = nops.job_action("nosuch", "suspend")
    ok("suspend: no such job: not_found (404)",
       st == 404 and j["error"]["code"] == "not_found", (st, j))
    rc, out, err = nops.ctl("actions", "default/web")
    ok("nopsctl actions: a table from the list",
       rc == 0 and "resume" in out and "yes" in out and "no" in out,
       (rc, out, err))
    rc, out, err = nops.ctl("action", "web", "resume")
    ok("nopsctl action: runs one", rc == 0 and "done" in out,
       (rc, out, err))
    rc, out, err = nops.ctl("action", "web", "pause", "--input",
                            '{"reason": "from nopsctl"}')
    ok("nopsctl action --input JSON", rc == 0 and
       nops.job("web")["paused"]["reason"] == "from nopsctl", (rc, out, err))
    path = env.path("input.json")
    with open(path, "w") as f:
        f.write('{"reason": "twice"}')
    rc, out, err = nops.ctl("action", "web", "pause", "--input", "@" + path)
    ok("nopsctl action --input @file; a refusal exits 1 with the reason",
       rc == 1 and "already paused" in err, (rc, out, err))
    rc, out, err = nops.ctl("action", "web", "pause", "--input", "[1]")
    ok("nopsctl action: input that is not an object: usage error (2)",
       rc == 2, (rc, out, err))
    env.cleanup()


def case_suspend_errors():
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto"),
        "nomad/web.nomad.hcl": job_hcl("web"),
        "nomad/once.nomad.hcl": batch_hcl("once")})
    wait_until(lambda: nops.active("api") is not None, 15)
    did = nops.active("api")
    # The clock stands still: the deployment waits for health.
    nops.wait_deploy_state(did, "waiting_health", 15)
    st, j = nops.job_action("api", "suspend")
    ok("suspend: while a deployment runs (nothing completed yet): "
       "conflict first", st == 409, (st, j))
    complete(nops, did)
    # A second deployment held in waiting_health.
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": job_hcl(
        "api", policy="auto", image="nginx:1.27")})
    wait_until(lambda: nops.active("api") not in (None, did), 15)
    d2 = nops.active("api")
    nops.wait_deploy_state(d2, "waiting_health", 15)
    st, j = nops.job_action("api", "suspend")
    ok("suspend: a deployment of the target in progress: queue_full (429)",
       st == 429 and j["error"]["code"] == "queue_full", (st, j))
    complete(nops, d2)
    st, j = nops.job_action("web", "suspend")
    ok("suspend: nothing deployed: conflict (409)",
       st == 409 and j["error"]["code"] == "conflict" and
       "nothing deployed" in j["error"]["message"], (st, j))
    st, j = nops.job_action("web", "unsuspend")
    ok("unsuspend: nothing deployed: conflict (409)",
       st == 409 and j["error"]["code"] == "conflict", (st, j))
    wait_until(lambda: nops.job_state("once") in ("in_sync", "deploying"),
               15)
    dd, state = deployed(nops, "once")
    ids = [x["id"] for x in nops.job("once")["actions"]]
    ok("suspend: a batch job does not offer it", "suspend" not in ids and
       "unsuspend" not in ids, (ids, state))
    st, j = nops.job_action("once", "suspend")
    ok("suspend: the revision cannot do it: invalid_configuration (422)",
       st == 422 and j["error"]["code"] == "invalid_configuration",
       (st, j, state))
    st, j = nops.job_action("api", "suspend", {"reason": "maintenance"})
    ok("suspend: 200 once Nomad registered the job stopped",
       st == 200 and j["action"] == "suspend", (st, j))
    st, j = nops.job_action("api", "suspend")
    ok("suspend: already suspended: conflict (409)",
       st == 409 and "already suspended" in j["error"]["message"], (st, j))
    st, j = nops.job_action("api", "nosuch-toggle")
    ok("suspend table: unknown action: not_found (404)", st == 404,
       (st, j))
    st, j = nops.job_action("api", "deploy-now")
    ok("suspended: deploy-now is refused (409)", st == 409 and
       "suspended" in j["error"]["message"], (st, j))
    env.cleanup()


def case_suspend_then_commit():
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto")})
    did, state = deployed(nops, "api")
    ok("suspend+commit: the job is deployed", state == "completed", state)
    wait_until(lambda: nops.job_state("api") == "in_sync", 15)
    a = by_id(nops.job("api")["actions"])
    ok("suspend+commit: suspend enabled, unsuspend disabled (not "
       "suspended)", a["suspend"]["enabled"] and not
       a["unsuspend"]["enabled"], a)
    # The suspend's register stalls in Nomad for 3 s: the detection
    # cycle the suspend starts plans the job (with its Stop) while Nomad
    # still runs it.  That drift is the suspend's, never a deployment's.
    sim.call("POST", "/_sim/faults", {"Method": "POST", "Path": "/v1/job/api",
                                      "Match": "exact", "Count": 1,
                                      "Action": "stall", "Seconds": 3})
    st, j = nops.job_action("api", "suspend", {"reason": "quiet"})
    live = sim.job("api")
    ok("suspend+commit: Nomad has the job stopped", st == 200 and
       live["Stop"] is True, (st, j, live and live["Stop"]))
    sim.advance(5)
    allocs = sim.call("GET", "/v1/job/api/allocations")[1]
    ok("suspend+commit: its allocations stop",
       all(x["DesiredStatus"] == "stop" for x in allocs),
       [x["DesiredStatus"] for x in allocs])
    nops.wait_cycle()
    wait_until(lambda: nops.job_state("api") == "suspended", 15)
    ok("suspend: a cycle under way when the suspend landed made no "
       "deployment", last_id(nops, "api") == did and
       sim.job("api")["Stop"] is True, (last_id(nops, "api"), did))
    j = nops.job("api")
    a = by_id(j["actions"])
    ok("suspend+commit: the detail says suspended, by whom and why",
       j["suspended"]["reason"] == "quiet" and
       not a["suspend"]["enabled"] and a["unsuspend"]["enabled"], j)
    ok("suspend+commit: its state is suspended, with no drift",
       nops.job_state("api") == "suspended", nops.job("api")["state"])
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": job_hcl(
        "api", policy="auto", image="nginx:1.27")})
    wait_until(lambda: last_id(nops, "api") != did, 15)
    d2 = last_id(nops, "api")
    complete(nops, d2)
    live = sim.job("api")
    ok("suspend+commit: the new commit is deployed, still stopped",
       d2 is not None and nops.deployment(d2)["state"] == "completed" and
       live["Stop"] is True and "1.27" in json.dumps(live["TaskGroups"]),
       (d2, live["Stop"]))
    st, j = nops.job_action("api", "unsuspend")
    live = sim.job("api")
    ok("unsuspend: Nomad runs the last successful spec again",
       st == 200 and live["Stop"] is False and
       "1.27" in json.dumps(live["TaskGroups"]) and
       j["deployment"] == d2, (st, j, live["Stop"]))
    ev = nops.api("GET", "/api/v1/events?limit=50")[1]
    acts = [e["action"] for e in ev.get("items", [])]
    ok("suspend+commit: suspend and unsuspend are audited",
       "job.suspend" in acts and "job.unsuspend" in acts, acts)
    env.cleanup()


def case_unsuspend_after_failure():
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto", count=1)})
    did, state = deployed(nops, "api")
    ok("after failure: the first deployment completes",
       state == "completed", state)
    # Every allocation that starts from now on fails (a broken image).
    sim.call("POST", "/_sim/job/break", {"JobID": "api"})
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": job_hcl(
        "api", policy="auto", count=1, image="nginx:broken")})
    wait_until(lambda: last_id(nops, "api") != did, 15)
    d2 = last_id(nops, "api")
    state = None
    if d2 is not None:
        nops.wait_deploy_state(d2, ("completed", "failed"), 60, sim_step=30)
        state = nops.deployment(d2)["state"]
    ok("after failure: the next deployment fails", state == "failed",
       (d2, state))
    wait_until(lambda: nops.job_state("api") == "blocked", 15)
    a = by_id(nops.job("api")["actions"])
    ok("after failure: suspend and unsuspend are both enabled",
       a["suspend"]["enabled"] and a["unsuspend"]["enabled"], a)
    st, j = nops.job_action("api", "unsuspend")
    live = sim.job("api")
    ok("after failure: unsuspend registers the last successful spec",
       st == 200 and j["deployment"] == did and
       "broken" not in json.dumps(live["TaskGroups"]) and
       live["Stop"] is False, (st, j))
    env.cleanup()


def case_left_behind():
    import sqlite3
    env, sim, remote, nops = setup({
        "nomad/api.nomad.hcl": job_hcl("api", policy="auto")})
    did, state = deployed(nops, "api")
    db = sqlite3.connect(nops.db + "/nops.db", timeout=10)
    db.execute("INSERT INTO left_behind (deployment_id, kind, object,"
               " environment, error, created_at) VALUES"
               " (?, 'hook_revision', 'gone-0123abcd', 'default',"
               " 'stop: 500', 1), (?, 'host_cleanup', 'web1', 'h',"
               " 'ssh: refused', 1), (999, 'hook_revision', 'x-1',"
               " 'default', 'e', 1)", (did, did))
    db.commit()
    db.close()
    st, j = nops.api("GET", "/api/v1/deployments/left-behind/%d" % did)
    ok("left behind: the records of a deployment are listed",
       st == 200 and sorted(x["object"] for x in j["items"]) ==
       ["gone-0123abcd", "web1"] and all(
           set(x) >= {"id", "kind", "object", "environment", "error",
                      "deployment"} for x in j["items"]), (st, j))
    ids = {x["object"]: x["id"] for x in j.get("items", [])}
    rc, out, err = nops.ctl("left-behind", str(did))
    ok("nopsctl left-behind: a table of the records",
       rc == 0 and "gone-0123abcd" in out and "host_cleanup" in out,
       (rc, out, err))
    st, j = nops.api("POST", "/api/v1/deployments/left-behind/%d" % did,
                     {})
    ok("left behind: a retry answers the counts (removed, still failing, "
       "refused)", st == 200 and j["removed"] == 1 and
       j["refused"] == 1 and j["still_failing"] == 0, (st, j))
    st, j = nops.api("GET", "/api/v1/deployments/left-behind/%d" % did)
    ok("left behind: the removed record is gone, the refused one stays",
       [x["object"] for x in j["items"]] == ["web1"], j)
    st, j = nops.api("DELETE", "/api/v1/deployments/left-behind/%d/%d" % (
        ids.get("web1", 0), 999))
    ok("left behind: a record of another deployment: not_found (404)",
       st == 404 and j["error"]["code"] == "not_found", (st, j))
    # A suspend's stop that failed; a later write of the job removes it.
    db = sqlite3.connect(nops.db + "/nops.db", timeout=10)
    db.execute("INSERT INTO left_behind (deployment_id, kind, object,"
               " environment, error, created_at) VALUES"
               " (?, 'suspend', 'api', 'default', 'register: 500', 1)",
               (did,))
    db.commit()
    db.close()
    # A deployment of the target under way: conflict.
    nops.push_and_fetch(remote, {"nomad/api.nomad.hcl": job_hcl(
        "api", policy="auto", image="nginx:1.27")})
    wait_until(lambda: last_id(nops, "api") != did, 15)
    d2 = last_id(nops, "api")
    nops.wait_deploy_state(d2, "waiting_health", 15)
    st, j = nops.api("DELETE", "/api/v1/deployments/left-behind/%d/%d" % (
        ids.get("web1", 0), did))
    ok("left behind: forget while a deployment of the target runs: "
       "conflict (409)", st == 409 and j["error"]["code"] == "conflict",
       (st, j))
    st, j = nops.api("POST", "/api/v1/deployments/left-behind/%d" % did,
                     {})
    ok("left behind: retry while it runs: conflict (409)", st == 409,
       (st, j))
    complete(nops, d2)
    st, j = nops.api("GET", "/api/v1/deployments/left-behind/%d" % did)
    ok("left behind: a deployment's register of the job removes a "
       "suspend's stop left behind (a later write of the object)",
       st == 200 and "suspend" not in [x["kind"] for x in j["items"]],
       (st, j))
    st, j = nops.api("DELETE", "/api/v1/deployments/left-behind/%d/%d" % (
        ids.get("web1", 0), did))
    ok("left behind: forget one record", st == 200 and j["forgotten"],
       (st, j))
    st, j = nops.api("GET", "/api/v1/deployments/left-behind/%d" % did)
    ok("left behind: it is gone from the list", j["items"] == [], j)
    rc, out, err = nops.ctl("left-behind", str(did), "retry")
    ok("nopsctl left-behind retry: the counts", rc == 0 and
       "removed 0, still failing 0, refused 0" in out, (rc, out, err))
    st, j = nops.api("GET", "/api/v1/deployments/left-behind/999")
    ok("left behind: records outlive their deployment (no such "
       "deployment 999)", st == 200 and len(j["items"]) == 1, (st, j))

    # The dashboard's page of them, with retry and forget.
    form = "application/x-www-form-urlencoded"
    st, html = nops.curl("GET", "/deployments/%d" % did)
    ok("dashboard: a deployment links to what it left behind",
       st == 200 and 'href="/deployments/%d/left-behind"' % did in html,
       st)
    st, html = nops.curl("GET", "/deployments/999/left-behind")
    rid = j["items"][0]["id"] if j.get("items") else 0
    ok("dashboard: the left-behind page lists each record with a forget "
       "form and a retry form", st == 200 and "x-1" in html and
       'action="/deployments/999/left-behind/%d/forget"' % rid in html
       and 'id="left-behind-retry"' in html, (st, html[-2000:]))
    st, html = nops.curl("POST", "/deployments/999/left-behind/%d/forget" %
                         rid, "", form)
    st2, j = nops.api("GET", "/api/v1/deployments/left-behind/999")
    ok("dashboard: forget removes the record", st in (302, 303) and
       st2 == 200 and j["items"] == [], (st, st2, j))
    st, html = nops.curl("POST", "/deployments/999/left-behind", "", form)
    ok("dashboard: retry goes back to the page, which says so",
       st in (302, 303), (st, html))
    st, html = nops.curl("GET", "/deployments/999/left-behind?done=forget")
    ok("dashboard: an empty page says nothing is left behind",
       st == 200 and 'id="left-behind-none"' in html and
       "Record forgotten" in html, (st, html[-800:]))
    env.cleanup()


CASES = [case_lists_and_generic, case_suspend_errors,
         case_suspend_then_commit, case_unsuspend_after_failure,
         case_left_behind]

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
