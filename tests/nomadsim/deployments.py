"""Deployments: creation, the watcher (health, promotion, success, failure,
progress deadline, auto-revert) and stable versions.  Callers hold
store.lock.

Like Nomad's deployment watcher, which reaches the job endpoint through an
interface rather than the package, an auto-revert registers the stable
version through store.revert_job (jobs.register, set by server.make_sim);
evaluations go to the broker (evals.create_eval)."""

from . import structs
from .evals import create_eval
from .gojson import deepcopy, multierror, parse_rfc3339, rfc3339, uuid
from .lookup import job_allocs
from .reconcile import reconcile

DESC_RUNNING = "Deployment is running"
DESC_MANUAL = "Deployment is running but requires manual promotion"
DESC_AUTO = "Deployment is running pending automatic promotion"
DESC_PAUSED = "Deployment is paused"
DESC_OK = "Deployment completed successfully"
DESC_STOPPED = "Cancelled because job is stopped"
DESC_NEWER = "Cancelled due to newer version of job"
DESC_UNHEALTHY = "Failed due to unhealthy allocations"
DESC_PROGRESS = "Failed due to progress deadline"
DESC_MARKED = "Deployment marked as failed"


def create_deployment(store, job, r, index):
    now = store.clock.now()
    groups = {}
    for tg in job["TaskGroups"]:
        u = tg["Update"]
        if not u or u["MaxParallel"] <= 0:
            continue
        dc = r.canary_groups.get(tg["Name"], 0)
        groups[tg["Name"]] = {
            "AutoRevert": u["AutoRevert"], "AutoPromote": u["AutoPromote"],
            "ProgressDeadline": u["ProgressDeadline"], "RequireProgressBy": None,
            "Promoted": False, "PlacedCanaries": None, "DesiredCanaries": dc,
            "DesiredTotal": tg["Count"], "PlacedAllocs": 0, "HealthyAllocs": 0,
            "UnhealthyAllocs": 0}
    desc = DESC_RUNNING
    canary_groups = [g for g, s in groups.items() if s["DesiredCanaries"]]
    if canary_groups:
        auto = all(groups[g]["AutoPromote"] for g in canary_groups)
        desc = DESC_AUTO if auto else DESC_MANUAL
    dep = {
        "ID": uuid(), "Namespace": job["Namespace"], "JobID": job["ID"],
        "JobVersion": job["Version"], "JobModifyIndex": job["ModifyIndex"],
        "JobSpecModifyIndex": job["JobModifyIndex"],
        "JobCreateIndex": job["CreateIndex"], "IsMultiregion": False,
        "TaskGroups": groups, "Status": "running", "StatusDescription": desc,
        "EvalPriority": job["Priority"], "CreateIndex": index,
        "ModifyIndex": index, "CreateTime": now, "ModifyTime": now,
    }
    store.deployments[dep["ID"]] = dep
    store.deps_by_job[(job["Namespace"], job["ID"])].append(dep["ID"])
    store.touch("deployment")
    publish_dep(store, dep, "PlanResult")
    return dep


def publish_dep(store, dep, etype):
    store.publish("Deployment", etype, dep["ID"], dep["Namespace"],
                  {"Deployment": deepcopy(dep)}, [dep["JobID"]])


def refresh_deployment(store, dep, etype=None):
    """Recount PlacedAllocs/HealthyAllocs/UnhealthyAllocs from the allocs.

    The row changed in the same raft message as the allocation, so Nomad
    emits a Deployment event with that message's type (etype)."""
    before = {g: (st["PlacedAllocs"], st["HealthyAllocs"], st["UnhealthyAllocs"])
              for g, st in dep["TaskGroups"].items()}
    for g, st in dep["TaskGroups"].items():
        st["PlacedAllocs"] = st["HealthyAllocs"] = st["UnhealthyAllocs"] = 0
    for a in job_allocs(store, dep["Namespace"], dep["JobID"]):
        if a["DeploymentID"] != dep["ID"]:
            continue
        st = dep["TaskGroups"].get(a["TaskGroup"])
        if st is None:
            continue
        st["PlacedAllocs"] += 1
        h = (a["DeploymentStatus"] or {}).get("Healthy")
        if h is True:
            st["HealthyAllocs"] += 1
        elif h is False:
            st["UnhealthyAllocs"] += 1
    after = {g: (st["PlacedAllocs"], st["HealthyAllocs"], st["UnhealthyAllocs"])
             for g, st in dep["TaskGroups"].items()}
    if after == before:
        return
    dep["ModifyIndex"] = store.index
    dep["ModifyTime"] = store.clock.now()
    store.touch("deployment")
    if etype is not None:
        publish_dep(store, dep, etype)


def set_dep_status(store, dep, status, desc):
    dep["Status"] = status
    dep["StatusDescription"] = desc
    dep["ModifyIndex"] = store.next_index("deployment")
    dep["ModifyTime"] = store.clock.now()
    publish_dep(store, dep, "DeploymentStatusUpdate")


def _canaries_healthy(store, dep, group):
    st = dep["TaskGroups"][group]
    healthy = 0
    for aid in st["PlacedCanaries"] or ():
        a = store.allocs.get(aid)
        if a and (a["DeploymentStatus"] or {}).get("Healthy") is True:
            healthy += 1
    return healthy


