"""Periodic jobs: forced launches and launches on the virtual clock."""

import cron
import jobs
import scheduler
from gojson import deepcopy
from jobs import CodedError


def launch(store, parent, when_ns):
    """Derive `parent/periodic-<unix>` and schedule it (Nomad's deriveJob)."""
    child = deepcopy(parent)
    child["ID"] = child["Name"] = "%s/periodic-%d" % (parent["ID"],
                                                     when_ns // 1_000_000_000)
    child["ParentID"] = parent["ID"]
    child["Periodic"] = None
    index = store.next_index("jobs", "job_version", "job_summary", "evals")
    jobs.commit(store, child, store.jobs.get((child["Namespace"], child["ID"])),
                index)
    ev = scheduler.new_eval(store, child, "periodic-job", index)
    store.evals[ev["ID"]] = ev
    scheduler.evaluate(store, ev)
    return ev


def force(store, key):
    job = store.jobs.get(key)
    if job is None:
        raise CodedError(404, "job not found")
    if job["Periodic"] is None or not job["Periodic"].get("Enabled", True):
        raise CodedError(500, "can't force run non-periodic job")
    ev = launch(store, job, store.clock.now())
    return {"EvalID": ev["ID"], "EvalCreateIndex": ev["CreateIndex"],
            "Index": ev["CreateIndex"]}


def arm(store, key):
    """Schedule the next launch of a periodic job on the virtual clock."""
    job = store.jobs.get(key)
    if job is None or job["Periodic"] is None or job["Stop"]:
        return
    if not job["Periodic"].get("Enabled", True):
        return
    nxt = cron.next_launch(job["Periodic"], store.clock.now())
    if nxt is None:
        return
    version = job["JobModifyIndex"]

    def fire():
        cur = store.jobs.get(key)
        # A newer version re-arms itself; stale timers just lapse.
        if cur is None or cur["JobModifyIndex"] != version or cur["Stop"]:
            return
        if cur["Periodic"].get("ProhibitOverlap"):
            for (ns, _), c in store.jobs.items():
                if ns == key[0] and c["ParentID"] == key[1] and c["Status"] != "dead":
                    arm(store, key)
                    return
        launch(store, cur, nxt)
        arm(store, key)
    store.at(nxt, fire)
