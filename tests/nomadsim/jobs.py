"""Job writes: register (with CAS), plan, dispatch, deregister, scale,
revert, and periodic launches (forced and on the virtual clock).

These are the RPC halves of Nomad's job endpoints; api_jobs.py does the
HTTP half (decoding, ACLs, namespaces) and admin.py reuses them for changes
made "behind nops' back".  Callers hold store.lock.
"""

import base64

from . import cron, diff, jobspec, lookup, scheduler, structs
from .errors import CodedError
from .evals import create_eval, new_eval, publish_eval
from .gojson import deepcopy, multierror, rfc3339, uuid
from .reconcile import reconcile

TRACKED_VERSIONS = 6
PAYLOAD_LIMIT = 16 * 1024


def prepare(api_job):
    """Canonicalize an api.Job (client defaults) and shape it as structs.Job."""
    job = jobspec.canonicalize(api_job)
    return structs.to_struct_job(job)


def check_valid(job):
    errs = structs.validate(job)
    if errs:
        raise CodedError(500, multierror(errs))


def write_meta(index):
    return {"Index": index, "LastContact": 0, "KnownLeader": False,
            "NextToken": ""}


def _assign_scaling(job, old, index):
    for tg in job["TaskGroups"]:
        s = tg["Scaling"]
        if s is None:
            continue
        prev = None
        if old is not None:
            og = structs.find_group(old, tg["Name"])
            prev = og and og["Scaling"]
        s["ID"] = prev["ID"] if prev else uuid()
        s["Target"] = {"Namespace": job["Namespace"], "Job": job["ID"],
                       "Group": tg["Name"]}
        s["CreateIndex"] = prev["CreateIndex"] if prev else index
        s["ModifyIndex"] = index


def register(store, job, enforce=False, jmi=0, preserve_counts=False,
             revert=False, token=None, submission=None, trigger="job-register"):
    """Job.Register: returns the JobRegisterResponse body."""
    ns, jid = job["Namespace"], job["ID"]
    if ns not in store.namespaces:
        raise CodedError(500, 'job "%s" is in nonexistent namespace "%s"' % (jid, ns))
    check_valid(job)
    key = (ns, jid)
    existing = store.jobs.get(key)
    if enforce:
        if existing is not None:
            if jmi == 0:
                raise CodedError(500, "Enforcing job modify index 0: job already exists")
            if jmi != existing["JobModifyIndex"]:
                raise CodedError(500, "Enforcing job modify index %d: job exists "
                                 "with conflicting job modify index: %d"
                                 % (jmi, existing["JobModifyIndex"]))
        elif jmi != 0:
            raise CodedError(500, "Enforcing job modify index %d: job does not exist"
                             % jmi)
    if preserve_counts and existing is not None:
        for tg in job["TaskGroups"]:
            og = structs.find_group(existing, tg["Name"])
            if og is not None:
                tg["Count"] = og["Count"]
    no_eval = job["Periodic"] is not None or (
        job["ParameterizedJob"] is not None and not job["Dispatched"])
    if existing is not None and structs.spec_equal(existing, job):
        # Unchanged: no new version, but service/batch jobs get a fresh eval.
        if no_eval:
            return dict({"EvalID": "", "EvalCreateIndex": 0,
                         "JobModifyIndex": existing["ModifyIndex"],
                         "Warnings": ""}, **write_meta(existing["ModifyIndex"]))
        ev = create_eval(store, existing, trigger)
        return dict({"EvalID": ev["ID"], "EvalCreateIndex": ev["CreateIndex"],
                     "JobModifyIndex": existing["ModifyIndex"], "Warnings": ""},
                    **write_meta(ev["CreateIndex"]))
    index = store.next_index("jobs", "job_version", "job_summary",
                             "scaling_policy", "evals")
    commit(store, job, existing, index, token, submission)
    resp = {"EvalID": "", "EvalCreateIndex": 0, "JobModifyIndex": index,
            "Warnings": ""}
    if not no_eval:
        ev = new_eval(store, job, trigger, index)
        store.evals[ev["ID"]] = ev
        publish_eval(store, ev, "JobRegistered")
        scheduler.evaluate(store, ev)
        resp["EvalID"], resp["EvalCreateIndex"] = ev["ID"], index
    else:
        lookup.refresh_job_status(store, job)
    return dict(resp, **write_meta(index))


