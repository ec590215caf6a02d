#!/usr/bin/env python3
"""Benchmark of the gitworker, printed as ratios measured in one run.

1. Poll cost of an unchanged remote: the time nopsd's poll takes (the
   master's own measure, from sending the poll to the answer: detached
   remote, ls, compare) against `git ls-remote` of the same remote.
2. From `nopsctl fetch` to the new snapshot in the master, for 10
   repositories of 100 job files each (one file changed in each), against
   `git fetch` of the same change into 10 bare mirrors by the git CLI.

Run as root (nopsd must be), from a build tree:
    NOPSD=build/master/nopsd NOPSCTL=build/nopsctl/nopsctl \\
        python3 bench/git_bench.py [rounds] [repos] [files-per-repo]
"""
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "integration"))
import gitlib  # noqa: E402

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
NREPOS = int(sys.argv[2]) if len(sys.argv) > 2 else 10
NFILES = int(sys.argv[3]) if len(sys.argv) > 3 else 100


class UnixHTTP(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.path)


def api(sock, path):
    c = UnixHTTP(sock)
    c.request("GET", path)
    body = c.getresponse().read()
    c.close()
    return json.loads(body)


def timed(argv, **kw):
    t = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t


def main():
    env = gitlib.Env()
    gd = gitlib.GitDaemon(env)
    gd.start()
    remotes = []
    for i in range(NREPOS):
        r = gitlib.Remote(env, "r%02d" % i)
        files = {"nomad/job%03d.nomad.hcl" % j:
                 'job "j%03d" {\n  datacenters = ["dc1"]\n'
                 '  group "g" { count = %d }\n}\n' % (j, j)
                 for j in range(NFILES)}
        r.commit(files, "first")
        remotes.append(r)
    n = gitlib.Nopsd(env, [{"name": r.name, "url": gd.url(r.name),
                            "path": "nomad", "poll": "1h"}
                           for r in remotes], tag="bench")
    for r in remotes:
        if not n.wait_commit(r.name, r.head(), 60):
            sys.exit("first snapshot of %s did not come" % r.name)

    # 1. unchanged remote: nopsd's poll vs git ls-remote
    polls, walls = [], []
    for k in range(ROUNDS):
        r = remotes[k % NREPOS]
        path = "/api/v1/repositories/" + r.name
        before = api(n.sock, path)["polls"]
        t = time.perf_counter()
        subprocess.run([gitlib.NOPSCTL, "-s", n.sock, "fetch", r.name],
                       check=True, stdout=subprocess.DEVNULL)
        while True:
            j = api(n.sock, path)
            if j["polls"] > before:
                break
            time.sleep(0.001)
        walls.append(time.perf_counter() - t)
        polls.append(j["last_poll_ms"] / 1000)
    lsr = [timed(["git", "ls-remote", gd.url(remotes[k % NREPOS].name),
                  "refs/heads/main"]) for k in range(ROUNDS)]
    p, g = statistics.median(polls), statistics.median(lsr)
    w = statistics.median(walls)
    print("unchanged remote: nopsd poll %.1f ms (from nopsctl fetch to the "
          "answer in the API %.1f ms), git ls-remote %.1f ms (medians of "
          "%d)" % (p * 1e3, w * 1e3, g * 1e3, ROUNDS))
    print("ratio poll/ls-remote: %.2f" % (p / g))
    print("ratio nopsctl-fetch-round-trip/ls-remote: %.2f" % (w / g))

    # 2. nopsctl fetch -> new snapshot, 10 repos x 100 files
    mirrors = []
    for r in remotes:
        m = env.path("mirror-" + r.name)
        gitlib.git("clone", "-q", "--bare", r.bare, m)
        mirrors.append(m)
    nops_t, git_t = [], []
    rounds2 = max(3, ROUNDS // 4)
    for k in range(rounds2):
        heads = {}
        for r in remotes:
            heads[r.name] = r.commit(
                {"nomad/job%03d.nomad.hcl" % k:
                 'job "changed%d" {}\n' % k}, "round %d" % k)
        t = time.perf_counter()
        for r in remotes:
            subprocess.run([gitlib.NOPSCTL, "-s", n.sock, "fetch", r.name],
                           check=True, stdout=subprocess.DEVNULL)
        while True:
            items = api(n.sock, "/api/v1/repositories")["items"]
            if all(i["commit"] == heads[i["name"]] for i in items):
                break
            time.sleep(0.002)
        nops_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        for m in mirrors:
            subprocess.run(["git", "fetch", "-q", "origin",
                            "+refs/heads/main:refs/heads/main"], cwd=m,
                           check=True)
        git_t.append(time.perf_counter() - t)
    a, b = statistics.median(nops_t), statistics.median(git_t)
    print("%d repos x %d files, one file changed in each: nopsctl fetch -> "
          "snapshots in the master %.0f ms; git fetch of the %d %.0f ms "
          "(medians of %d)" % (NREPOS, NFILES, a * 1e3, NREPOS, b * 1e3,
                               rounds2))
    print("ratio fetch-to-snapshot/git-fetch: %.2f" % (a / b))
    per = [x / NREPOS for x in nops_t]
    print("per repository: %.1f ms" % (statistics.median(per) * 1e3))
    n.stop()


if __name__ == "__main__":
    main()
