#!/usr/bin/env python3
"""Faults around the gitworker: a remote that goes away and comes back, a
damaged cache, a gitworker killed (-9) in the middle of a fetch and in the
middle of sending a snapshot, and a remote that never answers (the
master's deadline).  Every time the last good snapshot stays, and exactly
one snapshot per commit reaches the master.  All but the first part need
--enable-test-hooks (skipped without).
"""
import os
import signal
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
from gitlib import ok, wait_until, files_match  # noqa: E402

JOB = 'job "%s" {\n  datacenters = ["dc1"]\n}\n'

env = gitlib.Env()
gd = gitlib.GitDaemon(env)
gd.start()
a = gitlib.Remote(env, "a")
first = {"nomad/j%02d.nomad.hcl" % i: JOB % i for i in range(40)}
first["nomad/j00.vars.hcl"] = "x = 1\n"
h1 = a.commit(first, "first")
REPO = {"name": "a", "url": gd.url("a"), "path": "nomad", "poll": "2s"}


def cache_dir(n):
    d = os.path.join(n.db, "git")
    names = [x for x in os.listdir(d) if x.startswith("a-")]
    return os.path.join(d, names[0]) if names else None


# --- the remote goes away, comes back; a damaged cache is rebuilt
n = gitlib.Nopsd(env, [REPO], tag="down")
ok("remote up: first snapshot", n.wait_commit("a", h1))
gd.stop()
h2 = a.commit({"nomad/j01.nomad.hcl": JOB % "one-b"}, "while down")
n.fetch("a")
ok("git daemon stopped: the error is shown",
   n.wait_error("a", "cannot reach " + gd.url("a")), n.repo("a"))
r = n.repo("a")
ok("git daemon stopped: the last good snapshot stays",
   r["commit"] == h1 and r["file_count"] == 41 and r["generation"] == 1, r)
ok("git daemon stopped: retried by itself, with backoff",
   wait_until(lambda: n.repo("a")["last_error"]["failures"] >= 3, 15),
   n.repo("a"))
rc, out, _ = n.ctl("repos")
ok("nopsctl repos shows the error", "cannot reach" in out, out)
gd = gitlib.GitDaemon(env, gd.port)
gd.start()
ok("git daemon back: recovers without being asked",
   n.wait_commit("a", h2, 15) and
   wait_until(lambda: n.repo("a")["last_error"] is None, 5), n.repo("a"))

