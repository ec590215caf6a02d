"""The git context of a deployment (issue 12, item 9): the commit's
subject, author and time, its link on the repository's web UI (commit-url,
or none for a host nops cannot guess), and whether the job file changed in
git since the commit last deployed (a git-side change, shown as a redacted
diff) or not (an outside change).  A real git daemon serves the remote."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import Env, Sim, Nops, job_hcl, wait_until  # noqa
import gitlib  # noqa: E402
from gitlib import Remote, GitDaemon, git  # noqa: E402


def ok(name, cond, detail=""):
    return gitlib.ok(name, cond, str(detail)[-2000:])


TEMPLATE = "https://git.example/ops/infra/commit/{commit}"


def web_hcl(image, env_extra=""):
    """web with an env block and a template: secrets to keep out."""
    return job_hcl("web", image=image, group_extra="""    task "side" {
      driver = "docker"
      config {
        image = "busybox"
      }
      env {
        DB_PASSWORD = "hunter2"
        PLAIN = "visible-%s"
      }
      template {
        data = <<EOT
token={{ key "s3cr3t-template" }}
EOT
        destination = "local/x"
      }
    }
""" % env_extra)


def complete(nops, did):
    nops.action(did, "approve")
    return nops.wait_deploy_state(did, ("completed", "failed"), 30,
                                  sim_step=30)


def main():
    env = Env()
    sim = Sim(env)
    daemon = GitDaemon(env)
    daemon.start()
    remote = Remote(env, "infra")
    first = remote.commit({"nomad/web.nomad.hcl": web_hcl("nginx:1.26")},
                          "web: first \x1b[31mred\x1b[0m version")
    plain = Remote(env, "plain")
    plain.commit({"README": "no jobs here\n"}, "readme")
    nops = Nops(env, sim, [
        {"name": "infra", "url": daemon.url("infra"), "path": "nomad",
         "poll": "1h", "extra": ['commit-url "%s"' % TEMPLATE]},
        {"name": "plain", "url": daemon.url("plain"), "poll": "1h"}])
    nops.wait_commit("infra", first)

    did = wait_until(lambda: nops.active("web"), 15)
    d = nops.deployment(did) if did else {}
    g = d.get("git") or {}
    ok("git: the commit's subject is shown, made text (no escape codes)",
       g.get("subject") == "web: first [31mred[0m version", g)
    ok("git: its author", g.get("author") == "Tess Ter <tess@example.org>", g)
    ok("git: its time", isinstance(g.get("time"), str) and
       g["time"][:2] == "20", g)
    ok("git: the link comes from the repository's commit-url",
       g.get("url") == TEMPLATE.replace("{commit}", first), g)
    ok("git: the job file's path", g.get("path") == "nomad/web.nomad.hcl", g)
    ok("git: a first deployment has nothing to compare with",
       g.get("changed") is None and g.get("base_commit") is None and
       "first deployment" in (g.get("summary") or ""), g)
    st, r = nops.api("GET", "/api/v1/repositories/plain")
    ok("git: a repository nops cannot guess a web UI for has no link",
       st == 200 and r.get("commit_url") is None and r.get("commit"), r)
    st, r = nops.api("GET", "/api/v1/repositories/infra")
    ok("git: the repository shows its commit link too",
       st == 200 and r.get("commit_url") ==
       TEMPLATE.replace("{commit}", first), r)
    complete(nops, did)

    # A git-side change: the job file changed since the deployed commit.
    second = nops.push_and_fetch(remote, {
        "nomad/web.nomad.hcl": web_hcl("nginx:1.27", "2")}, "web: 1.27")
    d2 = wait_until(lambda: nops.active("web") not in (None, did) and
                    nops.active("web"), 15)
    g2 = (nops.deployment(d2) or {}).get("git") or {} if d2 else {}
    change = g2.get("change") or ""
    ok("git-side: the deployment says the job file changed in git",
       g2.get("changed") is True and g2.get("base_commit") == first and
       "git-side change" in (g2.get("summary") or ""), g2)
    ok("git-side: the change is a diff of the file since that commit",
       change.startswith("--- a/nomad/web.nomad.hcl\n+++ b/nomad/web.nomad"
                         ".hcl\n@@ ") and
       '-        image = "nginx:1.26"' in change and
       '+        image = "nginx:1.27"' in change, change)
    ok("git-side: env values and template bodies are redacted before "
       "the compare: an env value's edit shows no line",
       "hunter2" not in change and "s3cr3t" not in change and
       "visible" not in change and "PLAIN" not in change, change)
    ok("git-side: the subject of the new commit",
       g2.get("subject") == "web: 1.27" and
       g2.get("url") == TEMPLATE.replace("{commit}", second), g2)
    rc, out, err = nops.ctl("show", str(d2))
    ok("git-side: nopsctl show prints subject, author, link and change",
       rc == 0 and "web: 1.27" in out and "Tess Ter" in out and
       TEMPLATE.replace("{commit}", second) in out and
       "git-side change" in out and '+        image = "nginx:1.27"' in out
       and "hunter2" not in out, out[-2500:])
    st, page = nops.curl("GET", "/deployments/%d" % d2)
    ok("git-side: the page shows the commit, its link and the change",
       st == 200 and 'id="git"' in page and "web: 1.27" in page and
       'href="%s"' % TEMPLATE.replace("{commit}", second) in page and
       'class="gd-add"' in page and "hunter2" not in page, st)
    complete(nops, d2)

    # An outside change: the live job is changed in Nomad; the next
    # commit touches another file only.
    st, _ = sim.call("POST", "/_sim/job/register", {
        "Job": {"ID": "web", "Name": "web", "Datacenters": ["dc1"],
                "Meta": {"nops_managed": "true"},
                "TaskGroups": [{"Name": "app", "Count": 1, "Tasks": [{
                    "Name": "server", "Driver": "docker",
                    "Config": {"image": "nginx:by-hand"}}]}]}})
    # Its commit message is hostile: bytes that are not UTF-8, a bell.
    remote.write({"nomad/other.txt": "not a job\n"})
    git("add", "-A", cwd=remote.work)
    msgfile = env.path("hostile-msg")
    with open(msgfile, "wb") as f:
        f.write(b"docs \xff\xfe only \x07bell\n\nbody\n")
    git("-c", "i18n.commitEncoding=binary", "commit", "-q", "-F", msgfile,
        cwd=remote.work)
    remote.push()
    nops.fetch("infra")
    nops.wait_commit("infra", remote.head())
    d3 = wait_until(lambda: nops.active("web") not in (None, d2) and
                    nops.active("web"), 15)
    g3 = (nops.deployment(d3) or {}).get("git") or {} if d3 else {}
    ok("outside: a drift the file did not make is an outside change",
       g3.get("changed") is False and g3.get("change") is None and
       g3.get("base_commit") == second and
       "outside change" in (g3.get("summary") or ""), g3)
    rc, out, err = nops.ctl("show", str(d3))
    ok("outside: nopsctl show says so", rc == 0 and "outside change" in out,
       out[-1500:])
    # (The outside change may be seen before that commit, by the watch
    # on Nomad's job list: the hostile subject is read off the repository.)
    st, r = nops.api("GET", "/api/v1/repositories/infra")
    subj = (r or {}).get("subject") or ""
    ok("git: a subject that is not text arrives as text (no bell, bad "
       "bytes replaced)", subj.startswith("docs ") and "only" in subj and
       "\x07" not in subj and "\ufffd" in subj, repr(subj))

    # The context outlives a restart (it is stored with the deployment).
    nops.stop()
    nops.restart()
    g4 = nops.deployment(d2).get("git") or {}
    ok("git: the context survives a restart", g4 == g2, (g2, g4))
    env.cleanup()


if __name__ == "__main__":
    try:
        main()
    except Exception:
        import traceback
        ok("test_git_context ran to its end", False, traceback.format_exc())
    sys.exit(1 if gitlib.failures else 0)
