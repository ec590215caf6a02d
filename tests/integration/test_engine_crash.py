"""Crash tests of the engine: kill -9 the master at every apply step (the
test build's NOPS_CRASH_AT points), and the nomadworker while a request
of each step is in flight, many times; after the restart nothing may be
registered or dispatched twice for one deployment, and every deployment
must end in a terminal state.

What Nomad saw is read from nomadsim, never from nops: a register is an
evaluation triggered by "job-register" on the job, a hook run is a child
of the hook's revision whose idempotency token names the deployment.

    python3 test_engine_crash.py [ROUNDS] [point-or-case ...]

Without ROUNDS (make check's short pass), each crash point gets 2 rounds
and each nomadworker case 1, as far as a time budget of about two minutes
allows; `make crash-soak` runs 20 rounds of each.
"""
import os
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import setup, job_hcl, hook_hcl, ok, wait_until  # noqa

TERMINAL = ("completed", "failed", "rejected", "superseded")
ROUNDS = 2
WORKER_ROUNDS = 1
# Seconds for the master's points (all rounds), then the nomadworker's
# cases: a round past its point's share is left out, not the first one.
BUDGET = 80.0
WORKER_BUDGET = 45.0

# point -> (outcome, registers, pre runs, post runs) of one deployment.
# A run saved as pending is looked for by its token and, when Nomad has
# none, dispatched with that token: Nomad answers a repeated token with
# the run it made, so the hook runs once.
POINTS = [
    ("pre-hook-pending", "completed", 1, 1, 1),
    ("pre-hook-dispatched", "completed", 1, 1, 1),
    ("registering", "completed", 1, 1, 1),
    ("registered", "completed", 1, 1, 1),
    ("healthy", "completed", 1, 1, 1),
    ("post-hook-pending", "completed", 1, 1, 1),
    ("post-hook-dispatched", "completed", 1, 1, 1),
]


def files(tag):
    """The job and its two hooks, all three new at every tag: each round
    has its own hook revisions, so their children count alone."""
    return {
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto", count=1,
                                       image="nginx:" + tag, pre="pre",
                                       post="post"),
        "nomad/pre.nomad.hcl": hook_hcl("pre", "echo pre %s" % tag),
        "nomad/post.nomad.hcl": hook_hcl("post", "echo post %s" % tag),
    }


def registers(sim, jid="web"):
    """Evaluations a register of the job made (one per register call,
    even one that changes nothing and makes no new version)."""
    st, evs = sim.call("GET", "/v1/job/%s/evaluations" % jid)
    if st != 200:
        return 0
    return sum(1 for e in evs if e.get("TriggeredBy") == "job-register")


def version(sim, jid="web"):
    j = sim.job(jid)
    return j["Version"] if j else -1


def children(sim, revision):
    """The dispatched runs of a hook revision, with their tokens."""
    out = []
    for stub in sim.jobs(revision + "/dispatch-"):
        if stub.get("ParentID") != revision:
            continue
        j = sim.job(stub["ID"])
        out.append((stub["ID"], j["DispatchIdempotencyToken"] if j else None))
    return out


def drive(nops, did, timeout=30):
    """Move the simulated cluster on until the deployment ends."""
    return nops.wait_deploy_state(did, TERMINAL, timeout, sim_step=5)


def wait_death(nops, sim, timeout=30):
    """The master's exit status once it is gone, moving the cluster on
    meanwhile (a hook's run or a health wait needs the clock); None if it
    lives on."""
    def dead():
        if nops.proc.poll() is not None:
            return True
        sim.advance(5)
        return False
    wait_until(dead, timeout, step=0.2)
    return nops.proc.poll()


def deployment_of(nops, commit):
    ds = [d for d in nops.deployments("web") if d["commit"] == commit]
    return ds[0] if ds else None


class Counts:
    """What Nomad holds before a deployment, to compare after it."""

    def __init__(self, sim):
        self.registers = registers(sim)
        self.version = version(sim)


def check_deployment(name, sim, nops, d, before, outcome, nreg, npre, npost,
                     why=None):
    """The invariants of one deployment after a crash and a restart."""
    ok(name + ": the deployment ends", d is not None and
       d["state"] in TERMINAL, d)
    if d is None:
        return
    ok(name + ": it ends " + outcome, d["state"] == outcome,
       (d["state"], d["reason"], nops.logtext()[-2500:]))
    if outcome == "failed" and why:
        ok(name + ": the failure says why", why in (d["reason"] or ""),
           d["reason"])
    reg = registers(sim) - before.registers
    ok(name + ": registered %d time(s), not more" % nreg, reg == nreg,
       "%d register(s)" % reg)
    ok(name + ": the job's version moved by %d" % nreg,
       version(sim) - before.version == nreg,
       (before.version, version(sim)))
    for h, want in (("pre", npre), ("post", npost)):
        hook = [x for x in d["hooks"] if x["phase"] == h][0]
        runs = children(sim, hook["revision"])
        token = "%d:%s:0" % (d["id"], h)
        want = want if isinstance(want, tuple) else (want,)
        ok(name + ": %s hook dispatched %s time(s), not more" % (
           h, " or ".join(str(w) for w in want)),
           len(runs) in want and all(t == token for _, t in runs),
           (runs, token, hook["run"]))
        if want == (1,) and outcome == "completed":
            ok(name + ": nops followed the %s hook's one run" % h,
               hook["run"] is not None and runs and
               hook["run"]["child"] == runs[0][0] and
               hook["run"]["state"] == "succeeded", (hook["run"], runs))


