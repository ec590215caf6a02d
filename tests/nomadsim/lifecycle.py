"""Allocation lifecycle on the virtual clock: start, health, exit, restart,
failure, stop.  Callers hold store.lock."""

from . import deployments, runner, structs
from .evals import create_eval
from .gojson import deepcopy, go_duration, rfc3339
from .lookup import (TERMINAL_CLIENT, is_live, job_allocs, refresh_job_status,
                     uses_exec)


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
    sync_usage(store, a)
    store.touch("allocs")
    store.publish("Allocation", etype, a["ID"], a["Namespace"],
                  {"Allocation": alloc_wire(a, with_job=False)},
                  [a["JobID"], a["DeploymentID"]])


def sync_usage(store, a):
    """Keep per-node resource use current; called on every alloc change."""
    live = is_live(a)
    if live == a.get("_counted", False):
        return
    cpu, mem = store.node_used.get(a["NodeID"], (0, 0))
    sign = 1 if live else -1
    store.node_used[a["NodeID"]] = (cpu + sign * a["_cpu"], mem + sign * a["_mem"])
    a["_counted"] = live


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


def start_alloc(store, aid):
    a = store.allocs.get(aid)
    if a is None or a["DesiredStatus"] != "run" or a["ClientStatus"] != "pending":
        return
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
        ts["StartedAt"] = rfc3339(now)
        ts["Events"].append(task_event(store, "Started",
                                       "Task started by client"))
        if uses_exec(t) and runner.enabled:
            runner.start(store, a, t, process_exited)
        elif a["Job"]["Type"] in ("batch", "sysbatch"):
            store.after(store.config["batch_duration"],
                        lambda n=t["Name"]: task_exited(store, aid, n, 0, 0))
    _touch_alloc(store, a)
    broken = store.broken.get((a["Namespace"], a["JobID"]))
    if broken is not None:
        # Admin fault: this job's allocations die as soon as they start.
        fail_alloc(store, a, broken, "task failed at start (nomadsim break)")
        return
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


def set_alloc_health(store, aid, healthy, auto=False,
                     etype="AllocationUpdated"):
    """Health as the client reports it (AllocationUpdated), or as
    /v1/deployment/allocation-health sets it (DeploymentAllocHealth)."""
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
    ds["Timestamp"] = rfc3339(store.clock.now())
    index = store.next_index("allocs", "deployment")
    ds["ModifyIndex"] = index
    a["DeploymentStatus"] = ds
    a["ModifyIndex"] = index
    a["ModifyTime"] = store.clock.now()
    publish_alloc(store, a, etype)
    dep = store.deployments.get(a["DeploymentID"])
    if dep is not None:
        st = dep["TaskGroups"].get(a["TaskGroup"])
        if healthy and st and st["ProgressDeadline"] and dep["Status"] == "running":
            deployments._set_progress(store, dep, st, store.clock.now() + st["ProgressDeadline"])
        deployments.watch_deployment(store, dep, etype)


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
            ts["LastRestart"] = rfc3339(store.clock.now())
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
    ts["FinishedAt"] = rfc3339(store.clock.now())
    ts["Failed"] = bool(failed and not killed)
    if ts["Failed"]:
        # Nomad kills the sibling tasks of a failed task.
        for other, ots in a["TaskStates"].items():
            if other != task and ots["State"] != "dead":
                ots["Events"].append(task_event(
                    store, "Sibling Task Failed",
                    "Task's sibling %r failed" % task, FailedSibling=task))
                runner.kill(store, aid, other)
                ots["State"] = "dead"
                ots["FinishedAt"] = rfc3339(store.clock.now())
    _finish_alloc_if_done(store, a)


def process_exited(store, aid, task, exit_code, signal, launch_error=None):
    """runner.py's report: a real process ended, or could not start."""
    a = store.allocs.get(aid)
    if launch_error is not None:
        if a is not None:
            a["TaskStates"][task]["Events"].append(task_event(
                store, "Driver Failure", launch_error, DriverError=launch_error,
                FailsTask=True))
        store.after(0, lambda: task_exited(store, aid, task, 1, 0, ""))
        return
    killed = a is not None and a["DesiredStatus"] != "run"
    if killed:
        a["TaskStates"][task]["Events"].append(task_event(
            store, "Killed", "Task successfully killed"))
    task_exited(store, aid, task, exit_code, signal)
    if killed:
        _killed(store, aid)


def _restart_task(store, aid, task):
    a = store.allocs.get(aid)
    if a is None or a["DesiredStatus"] != "run":
        return
    tg = structs.find_group(a["Job"], a["TaskGroup"])
    tdef = next(t for t in tg["Tasks"] if t["Name"] == task)
    ts = a["TaskStates"][task]
    ts["State"] = "running"
    ts["Events"].append(task_event(store, "Started", "Task started by client"))
    if uses_exec(tdef) and runner.enabled:
        runner.start(store, a, tdef, process_exited)
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
    if a["ClientStatus"] in TERMINAL_CLIENT:
        return
    if a["ClientStatus"] == "pending":
        a["ClientStatus"] = "running"
        for ts in a["TaskStates"].values():
            ts["State"] = "running"
            ts["StartedAt"] = rfc3339(store.clock.now())
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
        ts["FinishedAt"] = rfc3339(store.clock.now())
    _finish_alloc_if_done(store, a)


def stop_alloc(store, a, desc, index):
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
            ts["FinishedAt"] = rfc3339(store.clock.now())
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