def commit(store, job, existing, index, token=None, submission=None):
    """Store `job` as the newest version at `index`."""
    key = (job["Namespace"], job["ID"])
    _assign_scaling(job, existing, index)
    job["Version"] = existing["Version"] + 1 if existing is not None else 0
    job["CreateIndex"] = existing["CreateIndex"] if existing is not None else index
    job["ModifyIndex"] = job["JobModifyIndex"] = index
    job["SubmitTime"] = store.clock.now()
    job["Stable"] = False
    job["Status"] = "pending"
    job["StatusDescription"] = ""
    if token is not None:
        job["NomadTokenID"] = token.get("AccessorID", "")
    store.jobs[key] = job
    versions = store.versions.setdefault(key, [])
    versions.insert(0, job)
    del versions[TRACKED_VERSIONS:]
    if submission:
        sub = dict(submission, Namespace=job["Namespace"], JobID=job["ID"],
                   Version=job["Version"], JobModifyIndex=index)
        store.submissions[(key[0], key[1], job["Version"])] = sub
    store.publish("Job", "JobRegistered", job["ID"], job["Namespace"],
                  {"Job": deepcopy(job)}, None, index)
    if job["Periodic"] is not None:
        periodic_arm(store, key)


def plan(store, job, want_diff):
    """Job.Plan: the JobPlanResponse body (nothing is stored)."""
    check_valid(job)
    key = (job["Namespace"], job["ID"])
    existing = store.jobs.get(key)
    cand = dict(job)
    if existing is not None and structs.spec_equal(existing, cand):
        cand = existing
    else:
        # A changed spec would get a new JobModifyIndex: mark it as new.
        cand["JobModifyIndex"] = -1
        cand["Version"] = existing["Version"] + 1 if existing else 0
        cand["CreateIndex"] = existing["CreateIndex"] if existing else 0
    allocs = lookup.job_allocs(store, *key)
    dep = lookup.version_deployment(store, cand) if cand is existing else None
    r = reconcile(store, cand, allocs, dep)
    failed = _plan_failures(store, cand, r, allocs)
    jmi = existing["JobModifyIndex"] if existing is not None else 0
    d = None
    if want_diff:
        old = existing
        d = diff.job_diff(old, job, True, store.config["scaling_diff_quirk"])
        diff.annotate(d, r.desired)
    created = None
    if failed:
        ev = new_eval(store, job, "queued-allocs", jmi)
        ev["Status"] = "blocked"
        ev["StatusDescription"] = "created due to placement conflicts"
        created = [ev]
    next_launch = None
    if job["Periodic"] is not None and job["Periodic"].get("Enabled", True):
        nxt = cron.next_launch(job["Periodic"], store.clock.now())
        next_launch = rfc3339(nxt) if nxt else None
    return {
        "Annotations": {"DesiredTGUpdates": r.desired, "PreemptedAllocs": None},
        "CreatedEvals": created, "Diff": d, "FailedTGAllocs": failed or None,
        "JobModifyIndex": jmi, "NextPeriodicLaunch": next_launch,
        "Warnings": "", "Index": jmi,
    }