def crash_round(name, env, sim, remote, nops, point, outcome, nreg, npre,
                npost, tag):
    """One round: restart with the crash point, push a change, let the
    master kill itself there, restart without it, drive to the end."""
    nops.stop()
    nops.restart(extra_env={"NOPS_CRASH_AT": point})
    before = Counts(sim)
    said = nops.logtext().count("crashing at " + point)
    commit = remote.commit(files(tag), "round " + tag)
    nops.fetch(remote.name)
    died = wait_death(nops, sim)
    if not ok(name + ": the master died at %s" % point, died == -9,
              (died, nops.logtext()[-2500:])):
        nops.stop()
        nops.restart()
        return
    ok(name + ": it said where", nops.logtext().count(
       "crashing at " + point) == said + 1)
    nops.restart()
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    if d:
        drive(nops, d["id"])
        d = nops.deployment(d["id"])
    check_deployment(name, sim, nops, d, before, outcome, nreg, npre,
                     npost, "fate is unknown")
    # Nothing moves later either: an extra cycle or two of apply.
    sim.advance(30)
    time.sleep(1.2)
    ok(name + ": nothing more is registered later",
       registers(sim) - before.registers == nreg)
    check_all_ended(name, nops, commit)


def check_all_ended(name, nops, commit):
    ds = nops.deployments("web")
    ok(name + ": one deployment for the commit",
       len([d for d in ds if d["commit"] == commit]) == 1, ds)
    ok(name + ": every deployment of the job has ended",
       all(d["state"] in TERMINAL for d in ds),
       [(d["id"], d["state"]) for d in ds])


def case_master(point, outcome, nreg, npre, npost, rounds, deadline):
    env, sim, remote, nops = setup({
        "nomad/pre.nomad.hcl": hook_hcl("pre"),
        "nomad/post.nomad.hcl": hook_hcl("post")})
    took = 0.0
    try:
        for r in range(rounds):
            if r > 0 and time.monotonic() + took > deadline:
                print("# %s: time budget spent after %d round(s)" %
                      (point, r), flush=True)
                break
            t0 = time.monotonic()
            crash_round("master %s #%d" % (point, r + 1), env, sim, remote,
                        nops, point, outcome, nreg, npre, npost,
                        "%s-%d" % (point, r))
            took = time.monotonic() - t0
            print("# round took %.1f s" % took, flush=True)
    finally:
        env.cleanup()


# The nomadworker is killed while a request of each step is held in
# flight by nomadsim (a stall); the request still reaches the cluster
# after the worker is gone.  name -> (method, path regex, when the stall
# is set, {outcome: (registers, pre runs, post runs)}).  A dispatch in
# flight when the worker died is sent again with the same idempotency
# token, and Nomad answers with the one run; the hook runs at most once
# (or not at all, when the held dispatch reaches a revision nops stopped
# meanwhile).
STALL = 4.0
REV = "-[0-9a-f]{8}"
WORKER_CASES = [
    ("revision register", "POST", "^/v1/job/pre%s$" % REV, "push",
     {"completed": (1, 1, 1)}),
    ("pre hook dispatch", "POST", "^/v1/job/pre%s/dispatch$" % REV, "push",
     {"failed": (0, (0, 1), 0), "completed": (1, 1, 1)}),
    ("a pre hook runs", "GET",
     "^/v1/job/pre%s/dispatch-[^/]+/allocations$" % REV, "push",
     {"completed": (1, 1, 1)}),
    ("plan before register", "POST", "^/v1/job/web/plan$", "pre_hooks",
     {"completed": (1, 1, 1)}),
    ("register", "POST", "^/v1/job/web$", "push", {"completed": (1, 1, 1)}),
    ("health wait", "GET", "^/v1/job/web/deployment$", "push",
     {"completed": (1, 1, 1)}),
    ("post hook dispatch", "POST", "^/v1/job/post%s/dispatch$" % REV,
     "push", {"failed": (1, 1, (0, 1)), "completed": (1, 1, 1)}),
]


def add_stall(sim, method, regex):
    st, f = sim.call("POST", "/_sim/faults", {
        "Method": method, "Path": regex, "Match": "regex", "Count": 1,
        "Action": "stall", "Seconds": STALL})
    if st != 200:
        raise RuntimeError("nomadsim refused the fault: %s %s" % (st, f))
    return f["ID"]


