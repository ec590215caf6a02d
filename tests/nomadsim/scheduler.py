"""Allocations, evaluations and deployments on the virtual clock.

reconcile() is a pure function (used by plan for annotations and by
evaluations to act); evaluate() applies it.  Alloc progress, health and
deployment watching run from timers on the store's clock.  Every function
here expects the caller to hold store.lock.
"""

import fnmatch

import structs
from gojson import deepcopy, go_duration, multierror, uuid

ACTIVE_DEP = ("running", "paused", "blocked", "unblocking", "initializing",
              "pending")
TERMINAL_CLIENT = ("complete", "failed", "lost")

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
    total = len(current) + len(inplace) + len(destructive) + pending_repl
    excess = total - tg["Count"]
    if excess > 0:
        victims = sorted(destructive, key=_name_idx, reverse=True)
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
    missing = tg["Count"] - (len(current) + len(inplace) + len(destructive)
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
                set_dep_status(store, d, "cancelled", DESC_STOPPED)
    r = reconcile(store, job, allocs, dep)
    index = store.next_index("allocs", "evals")
    if job is not None and not job["Stop"]:
        # A new version cancels the deployments of older ones.
        for d in job_deployments(store, *key):
            if d["Status"] in ACTIVE_DEP and d is not dep:
                set_dep_status(store, d, "cancelled", DESC_NEWER)
        if dep is None and r.needs_deployment:
            dep = create_deployment(store, job, r, index)
            ev["DeploymentID"] = dep["ID"]
    for a, desc in r.stop:
        stop_alloc(store, a, desc, index)
    for a in r.inplace:
        inplace_update(store, a, job, dep, index)
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
        refresh_deployment(store, dep)
    ev["Status"] = "complete"
    ev["ModifyIndex"] = index
    ev["ModifyTime"] = store.clock.now()
    if job is not None:
        ev["QueuedAllocations"] = {tg["Name"]: 0 for tg in job["TaskGroups"]}
        for g in failed:
            ev["QueuedAllocations"][g] = sum(
                1 for p in r.place if p[0] == g) - 0
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
    cpu = mem = 0
    for a in store.allocs.values():
        if a["NodeID"] == node_id and is_live(a):
            cpu += a["_cpu"]
            mem += a["_mem"]
    return cpu, mem


def pick_node(store, job, cpu, mem):
    best, best_free = None, -1
    for n in eligible_nodes(store, job):
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
    node = pick_node(store, job, cpu, mem)
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
    a["TaskStates"] = {t["Name"]: _task_state("pending") for t in tg["Tasks"]}
    for ts in a["TaskStates"].values():
        ts["Events"].append(task_event(store, "Received",
                                       "Task received by client"))
    store.allocs[aid] = a
    store.allocs_by_job[(job["Namespace"], job["ID"])].append(aid)
    if canary and dep is not None:
        st = dep["TaskGroups"][tg["Name"]]
        st["PlacedCanaries"] = (st["PlacedCanaries"] or []) + [aid]
    if dep is not None:
        st = dep["TaskGroups"][tg["Name"]]
        if st["RequireProgressBy"] is None and st["ProgressDeadline"]:
            st["RequireProgressBy"] = now + st["ProgressDeadline"]
            _arm_progress(store, dep["ID"], st["RequireProgressBy"])
    publish_alloc(store, a, "PlanResult")
    store.after(store.config["start_delay"], lambda: start_alloc(store, aid))
    return a


def _task_state(state):
    return {"State": state, "Failed": False, "Restarts": 0,
            "LastRestart": None, "StartedAt": None, "FinishedAt": None,
            "Events": [], "Paused": ""}


EVENT_KEYS = ("Message", "DisplayMessage", "FailsTask", "RestartReason",
              "SetupError", "DriverError", "ExitCode", "Signal", "KillTimeout",
              "KillError", "KillReason", "StartDelay", "DownloadError",
              "ValidationError", "DiskLimit", "FailedSibling", "VaultError",
              "TaskSignalReason", "TaskSignal", "DriverMessage",
              "GenericSource")


def task_event(store, etype, display, details=None, **kw):
    ev = {"Type": etype, "Time": store.clock.now(), "Details": details or {}}
    for k in EVENT_KEYS:
        ev[k] = "" if k not in ("FailsTask", "ExitCode", "Signal",
                                "KillTimeout", "StartDelay", "DiskLimit") else (
            False if k == "FailsTask" else 0)
    ev.update(kw)
    ev["DisplayMessage"] = display
    return ev


def publish_alloc(store, a, etype):
    store.touch("allocs")
    store.publish("Allocation", etype, a["ID"], a["Namespace"],
                  {"Allocation": alloc_wire(a, with_job=False)},
                  [a["JobID"], a["DeploymentID"]])


def alloc_wire(a, with_job=True):
    out = {k: v for k, v in a.items() if not k.startswith("_")}
    if not with_job:
        out["Job"] = None
    return deepcopy(out)


def alloc_stub(a):
    return {
        "ID": a["ID"], "EvalID": a["EvalID"], "Name": a["Name"],
        "Namespace": a["Namespace"], "NodeID": a["NodeID"],
        "NodeName": a["NodeName"], "JobID": a["JobID"],
        "JobType": a["Job"]["Type"], "JobVersion": a["Job"]["Version"],
        "TaskGroup": a["TaskGroup"], "DesiredStatus": a["DesiredStatus"],
        "DesiredDescription": a["DesiredDescription"],
        "ClientStatus": a["ClientStatus"],
        "ClientDescription": a["ClientDescription"],
        "DesiredTransition": a["DesiredTransition"],
        "TaskStates": a["TaskStates"], "DeploymentStatus": a["DeploymentStatus"],
        "FollowupEvalID": a["FollowupEvalID"],
        "NextAllocation": a["NextAllocation"],
        "RescheduleTracker": a["RescheduleTracker"],
        "PreemptedAllocations": a["PreemptedAllocations"],
        "PreemptedByAllocation": a["PreemptedByAllocation"],
        "CreateIndex": a["CreateIndex"], "ModifyIndex": a["ModifyIndex"],
        "CreateTime": a["CreateTime"], "ModifyTime": a["ModifyTime"],
    }


def _touch_alloc(store, a, etype="AllocationUpdated"):
    a["ModifyIndex"] = store.next_index("allocs")
    a["ModifyTime"] = store.clock.now()
    publish_alloc(store, a, etype)


# -- alloc lifecycle --------------------------------------------------------------

def start_alloc(store, aid):
    a = store.allocs.get(aid)
    if a is None or a["DesiredStatus"] != "run" or a["ClientStatus"] != "pending":
        return
    import runner
    tg = structs.find_group(a["Job"], a["TaskGroup"])
    now = store.clock.now()
    a["ClientStatus"] = "running"
    a["ClientDescription"] = "Tasks are running"
    for t in tg["Tasks"]:
        ts = a["TaskStates"][t["Name"]]
        ts["Events"].append(task_event(store, "Task Setup",
                                       "Building Task Directory",
                                       Message="Building Task Directory"))
        ts["State"] = "running"
        ts["StartedAt"] = now
        ts["Events"].append(task_event(store, "Started",
                                       "Task started by client"))
        if uses_exec(t) and runner.enabled:
            runner.start(store, a, t)
        elif a["Job"]["Type"] in ("batch", "sysbatch"):
            store.after(store.config["batch_duration"],
                        lambda n=t["Name"]: task_exited(store, aid, n, 0, 0))
    _touch_alloc(store, a)
    if a["DeploymentID"]:
        _arm_health(store, a)
    refresh_job_status(store, a["Job"], by_key=True)


def _arm_health(store, a):
    dep = store.deployments.get(a["DeploymentID"])
    if dep is None:
        return
    tg = structs.find_group(a["Job"], a["TaskGroup"])
    upd = tg["Update"] or structs.DEFAULT_UPDATE
    aid = a["ID"]
    if upd["HealthCheck"] != "manual":
        store.after(upd["MinHealthyTime"] / 1e9,
                    lambda: set_alloc_health(store, aid, True, auto=True))
    store.at(a["_placed"] + upd["HealthyDeadline"],
             lambda: _health_deadline(store, aid, upd["HealthyDeadline"]))


def _health_deadline(store, aid, deadline):
    a = store.allocs.get(aid)
    if a is None or (a["DeploymentStatus"] or {}).get("Healthy") is not None:
        return
    if not a["DeploymentID"]:
        return
    for ts in (a["TaskStates"] or {}).values():
        ts["Events"].append(task_event(
            store, "Alloc Unhealthy",
            "Task not running by healthy_deadline of %s" % go_duration(deadline),
            Message="Task not running by healthy_deadline of %s"
            % go_duration(deadline)))
    set_alloc_health(store, aid, False)


def set_alloc_health(store, aid, healthy, auto=False):
    a = store.allocs.get(aid)
    if a is None:
        return
    ds = a["DeploymentStatus"] or {"Healthy": None, "Timestamp": None,
                                   "Canary": False, "ModifyIndex": 0}
    if auto:
        # Automatic health needs a running alloc that is not held back.
        if ds["Healthy"] is not None or a["ClientStatus"] != "running":
            return
        if a["DesiredStatus"] != "run":
            return
        if (a["Namespace"], a["JobID"]) in store.hold_health:
            a["_held"] = True
            return
    ds["Healthy"] = healthy
    ds["Timestamp"] = _rfc(store.clock.now())
    index = store.next_index("allocs", "deployment")
    ds["ModifyIndex"] = index
    a["DeploymentStatus"] = ds
    a["ModifyIndex"] = index
    a["ModifyTime"] = store.clock.now()
    publish_alloc(store, a, "DeploymentAllocHealth")
    dep = store.deployments.get(a["DeploymentID"])
    if dep is not None:
        st = dep["TaskGroups"].get(a["TaskGroup"])
        if healthy and st and st["ProgressDeadline"] and dep["Status"] == "running":
            st["RequireProgressBy"] = store.clock.now() + st["ProgressDeadline"]
            _arm_progress(store, dep["ID"], st["RequireProgressBy"])
        watch_deployment(store, dep)


def _rfc(ns):
    from gojson import rfc3339
    return rfc3339(ns)


def release_health(store, ns, job_id):
    """Let held allocs become healthy now (admin: canaries stop waiting)."""
    store.hold_health.discard((ns, job_id))
    for a in job_allocs(store, ns, job_id):
        if a.pop("_held", False):
            set_alloc_health(store, a["ID"], True, auto=True)


def task_exited(store, aid, task, exit_code, signal, message=""):
    """A task's process ended (real or simulated)."""
    a = store.allocs.get(aid)
    if a is None:
        return
    ts = a["TaskStates"].get(task)
    if ts is None or ts["State"] == "dead":
        return
    killed = a["DesiredStatus"] != "run"
    disp = "Exit Code: %d" % exit_code
    if signal:
        disp += ", Signal: %d" % signal
    if message:
        disp += ', Exit Message: "%s"' % message
    details = {"exit_code": str(exit_code), "signal": str(signal),
               "oom_killed": "false"}
    if message:
        details["exit_message"] = message
    ts["Events"].append(task_event(store, "Terminated", disp, details,
                                   ExitCode=exit_code, Signal=signal))
    job = a["Job"]
    tg = structs.find_group(job, a["TaskGroup"])
    tdef = next((t for t in tg["Tasks"] if t["Name"] == task), None)
    failed = exit_code != 0 or (signal != 0 and not killed)
    service = job["Type"] in ("service", "system")
    if not killed and (failed or service) and tdef is not None:
        rp = tdef["RestartPolicy"] or tg["RestartPolicy"]
        if ts["Restarts"] < rp["Attempts"]:
            delay = rp["Delay"]
            ts["Restarts"] += 1
            ts["LastRestart"] = _rfc(store.clock.now())
            reason = "Restart within policy"
            ts["Events"].append(task_event(
                store, "Restarting", "Task restarting in %s" % go_duration(delay),
                RestartReason=reason, StartDelay=delay))
            _touch_alloc(store, a)
            store.after(delay / 1e9, lambda: _restart_task(store, aid, task))
            return
        if rp["Attempts"] or failed:
            reason = ('Exceeded allowed attempts %d in interval %s and mode is "%s"'
                      % (rp["Attempts"], go_duration(rp["Interval"]), rp["Mode"]))
            ts["Events"].append(task_event(store, "Not Restarting", reason,
                                           RestartReason=reason, FailsTask=True))
        failed = failed or service
    ts["State"] = "dead"
    ts["FinishedAt"] = _rfc(store.clock.now())
    ts["Failed"] = bool(failed and not killed)
    if ts["Failed"]:
        # Nomad kills the sibling tasks of a failed task.
        for other, ots in a["TaskStates"].items():
            if other != task and ots["State"] != "dead":
                import runner
                ots["Events"].append(task_event(
                    store, "Sibling Task Failed",
                    "Task's sibling %r failed" % task, FailedSibling=task))
                runner.kill(store, aid, other)
                ots["State"] = "dead"
                ots["FinishedAt"] = _rfc(store.clock.now())
    _finish_alloc_if_done(store, a)


def _restart_task(store, aid, task):
    a = store.allocs.get(aid)
    if a is None or a["DesiredStatus"] != "run":
        return
    import runner
    tg = structs.find_group(a["Job"], a["TaskGroup"])
    tdef = next(t for t in tg["Tasks"] if t["Name"] == task)
    ts = a["TaskStates"][task]
    ts["State"] = "running"
    ts["Events"].append(task_event(store, "Started", "Task started by client"))
    if uses_exec(tdef) and runner.enabled:
        runner.start(store, a, tdef)
    elif a["Job"]["Type"] in ("batch", "sysbatch"):
        store.after(store.config["batch_duration"],
                    lambda: task_exited(store, aid, task, 0, 0))
    _touch_alloc(store, a)


def _finish_alloc_if_done(store, a):
    states = a["TaskStates"].values()
    if any(ts["State"] != "dead" for ts in states):
        _touch_alloc(store, a)
        return
    if a["DesiredStatus"] != "run":
        a["ClientStatus"] = "complete"
        a["ClientDescription"] = "All tasks have completed"
    elif any(ts["Failed"] for ts in states):
        a["ClientStatus"] = "failed"
        a["ClientDescription"] = "Failed tasks"
    else:
        a["ClientStatus"] = "complete"
        a["ClientDescription"] = "All tasks have completed"
    _touch_alloc(store, a)
    if a["ClientStatus"] == "failed":
        _after_failure(store, a)
    refresh_job_status(store, a["Job"], by_key=True)


def _after_failure(store, a):
    if a["DeploymentID"] and (a["DeploymentStatus"] or {}).get("Healthy") is None:
        set_alloc_health(store, a["ID"], False)
    job = store.jobs.get((a["Namespace"], a["JobID"]))
    if job is None or job["Stop"]:
        return
    tg = structs.find_group(job, a["TaskGroup"])
    rp = tg and tg["ReschedulePolicy"]
    if not rp:
        return
    tried = len((a["RescheduleTracker"] or {}).get("Events") or [])
    if not rp["Unlimited"] and tried >= rp["Attempts"]:
        return
    delay = rp["Delay"]
    if rp["DelayFunction"] == "exponential":
        delay = min(delay * (2 ** tried), rp["MaxDelay"] or delay * (2 ** tried))
    aid = a["ID"]

    def due():
        x = store.allocs.get(aid)
        if x is None or x["NextAllocation"]:
            return
        x["_reschedule_due"] = True
        j = store.jobs.get((x["Namespace"], x["JobID"]))
        if j is not None and not j["Stop"]:
            create_eval(store, j, "alloc-failure")
    store.after(delay / 1e9, due)


def fail_alloc(store, a, exit_code=1, message="failure injected by nomadsim"):
    """Admin fault: the alloc's tasks die with exit_code."""
    import runner
    if a["ClientStatus"] in TERMINAL_CLIENT:
        return
    if a["ClientStatus"] == "pending":
        a["ClientStatus"] = "running"
        for ts in a["TaskStates"].values():
            ts["State"] = "running"
            ts["StartedAt"] = store.clock.now()
    for name, ts in a["TaskStates"].items():
        if ts["State"] == "dead":
            continue
        runner.kill(store, a["ID"], name, quiet=True)
        disp = "Exit Code: %d" % exit_code
        ts["Events"].append(task_event(
            store, "Terminated", disp,
            {"exit_code": str(exit_code), "signal": "0", "oom_killed": "false"},
            ExitCode=exit_code))
        ts["Events"].append(task_event(store, "Not Restarting", message,
                                       RestartReason=message, FailsTask=True))
        ts["State"] = "dead"
        ts["Failed"] = True
        ts["FinishedAt"] = _rfc(store.clock.now())
    _finish_alloc_if_done(store, a)


def stop_alloc(store, a, desc, index):
    import runner
    a["DesiredStatus"] = "stop"
    a["DesiredDescription"] = desc
    a["ModifyIndex"] = index
    a["AllocModifyIndex"] = index
    a["ModifyTime"] = store.clock.now()
    publish_alloc(store, a, "PlanResult")
    aid = a["ID"]
    if a["ClientStatus"] not in ("pending", "running"):
        return
    tg = structs.find_group(a["Job"], a["TaskGroup"])
    any_real = False
    for t in tg["Tasks"]:
        ts = a["TaskStates"][t["Name"]]
        if ts["State"] == "running":
            ts["Events"].append(task_event(
                store, "Killing", "Sent interrupt. Waiting %s before force killing"
                % go_duration(t["KillTimeout"]),
                {"kill_timeout": go_duration(t["KillTimeout"])},
                KillTimeout=t["KillTimeout"]))
            if runner.kill(store, aid, t["Name"]):
                any_real = True
    if not any_real:
        store.after(store.config["kill_delay"], lambda: _killed(store, aid))


def _killed(store, aid):
    a = store.allocs.get(aid)
    if a is None or a["ClientStatus"] not in ("pending", "running"):
        return
    for ts in a["TaskStates"].values():
        if ts["State"] != "dead":
            if ts["State"] == "running":
                ts["Events"].append(task_event(store, "Killed",
                                               "Task successfully killed"))
            ts["State"] = "dead"
            ts["FinishedAt"] = _rfc(store.clock.now())
    a["ClientStatus"] = "complete"
    a["ClientDescription"] = "All tasks have completed"
    _touch_alloc(store, a)
    refresh_job_status(store, a["Job"], by_key=True)


def inplace_update(store, a, job, dep, index):
    a["Job"] = job
    a["_jmi"] = job["JobModifyIndex"]
    a["ModifyIndex"] = index
    a["AllocModifyIndex"] = index
    if dep is not None:
        a["DeploymentID"] = dep["ID"]
        a["DeploymentStatus"] = None
        a["_placed"] = store.clock.now()
        if a["ClientStatus"] == "running":
            _arm_health(store, a)
    publish_alloc(store, a, "PlanResult")


# -- deployments ---------------------------------------------------------------------

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


def refresh_deployment(store, dep):
    """Recount PlacedAllocs/HealthyAllocs/UnhealthyAllocs from the allocs."""
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
    dep["ModifyIndex"] = store.index
    dep["ModifyTime"] = store.clock.now()
    store.touch("deployment")


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


def watch_deployment(store, dep):
    """The deployment watcher: fail, auto-promote, continue or succeed."""
    refresh_deployment(store, dep)
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
        before = len(store.allocs)
        r = reconcile(store, job, job_allocs(store, *(dep["Namespace"], dep["JobID"])),
                      dep)
        if r.place or r.stop:
            create_eval(store, job, "deployment-watcher", dep["ID"])
        del before


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
                st["RequireProgressBy"] = store.clock.now() + st["ProgressDeadline"]
                _arm_progress(store, dep["ID"], st["RequireProgressBy"])
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


def _arm_progress(store, dep_id, due):
    def check():
        dep = store.deployments.get(dep_id)
        if dep is None or dep["Status"] != "running":
            return
        now = store.clock.now()
        for g, st in dep["TaskGroups"].items():
            rpb = st["RequireProgressBy"]
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
        import jobs
        jobs.register(store, deepcopy(reverted), revert=True)
        return reverted["Version"]
    return None


def mark_stable(store, ns, job_id, version):
    for v in store.versions.get((ns, job_id), []):
        if v["Version"] == version:
            v["Stable"] = True
    store.next_index("jobs", "job_version")


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
