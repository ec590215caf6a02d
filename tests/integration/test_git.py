#!/usr/bin/env python3
"""The gitworker against real remotes on loopback (git daemon, git
http-backend, file://, sshd with a pinned host key), sandbox on: the
snapshot follows pushes, force pushes, a deleted and recreated branch;
limits, symlinks and bad names are refused with the last good snapshot
kept; reload adds, removes and changes repositories; the API and nopsctl
show it all.
"""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
from gitlib import ok, wait_until, files_match, git  # noqa: E402

JOB = 'job "%s" {\n  datacenters = ["dc1"]\n}\n'

env = gitlib.Env()
gd = gitlib.GitDaemon(env)
gd.start()
http = gitlib.HttpServer(env)
https = gitlib.HttpServer(env, tls=True)
sshd = gitlib.Sshd(env)

# Remotes and their first commits.
a = gitlib.Remote(env, "a")
a.commit({
    "nomad/web.nomad.hcl": JOB % "web",
    "nomad/web.vars.hcl": 'image = "nginx:1"\n',
    "nomad/api.nomad": JOB % "api",
    "nomad/deep/er/db.nomad.hcl": JOB % "db",
    "nomad/deep/er/db.vars.hcl": "size = 3\n",
    "nomad/orphan.vars.hcl": "nobody = 1\n",
    "nomad/nops.plan.json": '{"hosts": []}\n',
    "nomad/deep/nops.plan.json": "{}\n",
    "nomad/README.md": "not a job\n",
    "outside.nomad.hcl": JOB % "outside",
    "nomadic/x.nomad.hcl": JOB % "x",
}, "first commit")
b = gitlib.Remote(env, "b")
b.commit({"svc.nomad.hcl": JOB % "svc"}, "b: first")
c = gitlib.Remote(env, "c")
c.commit({"jobs/local.nomad.hcl": JOB % "local"}, "c: first")
git("branch", "other", cwd=c.work)
d = gitlib.Remote(env, "d")
d.commit({"ops/ssh.nomad.hcl": JOB % "ssh"}, "d: first")

repos = [
    {"name": "gitd", "url": gd.url("a"), "path": "nomad", "poll": "2s"},
    {"name": "http", "url": http.url("b"), "poll": "1m"},
    {"name": "local", "url": "file://" + c.bare, "path": "jobs",
     "poll": "1m"},
    {"name": "ssh", "url": sshd.url(d.bare), "path": "ops", "poll": "1m",
     "key": sshd.clientkey, "known": sshd.known},
    {"name": "sshbad", "url": sshd.url(d.bare), "poll": "1m",
     "key": sshd.clientkey, "known": sshd.wrong_known},
    {"name": "tls", "url": https.url("b"), "poll": "1m"},
]
n = gitlib.Nopsd(env, repos)

# --- first snapshots, every scheme
for name, remote, top in (("gitd", a, "nomad"), ("http", b, ""),
                          ("local", c, "jobs"), ("ssh", d, "ops")):
    # Over ssh a poll is a key exchange and a git-upload-pack started by
    # sshd: seconds on a loaded machine, so that one may take longer.
    got = n.wait_commit(name, remote.head(), 45 if name == "ssh" else 15)
    ok("%s: first snapshot at the pushed commit" % name, got,
       n.repo(name) if not got else "")
    snap = n.repo(name)
    diff = files_match(snap, remote.files_at(remote.head(), top))
    ok("%s: the snapshot has exactly the expected files and hashes" % name,
       diff == "", diff)

snap = n.repo("gitd")
byp = {f["path"]: f for f in snap["files"]}
ok("gitd: a job gets its vars file",
   byp["nomad/web.nomad.hcl"]["vars"] == "nomad/web.vars.hcl" and
   byp["nomad/deep/er/db.nomad.hcl"]["vars"] == "nomad/deep/er/db.vars.hcl"
   and byp["nomad/api.nomad"]["vars"] is None, byp)
