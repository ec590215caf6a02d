"""Server-side job shape: api.Job (what clients send) -> structs.Job.

GET /v1/job/:id returns nomad/structs.Job, which has its own key set:
server-only fields (Status, Version, Dispatched, ...), `Update` always an
object, `Datacenters` defaulted to ["*"].  jobspec.canonicalize() applies the
client-side (api package) defaults; this module applies the server's.
"""

import copy

from .gojson import multierror

SEC = 1_000_000_000
MIN = 60 * SEC
HOUR = 60 * MIN

ZERO_UPDATE = {
    "Stagger": 0, "MaxParallel": 0, "HealthCheck": "", "MinHealthyTime": 0,
    "HealthyDeadline": 0, "ProgressDeadline": 0, "AutoRevert": False,
    "AutoPromote": False, "Canary": 0,
}

DEFAULT_UPDATE = {
    "Stagger": 30 * SEC, "MaxParallel": 1, "HealthCheck": "checks",
    "MinHealthyTime": 10 * SEC, "HealthyDeadline": 5 * MIN,
    "ProgressDeadline": 10 * MIN, "AutoRevert": False, "AutoPromote": False,
    "Canary": 0,
}

# Key sets of the server structs, with the value a missing key gets.
JOB_FIELDS = {
    "Stop": False, "Region": "global", "Namespace": "default", "ID": "",
    "ParentID": "", "Name": "", "Type": "service", "Priority": 50,
    "AllAtOnce": False, "Datacenters": None, "NodePool": "default",
    "Constraints": None, "Affinities": None, "Spreads": None,
    "TaskGroups": None, "Update": None, "Multiregion": None,
    "Periodic": None, "ParameterizedJob": None, "Dispatched": False,
    "DispatchIdempotencyToken": "", "Payload": None, "Meta": None,
    "ConsulNamespace": "", "VaultNamespace": "", "NomadTokenID": "",
    "Status": "", "StatusDescription": "", "Stable": False, "Version": 0,
    "SubmitTime": 0, "CreateIndex": 0, "ModifyIndex": 0,
    "JobModifyIndex": 0, "UI": None, "VersionTag": None,
}

GROUP_FIELDS = {
    "Name": "", "Count": 1, "Update": None, "Migrate": None,
    "Constraints": None, "Scaling": None, "RestartPolicy": None,
    "Disconnect": None, "Tasks": None, "EphemeralDisk": None, "Meta": None,
    "ReschedulePolicy": None, "Affinities": None, "Spreads": None,
    "Networks": None, "Consul": None, "Services": None, "Volumes": None,
    "ShutdownDelay": None, "StopAfterClientDisconnect": None,
    "MaxClientDisconnect": None, "PreventRescheduleOnLost": False,
}

TASK_FIELDS = {
    "Name": "", "Driver": "", "User": "", "Config": None, "Env": None,
    "Services": None, "Vault": None, "Consul": None, "Templates": None,
    "Constraints": None, "Affinities": None, "Resources": None,
    "RestartPolicy": None, "DispatchPayload": None, "Lifecycle": None,
    "Meta": None, "KillTimeout": 5 * SEC, "LogConfig": None,
    "Artifacts": None, "Leader": False, "ShutdownDelay": 0,
    "VolumeMounts": None, "ScalingPolicies": None, "KillSignal": "",
    "Kind": "", "CSIPluginConfig": None, "Identity": None,
    "Identities": None, "Actions": None, "Schedule": None,
}

RESOURCE_FIELDS = {
    "CPU": 100, "Cores": 0, "MemoryMB": 300, "MemoryMaxMB": 0, "DiskMB": 0,
    "IOPS": 0, "Networks": None, "Devices": None, "NUMA": None,
    "SecretsMB": 0,
}

SERVER_MANAGED = ("Status", "StatusDescription", "Stable", "Version",
                  "SubmitTime", "CreateIndex", "ModifyIndex",
                  "JobModifyIndex", "NomadTokenID")


def restart_default(jtype):
    if jtype in ("batch", "sysbatch"):
        return {"Attempts": 3, "Interval": 24 * HOUR, "Delay": 15 * SEC,
                "Mode": "fail", "RenderTemplates": False}
    return {"Attempts": 2, "Interval": 30 * MIN, "Delay": 15 * SEC,
            "Mode": "fail", "RenderTemplates": False}