cache = cache_dir(n)
packdir = os.path.join(cache, "objects", "pack")
for x in os.listdir(packdir):
    if x.endswith(".pack"):
        p = os.path.join(packdir, x)
        size = os.path.getsize(p)
        with open(p, "r+b") as f:
            f.seek(size // 3)
            f.write(b"\0" * (size // 3))
h3 = a.commit({"nomad/j02.nomad.hcl": JOB % "two-c"}, "after damage")
n.fetch("a")
# The fetch offers the cache's last head as known, so the remote sends
# only what is new; the files that did not change go to the master as
# the same as before (IMSG_GIT_SNAP_SAME), unread.
ok("damaged packs in the cache: the next fetch still gives the right "
   "snapshot", n.wait_commit("a", h3) and
   files_match(n.repo("a"), a.files_at(h3, "nomad")) == "" and
   n.repo("a")["last_error"] is None, n.repo("a"))
# A master without a snapshot (restarted) has every file read: the
# snapshot reads the damaged objects, and the cache is wiped and cloned
# again within the same poll.
n.stop()
n.restart()
ok("damaged packs, every file read: the cache is wiped and cloned again",
   n.wait_commit("a", h3) and
   files_match(n.repo("a"), a.files_at(h3, "nomad")) == "" and
   n.repo("a")["last_error"] is None and
   n.repo("a")["cache_rebuilds"] == 1, n.repo("a"))
with open(os.path.join(cache, "config"), "w") as f:
    f.write("[core\n\0garbage\n")
h4 = a.commit({"nomad/j03.nomad.hcl": JOB % "three-d"}, "after garbage")
n.fetch("a")
ok("a cache libgit2 cannot open is wiped and cloned again",
   n.wait_commit("a", h4) and n.repo("a")["cache_rebuilds"] == 2 and
   n.repo("a")["last_error"] is None, n.repo("a"))
ok("... and the snapshot is right",
   files_match(n.repo("a"), a.files_at(h4, "nomad")) == "")
ok("the gitworker was not restarted by any of it",
   n.worker("gitworker")["restarts"] == 0, n.worker("gitworker"))
n.stop()

# What follows needs the gitworker's fault hooks.
if not gitlib.test_hooks_built():
    gitlib.skip("gitworker faults: stall, escape, lie, deadline",
                gitlib.NO_TEST_HOOKS)
    sys.exit(1 if gitlib.failures else 0)


# --- kill -9 while the gitworker sends a snapshot, then while it fetches
def kill_case(where, logline):
    n = gitlib.Nopsd(env, [REPO], hook="gitworker:git-stall:" + where,
                     tag="stall-" + where)
    head = a.head()
    stalled = wait_until(lambda: logline in n.logtext(), 15)
    ok("kill -9 in the %s: the hook stalls the gitworker" % where, stalled,
       n.logtext()[-3000:])
    r = n.repo("a")
    ok("kill -9 in the %s: nothing half-sent is shown" % where,
       r["commit"] is None and r["generation"] == 0, r)
    pid = n.worker("gitworker")["pid"]
    os.kill(pid, signal.SIGKILL)
    ok("kill -9 in the %s: restarted, and the snapshot arrives" % where,
       n.wait_commit("a", head, 20) and
       n.worker("gitworker")["restarts"] == 1, n.repo("a"))
    r = n.repo("a")
    ok("kill -9 in the %s: exactly one snapshot, and a complete one" %
       where, r["generation"] == 1 and r["snapshots"] == 1 and
       files_match(r, a.files_at(head, "nomad")) == "", r)
    left = []
    for root, dirs, files in os.walk(cache_dir(n)):
        left += [f for f in files if f.endswith(".lock") or
                 f.startswith("pack_git2_") or f.startswith("tmp_")]
    ok("kill -9 in the %s: no stale lock or temporary file in the cache" %
       where, left == [], left)
    h = a.commit({"nomad/j03.nomad.hcl": JOB % where}, "after " + where)
    n.fetch("a")
    ok("kill -9 in the %s: the cache goes on working" % where,
       n.wait_commit("a", h) and n.repo("a")["generation"] == 2)
    n.stop()


kill_case("send", "test hook: stalling in the snapshot")
kill_case("fetch", "test hook: stalling in the fetch")


# --- the real gitworker's Landlock rules: only its cache, the CA and DNS
# files, and the file:// remotes of the config
c = gitlib.Remote(env, "c")
hc = c.commit({"c.nomad.hcl": JOB % "c"}, "c: first")
other = os.path.join(a.bare, "HEAD")
n = gitlib.Nopsd(env, [{"name": "c", "url": "file://" + c.bare,
                        "poll": "1m"}],
                 hook="gitworker:git-escape:" + other, tag="escape")
log = wait_until(lambda: "escape: open " + n.db in n.logtext() and
                 n.logtext(), 10) or n.logtext()
if gitlib.landlock_abi() > 0:
    ok("sandbox: /etc/passwd (world-readable) is refused to the gitworker",
       "escape: open /etc/passwd: Permission denied" in log, log[-2000:])
    ok("sandbox: a local repository not in the config is refused",
       "escape: open %s: Permission denied" % other in log, log[-2000:])
else:
    gitlib.skip("sandbox: Landlock refusals", "no Landlock")
ok("sandbox: its cache is allowed",
   "escape: open %s/git: allowed" % n.db in log, log[-2000:])
ok("sandbox: the configured file:// remote is fetched",
   n.wait_commit("c", hc))
n.stop()


# --- a gitworker that lies is killed; its snapshot is never taken
for lie, why in (("path", 'IMSG_GIT_SNAP_FILE: an empty, "." or ".." part'),
                 ("hash", "content does not match its hash"),
                 ("size", "IMSG_GIT_SNAP_DATA: more than"),
                 ("same", "IMSG_GIT_SNAP_SAME: nomad/"),
                 ("twice", ".nomad.hcl twice")):
    n = gitlib.Nopsd(env, [REPO], hook="gitworker:git-lie:" + lie,
                     tag="lie-" + lie)
    head = a.head()
    ok("a gitworker lying about a file's %s is killed for it" % lie,
       wait_until(lambda: n.worker("gitworker")["restarts"] >= 1, 10) and
       why in (n.worker("gitworker")["last_exit"] or ""),
       n.worker("gitworker"))
    r = n.repo("a")
    ok("... the lie about the %s never became a snapshot, the truth then "
       "does" % lie,
       n.wait_commit("a", head, 15) and n.repo("a")["generation"] == 1 and
       files_match(n.repo("a"), a.files_at(head, "nomad")) == "", r)
    n.stop()


# --- a remote that accepts and never answers: the master's deadline
class BlackHole(threading.Thread):
    def __init__(self):
        super().__init__(daemon=True)
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.held = []

    def run(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.held.append(c)


hole = BlackHole()
hole.start()
n = gitlib.Nopsd(env, [{"name": "stuck", "poll": "1m",
                        "url": "git://127.0.0.1:%d/x.git" % hole.port},
                       dict(REPO, poll="1m")],
                 extra_env={"NOPS_TEST_GIT_TIMEOUT": "2:stuck"}, tag="deadline")
ok("a remote that never answers: the deadline ends the poll",
   n.wait_error("stuck", "no answer within 2 s"), n.repo("stuck"))
w = n.worker("gitworker")
ok("... by killing the gitworker, which is restarted",
   wait_until(lambda: n.worker("gitworker")["restarts"] >= 1 and
              n.worker("gitworker")["state"] == "running", 10) and
   "killed by nopsd: poll of repository stuck took longer than 2 s" in
   (n.worker("gitworker")["last_exit"] or ""), w)
h = a.commit({"nomad/j04.nomad.hcl": JOB % "deadline"}, "next to a stuck")
n.fetch("a")
ok("the other repositories are still polled", n.wait_commit("a", h, 20),
   n.repo("a"))
ok("the master lives", n.proc.poll() is None)
n.stop()
hole.sock.close()

sys.exit(1 if gitlib.failures else 0)
