"""The dashboard's dispatch of a request by its kind: a POST of a kind it
has no case for (made so by a test hook, as a route added without its
case would be) is refused with a clear 400 and does nothing; it never
falls into the path that draws a page, which once killed the webworker
without an answer.  A POST to a page is 405 and a GET of a form 405, as
before, and the webworker keeps serving."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gitlib  # noqa: E402
from gitlib import Env, Nopsd, ok  # noqa: E402


def post_form(nops, path, body="csrf=x"):
    r = subprocess.run(["curl", "-s", "-o", "-", "-w", "\n%{http_code}",
                        "--unix-socket", nops.sock, "-X", "POST", "-H",
                        "Content-Type: application/x-www-form-urlencoded",
                        "-d", body, "http://localhost" + path],
                       stdout=subprocess.PIPE, text=True, timeout=30)
    text, _, code = r.stdout.rpartition("\n")
    return int(code or 0), text


def main():
    # The unknown kind is made by a test hook.
    gitlib.need_test_hooks("a POST of a kind the dispatch has no case for "
                           "is refused with 400")
    env = Env()
    try:
        nops = Nopsd(env, [], hook="webworker:dash-unknown-kind")
        before = nops.worker("webworker")
        st, html = post_form(nops, "/jobs/default/web/actions/deploy-now")
        ok("a POST of a kind with no case is refused with 400",
           st == 400, (st, html[:300]))
        ok("the refusal says nothing was done", "nothing was done" in html,
           html[-800:])
        ok("the log names the refused request",
           "no handler for a request of kind" in nops.logtext())
        st, html = post_form(nops, "/deployments/1/approve")
        ok("so is any other form", st == 400, st)
        st, _ = nops.curl("GET", "/jobs")
        ok("pages are still drawn (a GET is not a form)", st == 200, st)
        after = nops.worker("webworker")
        ok("the webworker did not die", before.get("pid") and
           after.get("restarts") ==
           before.get("restarts") and after.get("pid") == before.get("pid"),
           (before, after))
        st, _ = post_form(nops, "/jobs")
        ok("a POST to a page is still 405", st == 405, st)
    finally:
        env.cleanup()


main()