def reschedule_default(jtype):
    if jtype == "service":
        return {"Attempts": 0, "Interval": 0, "Delay": 30 * SEC,
                "DelayFunction": "exponential", "MaxDelay": HOUR,
                "Unlimited": True}
    if jtype == "batch":
        return {"Attempts": 1, "Interval": 24 * HOUR, "Delay": 5 * SEC,
                "DelayFunction": "constant", "MaxDelay": 0,
                "Unlimited": False}
    return None


def _shape(src, fields):
    """Exactly the struct's keys: present values win, else the default."""
    out = {}
    for k, dflt in fields.items():
        v = src.get(k, None)
        out[k] = copy.deepcopy(dflt) if v is None else v
    return out


def _int(v, dflt=0):
    if v is None:
        return dflt
    if isinstance(v, bool):
        return int(v)
    try:
        return int(v)
    except (TypeError, ValueError):
        return dflt


def to_struct_job(api_job):
    """Convert a canonicalized api.Job dict into a structs.Job dict."""
    src = api_job
    job = _shape(src, JOB_FIELDS)
    if not job["Name"]:
        job["Name"] = job["ID"]
    if not job["Datacenters"]:
        job["Datacenters"] = ["*"]
    if not job["NodePool"]:
        job["NodePool"] = "default"
    # structs.Job.Update is a value, never null.
    upd = src.get("Update")
    job["Update"] = dict(ZERO_UPDATE, **{k: v for k, v in (upd or {}).items()
                                          if k in ZERO_UPDATE and v is not None})
    job["Priority"] = _int(job["Priority"], 50)
    for k in SERVER_MANAGED:
        job[k] = JOB_FIELDS[k]
    groups = []
    for g in src.get("TaskGroups") or []:
        groups.append(_struct_group(g, job))
    job["TaskGroups"] = groups
    return job


def _struct_group(g, job):
    tg = _shape(g, GROUP_FIELDS)
    tg["Count"] = _int(g.get("Count"), 1)
    jtype = job["Type"]
    if tg["Update"] is not None:
        tg["Update"] = dict(ZERO_UPDATE, **{k: v for k, v in tg["Update"].items()
                                             if k in ZERO_UPDATE and v is not None})
    if jtype in ("batch", "sysbatch"):
        # The server drops update/migrate for job types that cannot use them.
        tg["Update"] = None
    if tg["RestartPolicy"] is None:
        tg["RestartPolicy"] = restart_default(jtype)
    if tg["ReschedulePolicy"] is None:
        tg["ReschedulePolicy"] = reschedule_default(jtype)
    if tg["EphemeralDisk"] is None:
        tg["EphemeralDisk"] = {"Sticky": False, "SizeMB": 300, "Migrate": False}
    if tg["Scaling"] is not None:
        s = tg["Scaling"]
        tg["Scaling"] = {
            "ID": s.get("ID") or "", "Type": s.get("Type") or "horizontal",
            "Target": s.get("Target"), "Policy": s.get("Policy"),
            "Min": _int(s.get("Min"), tg["Count"]),
            "Max": _int(s.get("Max"), 0),
            "Enabled": True if s.get("Enabled") is None else bool(s["Enabled"]),
            "CreateIndex": 0, "ModifyIndex": 0,
        }
    tasks = []
    for t in g.get("Tasks") or []:
        task = _shape(t, TASK_FIELDS)
        if task["RestartPolicy"] is None:
            task["RestartPolicy"] = copy.deepcopy(tg["RestartPolicy"])
        res = task["Resources"] or {}
        task["Resources"] = _shape(res, RESOURCE_FIELDS)
        if task["LogConfig"] is None:
            task["LogConfig"] = {"MaxFiles": 10, "MaxFileSizeMB": 10,
                                 "Disabled": False}
        task["KillTimeout"] = _int(task["KillTimeout"], 5 * SEC)
        task["ShutdownDelay"] = _int(task["ShutdownDelay"], 0)
        tasks.append(task)
    tg["Tasks"] = tasks
    return tg