def fault_taken(sim, fid):
    st, fs = sim.call("GET", "/_sim/faults")
    return st == 200 and not any(f["ID"] == fid for f in fs)


def worker_round(name, env, sim, remote, nops, method, regex, when,
                 outcomes, tag):
    before = Counts(sim)
    fid = add_stall(sim, method, regex) if when == "push" else None
    commit = remote.commit(files(tag), "round " + tag)
    nops.fetch(remote.name)
    d = wait_until(lambda: deployment_of(nops, commit), 15)
    if not ok(name + ": a deployment starts", d):
        return
    if when == "pre_hooks":
        # The hook's run waits for the clock: the plan comes after it.
        wait_until(lambda: nops.deployment(d["id"])["state"] == "pre_hooks",
                   10)
        fid = add_stall(sim, method, regex)

    def taken():
        if fault_taken(sim, fid):
            return True
        sim.advance(2)
        return False
    held = wait_until(taken, 30, step=0.2)
    if not ok(name + ": the request is held in flight", held,
              nops.deployment(d["id"])):
        sim.call("DELETE", "/_sim/faults")
        return
    old = nops.worker("nomadworker")
    os.kill(old["pid"], signal.SIGKILL)
    killed = time.monotonic()
    new = wait_until(lambda: nops.worker("nomadworker")["pid"] not in
                     (0, old["pid"]) and nops.worker("nomadworker"), 15)
    ok(name + ": the master restarts the nomadworker",
       new and new["restarts"] > old["restarts"], (old, new))
    drive(nops, d["id"])
    # The held request reaches the cluster after the worker is gone:
    # count only once it has.
    left = STALL + 0.5 - (time.monotonic() - killed)
    if left > 0:
        time.sleep(left)
    drive(nops, d["id"], 10)
    sim.advance(30)
    time.sleep(1.5)
    d = nops.deployment(d["id"])
    state = d["state"] if d else None
    print("# %s: %s%s" % (name, state, ": " + d["reason"]
                          if d and d["reason"] else ""), flush=True)
    want = outcomes.get(state)
    if not ok(name + ": it ends " + " or ".join(sorted(outcomes)),
              want is not None, (d, nops.logtext()[-2500:])):
        return
    check_deployment(name, sim, nops, d, before, state, *want,
                     why="fate is unknown")
    check_all_ended(name, nops, commit)


def case_worker(label, method, regex, when, outcomes, rounds, deadline):
    env, sim, remote, nops = setup({
        "nomad/pre.nomad.hcl": hook_hcl("pre"),
        "nomad/post.nomad.hcl": hook_hcl("post")})
    took = 0.0
    try:
        for r in range(rounds):
            if r > 0 and time.monotonic() + took > deadline:
                print("# worker %s: time budget spent after %d round(s)" %
                      (label, r), flush=True)
                break
            t0 = time.monotonic()
            worker_round("nomadworker killed: %s #%d" % (label, r + 1), env,
                         sim, remote, nops, method, regex, when, outcomes,
                         "w%d-%d" % (WORKER_CASES.index(
                             [c for c in WORKER_CASES if c[0] == label][0]),
                             r))
            took = time.monotonic() - t0
            print("# round took %.1f s" % took, flush=True)
    finally:
        env.cleanup()


if __name__ == "__main__":
    args = sys.argv[1:]
    if args and args[0].isdigit():
        # Rounds asked for are all run, whatever the time.
        ROUNDS = WORKER_ROUNDS = int(args.pop(0))
        BUDGET = WORKER_BUDGET = float("inf")
    import gitlib
    hooks = gitlib.test_hooks_built()
    start = time.monotonic()
    for i, (point, outcome, nreg, npre, npost) in enumerate(POINTS):
        if args and point not in args:
            continue
        if not hooks:
            # The crash points are the test build's (NOPS_CRASH_AT).
            gitlib.skip("master %s" % point, gitlib.NO_TEST_HOOKS)
            continue
        # Each point gets its share of what is left of the budget.
        left = BUDGET - (time.monotonic() - start)
        share = left / (len(POINTS) - i)
        try:
            case_master(point, outcome, nreg, npre, npost, ROUNDS,
                        time.monotonic() + share)
        except Exception:
            import traceback
            ok("master %s ran to its end" % point, False,
               traceback.format_exc())
    for i, (label, method, regex, when, outcomes) in enumerate(
            WORKER_CASES):
        if args and label not in args:
            continue
        left = BUDGET + WORKER_BUDGET - (time.monotonic() - start)
        share = left / (len(WORKER_CASES) - i)
        try:
            case_worker(label, method, regex, when, outcomes, WORKER_ROUNDS,
                        time.monotonic() + share)
        except Exception:
            import traceback
            ok("nomadworker %s ran to its end" % label, False,
               traceback.format_exc())
    sys.exit(1 if gitlib.failures else 0)
