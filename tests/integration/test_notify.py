#!/usr/bin/env python3
"""Notifications from the real daemon (sent by the sandboxed nomadworker)
to local HTTP receivers, one per adapter: a generic JSON webhook, a
Slack-compatible one and ntfy.  A deployment waiting for approval, a
failing hook, a completed deployment of a job that asks for it (and
none for one that does not), canaries waiting for promotion; a receiver that is down or answers 500
gives a WARN and a rising failure counter in /metrics, and the
deployment goes on unaffected.  Notifications carry no spec or diff, and
the token is never logged.
"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import enginelib  # noqa: E402
import gitlib  # noqa: E402
import opslib  # noqa: E402
from enginelib import job_hcl, hook_hcl  # noqa: E402
from opslib import ok, wait_until, metric  # noqa: E402

TOKEN = "ntok-81d0c2-notify-test-token"
DASH = "https://nops.example.org/"

hook = opslib.Receiver()
chat = opslib.Receiver()
phone = opslib.Receiver()
broken = opslib.Receiver(status=500)
dead_port = gitlib.free_port()	# nothing listens there

env = gitlib.Env()
sim = enginelib.Sim(env)
remote = gitlib.Remote(env, "infra")
remote.commit({
    "nomad/web.nomad.hcl": job_hcl("web", policy="approval",
                                   image="nginx:1.26-secretimage"),
    "nomad/api.nomad.hcl": job_hcl("api", policy="auto", pre="check"),
    "nomad/check.nomad.hcl": hook_hcl("check", "echo no; exit 3"),
    "nomad/done.nomad.hcl": job_hcl(
        "done", policy="auto",
        extra_meta='    nops_notify_completed = "true"'),
    "nomad/quiet.nomad.hcl": job_hcl("quiet", policy="auto"),
}, "initial")
token_path = opslib.secret_file(env, "notify.token", TOKEN + "\n")

conf = [
    'dashboard url "%s"' % DASH,
    'notify "hook" {\n\twebhook url "%s/hook"\n\ttoken file "%s"\n}'
    % (hook.url, token_path),
    'notify "chat" {\n\tslack url "%s/services/T0/B0/x"\n'
    '\tevents { pending-approval failed }\n}' % chat.url,
    'notify "phone" {\n\tntfy url "%s/"\n\ttopic "nops-test"\n'
    '\ttoken file "%s"\n\tevents { failed completed }\n}'
    % (phone.url, token_path),
    'notify "down" {\n\twebhook url "http://127.0.0.1:%d/x"\n'
    '\tevents { pending-approval }\n}' % dead_port,
    'notify "fivehundred" {\n\twebhook url "%s/x"\n'
    '\tevents { pending-approval }\n}' % broken.url,
]
n = enginelib.Nops(env, sim, [{"name": "infra", "url": "file://" +
                               remote.bare, "path": "nomad", "poll": "1h"}],
                   extra=conf)
ok("the daemon starts with four notify blocks",
   n.wait_commit("infra", remote.head()), n.logtext()[-2000:])


def of(receiver, job, event=None):
    out = []
    for r in receiver.got():
        try:
            j = json.loads(r["body"])
        except ValueError:
            j = None
        if j is not None and isinstance(j.get("deployment"), dict):
            if j["deployment"]["job"] != job or \
                    (event and j["event"] != event):
                continue
        elif ("default/%s " % job).encode() not in r["body"]:
            continue
        out.append((r, j))
    return out


# --- pending approval
web = wait_until(lambda: n.job_state("web") == "pending_approval" and
                 n.active("web"), 20)
got = wait_until(lambda: of(hook, "web", "pending-approval"), 15)
ok("webhook: a pending-approval notification arrives", got,
   hook.got())
if got:
    r, j = got[0]
    d = j["deployment"]
    ok("webhook: POST application/json to its path, with the token",
       r["path"] == "/hook" and r["headers"].get("content-type") ==
       "application/json" and r["headers"].get("authorization") ==
       "Bearer " + TOKEN, r["headers"])
    ok("webhook: the right fields", j["event"] == "pending-approval" and
       d["id"] == web and d["namespace"] == "default" and
       d["state"] == "pending_approval" and d["commit"] == remote.head() and
       d["policy"] == "approval" and "reason" in d and
       j["notifier"] == "hook", j)
    ok("webhook: a link to the deployment on the dashboard",
       j["url"] == "https://nops.example.org/deployments/%d" % web, j)
    ok("webhook: never the spec or the diff", "secretimage" not in
       r["body"].decode() and "diff" not in d and "spec" not in d, j)
got = wait_until(lambda: of(chat, "web"), 15)
ok("slack: a {\"text\"} notification arrives", got and
   set(got[0][1]) == {"text"} and "waiting for approval" in
   got[0][1]["text"] and "deployment %d" % web in got[0][1]["text"] and
   "https://nops.example.org/deployments/" in got[0][1]["text"],
   chat.got())
ok("slack: no token is sent to it", got and "authorization" not in
   got[0][0]["headers"], got and got[0][0]["headers"])
ok("ntfy: not subscribed to pending-approval, gets none",
   of(phone, "web") == [], phone.got())
time.sleep(1)
ok("one notification per notifier and event, no more",
   len(of(hook, "web")) == 1 and len(of(chat, "web")) == 1,
   (hook.got(), chat.got()))

# --- a receiver down, and one answering 500
def failures():
    st, text = n.curl("GET", "/metrics")
    return opslib.parse_metrics(text) if st == 200 else {}


m = wait_until(lambda: (lambda s: s if (metric(
    s, "nops_notification_failures_total", notifier="down") or 0) >= 1 and
    (metric(s, "nops_notification_failures_total",
            notifier="fivehundred") or 0) >= 1 else None)(failures()), 25)
ok("down: the failure counter in /metrics rises (down and 500)", m,
   [k for k in failures() if k[0].startswith("nops_notif")])
log = n.logtext()
ok("down: a WARN in the log names the notifier and why",
   "notify down: pending-approval notification of deployment %d failed"
   % web in log and "notify fivehundred: pending-approval notification "
   "of deployment %d failed: HTTP status 500" % web in log,
   log[-2500:])
s = failures()
ok("sent counters count the accepted ones", metric(
    s, "nops_notifications_sent_total", notifier="hook") >= 1 and
   metric(s, "nops_notifications_sent_total", notifier="down") == 0, s and
   [k for k in s if k[0].startswith("nops_notif")])
ok("down: the deployment is unaffected", n.deployment(web)["state"] ==
   "pending_approval", n.deployment(web))
rc, out = opslib.promtool(n.curl("GET", "/metrics")[1])
ok("the metrics with notifiers pass promtool", rc == 0, out)

# --- a failing hook
api = wait_until(lambda: n.active("api") or
                 [d["id"] for d in n.deployments("api")], 20)
reached = wait_until(lambda: [d for d in n.deployments("api")
                              if d["state"] == "failed"] or
                     sim.advance(30) and None, 40, step=0.3)
got = wait_until(lambda: of(hook, "api", "failed"), 15)
ok("failed: the webhook gets a failed notification with the reason",
   reached and got and got[0][1]["deployment"]["state"] == "failed" and
   "exit code 3" in (got[0][1]["deployment"]["reason"] or ""),
   (reached, hook.json_bodies()))
ok("failed: slack too", wait_until(lambda: [
    x for x in of(chat, "api") if "failed" in x[1]["text"]], 10),
   chat.got())
got = wait_until(lambda: of(phone, "api"), 10)
ok("ntfy: text to URL/topic with Title, Tags, Click and the token",
   got and got[0][0]["path"] == "/nops-test" and
   got[0][0]["headers"].get("title") == "nops: default/api failed" and
   "x" in got[0][0]["headers"].get("tags", "").split(",") and
   got[0][0]["headers"].get("click", "").startswith(
       "https://nops.example.org/deployments/") and
   got[0][0]["headers"].get("authorization") == "Bearer " + TOKEN and
   got[0][0]["headers"].get("content-type", "").startswith("text/plain")
   and b"failed" in got[0][0]["body"], got and got[0][0])

# --- completed: only for the job that asks
done = wait_until(lambda: n.active("done") or
                  [d["id"] for d in n.deployments("done")], 20)
quiet = wait_until(lambda: n.active("quiet") or
                   [d["id"] for d in n.deployments("quiet")], 20)
fin = wait_until(lambda: all(
    [d["state"] == "completed" for d in n.deployments(j)] == [True]
    for j in ("done", "quiet")) or sim.advance(30) and None, 45, step=0.3)
got = wait_until(lambda: of(hook, "done", "completed"), 15)
ok("completed: the job with nops_notify_completed = \"true\" notifies",
   fin and got and got[0][1]["deployment"]["state"] == "completed",
   (fin, n.deployments("done"), hook.json_bodies()))
ok("completed: ntfy, subscribed to completed, gets it too",
   wait_until(lambda: of(phone, "done"), 10), phone.got())
time.sleep(2)
ok("completed: a job that does not ask gets no completed notification",
   of(hook, "quiet") == [] and of(phone, "quiet") == [],
   (of(hook, "quiet"), of(phone, "quiet")))
ok("completed: slack, not subscribed to it, gets none",
   of(chat, "done") == [], chat.got())

# --- approve the waiting one: it completes despite the dead receivers
st, r = n.action(web, "approve", {"spec_hash": n.deployment(web)[
    "spec_hash"]})
end = n.wait_deploy_state(web, ("completed", "failed"), 40, sim_step=30)
ok("the deployment with failed notifications completes normally",
   st == 200 and end and n.deployment(web)["state"] == "completed",
   (st, r, n.deployment(web)))
ok("approve itself notifies nobody, nor does web's completion",
   [j["event"] for _, j in of(hook, "web")] == ["pending-approval"],
   [j for _, j in of(hook, "web")])

# --- canaries waiting for promotion
UPDATE = "    update {\n      canary = 1\n      max_parallel = 1\n    }\n"
n.push_and_fetch(remote, {"nomad/quiet.nomad.hcl": job_hcl(
    "quiet", policy="auto", image="nginx:2", group_extra=UPDATE)},
    "canary update")
canary = wait_until(lambda: [d["id"] for d in n.deployments("quiet")
                             if d["state"] not in ("completed", "failed")],
                    20)
waiting = canary and n.wait_deploy_state(canary[0], "awaiting_promotion",
                                         30, sim_step=10)
got = wait_until(lambda: of(hook, "quiet", "awaiting-promotion"), 15)
ok("awaiting promotion: the webhook is told canaries wait",
   waiting and got and got[0][1]["deployment"]["state"] ==
   "awaiting_promotion" and "canary promotion" in got[0][1]["text"],
   (canary, waiting, hook.json_bodies()[-3:]))
ok("awaiting promotion: ntfy, not subscribed to it, is not",
   of(phone, "quiet") == [], phone.got())

hits = opslib.grep_tree([n.log, n.db], TOKEN)
ok("the token is in neither the log nor the database", hits == [], hits)
ok("the webhook URL paths are not logged", "/services/T0/B0/x" not in
   n.logtext())
ok("the daemon is still up", n.proc.poll() is None)
n.stop()
for rcv in (hook, chat, phone, broken):
    rcv.stop()
sys.exit(1 if gitlib.failures else 0)
