"""Reads over the store that the scheduler, the allocation lifecycle, the
deployment watcher and the endpoints share, and the job status derived
from a job's allocations.  Callers hold store.lock."""

import fnmatch

ACTIVE_DEP = ("running", "paused", "blocked", "unblocking", "initializing",
              "pending")
TERMINAL_CLIENT = ("complete", "failed", "lost")

EXEC_DRIVERS = ("raw_exec", "exec")


# -- queries -----------------------------------------------------------------

def job_allocs(store, ns, job_id):
    return [store.allocs[a] for a in store.allocs_by_job.get((ns, job_id), ())]


def job_deployments(store, ns, job_id):
    deps = [store.deployments[d] for d in store.deps_by_job.get((ns, job_id), ())]
    deps.sort(key=lambda d: d["CreateIndex"], reverse=True)
    return deps


def latest_deployment(store, ns, job_id):
    deps = job_deployments(store, ns, job_id)
    return deps[0] if deps else None


def version_deployment(store, job):
    """The deployment of this exact job version, if any."""
    for d in job_deployments(store, job["Namespace"], job["ID"]):
        if (d["JobVersion"] == job["Version"]
                and d["JobSpecModifyIndex"] == job["JobModifyIndex"]):
            return d
    return None


def is_live(a):
    return a["DesiredStatus"] == "run" and a["ClientStatus"] in ("pending", "running")


def uses_exec(task):
    return task.get("Driver") in EXEC_DRIVERS


# -- nodes -------------------------------------------------------------------

def eligible_nodes(store, job):
    out = []
    for n in store.nodes:
        if n["NodePool"] != job["NodePool"] and job["NodePool"] != "all":
            continue
        if not any(fnmatch.fnmatchcase(n["Datacenter"], dc)
                   for dc in job["Datacenters"] or ["*"]):
            continue
        out.append(n)
    return out


def node_usage(store, node_id):
    return store.node_used.get(node_id, (0, 0))


# -- job status --------------------------------------------------------------

def refresh_job_status(store, job, by_key=False):
    if by_key:
        job = store.jobs.get((job["Namespace"], job["ID"]))
        if job is None:
            return
    status = compute_status(store, job)
    if status != job["Status"]:
        job["Status"] = status
        job["ModifyIndex"] = store.next_index("jobs", "job_summary")
    else:
        store.touch("job_summary")
    if job["ParentID"]:
        parent = store.jobs.get((job["Namespace"], job["ParentID"]))
        if parent is not None:
            store.touch("job_summary")


def compute_status(store, job):
    if ((job["ParameterizedJob"] is not None and not job["Dispatched"])
            or job["Periodic"] is not None):
        return "dead" if job["Stop"] else "running"
    allocs = job_allocs(store, job["Namespace"], job["ID"])
    if any(a["ClientStatus"] in ("pending", "running") for a in allocs):
        return "running"
    if job["Stop"] or allocs:
        return "dead"
    return "pending"
