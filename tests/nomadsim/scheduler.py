"""The scheduler: reconcile, evaluations, node placement, job status.

reconcile() is a pure function (plan uses it for annotations, evaluations
to act); evaluate() applies it.  Allocation progress lives in lifecycle.py,
deployment watching in deployments.py.  Every function here expects the
caller to hold store.lock.
"""

import fnmatch

import deployments
import lifecycle
import structs
from gojson import deepcopy, uuid

ACTIVE_DEP = ("running", "paused", "blocked", "unblocking", "initializing",
              "pending")
TERMINAL_CLIENT = ("complete", "failed", "lost")


ALLOC_NOT_NEEDED = "alloc not needed due to job update"
ALLOC_UPDATING = "alloc is being updated due to job update"
ALLOC_RESCHEDULED = "alloc was rescheduled because it failed"

EXEC_DRIVERS = ("raw_exec", "exec")


def new_desired():
    return {"Ignore": 0, "Place": 0, "Migrate": 0, "Stop": 0,
            "InPlaceUpdate": 0, "DestructiveUpdate": 0, "Canary": 0,
            "Preemptions": 0, "Disconnect": 0, "Reconnect": 0,
            "RescheduleNow": 0, "RescheduleLater": 0}


# -- queries ---------------------------------------------------------------

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


# -- reconcile ----------------------------------------------------------------

class Result:
    def __init__(self):
        self.desired = {}       # group -> DesiredUpdates
        self.place = []         # (group, name, canary, previous_alloc)
        self.stop = []          # (alloc, description)
        self.inplace = []       # allocs
        self.destructive = []   # (old alloc) replaced this round
        self.canary_groups = {}  # group -> desired canaries
        self.needs_deployment = False


def reconcile(store, job, allocs, dep, stopped=False):
    """What the scheduler would do for `job` given `allocs` and `dep`."""
    r = Result()
    groups = {tg["Name"]: tg for tg in (job["TaskGroups"] if job else [])}
    by_group = {}
    for a in allocs:
        by_group.setdefault(a["TaskGroup"], []).append(a)
    if job is None or stopped or job["Stop"]:
        for g, al in by_group.items():
            live = [a for a in al if is_live(a)]
            d = r.desired.setdefault(g, new_desired())
            for a in live:
                r.stop.append((a, ALLOC_NOT_NEEDED))
                d["Stop"] += 1
        if job is not None:
            for g in groups:
                r.desired.setdefault(g, new_desired())
        return r
    # Parents of dispatched and periodic children never run themselves.
    if ((job["ParameterizedJob"] is not None and not job["Dispatched"])
            or job["Periodic"] is not None):
        for g in groups:
            r.desired[g] = new_desired()
        return r
    for g, al in by_group.items():
        if g not in groups:
            d = r.desired.setdefault(g, new_desired())
            for a in al:
                if is_live(a):
                    r.stop.append((a, ALLOC_NOT_NEEDED))
                    d["Stop"] += 1
    for g, tg in groups.items():
        _reconcile_group(store, job, tg, by_group.get(g, []), dep, r)
    return r