ok("gitd: kinds, plan only at the top of the path",
   byp["nomad/nops.plan.json"]["kind"] == "plan" and
   "nomad/deep/nops.plan.json" not in byp and
   byp["nomad/web.vars.hcl"]["kind"] == "vars" and
   "nomad/orphan.vars.hcl" not in byp, sorted(byp))
ok("gitd: commit author, subject and counts",
   snap["author"] == "Tess Ter <tess@example.org>" and
   snap["subject"] == "first commit" and snap["job_count"] == 3 and
   snap["file_count"] == 6 and snap["generation"] == 1, snap)

e = n.repo("sshbad")
ok("ssh with a host key not in known-hosts: refused, no snapshot",
   n.wait_error("sshbad", "does not match the known-hosts") and
   n.repo("sshbad")["commit"] is None, e)

ok("https with a certificate no CA in the system store signed: refused",
   n.wait_error("tls", "certificate") and n.repo("tls")["commit"] is None,
   n.repo("tls"))

# --- nopsctl and the API
rc, out, err = n.ctl("repos")
ok("nopsctl repos lists every repository",
   rc == 0 and all(r["name"] in out for r in repos), out + err)
rc, out, err = n.ctl("repos", "gitd")
ok("nopsctl repos NAME shows the files",
   rc == 0 and "nomad/web.nomad.hcl (vars nomad/web.vars.hcl)" in out, out)
code, body = n.curl("GET", "/api/v1/repositories")
ok("GET /api/v1/repositories: items and next",
   code == 200 and isinstance(body, dict) and body.get("next") is None and
   len(body["items"]) == len(repos) and
   set(body["items"][0]) >= {"name", "url", "branch", "commit",
                             "fetched_at", "last_error", "next_poll"},
   body)
code, body = n.curl("POST", "/api/v1/repositories/nope/fetch", "{}")
ok("fetch of an unknown repository: 404 not_found",
   code == 404 and body["error"]["code"] == "not_found", body)
code, body = n.curl("GET", "/api/v1/repositories/nope")
ok("an unknown repository: 404 not_found",
   code == 404 and body["error"]["code"] == "not_found", body)
code, body = n.curl("POST", "/api/v1/repositories/gitd/fetch", "{}",
                    ctype="text/plain")
ok("fetch without a JSON content type is refused", code == 415, body)
rc, out, err = n.ctl("fetch", "nope")
ok("nopsctl fetch of an unknown repository exits 1", rc == 1, err)

# --- follow pushes (fetch on request, and by the poll interval)
h = a.commit({"nomad/web.nomad.hcl": JOB % "web2",
              "nomad/new/job.nomad.hcl": JOB % "new",
              "nomad/new/job.vars.hcl": "v = 2\n",
              "nomad/web.vars.hcl": None}, "second")
n.fetch("gitd")
ok("gitd: nopsctl fetch follows a push", n.wait_commit("gitd", h, 10))
snap = n.repo("gitd")
ok("gitd: the new snapshot has the new files, vars file gone",
   files_match(snap, a.files_at(h, "nomad")) == "" and
   snap["generation"] == 2 and
   {f["path"]: f for f in snap["files"]}["nomad/web.nomad.hcl"]["vars"]
   is None, files_match(snap, a.files_at(h, "nomad")))
h = a.commit({"nomad/api.nomad": JOB % "api2"}, "third, by poll")
ok("gitd: the poll interval follows a push without being asked",
   n.wait_commit("gitd", h, 10))
polls = n.repo("gitd")["polls"]
time.sleep(2.5)
r = n.repo("gitd")
ok("gitd: unchanged polls make no new snapshot",
   r["polls"] > polls and r["generation"] == 3 and r["snapshots"] == 3, r)

hb = b.commit({"svc.nomad.hcl": JOB % "svc2", "more.nomad": JOB % "m"},
              "b: second")
n.fetch("http")
ok("http: follows a push", n.wait_commit("http", hb) and
   files_match(n.repo("http"), b.files_at(hb, "")) == "")