def watch_deployment(store, dep, etype=None):
    """The deployment watcher: fail, auto-promote, continue or succeed."""
    refresh_deployment(store, dep, etype)
    if dep["Status"] != "running":
        return
    groups = dep["TaskGroups"]
    if any(st["UnhealthyAllocs"] > 0 and st["ProgressDeadline"] == 0
           for st in groups.values()):
        fail_deployment(store, dep, DESC_UNHEALTHY)
        return
    waiting = [g for g, st in groups.items()
               if st["DesiredCanaries"] > 0 and not st["Promoted"]]
    if waiting:
        ready = all(_canaries_healthy(store, dep, g) >= groups[g]["DesiredCanaries"]
                    for g in waiting)
        if ready and all(groups[g]["AutoPromote"] for g in waiting):
            promote(store, dep, None, trigger="deployment-watcher")
        return
    if all(st["HealthyAllocs"] >= st["DesiredTotal"] for st in groups.values()):
        set_dep_status(store, dep, "successful", DESC_OK)
        mark_stable(store, dep["Namespace"], dep["JobID"], dep["JobVersion"])
        return
    job = store.jobs.get((dep["Namespace"], dep["JobID"]))
    if job is not None and job["Version"] == dep["JobVersion"]:
        # Progress was made: let the scheduler place the next batch.
        r = reconcile(store, job, job_allocs(
            store, dep["Namespace"], dep["JobID"]), dep)
        if r.place or r.stop:
            create_eval(store, job, "deployment-watcher", dep["ID"])


def promote(store, dep, groups, trigger="promote"):
    for g, st in dep["TaskGroups"].items():
        if groups is None or g in groups:
            if st["DesiredCanaries"] > 0:
                st["Promoted"] = True
                for aid in st["PlacedCanaries"] or ():
                    a = store.allocs.get(aid)
                    if a and a["DeploymentStatus"]:
                        a["DeploymentStatus"]["Canary"] = False
            if st["ProgressDeadline"]:
                _set_progress(store, dep, st, store.clock.now() + st["ProgressDeadline"])
    waiting = [g for g, st in dep["TaskGroups"].items()
               if st["DesiredCanaries"] > 0 and not st["Promoted"]]
    if not waiting:
        dep["StatusDescription"] = DESC_RUNNING
    dep["ModifyIndex"] = store.next_index("deployment", "allocs")
    publish_dep(store, dep, "DeploymentPromotion")
    job = store.jobs.get((dep["Namespace"], dep["JobID"]))
    ev = create_eval(store, job, trigger, dep["ID"])
    watch_deployment(store, dep)
    return ev


def _set_progress(store, dep, st, due):
    st["RequireProgressBy"] = rfc3339(due)
    _arm_progress(store, dep["ID"], due)


def _arm_progress(store, dep_id, due):
    def check():
        dep = store.deployments.get(dep_id)
        if dep is None or dep["Status"] != "running":
            return
        now = store.clock.now()
        for g, st in dep["TaskGroups"].items():
            rpb = parse_rfc3339(st["RequireProgressBy"])
            if rpb is None or now < rpb:
                continue
            done = (st["HealthyAllocs"] >= st["DesiredTotal"]
                    and (st["DesiredCanaries"] == 0 or st["Promoted"]))
            # Healthy canaries awaiting promotion are not a lack of progress.
            awaiting = (st["DesiredCanaries"] > 0 and not st["Promoted"]
                        and _canaries_healthy(store, dep, g) >= st["DesiredCanaries"])
            if not done and not awaiting:
                fail_deployment(store, dep, DESC_PROGRESS)
                return
    store.at(due, check)


def fail_deployment(store, dep, desc):
    """Fail a deployment; with auto_revert roll back to the last stable version."""
    reverted = None
    if any(st["AutoRevert"] for st in dep["TaskGroups"].values()):
        job = store.jobs.get((dep["Namespace"], dep["JobID"]))
        stable = None
        for v in store.versions.get((dep["Namespace"], dep["JobID"]), []):
            if v["Stable"] and v["Version"] < dep["JobVersion"]:
                stable = v
                break
        if stable is None:
            desc += " - no stable job version to auto revert to"
        elif job is not None and structs.spec_equal(stable, job):
            desc += (" - not rolling back to stable job version %d as current "
                     "job has same specification" % stable["Version"])
        else:
            desc += " - rolling back to job version %d" % stable["Version"]
            reverted = stable
    set_dep_status(store, dep, "failed", desc)
    if reverted is not None:
        store.revert_job(store, deepcopy(reverted))
        return reverted["Version"]
    return None


def mark_stable(store, ns, job_id, version):
    for v in store.versions.get((ns, job_id), []):
        if v["Version"] == version:
            v["Stable"] = True
    store.next_index("jobs", "job_version")


def promote_errors(store, dep, groups):
    errs = []
    for g, st in sorted(dep["TaskGroups"].items()):
        if groups is not None and g not in groups:
            continue
        if st["DesiredCanaries"] == 0 or st["Promoted"]:
            continue
        have = _canaries_healthy(store, dep, g)
        if have < st["DesiredCanaries"]:
            errs.append('Task group "%s" has %d/%d healthy allocations'
                        % (g, have, st["DesiredCanaries"]))
    return multierror(errs) if errs else None
