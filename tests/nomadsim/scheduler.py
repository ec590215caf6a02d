"""The scheduler: run an evaluation (reconcile, then stop, update and
place allocations on the simulated nodes) and create deployments.

reconcile.py decides, this module applies.  Allocation progress lives in
lifecycle.py, deployment watching in deployments.py.  Every function here
expects the caller to hold store.lock.
"""

from . import deployments, lifecycle, structs
from .evals import new_eval, publish_eval
from .gojson import uuid
from .lookup import (ACTIVE_DEP, eligible_nodes, is_live, job_allocs,
                     job_deployments, node_usage, refresh_job_status,
                     version_deployment)
from .reconcile import reconcile


def evaluate(store, ev):
    """Run the scheduler for one evaluation and apply the plan."""
    key = (ev["Namespace"], ev["JobID"])
    job = store.jobs.get(key)
    allocs = job_allocs(store, *key)
    dep = version_deployment(store, job) if job else None
    if job is None or job["Stop"]:
        for d in job_deployments(store, *key):
            if d["Status"] in ACTIVE_DEP:
                deployments.set_dep_status(store, d, "cancelled", deployments.DESC_STOPPED)
    r = reconcile(store, job, allocs, dep)
    index = store.next_index("allocs", "evals")
    if job is not None and not job["Stop"]:
        # A new version cancels the deployments of older ones.
        for d in job_deployments(store, *key):
            if d["Status"] in ACTIVE_DEP and d is not dep:
                deployments.set_dep_status(store, d, "cancelled", deployments.DESC_NEWER)
        if dep is None and r.needs_deployment:
            dep = deployments.create_deployment(store, job, r, index)
            ev["DeploymentID"] = dep["ID"]
    for a, desc in r.stop:
        lifecycle.stop_alloc(store, a, desc, index)
    for a in r.inplace:
        lifecycle.inplace_update(store, a, job, dep, index)
    failed = {}
    for group, name, canary, prev in r.place:
        tg = structs.find_group(job, group)
        a = place_alloc(store, job, tg, name, canary, dep, ev, index, prev)
        if a is None:
            m = failed.setdefault(group, failed_metric(store, job, tg))
            m["CoalescedFailures"] += 1
    for m in failed.values():
        m["CoalescedFailures"] -= 1
    if dep is not None:
        deployments.refresh_deployment(store, dep, "PlanResult")
    ev["Status"] = "complete"
    ev["ModifyIndex"] = index
    ev["ModifyTime"] = store.clock.now()
    if job is not None:
        ev["QueuedAllocations"] = {tg["Name"]: 0 for tg in job["TaskGroups"]}
        for g, m in failed.items():
            ev["QueuedAllocations"][g] = m["CoalescedFailures"] + 1
    if failed:
        ev["FailedTGAllocs"] = failed
        blocked = new_eval(store, job, "queued-allocs", index)
        blocked["Status"] = "blocked"
        blocked["PreviousEval"] = ev["ID"]
        blocked["StatusDescription"] = "created to place remaining allocations"
        store.evals[blocked["ID"]] = blocked
        ev["BlockedEval"] = blocked["ID"]
    publish_eval(store, ev, "EvaluationUpdated")
    if job is not None:
        refresh_job_status(store, job)
    return r


def failed_metric(store, job, tg):
    nodes = eligible_nodes(store, job)
    dcs = {}
    for n in nodes:
        dcs[n["Datacenter"]] = dcs.get(n["Datacenter"], 0) + 1
    return {
        "NodesEvaluated": len(nodes), "NodesFiltered": 0,
        "NodesInPool": len(nodes), "NodePool": job["NodePool"],
        "NodesAvailable": dcs, "ClassFiltered": None,
        "ConstraintFiltered": None, "NodesExhausted": len(nodes),
        "ClassExhausted": None,
        "DimensionExhausted": {"memory": len(nodes)} if nodes else None,
        "QuotaExhausted": None, "ResourcesExhausted": None, "Scores": None,
        "ScoreMetaData": None, "AllocationTime": 12345, "CoalescedFailures": 0,
    }


# -- placement ---------------------------------------------------------------

def pick_node(store, job, cpu, mem, group=None):
    best, best_free = None, -1
    taken = set()
    if job["Type"] in ("system", "sysbatch"):
        taken = {a["NodeID"] for a in job_allocs(store, job["Namespace"], job["ID"])
                 if a["TaskGroup"] == group and is_live(a)}
    for n in eligible_nodes(store, job):
        if n["ID"] in taken:
            continue
        used_cpu, used_mem = node_usage(store, n["ID"])
        if used_cpu + cpu > n["CPU"] or used_mem + mem > n["MemoryMB"]:
            continue
        free = n["MemoryMB"] - used_mem - mem
        if free > best_free:
            best, best_free = n, free
    return best


