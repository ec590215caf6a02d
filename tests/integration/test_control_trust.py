#!/usr/bin/env python3
"""The control socket's authority cannot be forged by the webworker
(nopsd(8), CONTROL SOCKET).  A compromised webworker (a test hook) sends
the master a request that claims to come from root on the control socket
(POST /api/v1/log, which only an admin may make): without a connection,
and with a socket that is not one.  The master refuses it, logs it as a
forgery, kills the webworker for the violation, and the log level stays
as it was; real local clients keep their authority, root and a member of
the control group, and the master names them by the uid it saw itself.
The forging webworker needs a build with --enable-test-hooks; without
it those cases are skipped.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
from gitlib import ok, wait_until  # noqa: E402


def case(hook):
    env = gitlib.Env()
    n = gitlib.Nopsd(env, [], hook="webworker:" + hook)

    def killed():
        w = n.worker("webworker")
        return w["restarts"] >= 1 and w if \
            "forged control-socket request" in (w["last_exit"] or "") \
            else None
    w = wait_until(killed, 15)
    ok("%s: the webworker is killed for a violation" % hook, w,
       n.status()["workers"])
    log = n.logtext()
    ok("%s: the master logs the forgery, refused" % hook,
       "forged control-socket request 1 (POST /api/v1/log claimed uid 0)"
       in log and "; refused" in log, log[-2000:])
    ok("%s: what it asked for did not happen" % hook,
       n.status()["verbose"] != 0 and
       "log level set to brief" not in log, n.status())
    ok("%s: the master lives" % hook, n.proc.poll() is None)
    running = wait_until(lambda: n.worker("webworker")["state"] ==
                         "running", 15)
    ok("%s: the restarted webworker serves" % hook, running)
    return env, n


if gitlib.test_hooks_built():
    env, n = case("forged-admin")
    env.cleanup()
    env, n = case("forged-admin:fd")
    ok("forged-admin:fd: the socket it sent is named as not a control "
       "connection", "forged control-socket request: not a connection "
       "to the control socket" in n.logtext(), n.logtext()[-1500:])
else:
    # The forging webworker is a test hook; the real clients below are not.
    gitlib.skip("a forged control-socket request from the webworker",
                gitlib.NO_TEST_HOOKS)
    env = gitlib.Env()
    n = gitlib.Nopsd(env, [])

# Real clients: root, and a member of the control group, as seen by the
# master itself.
st, j = n.curl("POST", "/api/v1/log", json.dumps({"verbose": True}))
ok("root on the control socket is a local admin", st == 200 and
   j == {"verbose": True}, (st, j))
ok("... named root in the log", "log level set to verbose by root" in
   n.logtext())
os.chmod(os.path.dirname(n.sock), 0o755)
r = subprocess.run(
    ["setpriv", "--reuid=65534", "--regid=_nopsadm", "--clear-groups",
     "curl", "-s", "-o", "-", "-w", "\n%{http_code}", "--unix-socket",
     n.sock, "-X", "POST", "-H", "Content-Type: application/json", "-d",
     '{"verbose": true}', "http://localhost/api/v1/log"],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
ok("a member of the control group is a local admin, named by its uid",
   r.stdout.endswith("\n200") and
   "log level set to verbose by uid:65534" in n.logtext(),
   (r.stdout, r.stderr, n.logtext()[-800:]))
ok("the master lives", n.proc.poll() is None)
n.stop()
env.cleanup()
sys.exit(1 if gitlib.failures else 0)
