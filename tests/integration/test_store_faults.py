"""The store fails safe, against the real daemon (nopsd.8, THE STORE):

- a small tmpfs holds the database and fills up while a new commit
  arrives: the superseding write fails, the job says why, nothing is left
  half-done; once space is freed the next cycle (seconds later, not the
  next drift tick) supersedes the old deployment and the branch head
  waits for approval: no deployment is left waiting for an old commit;
- a deploy-now is queued, and the disk fills while its detection cycle
  waits on Nomad: the decision fails, the request is carried (not lost)
  and, once space is freed, the next cycle deploys it, recorded as the
  person's deploy-now;
- the database file is deleted while nopsd runs: the next write is
  refused with a clear error, the daemon says so loudly and exits
  non-zero; at the next start the write-ahead log without its database is
  refused, unless nopsd is told to start afresh (-F).
"""
import atexit
import errno
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import (Env, Sim, Remote, Nops, job_hcl, ok,  # noqa: E402
                       wait_until)
from gitlib import NOPSD  # noqa: E402


def mount_tmpfs(path, size):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s,mode=0711" %
                    size, "tmpfs", path], check=True)
    atexit.register(lambda: subprocess.run(["umount", "-l", path]))


def fill(path):
    """Write until the filesystem is full; the file's path."""
    f = os.path.join(path, "filler")
    # Unbuffered: a buffered file would try its last partial chunk again
    # at close and raise ENOSPC from there.
    with open(f, "wb", buffering=0) as out:
        try:
            while True:
                out.write(b"\0" * 65536)
                out.flush()
        except OSError as e:
            if e.errno != errno.ENOSPC:
                raise
    return f


def pending(nops):
    return [d for d in nops.deployments("web")
            if d["state"] == "pending_approval"]


def case_disk_full():
    env = Env()
    sim = Sim(env)
    db = env.path("db-nopsd")
    # The database on a small tmpfs; the git cache below it on another.
    mount_tmpfs(db, "16m")
    mount_tmpfs(os.path.join(db, "git"), "64m")
    remote = Remote(env, "infra")
    remote.commit({"nomad/web.nomad.hcl": job_hcl("web")}, "A")
    a = remote.head()
    nops = Nops(env, sim, [{"name": "infra", "url": "file://" + remote.bare,
                            "path": "nomad", "poll": "1h"}])
    try:
        ok("disk full: deployment 1 waits for approval at commit A",
           nops.wait_job("web", "pending_approval", 20),
           nops.logtext()[-2000:])
        first = nops.active("web")
        filler = fill(db)
        remote.commit({"nomad/web.nomad.hcl": job_hcl("web", count=3)},
                      "B")
        b = remote.head()
        nops.ctl("fetch", "infra")
        got = wait_until(lambda: nops.job_state("web") == "error", 20)
        job = nops.job("web") or {}
        ok("disk full: the commit arrives, superseding fails, the job "
           "says why", got and "full" in (job.get("note") or ""),
           (job.get("state"), job.get("note")))
        d = nops.deployment(first)
        ok("disk full: nothing half-done: deployment %s still waits and "
           "no other was made" % first, d and d["state"] ==
           "pending_approval" and len(nops.deployments("web")) == 1,
           [(x["id"], x["state"]) for x in nops.deployments("web")])
        os.unlink(filler)
        got = wait_until(lambda: [x["commit"] for x in pending(nops)] ==
                         [b], 20)
        ok("disk full: space freed, the next cycle (seconds, not the "
           "drift interval of 1h) supersedes it and the branch head "
           "waits", got, [(x["id"], x["state"], x["commit"][:8])
                          for x in nops.deployments("web")])
        d = nops.deployment(first)
        ok("disk full: no deployment is left waiting for commit A",
           d and d["state"] == "superseded" and
           not [x for x in pending(nops) if x["commit"] == a],
           d and d["state"])
        ok("disk full: the daemon stayed up", nops.proc.poll() is None)
    finally:
        env.cleanup()


