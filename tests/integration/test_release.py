#!/usr/bin/env python3
"""The build an operator makes runs: nopsd and nopsctl built without
--enable-test-hooks, which every other test's build has.  scripts/check
builds them in build-release/ and names them in NOPSD_RELEASE and
NOPSCTL_RELEASE; without those this reports one skipped case.

Against nomadsim and a real git remote, the release daemon starts, reads
the repository, plans a job with the auto policy, registers it, follows
its deployment to completed and answers the control socket, nopsctl and
the HTTP listener; the test-only routes are not there (404); SIGTERM
stops it with status 0.  A hook-only code path that the release build
lacked, or a symbol only the hooks defined, fails here.
"""
import json
import os
import subprocess
import sys
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
REL = os.environ.get("NOPSD_RELEASE", "")
RELCTL = os.environ.get("NOPSCTL_RELEASE", "")
# Skipped only when run by hand from a build tree: scripts/check (the
# README's test command, and CI's) always builds the release binaries and
# names them, so there this case runs; it hides no failure.
if not (os.access(REL, os.X_OK) and os.access(RELCTL, os.X_OK)):
    print("ok - release build: nopsd runs without the test hooks # SKIP "
          "no build without them named (scripts/check builds one in "
          "build-release/ and sets NOPSD_RELEASE, NOPSCTL_RELEASE)",
          flush=True)
    sys.exit(0)
# gitlib reads NOPSD and NOPSCTL when it is imported.
os.environ["NOPSD"] = REL
os.environ["NOPSCTL"] = RELCTL
sys.path.insert(0, HERE)
import gitlib  # noqa: E402
from enginelib import setup, job_hcl, ok, wait_until  # noqa: E402


def http_get(port, path):
    """(status, body) of GET path on the HTTP listener."""
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path),
                                    timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    ok("release build: its config.h has no NOPS_TEST_HOOKS",
       not gitlib.test_hooks_built(), REL)
    env, sim, remote, nops = setup({
        "nomad/web.nomad.hcl": job_hcl("web", policy="auto")})
    try:
        did = wait_until(lambda: nops.active("web"), 20)
        ok("release build: the auto job's drift becomes a deployment", did,
           nops.logtext()[-2000:])
        if did:
            nops.wait_deploy_state(did, ("completed", "failed"), 30,
                                   sim_step=30)
            d = nops.deployment(did)
            ok("release build: the deployment completes",
               d is not None and d["state"] == "completed", d)
        job = sim.job("web")
        ok("release build: the job is registered in nomadsim with its "
           "nops meta", job is not None and
           job["Meta"].get("nops_policy") == "auto", job)
        rc, out, err = nops.ctl("-j", "status")
        st = json.loads(out) if rc == 0 else {}
        ok("release build: nopsctl status over the control socket",
           rc == 0 and {w["name"] for w in st.get("workers", [])} >=
           {"gitworker", "nomadworker", "webworker"}, (rc, out, err))
        code, body = http_get(nops.http_port, "/api/v1/status")
        ok("release build: GET /api/v1/status on the HTTP listener needs "
           "a login (401)", code == 401, (code, body[:200]))
        code, body = http_get(nops.http_port, "/login")
        ok("release build: the dashboard's login page answers 200",
           code == 200 and b"<form" in body, (code, body[:200]))
        code, body = nops.api("POST", "/api/v1/debug/nomad",
                              {"method": "GET", "path": "/v1/jobs"})
        ok("release build: the test-only route /api/v1/debug/nomad is "
           "not there (404)", code == 404, (code, body))
        nops.proc.terminate()
        try:
            rc = nops.proc.wait(15)
        except subprocess.TimeoutExpired:
            rc = None
        ok("release build: SIGTERM stops the daemon with status 0",
           rc == 0, (rc, nops.logtext()[-2000:]))
    finally:
        env.cleanup()


main()
sys.exit(1 if gitlib.failures else 0)