def validate(job):
    """A subset of structs.Job.Validate with Nomad's messages."""
    errs = []
    if not job["Region"]:
        errs.append("Missing job region")
    if not job["ID"]:
        errs.append("Missing job ID")
    elif " " in job["ID"]:
        errs.append("Job ID contains a space")
    elif "\x00" in job["ID"]:
        errs.append("Job ID contains a null character")
    if not job["Name"]:
        errs.append("Missing job name")
    if not job["Type"]:
        errs.append("Missing job type")
    elif job["Type"] not in ("service", "batch", "system", "sysbatch"):
        errs.append('Invalid job type: "%s"' % job["Type"])
    if not 1 <= job["Priority"] <= 100:
        errs.append("Job priority must be between [1, 100]")
    if not job["TaskGroups"]:
        errs.append("Missing job task groups")
    if job["ParameterizedJob"] is not None and job["Type"] not in ("batch", "sysbatch"):
        errs.append('Parameterized job can only be used with "batch" or "sysbatch" type')
    if job["Periodic"] is not None and job["Type"] not in ("batch", "sysbatch"):
        errs.append('Periodic can only be used with "batch" or "sysbatch" scheduler')
    seen = {}
    for i, tg in enumerate(job["TaskGroups"], 1):
        if not tg["Name"]:
            errs.append("Job task group %d missing name" % i)
            continue
        if tg["Name"] in seen:
            errs.append("Job task group %d redefines '%s' from group %d"
                        % (i, tg["Name"], seen[tg["Name"]]))
            continue
        seen[tg["Name"]] = i
        gerrs = _validate_group(tg, job)
        if gerrs:
            errs.append("Task group %s validation failed: %s"
                        % (tg["Name"], multierror(gerrs)))
    return errs


def _validate_group(tg, job):
    errs = []
    if tg["Count"] < 0:
        errs.append("Task group count can't be negative")
    if not tg["Tasks"]:
        errs.append("Missing tasks for task group")
    s = tg["Scaling"]
    if s is not None:
        if s["Max"] < s["Min"]:
            errs.append("Scaling policy invalid: maximum count must not be "
                        "less than minimum count")
        if tg["Count"] > s["Max"]:
            errs.append("Scaling policy invalid: task group count must not "
                        "be greater than maximum count in scaling policy")
        if tg["Count"] < s["Min"]:
            errs.append("Scaling policy invalid: task group count must not "
                        "be less than minimum count in scaling policy")
    u = tg["Update"]
    if u is not None and job["Type"] == "service":
        if u["MaxParallel"] < 0:
            errs.append("Max parallel can not be less than zero: %d < 0"
                        % u["MaxParallel"])
        if u["Canary"] < 0:
            errs.append("Canary count can not be less than zero: %d < 0"
                        % u["Canary"])
        if u["MaxParallel"] > 0 and u["HealthyDeadline"] <= u["MinHealthyTime"]:
            errs.append("Minimum healthy time must be less than healthy "
                        "deadline: %s > %s" % (u["MinHealthyTime"],
                                               u["HealthyDeadline"]))
    names = set()
    for i, t in enumerate(tg["Tasks"] or [], 1):
        if not t["Name"]:
            errs.append("Task %d missing name" % i)
            continue
        if t["Name"] in names:
            errs.append("Task %d redefines '%s' from task %d" % (i, t["Name"], i))
        names.add(t["Name"])
        if not t["Driver"]:
            errs.append("Task %s validation failed: %s"
                        % (t["Name"], multierror(["Missing task driver"])))
    return errs


def spec_equal(a, b):
    """Job.SpecChanged inverted: compare ignoring server-managed fields."""
    return _spec_view(a) == _spec_view(b)


def _spec_view(job):
    v = {k: val for k, val in job.items() if k not in SERVER_MANAGED}
    groups = []
    for tg in v.get("TaskGroups") or []:
        tg = dict(tg)
        if tg.get("Scaling"):
            # Scaling IDs and indexes are assigned by the server.
            tg["Scaling"] = {k: x for k, x in tg["Scaling"].items()
                             if k not in ("ID", "CreateIndex", "ModifyIndex",
                                          "Target")}
        groups.append(tg)
    v["TaskGroups"] = groups
    return v


