#!/usr/bin/env python3
"""Plan only what may have changed (issue 15 item 1), proven equivalent.

Two nopsd read the same git repository and the same nomadsim: one with
the skip (a job whose spec hash and live JobModifyIndex did not move is
not planned again, and a file whose content did not change is not parsed
or hashed again), one with the test hook NOPS_TEST_NO_SKIP, which parses
and plans every job every cycle as the seed says.  A random sequence of steps,
seeded and reproducible, changes git (an image, a hook, a policy, a file
that does not parse, a job declared in two files), changes Nomad
behind their back (another image, git's spec again, a scale, a stop, a
purge), pauses and resumes jobs, rejects deployments, restarts both
daemons and plays a Nomad upgrade or a new leader.  After each step both
run a detection cycle and every decision is compared: each job's state,
note and deployment, and every deployment (state, spec hash, commit,
reason, and from the database the spec to register and the check-and-set
index).  Policies are approval and none, so that neither daemon writes
to Nomad and the shared simulator is the same cluster for both.

    test_detect_skip.py [steps] [seed]

make check runs a short sequence; `make detect-campaign` a long one
(DETECT_STEPS, DETECT_SEED).  The seed is printed: rerun with it to
replay a failure.
"""
import json
import os
import random
import sqlite3
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import (Env, Sim, Remote, Nops, job_hcl, hook_hcl,  # noqa
                       ok, wait_until)
import gitlib  # noqa: E402
import opslib  # noqa: E402

IMAGES = ("nginx:1.25", "nginx:1.26", "nginx:1.27")
JOBS = {
    # id: (namespace, policy, extra group lines, pre hook)
    "a1": ("default", "approval", "", None),
    "a2": ("default", "approval", "", None),
    "a3": ("default", "approval", "", None),
    "n1": ("default", "none", "", None),
    "w1": ("web", "approval", "", None),
    "sc": ("default", "approval",
           "    scaling {\n      min = 1\n      max = 10\n    }", None),
    "hk": ("default", "approval", "", "pre-hook"),
}


class World:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.image = {j: IMAGES[0] for j in JOBS}
        self.hook_script = "exit 0"
        # Changes of one file among unchanged ones, which the skip's
        # daemon reads from what their content gave before: a policy
        # (the meta), a file that does not parse, a second file that
        # declares the same job.
        self.policy = {}
        self.broken = None
        self.twice = None

    def hcl(self, jid, image=None):
        ns, policy, extra, pre = JOBS[jid]
        return job_hcl(jid, image=image or self.image[jid],
                       policy=self.policy.get(jid, policy),
                       count=2, pre=pre, group_extra=extra,
                       ns=ns if ns != "default" else None)

    def files(self):
        f = {"nomad/%s.nomad.hcl" % j: self.hcl(j) for j in JOBS}
        f["nomad/pre-hook.nomad.hcl"] = hook_hcl("pre-hook",
                                                 self.hook_script)
        if self.broken is not None:
            f["nomad/%s.nomad.hcl" % self.broken] = \
                'job "%s" {\n  group "app" {\n' % self.broken
        # The second file goes again (None: delete it) when it is undone.
        for j in JOBS:
            f["nomad/more/%s-again.nomad.hcl" % j] = \
                self.hcl(j) if j == self.twice else None
        return f

    def nfiles(self):
        return len([c for c in self.files().values() if c is not None])


def register_as(sim, hcl, ns):
    """Register a job in Nomad from HCL, the way an operator would."""
    st, job = sim.call("POST", "/v1/jobs/parse?namespace=%s" % ns,
                       {"JobHCL": hcl, "Canonicalize": True})
    if st != 200:
        raise RuntimeError("parse: %s %s" % (st, job))
    st, body = sim.call("POST", "/v1/jobs?namespace=%s" % ns, {"Job": job})
    if st != 200:
        raise RuntimeError("register: %s %s" % (st, body))


def stored(n):
    """What the API never shows: the spec to register and the
    check-and-set index of every deployment, from the daemon's database."""
    db = sqlite3.connect("file:%s/nops.db?mode=ro" % n.db, uri=True,
                         timeout=10)
    try:
        return db.execute("SELECT id, spec, cas_index, spec_hash, state, "
                          "reason, retry_of, suspend FROM deployments "
                          "ORDER BY id").fetchall()
    finally:
        db.close()