hd = d.commit({"ops/ssh.nomad.hcl": JOB % "ssh2"}, "d: second")
n.fetch("ssh")
ok("ssh: follows a push", n.wait_commit("ssh", hd, 45))

# --- force push: history rewritten
before = a.head()
git("checkout", "-q", "--orphan", "rewrite", cwd=a.work)
git("rm", "-q", "-rf", ".", cwd=a.work)
hf = a.commit({"nomad/web.nomad.hcl": JOB % "rewritten"}, "rewritten",
              push=False)
a.push(force=True)
n.fetch("gitd")
ok("gitd: a force push is followed", n.wait_commit("gitd", hf) and
   files_match(n.repo("gitd"), a.files_at(hf, "nomad")) == "")
ok("gitd: the old commit is not an ancestor",
   subprocess.run(["git", "merge-base", "--is-ancestor", before, hf],
                  cwd=a.work).returncode == 1)

# --- the branch deleted, then made again
gen = n.repo("gitd")["generation"]
a.delete_branch()
n.fetch("gitd")
ok("gitd: a deleted branch is an error",
   n.wait_error("gitd", "branch main not found"))
r = n.repo("gitd")
ok("gitd: ... and the last good snapshot stays",
   r["commit"] == hf and r["generation"] == gen and r["file_count"] == 1, r)
rc, out, _ = n.ctl("repos")
ok("nopsctl repos shows the error", "branch main not found" in out, out)
hr = a.commit({"nomad/web.nomad.hcl": JOB % "back"}, "recreated")
n.fetch("gitd")
ok("gitd: the recreated branch is followed and the error cleared",
   n.wait_commit("gitd", hr) and
   wait_until(lambda: n.repo("gitd")["last_error"] is None, 5))

# --- limits, symlinks, bad names
big = "#" + "x" * (1024 * 1024) + "\n"
a.commit({"nomad/big.nomad.hcl": big}, "too big")
n.fetch("gitd")
ok("a file over the size limit: a clear error",
   n.wait_error("gitd", "nomad/big.nomad.hcl is %d bytes, over the "
                "limit of 1048576 bytes per file" % len(big)), n.repo("gitd"))
ok("... and the last good snapshot stays", n.repo("gitd")["commit"] == hr)
many = {"nomad/many/j%04d.nomad.hcl" % i: "" for i in range(2001)}
many["nomad/big.nomad.hcl"] = None
a.commit(many, "too many")
n.fetch("gitd")
ok("too many files: a clear error",
   n.wait_error("gitd", "more than 2000 files"), n.repo("gitd"))
hs = a.commit(dict({k: None for k in many},
                   **{"nomad/evil.nomad.hcl": ("symlink", "/etc/passwd"),
                      "nomad/up.nomad.hcl": ("symlink", "../outside.x"),
                      "nomad/ok.nomad.hcl": JOB % "ok"}), "symlinks")
n.fetch("gitd")
ok("symlinks: the snapshot is taken without them",
   n.wait_commit("gitd", hs) and
   sorted(f["path"] for f in n.repo("gitd")["files"]) ==
   ["nomad/ok.nomad.hcl", "nomad/web.nomad.hcl"], n.repo("gitd"))
notes = {x["path"]: x["text"] for x in n.repo("gitd")["notes"]}
ok("symlinks: each is noted as not followed",
   notes.get("nomad/evil.nomad.hcl", "").startswith("a symlink") and
   "nomad/up.nomad.hcl" in notes, notes)

# A tree with a ".." entry (git itself writes none; a crafted push can).
blob = git("hash-object", "-w", "--stdin", cwd=a.work,
           input=JOB % "escape")
inner = git("mktree", cwd=a.work,
            input="100644 blob %s\tescape.nomad.hcl\n" % blob)
listing = git("ls-tree", "HEAD:nomad", cwd=a.work)
nomad = git("mktree", cwd=a.work,
            input=listing + "\n040000 tree %s\t..\n" % inner)