def combined_meta(job, tg, task):
    meta = {}
    for src in (job.get("Meta"), tg.get("Meta"), task.get("Meta")):
        meta.update(src or {})
    return meta


def find_group(job, name):
    for tg in job["TaskGroups"]:
        if tg["Name"] == name:
            return tg
    return None


def tasks_updated(old_job, new_job, group):
    """scheduler.tasksUpdated: True when a change needs new allocations."""
    a, b = find_group(old_job, group), find_group(new_job, group)
    if a is None or b is None:
        return True
    if len(a["Tasks"]) != len(b["Tasks"]):
        return True
    if (a["EphemeralDisk"] != b["EphemeralDisk"]
            or a["Networks"] != b["Networks"]
            or a["Volumes"] != b["Volumes"]):
        return True
    bt = {t["Name"]: t for t in b["Tasks"]}
    for at in a["Tasks"]:
        t2 = bt.get(at["Name"])
        if t2 is None:
            return True
        for k in ("Driver", "User", "Config", "Env", "Artifacts", "Vault",
                  "Templates", "DispatchPayload", "Lifecycle", "KillSignal",
                  "Identity", "Identities", "Consul", "VolumeMounts"):
            if at.get(k) != t2.get(k):
                return True
        if ((at["LogConfig"] or {}).get("Disabled")
                != (t2["LogConfig"] or {}).get("Disabled")):
            return True
        ra, rb = at["Resources"], t2["Resources"]
        for k in ("CPU", "Cores", "MemoryMB", "MemoryMaxMB", "Networks",
                  "Devices"):
            if ra.get(k) != rb.get(k):
                return True
        if combined_meta(old_job, a, at) != combined_meta(new_job, b, t2):
            return True
    return False


def job_stub(store, job, with_meta=False):
    stub = {
        "ID": job["ID"], "ParentID": job["ParentID"], "Name": job["Name"],
        "Namespace": job["Namespace"], "Datacenters": job["Datacenters"],
        "NodePool": job["NodePool"], "Multiregion": job["Multiregion"],
        "Type": job["Type"], "Priority": job["Priority"],
        "Periodic": job["Periodic"] is not None,
        "ParameterizedJob": job["ParameterizedJob"] is not None,
        "Stop": job["Stop"], "Status": job["Status"],
        "StatusDescription": job["StatusDescription"],
        "JobSummary": job_summary(store, job),
        "CreateIndex": job["CreateIndex"], "ModifyIndex": job["ModifyIndex"],
        "JobModifyIndex": job["JobModifyIndex"],
        "SubmitTime": job["SubmitTime"],
    }
    if with_meta and job["Meta"]:
        stub["Meta"] = job["Meta"]
    return stub


def job_summary(store, job):
    key = (job["Namespace"], job["ID"])
    summary = {}
    for tg in job["TaskGroups"]:
        summary[tg["Name"]] = {"Queued": 0, "Complete": 0, "Failed": 0,
                               "Running": 0, "Starting": 0, "Lost": 0,
                               "Unknown": 0}
    for aid in store.allocs_by_job.get(key, ()):
        a = store.allocs[aid]
        s = summary.setdefault(a["TaskGroup"], {
            "Queued": 0, "Complete": 0, "Failed": 0, "Running": 0,
            "Starting": 0, "Lost": 0, "Unknown": 0})
        field = {"pending": "Starting", "running": "Running",
                 "complete": "Complete", "failed": "Failed", "lost": "Lost",
                 "unknown": "Unknown"}.get(a["ClientStatus"])
        if field:
            s[field] += 1
    children = {"Pending": 0, "Running": 0, "Dead": 0}
    if job["Periodic"] is not None or job["ParameterizedJob"] is not None:
        for (ns, jid), child in store.jobs.items():
            if ns == job["Namespace"] and child["ParentID"] == job["ID"]:
                st = child["Status"] or "pending"
                children[st.capitalize()] = children.get(st.capitalize(), 0) + 1
    return {"JobID": job["ID"], "Namespace": job["Namespace"],
            "Summary": summary, "Children": children,
            "CreateIndex": job["CreateIndex"],
            "ModifyIndex": max(job["ModifyIndex"], job["CreateIndex"])}
