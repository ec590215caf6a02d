"""Reconcile: what the scheduler would do for a job given its allocations
and deployment (scheduler/reconcile.go).  A pure function: plans use it
for annotations, evaluations (scheduler.py) and the deployment watcher to
act.  Callers hold store.lock."""

from . import structs
from .lookup import eligible_nodes, is_live

ALLOC_NOT_NEEDED = "alloc not needed due to job update"
ALLOC_UPDATING = "alloc is being updated due to job update"
ALLOC_RESCHEDULED = "alloc was rescheduled because it failed"


def new_desired():
    return {"Ignore": 0, "Place": 0, "Migrate": 0, "Stop": 0,
            "InPlaceUpdate": 0, "DestructiveUpdate": 0, "Canary": 0,
            "Preemptions": 0, "Disconnect": 0, "Reconnect": 0,
            "RescheduleNow": 0, "RescheduleLater": 0}


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