def _plan_failures(store, job, r, allocs):
    """Dry-run placement on the simulated nodes' free resources."""
    failed = {}
    extra = {}
    stopping = {a["ID"] for a, _ in r.stop}
    for n in store.nodes:
        cpu, mem = lookup.node_usage(store, n["ID"])
        for a in allocs:
            if a["ID"] in stopping and a["NodeID"] == n["ID"]:
                cpu -= a["_cpu"]
                mem -= a["_mem"]
        extra[n["ID"]] = [cpu, mem]
    nodes = lookup.eligible_nodes(store, job)
    for group, _name, _canary, _prev in r.place:
        tg = structs.find_group(job, group)
        cpu = sum(t["Resources"]["CPU"] for t in tg["Tasks"])
        mem = sum(t["Resources"]["MemoryMB"] for t in tg["Tasks"])
        best = None
        for n in nodes:
            u = extra[n["ID"]]
            if u[0] + cpu <= n["CPU"] and u[1] + mem <= n["MemoryMB"]:
                if best is None or extra[best["ID"]][1] > u[1]:
                    best = n
        if best is None:
            m = failed.get(group)
            if m is None:
                m = failed[group] = scheduler.failed_metric(store, job, tg)
            else:
                m["CoalescedFailures"] += 1
            continue
        extra[best["ID"]][0] += cpu
        extra[best["ID"]][1] += mem
    return failed


def deregister(store, ns, jid, purge=False):
    key = (ns, jid)
    job = store.jobs.get(key)
    resp = {"EvalID": "", "EvalCreateIndex": 0, "JobModifyIndex": 0,
            "VolumeEvalID": "", "VolumeEvalIndex": 0}
    if job is None:
        return dict(resp, **write_meta(0))
    no_eval = job["Periodic"] is not None or (
        job["ParameterizedJob"] is not None and not job["Dispatched"])
    if purge:
        index = store.next_index("jobs", "job_version", "job_summary", "evals")
        del store.jobs[key]
        store.versions.pop(key, None)
        store.publish("Job", "JobDeregistered", jid, ns, {"Job": deepcopy(job)},
                      None, index)
        resp["JobModifyIndex"] = index
        if not no_eval:
            ev = new_eval(store, job, "job-deregister", index)
            store.evals[ev["ID"]] = ev
            scheduler.evaluate(store, ev)
            resp["EvalID"], resp["EvalCreateIndex"] = ev["ID"], index
        return dict(resp, **write_meta(index))
    if job["Stop"]:
        index = store.next_index("evals")
        stopped = job
    else:
        index = store.next_index("jobs", "job_version", "job_summary", "evals")
        stopped = deepcopy(job)
        stopped["Stop"] = True
        commit(store, stopped, job, index)
        store.publish("Job", "JobDeregistered", jid, ns, {"Job": deepcopy(stopped)},
                      None, index)
    resp["JobModifyIndex"] = stopped["JobModifyIndex"]
    if not no_eval:
        ev = new_eval(store, stopped, "job-deregister", index)
        store.evals[ev["ID"]] = ev
        scheduler.evaluate(store, ev)
        resp["EvalID"], resp["EvalCreateIndex"] = ev["ID"], index
    else:
        lookup.refresh_job_status(store, stopped)
    return dict(resp, **write_meta(index))


def _go_list(keys):
    return "[" + " ".join(keys) + "]"