def _reconcile_group(store, job, tg, allocs, dep, r):
    d = r.desired.setdefault(tg["Name"], new_desired())
    jmi = job["JobModifyIndex"]
    batch = job["Type"] in ("batch", "sysbatch")
    current, old = [], []
    for a in allocs:
        if a["DesiredStatus"] != "run":
            continue
        is_current = a["_jmi"] == jmi
        if a["ClientStatus"] in ("pending", "running"):
            (current if is_current else old).append(a)
        elif is_current:
            # A terminal alloc of this version keeps its slot unless it
            # failed and its reschedule is due.
            if a["ClientStatus"] == "failed" and a.get("_reschedule_due"):
                if not a["NextAllocation"]:
                    r.place.append((tg["Name"], a["Name"], False, a))
                    d["Place"] += 1
                continue
            if batch or a["ClientStatus"] == "failed":
                current.append(a)
        else:
            # Terminal allocs of older versions are ignored.
            d["Ignore"] += 1
    # Replacements already planned above occupy slots.
    pending_repl = sum(1 for p in r.place if p[0] == tg["Name"])
    inplace, destructive = [], []
    for a in old:
        if structs.tasks_updated(a["Job"], job, tg["Name"]):
            destructive.append(a)
        else:
            inplace.append(a)
    strategy = None
    if job["Type"] == "service" and tg["Update"] and tg["Update"]["MaxParallel"] > 0:
        strategy = tg["Update"]
    dstate = dep["TaskGroups"].get(tg["Name"]) if dep else None
    dep_failed = dep is not None and dep["Status"] in ("failed", "cancelled")
    promoted = bool(dstate and dstate["Promoted"])
    canary_n = strategy["Canary"] if strategy else 0
    r.inplace += inplace
    d["InPlaceUpdate"] += len(inplace)
    if canary_n > 0 and destructive and not promoted and not (
            dstate and dstate["DesiredCanaries"] == 0):
        canaries = [a for a in current
                    if a["DeploymentStatus"] and a["DeploymentStatus"]["Canary"]]
        need = 0 if dep_failed else max(0, canary_n - len(canaries))
        used = {a["Name"] for a in canaries}
        names = [a["Name"] for a in sorted(destructive, key=_name_idx)
                 if a["Name"] not in used]
        for i in range(need):
            name = names[i] if i < len(names) else _free_name(job, tg, allocs, r, i)
            r.place.append((tg["Name"], name, True, None))
        d["Canary"] += need
        d["Ignore"] += len(current) + len(destructive)
        r.canary_groups[tg["Name"]] = canary_n
        if need or inplace:
            r.needs_deployment = strategy is not None
        return
    want = tg["Count"]
    if job["Type"] in ("system", "sysbatch"):
        # One allocation per eligible node, whatever the count says.
        want = len(eligible_nodes(store, job))
    total = len(current) + len(inplace) + len(destructive) + pending_repl
    excess = total - want
    if excess > 0:
        # Old allocs whose name a (promoted) canary took go first.
        taken = {a["Name"] for a in current}
        victims = [a for a in sorted(destructive, key=_name_idx) if a["Name"] in taken]
        victims += [a for a in sorted(destructive, key=_name_idx, reverse=True)
                    if a not in victims]
        victims += sorted(current + inplace, key=_name_idx, reverse=True)
        for a in victims[:excess]:
            r.stop.append((a, ALLOC_NOT_NEEDED))
            d["Stop"] += 1
            for lst in (destructive, current, inplace):
                if a in lst:
                    lst.remove(a)
                    if lst is inplace:
                        r.inplace.remove(a)
                        d["InPlaceUpdate"] -= 1
    missing = want - (len(current) + len(inplace) + len(destructive)
                      + pending_repl)
    for i in range(max(0, missing)):
        r.place.append((tg["Name"], _free_name(job, tg, allocs, r, i), False, None))
        d["Place"] += 1
    if dep_failed:
        budget = 0
    elif strategy:
        in_flight = sum(1 for a in current
                        if a["DeploymentID"] and dep and a["DeploymentID"] == dep["ID"]
                        and not (a["DeploymentStatus"] or {}).get("Healthy"))
        budget = max(0, strategy["MaxParallel"] - in_flight)
    else:
        budget = len(destructive)
    chosen = sorted(destructive, key=_name_idx)[:budget]
    for a in chosen:
        r.stop.append((a, ALLOC_UPDATING))
        r.place.append((tg["Name"], a["Name"], False, None))
        r.destructive.append(a)
    d["DestructiveUpdate"] += len(chosen)
    d["Ignore"] += len(current) + len(destructive) - len(chosen)
    if strategy and (d["Place"] or d["DestructiveUpdate"] or d["InPlaceUpdate"]
                     or destructive):
        r.needs_deployment = True


def _name_idx(a):
    n = a["Name"]
    try:
        return int(n[n.rindex("[") + 1:-1])
    except ValueError:
        return 0


def _free_name(job, tg, allocs, r, nth):
    used = {a["Name"] for a in allocs if is_live(a) or a["ClientStatus"] == "complete"}
    used |= {p[1] for p in r.place}
    i = 0
    while True:
        name = "%s.%s[%d]" % (job["ID"], tg["Name"], i)
        if name not in used:
            return name
        i += 1


# -- evaluations -----------------------------------------------------------------

def new_eval(store, job, trigger, index, deployment_id=""):
    now = store.clock.now()
    return {
        "ID": uuid(), "Namespace": job["Namespace"], "Priority": job["Priority"],
        "Type": job["Type"], "TriggeredBy": trigger, "JobID": job["ID"],
        "JobModifyIndex": job["JobModifyIndex"], "NodeID": "",
        "NodeModifyIndex": 0, "DeploymentID": deployment_id,
        "Status": "pending", "StatusDescription": "", "Wait": 0,
        "WaitUntil": None, "NextEval": "", "PreviousEval": "",
        "BlockedEval": "", "RelatedEvals": None, "FailedTGAllocs": None,
        "ClassEligibility": None, "QuotaLimitReached": "",
        "EscapedComputedClass": False, "AnnotatePlan": False,
        "QueuedAllocations": None, "LeaderACL": "", "SnapshotIndex": index,
        "CreateIndex": index, "ModifyIndex": index, "CreateTime": now,
        "ModifyTime": now,
    }


def create_eval(store, job, trigger, deployment_id=""):
    """Insert a pending eval at a fresh index and run it."""
    index = store.next_index("evals")
    ev = new_eval(store, job, trigger, index, deployment_id)
    store.evals[ev["ID"]] = ev
    publish_eval(store, ev, "EvaluationUpdated")
    evaluate(store, ev)
    return ev


def publish_eval(store, ev, etype):
    store.publish("Evaluation", etype, ev["ID"], ev["Namespace"],
                  {"Evaluation": deepcopy(ev)},
                  [ev["JobID"], ev["DeploymentID"]])


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
            m = failed.setdefault(group, _failed_metric(store, job, tg))
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


def _failed_metric(store, job, tg):
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


# -- nodes and placement -----------------------------------------------------------

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


def _node_usage(store, node_id):
    return store.node_used.get(node_id, (0, 0))


def pick_node(store, job, cpu, mem, group=None):
    best, best_free = None, -1
    taken = set()
    if job["Type"] in ("system", "sysbatch"):
        taken = {a["NodeID"] for a in job_allocs(store, job["Namespace"], job["ID"])
                 if a["TaskGroup"] == group and is_live(a)}
    for n in eligible_nodes(store, job):
        if n["ID"] in taken:
            continue
        used_cpu, used_mem = _node_usage(store, n["ID"])
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


# -- job status ---------------------------------------------------------------------

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


