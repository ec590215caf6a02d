"""Secrets never appear in logs, pages, API answers or the database in
clear: a login password, a session id, an API token, a webhook secret, and
a secret value in a job's environment (which the stored spec to register
holds by design, but no page, answer or log line shows)."""
import glob
import hashlib
import hmac
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "browser"))
from webenv import Web, Client, USERS  # noqa: E402
from enginelib import job_hcl, hook_hcl, ok, wait_until  # noqa: E402
import gitlib  # noqa: E402

ENV_SECRET = "envSecret-7c1e9a44"
HOOK_SECRET = "whSecret-52b7e0d1"

env_job = job_hcl("web", pre="migrate").replace(
    '      config {', '      env {\n        DB_PASSWORD = "%s"\n      }\n'
    '      config {' % ENV_SECRET, 1)
w = Web(files={"nomad/web.nomad.hcl": env_job,
               "nomad/migrate.nomad.hcl": hook_hcl("migrate")})
nops = w.nops
secret_path = w.env.path("infra.webhook")
with open(secret_path, "w") as f:
    f.write(HOOK_SECRET + "\n")
os.chmod(secret_path, 0o600)
# Named by a reload, not at start: the master (now _nopsd) reads it itself.
gitlib.give_to_master(secret_path)
with open(nops.conf) as f:
    conf = f.read()
conf = conf.replace('repository "infra" {\n', 'repository "infra" {\n'
                    '\twebhook secret file "%s"\n' % secret_path, 1)
with open(nops.conf, "w") as f:
    f.write(conf)
rc, out, err = nops.ctl("reload")
ok("secrets: the config with a webhook secret loads", rc == 0, err)

did = w.wait_pending()
ok("secrets: a deployment waits", did, nops.logtext()[-2000:])

seen = []	# every page and answer a client got

# An API token, shown once.
rc, tok, err = nops.ctl("token", "create", "robot", "--policy", "deployer")
token = tok.strip()
ok("secrets: a token is created", rc == 0 and token.startswith("nops_"),
   (rc, tok, err))

# A login: the password goes in, a session cookie comes out.
c = Client(w.url)
logged, info = c.login("alice", USERS["alice"])
ok("secrets: alice logs in", logged, info)
session = [ck.value for ck in c.jar if ck.name == "nops_session"]
ok("secrets: the session cookie is set", len(session) == 1)
for path in ("/", "/jobs", "/deployments", "/deployments/%d" % (did or 0),
             "/activity", "/api/v1/overview", "/api/v1/jobs",
             "/api/v1/deployments", "/api/v1/deployments/%d" % (did or 0),
             "/api/v1/jobs/default/web", "/api/v1/events",
             "/api/v1/session", "/api/v1/repositories", "/metrics"):
    st, h, body = c.get(path)
    seen.append(("%s %d" % (path, st), json.dumps(h) + body))
st, h, body = c.req("GET", "/api/v1/tokens", headers={
    "Authorization": "Bearer " + token})
seen.append(("tokens %d" % st, body))

# A signed webhook delivery.
payload = b'{"ref":"refs/heads/main"}'
sig = hmac.new(HOOK_SECRET.encode(), payload, hashlib.sha256).hexdigest()
st, h, body = c.req("POST", "/webhook/git/infra", payload,
                    "application/json", {"X-Hub-Signature-256":
                                         "sha256=" + sig,
                                         "X-GitHub-Delivery": "d-1"})
ok("secrets: a signed webhook is accepted", st == 202, (st, body))
seen.append(("webhook", body))

# A wrong password and a wrong token are logged as failures, not echoed.
c2 = Client(w.url)
c2.login("alice", "wrong-" + USERS["alice"])
c2.req("GET", "/api/v1/jobs", headers={"Authorization": "Bearer " +
                                       token[:-4] + "AAAA"})
nops.ctl("log", "verbose")
st, h, body = c.form("/logout", {"csrf": c.csrf(c.get("/")[2]) or ""})

secrets = {"password": USERS["alice"], "token": token,
           "webhook secret": HOOK_SECRET,
           "session id": session[0] if session else "none"}
ok("secrets: the job's secret env value is in git only",
   ENV_SECRET in env_job)

log = nops.logtext()
for name, value in secrets.items():
    ok("secrets: the %s is not in the daemon's log" % name, value not in log)
ok("secrets: the job's env secret is not in the daemon's log",
   ENV_SECRET not in log)
for name, value in list(secrets.items()) + [("env secret", ENV_SECRET)]:
    leaks = [p for p, body in seen if value in body]
    ok("secrets: the %s is in no page or API answer" % name, not leaks,
       leaks)

# The database (and its WAL): none of nops' own secrets in clear.
dbfiles = glob.glob(nops.db + "/nops.db*")
blob = b"".join(open(p, "rb").read() for p in dbfiles)
for name, value in secrets.items():
    ok("secrets: the %s is not in the database in clear" % name,
       value.encode() not in blob)
r = subprocess.run(["sqlite3", nops.db + "/nops.db",
                    "SELECT diff FROM deployments"], stdout=subprocess.PIPE,
                   text=True)
ok("secrets: the stored diff is redacted", ENV_SECRET not in r.stdout and
   "redacted" in r.stdout, r.stdout[:300])
w.stop()
sys.exit(1 if gitlib.failures else 0)
