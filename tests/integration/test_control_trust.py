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
import socket
import subprocess
import sys
import time

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


# The webworker batches its epoll changes (libevent's changelist) and
# sends the master a copy of each control connection's socket: a closed
# connection's registration can outlive it while the master holds that
# copy.  Control connections dropped before their answer, while TCP
# connections take their descriptor numbers, must leave every later
# connection served with its own answer and every control request with
# its own authority, and the webworker asleep once it is idle.
def http(sock, request):
    sock.settimeout(10)
    sock.sendall(request)
    data = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    sock.close()
    return data


w0 = n.worker("webworker")
tcp_ok = local_ok = 0
ROUNDS = 120
for i in range(ROUNDS):
    u = socket.socket(socket.AF_UNIX)
    u.connect(n.sock)
    # Answered by the master: the webworker sends it this socket.
    u.sendall(b"POST /api/v1/log HTTP/1.1\r\nHost: localhost\r\n"
              b"Content-Type: application/json\r\nContent-Length: 17\r\n"
              b"\r\n{\"verbose\": true}")
    if i % 2:
        u.shutdown(socket.SHUT_WR)
    u.close()       # gone before its answer
    t = socket.create_connection(("127.0.0.1", n.http_port), 10)
    a = http(t, b"POST /api/v1/log HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
             b"Content-Type: application/json\r\nContent-Length: 17\r\n"
             b"Connection: close\r\n\r\n{\"verbose\": true}" % n.http_port)
    tcp_ok += a.startswith(b"HTTP/1.1 401 ")
    if i == 0:
        first = a[:200]
    if i % 10 == 0:
        u = socket.socket(socket.AF_UNIX)
        u.connect(n.sock)
        a = http(u, b"POST /api/v1/log HTTP/1.1\r\nHost: localhost\r\n"
                 b"Content-Type: application/json\r\n"
                 b"Content-Length: 17\r\nConnection: close\r\n\r\n"
                 b"{\"verbose\": true}")
        local_ok += a.startswith(b"HTTP/1.1 200 ") and \
            a.endswith(b'{"verbose":true}')
ok("control connections dropped mid-request: every TCP request after "
   "them answered as anonymous (401)", tcp_ok == ROUNDS, (tcp_ok, ROUNDS, first))
ok("... and every whole control request answered as root (200)",
   local_ok == (ROUNDS + 9) // 10, local_ok)
st, j = n.curl("POST", "/api/v1/log", json.dumps({"verbose": True}))
ok("... root on the control socket is still a local admin", st == 200,
   (st, j))
gone = n.logtext().count("the client has gone; answered as anonymous")
ok("... the master got copies of connections already dropped (%d)" % gone,
   gone > 0, n.logtext()[-1500:])
w1 = n.worker("webworker")
ok("... the webworker was not restarted", w1["restarts"] ==
   w0["restarts"] and w1["pid"] == w0["pid"], (w0, w1))
ok("... and no request was taken for a forgery",
   "forged control-socket request" not in n.logtext().split(
       "log level set to verbose by uid:65534")[-1], n.logtext()[-1500:])


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rpartition(")")[2].split()[0]


time.sleep(0.5)
states = []
for _ in range(20):
    states.append(proc_state(w1["pid"]))
    time.sleep(0.05)
ok("... and, idle, it sleeps (no registration left reporting a closed "
   "connection)", states.count("S") >= 15, states)
n.stop()
env.cleanup()
sys.exit(1 if gitlib.failures else 0)