def place_alloc(store, job, tg, name, canary, dep, ev, index, prev=None):
    cpu = sum(t["Resources"]["CPU"] for t in tg["Tasks"])
    mem = sum(t["Resources"]["MemoryMB"] for t in tg["Tasks"])
    node = pick_node(store, job, cpu, mem, tg["Name"])
    if node is None:
        return None
    now = store.clock.now()
    aid = uuid()
    tasks = {}
    for t in tg["Tasks"]:
        tasks[t["Name"]] = {
            "Cpu": {"CpuShares": t["Resources"]["CPU"], "ReservedCores": None},
            "Memory": {"MemoryMB": t["Resources"]["MemoryMB"],
                       "MemoryMaxMB": t["Resources"]["MemoryMaxMB"]},
            "Networks": None, "Devices": None}
    a = {
        "ID": aid, "Namespace": job["Namespace"], "EvalID": ev["ID"],
        "Name": name, "NodeID": node["ID"], "NodeName": node["Name"],
        "JobID": job["ID"], "Job": job, "TaskGroup": tg["Name"],
        "Resources": None, "SharedResources": None, "TaskResources": None,
        "AllocatedResources": {
            "Tasks": tasks,
            "TaskLifecycles": {t["Name"]: t["Lifecycle"] for t in tg["Tasks"]},
            "Shared": {"Networks": None, "DiskMB": tg["EphemeralDisk"]["SizeMB"],
                       "Ports": None}},
        "Metrics": {"NodesEvaluated": len(store.nodes), "NodesFiltered": 0,
                    "NodesInPool": len(store.nodes), "NodePool": job["NodePool"],
                    "NodesAvailable": None, "ClassFiltered": None,
                    "ConstraintFiltered": None, "NodesExhausted": 0,
                    "ClassExhausted": None, "DimensionExhausted": None,
                    "QuotaExhausted": None, "ResourcesExhausted": None,
                    "Scores": None, "ScoreMetaData": None,
                    "AllocationTime": 12345, "CoalescedFailures": 0},
        "DesiredStatus": "run", "DesiredDescription": "",
        "DesiredTransition": {"Migrate": None, "Reschedule": None,
                              "ForceReschedule": None, "NoShutdownDelay": None},
        "ClientStatus": "pending", "ClientDescription": "",
        "TaskStates": None, "AllocStates": None,
        "PreviousAllocation": prev["ID"] if prev else "",
        "NextAllocation": "", "DeploymentID": dep["ID"] if dep else "",
        "DeploymentStatus": ({"Healthy": None, "Timestamp": None,
                              "Canary": True, "ModifyIndex": index}
                             if canary else None),
        "RescheduleTracker": None, "NetworkStatus": None,
        "FollowupEvalID": "", "PreemptedAllocations": None,
        "PreemptedByAllocation": "", "CreateIndex": index,
        "ModifyIndex": index, "AllocModifyIndex": index,
        "CreateTime": now, "ModifyTime": now,
        # Internal bookkeeping, never sent on the wire.
        "_jmi": job["JobModifyIndex"], "_cpu": cpu, "_mem": mem,
        "_placed": now,
    }
    if prev is not None:
        prev["NextAllocation"] = aid
        prev["ModifyIndex"] = index
        events = list((prev["RescheduleTracker"] or {}).get("Events") or [])
        events.append({"RescheduleTime": now, "PrevAllocID": prev["ID"],
                       "PrevNodeID": prev["NodeID"], "Delay": 0})
        a["RescheduleTracker"] = {"Events": events, "LastReschedule": "ok"}
    a["TaskStates"] = {t["Name"]: lifecycle._task_state("pending") for t in tg["Tasks"]}
    for ts in a["TaskStates"].values():
        ts["Events"].append(lifecycle.task_event(store, "Received",
                                       "Task received by client"))
    store.allocs[aid] = a
    store.allocs_by_job[(job["Namespace"], job["ID"])].append(aid)
    if canary and dep is not None:
        st = dep["TaskGroups"][tg["Name"]]
        st["PlacedCanaries"] = (st["PlacedCanaries"] or []) + [aid]
    if dep is not None:
        st = dep["TaskGroups"][tg["Name"]]
        if st["RequireProgressBy"] is None and st["ProgressDeadline"]:
            deployments._set_progress(store, dep, st, now + st["ProgressDeadline"])
    lifecycle.publish_alloc(store, a, "PlanResult")
    store.after(store.config["start_delay"], lambda: lifecycle.start_alloc(store, aid))
    return a