def dispatch(store, parent_key, payload_b64, meta, token, id_prefix="",
             priority=0):
    parent = store.jobs.get(parent_key)
    if parent is None:
        raise CodedError(500, "parameterized job not found")
    pid = parent["ID"]
    if parent["ParameterizedJob"] is None or parent["Dispatched"]:
        raise CodedError(500, 'Specified job "%s" is not a parameterized job' % pid)
    if parent["Stop"]:
        raise CodedError(500, 'Specified job "%s" is stopped' % pid)
    pj = parent["ParameterizedJob"]
    payload = base64.b64decode(payload_b64) if payload_b64 else b""
    mode = pj.get("Payload") or "optional"
    if mode == "required" and not payload:
        raise CodedError(500, "Payload is not provided but required by parameterized job")
    if mode == "forbidden" and payload:
        raise CodedError(500, "Payload provided but forbidden by parameterized job")
    if len(payload) > PAYLOAD_LIMIT:
        raise CodedError(500, "Payload exceeds maximum size; %d > %d"
                         % (len(payload), PAYLOAD_LIMIT))
    meta = meta or {}
    allowed = set(pj.get("MetaRequired") or []) | set(pj.get("MetaOptional") or [])
    bad = sorted(k for k in meta if k not in allowed)
    if bad:
        raise CodedError(500, "Dispatch request included unpermitted metadata keys: %s"
                         % _go_list(bad))
    missing = [k for k in pj.get("MetaRequired") or [] if k not in meta]
    if missing:
        raise CodedError(500, "Dispatch did not provide required meta keys: %s"
                         % _go_list(missing))
    if priority and not 1 <= priority <= 100:
        raise CodedError(500, "dispatch job priority must be between [1, 100]")
    if token:
        for (ns, _), child in store.jobs.items():
            if (ns == parent["Namespace"] and child["ParentID"] == pid
                    and child["DispatchIdempotencyToken"] == token):
                return {"DispatchedJobID": child["ID"], "EvalID": "",
                        "EvalCreateIndex": 0,
                        "JobCreateIndex": child["CreateIndex"],
                        "Index": child["ModifyIndex"]}
    now_s = store.clock.now() // 1_000_000_000
    suffix = "%d-%s" % (now_s, uuid()[:8])
    if id_prefix:
        suffix = "%s-%s" % (id_prefix, suffix)
    child = deepcopy(parent)
    child["ID"] = child["Name"] = "%s/dispatch-%s" % (pid, suffix)
    child["ParentID"] = pid
    child["Dispatched"] = True
    child["DispatchIdempotencyToken"] = token or ""
    child["Meta"] = dict(parent["Meta"] or {}, **meta) or None
    child["Payload"] = payload_b64 or None
    if priority:
        child["Priority"] = priority
    index = store.next_index("jobs", "job_version", "job_summary", "evals")
    commit(store, child, None, index)
    ev = new_eval(store, child, "job-register", index)
    store.evals[ev["ID"]] = ev
    publish_eval(store, ev, "JobRegistered")
    scheduler.evaluate(store, ev)
    store.touch("job_summary")
    return {"DispatchedJobID": child["ID"], "EvalID": ev["ID"],
            "EvalCreateIndex": index, "JobCreateIndex": index, "Index": index}


def scale(store, key, group, count, message="", error=False, meta=None):
    job = store.jobs.get(key)
    if job is None:
        raise CodedError(404, "job not found")
    if not group:
        raise CodedError(400, "missing task group name for scaling action")
    tg = structs.find_group(job, group)
    if tg is None:
        raise CodedError(400, 'job does not contain task group "%s"' % group)
    if count is not None:
        if count < 0:
            raise CodedError(400, "scaling action count can't be negative")
        dep = lookup.latest_deployment(store, *key)
        if dep is not None and dep["Status"] in lookup.ACTIVE_DEP:
            _scaling_event(store, key, group, None, tg["Count"],
                           "job scaling blocked due to active deployment", True, meta)
            raise CodedError(400, "job scaling blocked due to active deployment")
        s = tg["Scaling"]
        if s is not None and s["Enabled"]:
            if count > s["Max"]:
                raise CodedError(400, "group count was greater than scaling policy "
                                 "maximum: %d > %d" % (count, s["Max"]))
            if count < s["Min"]:
                raise CodedError(400, "group count was less than scaling policy "
                                 "minimum: %d < %d" % (count, s["Min"]))
        new = deepcopy(job)
        structs.find_group(new, group)["Count"] = count
        prev = tg["Count"]
        resp = register(store, new, trigger="job-scaling")
        _scaling_event(store, key, group, count, prev, message, error, meta,
                       resp["EvalID"])
        return resp
    # A count-less request only records a scaling event.
    index = store.next_index("scaling_policy")
    _scaling_event(store, key, group, None, tg["Count"], message, error, meta)
    return dict({"EvalID": "", "EvalCreateIndex": 0,
                 "JobModifyIndex": job["JobModifyIndex"], "Warnings": ""},
                **write_meta(index))