def case_carry_deploy_now():
    env = Env()
    sim = Sim(env)
    db = env.path("db-nopsd")
    mount_tmpfs(db, "16m")
    mount_tmpfs(os.path.join(db, "git"), "64m")
    remote = Remote(env, "infra")
    remote.commit({"nomad/web.nomad.hcl": job_hcl("web", policy="none")},
                  "A")
    nops = Nops(env, sim, [{"name": "infra", "url": "file://" + remote.bare,
                            "path": "nomad", "poll": "1h"}])
    try:
        ok("carry: a policy-none job shows its drift",
           nops.wait_job("web", "drift", 20), nops.logtext()[-2000:])
        # The next cycle's first question to Nomad (its leader: every
        # cycle asks, even one that plans nothing) stalls in nomadsim, so
        # the cycle that takes the request waits while the disk fills.
        st, f = sim.call("POST", "/_sim/faults", {
            "Method": "GET", "Path": "^/v1/status/leader$",
            "Match": "regex", "Count": 1, "Action": "stall",
            "Seconds": 3})
        ok("carry: nomadsim took the stall", st == 200, (st, f))
        st, j = nops.job_action("web", "deploy-now")
        ok("carry: deploy-now is queued (202)", st == 202 and
           j.get("queued") is True, (st, j))
        filler = fill(db)
        got = wait_until(lambda: nops.job_state("web") == "error", 20)
        job = nops.job("web") or {}
        ok("carry: the decision fails on the full disk and says so",
           got and "full" in (job.get("note") or ""),
           (job.get("state"), job.get("note")))
        ok("carry: no deployment was made on the full disk",
           nops.deployments("web") == [], nops.deployments("web"))
        os.unlink(filler)
        got = wait_until(lambda: nops.deployments("web") != [], 20)
        ds = nops.deployments("web")
        ok("carry: space freed, the carried deploy-now deploys (seconds, "
           "not the drift interval of 1h)", got and len(ds) == 1, ds)
        d = nops.deployment(ds[0]["id"]) if ds else None
        ok("carry: the deployment is the person's deploy-now, not an "
           "approval-less accident", d is not None and
           "deploy now" in (d.get("reason") or "") and
           d["state"] not in ("pending_approval", "failed"),
           d and (d["state"], d.get("reason")))
        ok("carry: the daemon stayed up", nops.proc.poll() is None)
    finally:
        env.cleanup()


def case_unlinked():
    env = Env()
    sim = Sim(env)
    remote = Remote(env, "infra")
    remote.commit({"nomad/web.nomad.hcl": job_hcl("web")}, "A")
    nops = Nops(env, sim, [{"name": "infra", "url": "file://" + remote.bare,
                            "path": "nomad", "poll": "1h"}])
    try:
        ok("unlinked: a deployment waits", nops.wait_job(
            "web", "pending_approval", 20), nops.logtext()[-2000:])
        did = nops.active("web")
        dbfile = os.path.join(nops.db, "nops.db")
        os.unlink(dbfile)
        st, j = nops.action(did, "reject", {"reason": "no"})
        msg = json_msg(j)
        ok("unlinked: the next write is refused with a clear error",
           st == 500 and "deleted" in msg, (st, j))
        try:
            rc = nops.proc.wait(15)
        except subprocess.TimeoutExpired:
            rc = None
        log = nops.logtext()
        ok("unlinked: nopsd says so loudly and exits non-zero (%s)" % rc,
           rc not in (None, 0) and "FATAL: database" in log and
           "was deleted while nopsd ran" in log, log[-1500:])
        ok("unlinked: the write-ahead log is still there",
           os.path.exists(dbfile + "-wal"))
        r = subprocess.run([NOPSD, "-d", "-f", nops.conf],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=30)
        ok("unlinked: a restart refuses the log without its database",
           r.returncode != 0 and "write-ahead log" in r.stdout and
           "-F" in r.stdout and not os.path.exists(dbfile),
           r.stdout[-1500:])
        p = env.start([NOPSD, "-d", "-F", "-f", nops.conf],
                      stdout=open(nops.log, "a"), stderr=subprocess.STDOUT)
        nops.proc = p
        up = wait_until(lambda: nops.ctl("-j", "status")[0] == 0, 20)
        ok("unlinked: -F starts afresh, the log kept aside", up and
           os.path.exists(dbfile + "-wal.orphan"), nops.logtext()[-1500:])
    finally:
        env.cleanup()


def json_msg(j):
    try:
        return j["error"]["message"]
    except (TypeError, KeyError):
        return str(j)


case_disk_full()
case_carry_deploy_now()
case_unlinked()