top = git("mktree", cwd=a.work,
          input="040000 tree %s\tnomad\n" % nomad)
bad = git("commit-tree", top, "-p", "HEAD", "-m", "dotdot", cwd=a.work)
git("push", "-q", "origin", bad + ":refs/heads/main", cwd=a.work)
n.fetch("gitd")
ok("a \"..\" path is refused",
   n.wait_error("gitd", 'refusing "nomad/.."'), n.repo("gitd"))
ok("... and the last good snapshot stays", n.repo("gitd")["commit"] == hs)
git("reset", "-q", "--hard", hs, cwd=a.work)
a.commit({"nomad/tab\there.nomad.hcl": JOB % "tab"}, "control char",
         push=False)
a.push(force=True)
n.fetch("gitd")
ok("a name with a control character is refused",
   n.wait_error("gitd", "a name with a control character"))
hp = a.commit({"nomad/tab\there.nomad.hcl": None}, "clean again")
n.fetch("gitd")
ok("gitd: recovers with the next good commit", n.wait_commit("gitd", hp))

# --- every fetch leaves a pack; past 16 they become one
packdir = [os.path.join(n.db, "git", x, "objects", "pack")
           for x in os.listdir(os.path.join(n.db, "git"))
           if x.startswith("local-")][0]
seen = []
for i in range(18):
    hl = c.commit({"jobs/local.nomad.hcl": JOB % ("local%d" % i)},
                  "c: round %d" % i)
    n.fetch("local")
    if not n.wait_commit("local", hl):
        break
    seen.append(len([x for x in os.listdir(packdir) if x.endswith(".pack")]))
ok("local: 18 fetches in a row each give their snapshot", len(seen) == 18,
   seen)
ok("local: the cache's packs never pile up past 17", max(seen) <= 17 and
   min(seen[10:]) < max(seen), seen)
ok("local: ... and the snapshot after the repack is right",
   files_match(n.repo("local"), c.files_at(hl, "jobs")) == "")

# --- a push of one file: the gitworker sends the others as the same as
# in the commit the master has (IMSG_GIT_SNAP_SAME), not their contents
hl = c.commit({"jobs/keep1.nomad.hcl": JOB % "keep1",
               "jobs/keep1.vars.hcl": "image = \"nginx\"\n",
               "jobs/keep2.nomad.hcl": JOB % "keep2"}, "c: two more jobs")
n.fetch("local")
ok("local: two more job files", n.wait_commit("local", hl))
hl = c.commit({"jobs/local.nomad.hcl": JOB % "local-once-more"},
              "c: one file")
n.fetch("local")
ok("local: a push of one file", n.wait_commit("local", hl))
ok("local: ... the other three files went as the same as before",
   wait_until(lambda: "repository local: commit %.12s, 4 files (3 jobs, 3 "
              "as in " % hl in n.logtext()), n.logtext()[-1500:])
ok("local: ... and the snapshot is git's, contents and all",
   files_match(n.repo("local"), c.files_at(hl, "jobs")) == "")

# --- the sandbox held through all of it
gw = n.worker("gitworker")
ok("the gitworker ran sandboxed and was never restarted",
   gw["restarts"] == 0 and
   gitlib.proc_status(gw["pid"], "Seccomp") == "2" and
   gitlib.proc_status(gw["pid"], "NoNewPrivs") == "1" and
   gitlib.proc_status(gw["pid"], "Uid") != "0", gw)
caches = os.listdir(os.path.join(n.db, "git"))
st = os.stat(os.path.join(n.db, "git"))
ok("caches live under <db dir>/git, owned by the workers' user",
   len(caches) == 4 and st.st_uid != 0 and
   all(os.stat(os.path.join(n.db, "git", x)).st_uid == st.st_uid
       for x in caches), caches)
key = open(sshd.clientkey).read().splitlines()[1]
ok("the ssh private key never reaches the log", key not in n.logtext())