def _scaling_event(store, key, group, count, prev, message, error, meta,
                   eval_id=None):
    events = store.__dict__.setdefault("scaling_events", {})
    lst = events.setdefault((key[0], key[1], group), [])
    lst.insert(0, {"Count": count, "PreviousCount": prev, "Message": message,
                   "Error": bool(error), "Meta": meta, "EvalID": eval_id,
                   "Time": store.clock.now(), "CreateIndex": store.index})
    del lst[20:]


def scale_status(store, key):
    job = store.jobs.get(key)
    if job is None:
        raise CodedError(404, "job not found")
    events = getattr(store, "scaling_events", {})
    groups = {}
    for tg in job["TaskGroups"]:
        placed = running = healthy = unhealthy = 0
        for a in lookup.job_allocs(store, *key):
            if a["TaskGroup"] != tg["Name"] or a["DesiredStatus"] != "run":
                continue
            if a["ClientStatus"] not in ("pending", "running"):
                continue
            placed += 1
            running += a["ClientStatus"] == "running"
            h = (a["DeploymentStatus"] or {}).get("Healthy")
            healthy += h is True
            unhealthy += h is False
        groups[tg["Name"]] = {
            "Desired": tg["Count"], "Placed": placed, "Running": running,
            "Healthy": healthy, "Unhealthy": unhealthy,
            "Events": events.get((key[0], key[1], tg["Name"])) or None}
    return {"JobID": job["ID"], "Namespace": job["Namespace"],
            "JobCreateIndex": job["CreateIndex"],
            "JobModifyIndex": job["JobModifyIndex"], "JobStopped": job["Stop"],
            "TaskGroups": groups}


def revert(store, key, version, enforce_prior=None):
    job = store.jobs.get(key)
    if job is None:
        raise CodedError(404, "job not found")
    if enforce_prior is not None and enforce_prior != job["Version"]:
        raise CodedError(500, "current job has version %d; enforcing version %d"
                         % (job["Version"], enforce_prior))
    if version == job["Version"]:
        raise CodedError(500, "can't revert to current version")
    target = next((v for v in store.versions.get(key, [])
                   if v["Version"] == version), None)
    if target is None:
        raise CodedError(500, "job %q at version %d not found".replace("%q", '"%s"')
                         % (key[1], version))
    return register(store, deepcopy(target), revert=True)


# -- periodic launches -------------------------------------------------------

def periodic_launch(store, parent, when_ns):
    """Derive `parent/periodic-<unix>` and schedule it (Nomad's deriveJob)."""
    child = deepcopy(parent)
    child["ID"] = child["Name"] = "%s/periodic-%d" % (parent["ID"],
                                                     when_ns // 1_000_000_000)
    child["ParentID"] = parent["ID"]
    child["Periodic"] = None
    index = store.next_index("jobs", "job_version", "job_summary", "evals")
    commit(store, child, store.jobs.get((child["Namespace"], child["ID"])),
           index)
    ev = new_eval(store, child, "periodic-job", index)
    store.evals[ev["ID"]] = ev
    scheduler.evaluate(store, ev)
    return ev


def periodic_force(store, key):
    job = store.jobs.get(key)
    if job is None:
        raise CodedError(404, "job not found")
    if job["Periodic"] is None or not job["Periodic"].get("Enabled", True):
        raise CodedError(500, "can't force run non-periodic job")
    ev = periodic_launch(store, job, store.clock.now())
    return {"EvalID": ev["ID"], "EvalCreateIndex": ev["CreateIndex"],
            "Index": ev["CreateIndex"]}


def periodic_arm(store, key):
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
                    periodic_arm(store, key)
                    return
        periodic_launch(store, cur, nxt)
        periodic_arm(store, key)
    store.at(nxt, fire)