def decisions(n):
    jobs = {}
    for (ns, jid), j in sorted(n.jobs().items()):
        jobs["%s/%s" % (ns, jid)] = (j["state"], j["note"], j["drift"],
                                     j["deployment"], j["policy"],
                                     j["error"])
    deps = [(d["id"], d["namespace"], d["job"], d["state"], d["spec_hash"],
             d["commit"], d["policy"], d["reason"], d["retry_of"])
            for d in sorted(n.deployments(), key=lambda d: d["id"])]
    return jobs, deps, stored(n)


def cycle_both(daemons, trigger=True, starts=None):
    """Run one detection cycle in each and wait until both are idle;
    without trigger, wait for the cycle that started after starts (the
    counts before a push: the new snapshot's own cycle)."""
    if starts is None:
        starts = [n.engine()["cycles"] for n in daemons]
    if trigger:
        for n in daemons:
            n.ctl("reload")
    for n, c0 in zip(daemons, starts):
        if not wait_until(lambda: n.engine()["cycles"] > c0 and
                          not n.engine()["detecting"], 30, step=0.05):
            raise RuntimeError("%s: no detection cycle ended" % n.tag)
    # A cycle an event started meanwhile ends too.
    for n in daemons:
        wait_until(lambda: not n.engine()["detecting"], 30, step=0.05)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else int(
        os.environ.get("DETECT_STEPS", "10"))
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int(
        os.environ.get("DETECT_SEED", "0")) or random.SystemRandom().randrange(
        1, 2 ** 31)
    print("# seed %d, %d steps (rerun: test_detect_skip.py %d %d)" % (
        seed, steps, steps, seed), flush=True)
    if not gitlib.test_hooks_built():
        gitlib.skip("detect skip equivalence", "needs --enable-test-hooks "
                    "(NOPS_TEST_NO_SKIP)")
        return 0
    world = World(seed)
    env = Env()
    sim = Sim(env)
    sim.call("POST", "/v1/namespace/web", {"Name": "web"})
    remote = Remote(env, "infra")
    remote.commit(world.files(), "initial")
    # Nomad runs what git says: an unchanged cluster, the skip's case.
    for j, (ns, _, _, _) in JOBS.items():
        register_as(sim, world.hcl(j), ns)
    repos = [{"name": "infra", "url": "file://" + remote.bare,
              "path": "nomad", "poll": "1h"}]
    skip = Nops(env, sim, repos, tag="skip")
    full = Nops(env, sim, repos, tag="full",
                extra_env={"NOPS_TEST_NO_SKIP": "1"})
    daemons = (skip, full)
    for n in daemons:
        n.wait_commit("infra", remote.head())
    cycle_both(daemons)

    rng = world.rng
    unchanged = planned = focused = 0
    version = 6
    equal = True
    for step in range(1, steps + 1):
        kind = rng.choice(("git", "git", "git", "hook", "policy",
                           "broken", "twice", "outside",
                           "outside", "outside",
                           "sync", "scale", "scale", "stop", "purge",
                           "pause", "reject", "reject", "retry", "retry",
                           "restart", "upgrade", "leader",
                           "nothing", "nothing"))
        jid = rng.choice(sorted(JOBS))
        ns = JOBS[jid][0]
        what = kind
        # A push is compared after its snapshot's own cycle (the one that
        # may be focused on the changed files), not after a reload's.
        pushed = kind in ("git", "hook", "policy", "broken", "twice")
        starts = [n.engine()["cycles"] for n in daemons]
        if kind == "git":
            world.image[jid] = rng.choice(IMAGES)
            what = "git: %s image %s" % (jid, world.image[jid])
            commit = remote.commit(world.files(), what)
            for n in daemons:
                n.fetch("infra")
                n.wait_commit("infra", commit)
        elif kind == "hook":
            world.hook_script = "exit %d" % rng.randrange(3)
            what = "git: hook %s" % world.hook_script
            commit = remote.commit(world.files(), what)
            for n in daemons:
                n.fetch("infra")
                n.wait_commit("infra", commit)
        elif kind in ("policy", "broken", "twice"):
            if kind == "policy":
                base = JOBS[jid][1]
                other = "none" if base == "approval" else "approval"
                if world.policy.pop(jid, None) is None:
                    world.policy[jid] = other
                what = "git: %s policy %s" % (
                    jid, world.policy.get(jid, base))
            elif kind == "broken":
                world.broken = None if world.broken else jid
                what = "git: %s" % ("%s does not parse" % jid
                                    if world.broken else "every file parses")
            else:
                world.twice = None if world.twice else jid
                what = "git: %s" % ("%s declared twice" % jid
                                    if world.twice else "declared once")
            commit = remote.commit(world.files(), what)
            for n in daemons:
                n.fetch("infra")
                n.wait_commit("infra", commit)
        elif kind == "outside":
            image = rng.choice(IMAGES)
            what = "outside: %s runs %s" % (jid, image)
            register_as(sim, world.hcl(jid, image), ns)
        elif kind == "sync":
            what = "outside: %s as git has it" % jid
            register_as(sim, world.hcl(jid), ns)
        elif kind == "scale":
            count = rng.randrange(1, 6)
            what = "scale: sc to %d" % count
            sim.call("POST", "/v1/job/sc/scale", {
                "Count": count, "Target": {"Group": "app"}})
        elif kind == "stop":
            what = "outside: stop %s" % jid
            sim.call("DELETE", "/v1/job/%s?namespace=%s" % (jid, ns))
        elif kind == "purge":
            what = "outside: purge %s" % jid
            sim.call("DELETE", "/v1/job/%s?namespace=%s&purge=true" % (
                jid, ns))
        elif kind == "pause":
            held = skip.job(jid, ns)["state"] == "paused"
            what = "%s %s" % ("resume" if held else "pause", jid)
            for n in daemons:
                if held:
                    n.job_action(jid, "resume", ns=ns)
                else:
                    n.job_action(jid, "pause", {"reason": "step %d" % step},
                                 ns=ns)
        elif kind == "reject":
            # A job with a deployment waiting, if there is one.
            waiting = sorted(j for j in JOBS
                             if skip.active(j, JOBS[j][0]) is not None)
            if waiting:
                jid = rng.choice(waiting)
                ns = JOBS[jid][0]
            did = skip.active(jid, ns)
            what = "reject %s's deployment %s" % (jid, did)
            if did is not None and skip.deployment(did)["state"] == \
                    "pending_approval":
                for n in daemons:
                    n.action(did, "reject")
        elif kind == "retry":
            rejected = sorted({d["job"] for d in skip.deployments()
                               if d["state"] == "rejected"})
            if rejected:
                jid = rng.choice(rejected)
                ns = JOBS[jid][0]
            last = [d for d in skip.deployments(jid) if d["namespace"] == ns]
            last = max(last, key=lambda d: d["id"]) if last else None
            what = "retry %s's deployment %s" % (
                jid, last["id"] if last else None)
            if last is not None and last["state"] == "rejected":
                for n in daemons:
                    n.action(last["id"], "retry")
        elif kind == "restart":
            for n in daemons:
                n.stop()
            skip.restart()
            full.restart(extra_env={"NOPS_TEST_NO_SKIP": "1"})
        elif kind == "upgrade":
            version += 1
            what = "Nomad upgraded to 2.0.%d" % version
            sim.call("POST", "/_sim/config", {"version": "2.0.%d" % version})
        elif kind == "leader":
            what = "a new leader"
            sim.call("POST", "/_sim/config", {
                "leader": "127.0.0.%d:4647" % rng.randrange(2, 250)})
        cycle_both(daemons, trigger=not pushed,
                   starts=starts if pushed else None)
        e = skip.engine()
        unchanged += e["last_detection_unchanged"]
        focused += e["last_detection_focused"]
        planned += e["last_detection_planned"]
        ref = full.engine()
        if ref["last_detection_unchanged"] != 0:
            equal = ok("step %d: the reference plans every job" % step,
                       False, json.dumps(ref))
        a, b = decisions(skip), decisions(full)
        if a != b:
            equal = False
            detail = ["step %d (%s), seed %d" % (step, what, seed)]
            for k in sorted(set(a[0]) | set(b[0])):
                if a[0].get(k) != b[0].get(k):
                    detail.append("job %s: skip %s / full %s" % (
                        k, a[0].get(k), b[0].get(k)))
            if a[1] != b[1]:
                detail.append("deployments: skip %s / full %s" % (
                    a[1][-3:], b[1][-3:]))
            if a[2] != b[2]:
                detail.append("stored: skip %s / full %s" % (
                    [r for r in a[2] if r not in b[2]][:2],
                    [r for r in b[2] if r not in a[2]][:2]))
            ok("step %d: %s: same decisions" % (step, what), False,
               "\n".join(detail))
            break
        print("# step %d: %s: same decisions (%d jobs planned, %d from "
              "memory, %d decided%s%s)" % (
                  step, what, e["last_detection_planned"],
                  e["last_detection_unchanged"],
                  e["last_detection_decided"],
                  ", focused" if e["last_detection_focused"] else "",
                  ", full: " + e["last_detection_full_why"]
                  if e["last_detection_full"] else ""),
              flush=True)
    states = {}
    for d in skip.deployments():
        states[d["state"]] = states.get(d["state"], 0) + 1
    print("# deployments made along the way: %s" % (
        ", ".join("%d %s" % (v, k) for k, v in sorted(states.items())) or
        "none"), flush=True)
    ok("%d steps (seed %d): the skip made every decision the full "
       "re-plan made" % (steps, seed), equal)
    ok("the skip answered jobs from memory (%d of %d)" % (
        unchanged, unchanged + planned), unchanged > 0)
    print("# %d of the pushes' cycles were focused on the changed files"
          % focused, flush=True)
    # A push of one file, every file parsing: its cycle is focused (it
    # plans that file's job only) and decides as the reference's full
    # cycle does.  The first push leaves a deployment waiting; after it,
    # with nothing moved in the store, the second decides its job alone
    # and the others (the waiting one too) keep their decisions.
    if equal and (world.broken or world.twice):
        world.broken = world.twice = None
        remote.commit(world.files(), "every file parses, once")
        for n in daemons:
            n.fetch("infra")
            n.wait_commit("infra", remote.head())
        cycle_both(daemons)
    for jid in ("a3", "a1", "a2"):
        if not equal:
            break
        if jid == "a2":
            # The pushes above each created a deployment, which their
            # next cycle decides again; a full cycle settles them.
            cycle_both(daemons)
        world.image[jid] = IMAGES[(IMAGES.index(world.image[jid]) + 1) %
                                  len(IMAGES)]
        starts = [n.engine()["cycles"] for n in daemons]
        commit = remote.commit(world.files(), "git: %s alone" % jid)
        for n in daemons:
            n.fetch("infra")
            n.wait_commit("infra", commit)
        cycle_both(daemons, trigger=False, starts=starts)
        e = skip.engine()
        a, b = decisions(skip), decisions(full)
        equal = ok("a push of %s alone: a focused cycle (%d planned, %d "
                   "decided)" % (jid, e["last_detection_planned"],
                                 e["last_detection_decided"]),
                   e["last_detection_focused"] and
                   e["last_detection_planned"] == 1, json.dumps(e))
        equal = ok("a push of %s alone: the focused cycle decides as the "
                   "full one" % jid, a == b,
                   json.dumps([a[0], b[0], a[1][-3:], b[1][-3:]])[:3000]) \
            and equal
    if equal:
        ok("with nothing moved since the last cycle only the pushed job "
           "is decided (%d)" % e["last_detection_decided"],
           e["last_detection_decided"] == 1, json.dumps(e))
        st, text = skip.curl("GET", "/metrics")
        m = opslib.parse_metrics(text if isinstance(text, str) else "")
        ok("/metrics counts the focused cycles (%s) and says the last was "
           "one, deciding %s job" % (
               opslib.metric(m, "nops_detection_focused_cycles_total"),
               opslib.metric(m, "nops_detection_last_jobs_decided")),
           st == 200 and
           (opslib.metric(m, "nops_detection_focused_cycles_total")
            or 0) >= 3 and
           opslib.metric(m, "nops_detection_last_focused") == 1.0 and
           opslib.metric(m, "nops_detection_last_jobs_decided") == 1.0,
           str(text)[:2000])
    # An unchanged cycle: one survey, no job read or planned.
    cycle_both(daemons)
    cycle_both(daemons)
    e = skip.engine()
    ok("an unchanged cycle costs the survey only (%d requests, %d jobs "
       "planned, %d from memory)" % (e["last_detection_requests"],
                                     e["last_detection_planned"],
                                     e["last_detection_unchanged"]),
       e["last_detection_requests"] <= 2 + 2 + e["last_detection_planned"] * 2
       and e["last_detection_unchanged"] > 0, json.dumps(e))
    # What the files' contents gave is kept by the skip's daemon only:
    # the reference parses every file every cycle, as the seed says.
    ok("an unchanged cycle reads no file again (%d of %d files from what "
       "their content gave before; the reference: %d)" % (
           e["last_detection_files_reused"], world.nfiles(),
           full.engine()["last_detection_files_reused"]),
       e["last_detection_files_reused"] == world.nfiles() and
       full.engine()["last_detection_files_reused"] == 0,
       json.dumps([e, full.engine()]))
    for n in daemons:
        n.stop()
    return 1 if gitlib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