# The master reads the secret files again when the gitworker restarts.
os.unlink(sshd.wrong_known)
os.kill(n.worker("gitworker")["pid"], 9)
ok("a known-hosts file gone when the gitworker restarts: a clear error",
   n.wait_error("sshbad", "known-hosts file %s: No such file or directory; "
                "fix it and reload" % sshd.wrong_known), n.repo("sshbad"))
n.fetch("gitd")
ok("... and the other repositories go on", wait_until(
   lambda: n.repo("gitd")["last_error"] is None and
   n.worker("gitworker")["state"] == "running", 10), n.repo("gitd"))

# --- reload: add, remove, change
git("checkout", "-q", "other", cwd=c.work)
c.branch = "other"
ho = c.commit({"jobs/other.nomad.hcl": JOB % "other"}, "c: other branch")
e2 = gitlib.Remote(env, "e")
he = e2.commit({"e.nomad.hcl": JOB % "e"}, "e: first")
restarts = n.worker("gitworker")["restarts"]
repos2 = [r for r in repos if r["name"] not in ("ssh", "sshbad", "tls")]
repos2[2] = dict(repos2[2], branch="other")
repos2.append({"name": "added", "url": gd.url("e"), "poll": "1m"})
repos2.append({"name": "addedlocal", "url": "file://" + e2.bare,
               "poll": "1m"})
n.write_conf(repos2)
rc, out, err = n.ctl("reload")
ok("reload accepted", rc == 0, err)
names = [r["name"] for r in n.repos()]
ok("reload: a removed repository is gone, added ones are listed",
   "ssh" not in names and "sshbad" not in names and "added" in names and
   "addedlocal" in names,
   names)
ok("reload: an added repository is fetched", n.wait_commit("added", he))
ok("reload: a changed branch is fetched again",
   n.wait_commit("local", ho) and
   n.repo("local")["branch"] == "other", n.repo("local"))
ok("reload: a new file:// remote restarts the gitworker for its sandbox, "
   "and is fetched",
   n.wait_commit("addedlocal", he) and
   n.worker("gitworker")["restarts"] == restarts + 1 and
   "file:// remotes changed" in n.worker("gitworker")["last_exit"],
   n.worker("gitworker"))
ok("reload: unchanged repositories keep their snapshot",
   n.repo("http")["commit"] == hb)
ok("reload: the removed repository's cache is pruned",
   wait_until(lambda: not [x for x in os.listdir(os.path.join(n.db, "git"))
                           if x.startswith("ssh-")], 5),
   os.listdir(os.path.join(n.db, "git")))

# --- limits from the config: set on a reload, they hold from the next poll
for r in repos2:
    if r["name"] == "added":
        r["extra"] = ("max-file-size 1K", "max-files 3",
                      "fetch-timeout 30s")
n.write_conf(repos2)
rc, out, err = n.ctl("reload")
ok("reload with limits for one repository", rc == 0, err)
big2 = "#" + "y" * 2000 + "\n"
he2 = e2.commit({"big.nomad.hcl": big2}, "e: 2 KB")
n.fetch("added")
ok("max-file-size 1K: a 2 KB file is refused with the configured limit",
   n.wait_error("added", "big.nomad.hcl is %d bytes, over the limit "
                "of 1024 bytes per file" % len(big2)), n.repo("added"))
ok("max-file-size: the other repository of the same remote takes it",
   n.fetch("addedlocal") == 0 and n.wait_commit("addedlocal", he2),
   n.repo("addedlocal"))
he3 = e2.commit({"big.nomad.hcl": None,
                 "a.nomad.hcl": "", "b.nomad.hcl": "", "c.nomad.hcl": ""},
                "e: four files")
n.fetch("added")
ok("max-files 3: a fourth file is refused",
   n.wait_error("added", "more than 3 files"), n.repo("added"))
ok("... and the last good snapshot stays",
   n.repo("added")["commit"] == he, n.repo("added"))

n.stop()
ok("nopsd stops cleanly", n.proc.returncode == 0, n.logtext()[-2000:])
sys.exit(1 if gitlib.failures else 0)
