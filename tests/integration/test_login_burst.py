#!/usr/bin/env python3
"""A short run of bench/login_burst (make bench runs the long one):
logins are answered while the master keeps answering other requests,
and the benchmark prints its ratio.  Nothing here is timed: the ratio is
printed for the log, never compared (bench/README.md).
"""
import http.client
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gitlib import ok  # noqa: E402
import gitlib  # noqa: E402

top = os.environ.get("top_srcdir", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", ".."))
r = subprocess.run([sys.executable, os.path.join(top, "bench",
                                                 "login_burst"), "1", "1"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   text=True, timeout=300)
for line in r.stdout.splitlines():
    print("# " + line)
ok("the benchmark runs to its end", r.returncode == 0 and
   "ratio p99 burst / quiet:" in r.stdout, r.stdout[-1500:])
m = re.search(r"logins (\{[^}]*\}), \d+ ms", r.stdout)
ok("logins during the burst succeed (some 200)", m and
   "200:" in m.group(1), r.stdout)
m = re.search(r"statuses quiet (\{[^}]*\}), burst (\{[^}]*\})", r.stdout)
ok("every answer of the master was 200, quiet and during the burst",
   m and re.fullmatch(r"\{200: \d+\}", m.group(1)) and
   re.fullmatch(r"\{200: \d+\}", m.group(2)), r.stdout)
ok("the daemon and its webworker lived",
   "the daemon and its webworker lived: True" in r.stdout, r.stdout)

# The floor (test hooks): checks wait instead of hashing; the variable's
# value is the only password they accept.
sys.path.insert(0, os.path.join(top, "tests", "browser"))
from webenv import Web, USERS  # noqa: E402
os.environ["NOPS_TEST_HASH_WAIT"] = USERS["alice"]
try:
    w = Web(tls=False)
finally:
    del os.environ["NOPS_TEST_HASH_WAIT"]
try:
    right = json.dumps({"username": "alice", "password": USERS["alice"]})
    wrong = json.dumps({"username": "alice", "password": "not-it"})
    rita = json.dumps({"username": "rita", "password": USERS["alice"]})
    codes = []
    for body in (wrong, right, rita):
        c = http.client.HTTPConnection("127.0.0.1", w.port, timeout=60)
        c.request("POST", "/api/v1/login", body=body,
                  headers={"Content-Type": "application/json"})
        codes.append(c.getresponse().status)
        c.close()
    ok("with NOPS_TEST_HASH_WAIT a wrong password is refused, its value "
       "taken for any user", codes == [401, 200, 200], codes)
finally:
    w.stop()
sys.exit(1 if gitlib.failures else 0)
