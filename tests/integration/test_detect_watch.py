#!/usr/bin/env python3
"""Event-driven drift (issue 15 item 2): nopsd keeps blocking queries on
the job and deployment lists of each managed namespace, so what changes
in Nomad is seen without a reload, a fetch or the drift-interval (1h
here, and no reload is sent).

- a change behind nops' back: a waiting deployment appears;
- the job set back as git has it: the waiting deployment completes;
- a job purged in Nomad: detection runs again and plans only that job;
- Nomad down, then up again: the queries come back (backoff) and a
  change made after that is seen;
- an unchanged cycle costs the survey, not a read and a plan per job.

No timing is asserted: each wait is a generous bound on something that
the 1h drift-interval would otherwise take an hour to show.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from enginelib import (Env, StatefulSim, Nops, setup_with, job_hcl,  # noqa
                       ok, wait_until)
import gitlib  # noqa: E402


def register_as(sim, hcl):
    st, job = sim.call("POST", "/v1/jobs/parse", {"JobHCL": hcl,
                                                  "Canonicalize": True})
    st2, body = sim.call("POST", "/v1/jobs", {"Job": job})
    return st == 200 and st2 == 200


def main():
    env = Env()
    sim = StatefulSim(env)
    jobs = ("w1", "w2", "w3")
    for j in jobs:
        register_as(sim, job_hcl(j))
    remote, nops = setup_with(sim, {"nomad/%s.nomad.hcl" % j: job_hcl(j)
                                    for j in jobs})
    ok("start: every job in sync", wait_until(
        lambda: all(nops.job_state(j) == "in_sync" for j in jobs), 30),
       str(nops.jobs()))
    cycles = nops.engine()["cycles"]

    register_as(sim, job_hcl("w2", image="busybox:1"))
    ok("a change behind nops' back is seen without polling",
       nops.wait_job("w2", "pending_approval", 20), nops.logtext()[-1500:])
    e = nops.engine()
    ok("the cycle it started planned that job only (%d planned, %d from "
       "memory)" % (e["last_detection_planned"],
                    e["last_detection_unchanged"]),
       e["cycles"] > cycles and e["last_detection_planned"] == 1 and
       e["last_detection_unchanged"] == 2, str(e))

    register_as(sim, job_hcl("w2"))
    ok("set back as git has it: the waiting deployment completes",
       nops.wait_job("w2", "in_sync", 20))

    sim.call("DELETE", "/v1/job/w3?purge=true")
    ok("a job purged in Nomad drifts (a new deployment waits)",
       nops.wait_job("w3", "pending_approval", 20))

    # Nomad goes away and comes back: the queries reconnect.
    sim.stop()
    ok("Nomad down: nopsd says its watch fails and retries",
       wait_until(lambda: "watch: jobs of namespace default" in
                  nops.logtext(), 20), nops.logtext()[-1500:])
    sim.start()
    ok("Nomad back: the watch answers again",
       wait_until(lambda: "answers again" in nops.logtext(), 90),
       nops.logtext()[-1500:])
    register_as(sim, job_hcl("w1", image="busybox:2"))
    ok("a change after the reconnection is seen",
       nops.wait_job("w1", "pending_approval", 20), nops.logtext()[-1500:])

    c0 = nops.engine()["cycles"]
    nops.ctl("reload")
    wait_until(lambda: nops.engine()["cycles"] > c0 and
               not nops.engine()["detecting"], 20)
    e = nops.engine()
    ok("an unchanged cycle: %d requests for 3 jobs" %
       e["last_detection_requests"],
       e["last_detection_unchanged"] + e["last_detection_planned"] == 3 and
       e["last_detection_requests"] <= 4 + 2 * e["last_detection_planned"],
       str(e))
    nops.stop()
    return 1 if gitlib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
