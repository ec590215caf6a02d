"""Plan diff: the structure nomad/structs/diff.go builds, rebuilt on dicts.

Rules kept from Nomad: job/group/task primitive Fields are diffed
non-contextually (only changes); nested Objects are contextual (unchanged
fields listed as "None"); values are Go-formatted strings; "" means absent;
field and object lists are sorted; empty lists are null.
"""

import json

from .gojson import go_str

NONE, ADDED, DELETED, EDITED = "None", "Added", "Deleted", "Edited"
_TYPE_RANK = {EDITED: 0, ADDED: 1, DELETED: 2, NONE: 3}

# map[string]string fields that flatten as Name[key] in primitive mode.
STRING_MAPS = {"Meta", "Env", "Target", "CanaryMeta", "TaggedAddresses"}
# Fields that look primitive in our dicts but are slices in Go.
NOT_PRIMITIVE = {"Payload"}

JOB_FILTER = {"ID", "Status", "StatusDescription", "Version", "Stable",
              "CreateIndex", "ModifyIndex", "JobModifyIndex", "Update",
              "SubmitTime", "NomadTokenID", "VaultToken"}


def flatten_primitive(obj, filt=()):
    """flatmap.Flatten(obj, filter, true) for a struct dict."""
    out = {}
    if not obj:
        return out
    for k, v in obj.items():
        if k in NOT_PRIMITIVE:
            continue
        if isinstance(v, (bool, int, float, str)):
            out[k] = go_str(v)
        elif isinstance(v, dict) and k in STRING_MAPS:
            for mk, mv in v.items():
                if isinstance(mv, (bool, int, float, str)):
                    out["%s[%s]" % (k, mk)] = go_str(mv)
    for f in filt:
        out.pop(f, None)
    return out


def flatten_all(obj, prefix="", out=None):
    """flatmap.Flatten(obj, nil, false) for free-form maps (task Config)."""
    if out is None:
        out = {}
    if isinstance(obj, dict):
        for k, v in obj.items():
            flatten_all(v, "%s[%s]" % (prefix, k) if prefix else k, out)
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            flatten_all(v, "%s[%d]" % (prefix, i), out)
    elif isinstance(obj, int) and not isinstance(obj, bool):
        # JSON numbers decode to float64 in Go's interface{} maps.
        out[prefix] = go_str(float(obj))
    else:
        out[prefix] = go_str(obj)
    return out


def field(ftype, name, old, new, annotations=None):
    return {"Type": ftype, "Name": name, "Old": old, "New": new,
            "Annotations": annotations}


def field_diff(old, new, name, contextual):
    if old == new:
        return field(NONE, name, old, new) if contextual else None
    if old == "":
        return field(ADDED, name, "", new)
    if new == "":
        return field(DELETED, name, old, "")
    return field(EDITED, name, old, new)


def field_diffs(old, new, contextual):
    old, new = old or {}, new or {}
    out = []
    for k, ov in old.items():
        d = field_diff(ov, new.get(k, ""), k, contextual)
        if d:
            out.append(d)
    for k, nv in new.items():
        if k not in old:
            d = field_diff("", nv, k, contextual)
            if d:
                out.append(d)
    out.sort(key=lambda f: (f["Name"], f["Old"], f["New"]))
    return out or None


def _obj_key(o):
    return (o["Name"], _TYPE_RANK[o["Type"]], len(o["Fields"] or ()),
            len(o["Objects"] or ()),
            [(f["Name"], f["Old"], f["New"]) for f in o["Fields"] or ()])


def sort_objects(objs):
    if not objs:
        return None
    objs.sort(key=_obj_key)
    return objs


def obj(otype, name, fields=None, objects=None):
    return {"Type": otype, "Name": name, "Fields": fields or None,
            "Objects": objects or None}


def _type_from_fields(fields):
    added = deleted = False
    for f in fields or ():
        if f["Type"] == EDITED:
            return EDITED
        added |= f["Type"] == ADDED
        deleted |= f["Type"] == DELETED
    if added and deleted:
        return EDITED
    if added:
        return ADDED
    if deleted:
        return DELETED
    return None


def primitive_object_diff(old, new, filt, name, contextual):
    fields = field_diffs(flatten_primitive(old, filt),
                         flatten_primitive(new, filt), contextual)
    t = _type_from_fields(fields)
    return obj(t, name, fields) if t else None


def _hash(o):
    return json.dumps(o, sort_keys=True)


def primitive_object_set_diff(old, new, filt, name, contextual):
    oldset = {_hash(o): o for o in old or ()}
    newset = {_hash(o): o for o in new or ()}
    out = []
    for k, o in oldset.items():
        d = primitive_object_diff(o, newset.get(k), filt, name, contextual)
        if d:
            out.append(d)
    for k, n in newset.items():
        if k not in oldset:
            d = primitive_object_diff(None, n, filt, name, contextual)
            if d:
                out.append(d)
    return sort_objects(out) or []


def string_set_diff(old, new, name, contextual):
    oldm, newm = set(old or ()), set(new or ())
    if oldm == newm and not contextual:
        return None
    fields, added, removed = [], False, False
    for k in oldm:
        if k not in newm:
            fields.append(field_diff(k, "", name, contextual))
            removed = True
        elif contextual:
            fields.append(field_diff(k, k, name, contextual))
    for k in newm:
        if k not in oldm:
            fields.append(field_diff("", k, name, contextual))
            added = True
    fields.sort(key=lambda f: (f["Name"], f["Old"], f["New"]))
    if added and removed:
        t = EDITED
    elif added:
        t = ADDED
    elif removed:
        t = DELETED
    else:
        if not fields:
            return None
        t = NONE
    return obj(t, name, fields)


def _nested(old, new, name, contextual, filt=(), extra=None):
    """The common Added/Deleted/Edited pattern of diff.go's object diffs."""
    if old == new:
        return None
    if old is None:
        t, of, nf = ADDED, None, flatten_primitive(new, filt)
    elif new is None:
        t, of, nf = DELETED, flatten_primitive(old, filt), None
    else:
        t, of, nf = EDITED, flatten_primitive(old, filt), flatten_primitive(new, filt)
    d = obj(t, name, field_diffs(of, nf, contextual))
    if extra:
        subs = extra(old or {}, new or {})
        d["Objects"] = subs or None
    return d


def config_diff(old, new, contextual):
    if old == new:
        return None
    if not old:
        t = ADDED
    elif not new:
        t = DELETED
    else:
        t = EDITED
    return obj(t, "Config", field_diffs(flatten_all(old or {}),
                                        flatten_all(new or {}), contextual))


def _port_diffs(old, new, dynamic, contextual):
    filt = ("Value",) if dynamic else ()
    name = "Dynamic Port" if dynamic else "Static Port"
    om = {p.get("Label"): p for p in old or ()}
    nm = {p.get("Label"): p for p in new or ()}
    out = []
    for label, op in om.items():
        d = primitive_object_diff(op, nm.get(label), filt, name, contextual)
        if d:
            out.append(d)
    for label, np_ in nm.items():
        if label not in om:
            d = primitive_object_diff(None, np_, filt, name, contextual)
            if d:
                out.append(d)
    return sort_objects(out) or []


def network_diff(old, new, contextual):
    filt = ("Device", "CIDR", "IP")

    def subs(o, n):
        res = _port_diffs(o.get("ReservedPorts"), n.get("ReservedPorts"),
                          False, contextual)
        res += _port_diffs(o.get("DynamicPorts"), n.get("DynamicPorts"),
                           True, contextual)
        return res
    return _nested(old, new, "Network", contextual, filt, subs)


def network_diffs(old, new, contextual):
    oldset = {_hash(o): o for o in old or ()}
    newset = {_hash(o): o for o in new or ()}
    out = []
    for k, o in oldset.items():
        if k not in newset:
            out.append(network_diff(o, None, contextual))
    for k, n in newset.items():
        if k not in oldset:
            out.append(network_diff(None, n, contextual))
    return sort_objects([d for d in out if d]) or []


def resources_diff(old, new, contextual):
    def subs(o, n):
        res = network_diffs(o.get("Networks"), n.get("Networks"), contextual)
        od = {d.get("Name"): d for d in o.get("Devices") or ()}
        nd = {d.get("Name"): d for d in n.get("Devices") or ()}
        for k in sorted(set(od) | set(nd)):
            d = _nested(od.get(k), nd.get(k), "Device", contextual)
            if d:
                res.append(d)
        return res
    return _nested(old, new, "Resources", contextual, (), subs)


def service_diff(old, new, contextual):
    def subs(o, n):
        res = []
        for nm in ("CanaryTags", "Tags"):
            d = string_set_diff(o.get(nm), n.get(nm), nm, contextual)
            if d:
                res.append(d)
        oc = {c.get("Name"): c for c in o.get("Checks") or ()}
        nc = {c.get("Name"): c for c in n.get("Checks") or ()}
        checks = []
        for k in list(oc) + [k for k in nc if k not in oc]:
            d = _nested(oc.get(k), nc.get(k), "Check", contextual)
            if d:
                checks.append(d)
        res += sort_objects(checks) or []
        return res
    return _nested(old, new, "Service", contextual, (), subs)


def service_diffs(old, new, contextual):
    old, new = old or [], new or []
    if len(old) == 1 and len(new) == 1:
        d = service_diff(old[0], new[0], contextual)
        return [d] if d else []
    new_match = [-1] * len(new)
    out = []
    for oi, o in enumerate(old):
        best, best_score = -1, 0
        for ni, n in enumerate(new):
            if new_match[ni] >= 0:
                continue
            score = (1 if ni == oi else 0)
            score += 2 if o.get("PortLabel") == n.get("PortLabel") else 0
            score += 3 if o.get("Name") == n.get("Name") else 0
            if score > 2 and score > best_score:
                best, best_score = ni, score
        if best < 0:
            out.append(service_diff(o, None, contextual))
            continue
        new_match[best] = oi
        d = service_diff(o, new[best], contextual)
        if d:
            out.append(d)
    for ni, m in enumerate(new_match):
        if m == -1:
            out.append(service_diff(None, new[ni], contextual))
    return sort_objects(out) or []


def template_diffs(old, new, contextual):
    old, new = old or [], new or []
    if len(old) == 1 and len(new) == 1:
        d = _nested(old[0], new[0], "Template", contextual)
        return [d] if d else []
    used = set()
    out = []
    for o in old:
        match = None
        for i, n in enumerate(new):
            if i not in used and n.get("DestPath") == o.get("DestPath"):
                match = i
                break
        if match is None:
            out.append(_nested(o, None, "Template", contextual))
            continue
        used.add(match)
        d = _nested(o, new[match], "Template", contextual)
        if d:
            out.append(d)
    for i, n in enumerate(new):
        if i not in used:
            out.append(_nested(None, n, "Template", contextual))
    return sort_objects(out) or []


def scaling_diff(old, new, contextual):
    if old == new:
        return None
    filt = ("CreateIndex", "ModifyIndex", "ID", "Type", "Target[Job]",
            "Target[Group]", "Target[Namespace]")
    if old is None:
        t, of, nf = ADDED, None, flatten_primitive(new, filt)
    elif new is None:
        t, of, nf = DELETED, flatten_primitive(old, filt), None
    else:
        t, of, nf = EDITED, flatten_primitive(old, filt), flatten_primitive(new, filt)
    d = obj(t, "Scaling", field_diffs(of, nf, False))
    op, np_ = (old or {}).get("Policy"), (new or {}).get("Policy")
    if op != np_:
        pt = ADDED if not op else DELETED if not np_ else EDITED
        pol = obj(pt, "Policy", field_diffs(flatten_all(op or {}),
                                            flatten_all(np_ or {}), False))
        d["Objects"] = [pol]
    return d


def parameterized_diff(old, new, contextual):
    def subs(o, n):
        res = []
        for nm in ("MetaOptional", "MetaRequired"):
            d = string_set_diff(o.get(nm), n.get(nm), nm, contextual)
            if d:
                res.append(d)
        return res
    return _nested(old, new, "ParameterizedJob", contextual, (), subs)


def periodic_diff(old, new, contextual):
    d = primitive_object_diff(old, new, (), "Periodic", contextual)
    specs = string_set_diff((old or {}).get("Specs"), (new or {}).get("Specs"),
                            "Specs", contextual)
    if specs and specs["Type"] != NONE:
        if d is None:
            d = obj(EDITED, "Periodic")
        d["Objects"] = [specs]
    return d


def task_diff(old, new, contextual):
    if old is None:
        t, name = ADDED, new["Name"]
    elif new is None:
        t, name = DELETED, old["Name"]
    else:
        t, name = (NONE if old == new else EDITED), new["Name"]
    o, n = old or {}, new or {}
    filt = ("Name", "Config")
    fields = field_diffs(flatten_primitive(old, filt) if old is not None else None,
                         flatten_primitive(new, filt) if new is not None else None,
                         False)
    objects = []
    objects += primitive_object_set_diff(o.get("Constraints"), n.get("Constraints"),
                                         ("str",), "Constraint", contextual)
    objects += primitive_object_set_diff(o.get("Affinities"), n.get("Affinities"),
                                         ("str",), "Affinity", contextual)
    for d in (config_diff(o.get("Config"), n.get("Config"), contextual),
              resources_diff(o.get("Resources"), n.get("Resources"), contextual),
              primitive_object_diff(o.get("LogConfig"), n.get("LogConfig"), (),
                                    "LogConfig", contextual),
              primitive_object_diff(o.get("DispatchPayload"),
                                    n.get("DispatchPayload"), (),
                                    "DispatchPayload", contextual)):
        if d:
            objects.append(d)
    objects += primitive_object_set_diff(o.get("Artifacts"), n.get("Artifacts"),
                                         (), "Artifact", contextual)
    objects += service_diffs(o.get("Services"), n.get("Services"), contextual)
    for nm, key in (("Vault", "Vault"), ("Lifecycle", "Lifecycle")):
        d = _nested(o.get(key), n.get(key), nm, contextual)
        if d:
            objects.append(d)
    objects += template_diffs(o.get("Templates"), n.get("Templates"), contextual)
    d = _nested(o.get("Identity"), n.get("Identity"), "Identity", contextual)
    if d:
        objects.append(d)
    return {"Type": t, "Name": name, "Fields": fields,
            "Objects": objects or None, "Annotations": None}


def group_diff(old, new, contextual, quirk=True):
    if old is None:
        t, name = ADDED, new["Name"]
    elif new is None:
        t, name = DELETED, old["Name"]
    else:
        o2, n2 = old, new
        if not quirk:
            o2, n2 = _strip_scaling(old), _strip_scaling(new)
        t, name = (NONE if o2 == n2 else EDITED), new["Name"]
    o, n = old or {}, new or {}
    of = flatten_primitive(old, ("Name",)) if old is not None else None
    nf = flatten_primitive(new, ("Name",)) if new is not None else None
    if of is not None and nf is not None:
        # Pointer durations are added by hand in diff.go.
        for k in ("ShutdownDelay", "StopAfterClientDisconnect",
                  "MaxClientDisconnect"):
            of[k] = "" if o.get(k) is None else str(o[k])
            nf[k] = "" if n.get(k) is None else str(n[k])
    fields = field_diffs(of, nf, False)
    objects = []
    objects += primitive_object_set_diff(o.get("Constraints"), n.get("Constraints"),
                                         ("str",), "Constraint", contextual)
    objects += primitive_object_set_diff(o.get("Affinities"), n.get("Affinities"),
                                         ("str",), "Affinity", contextual)
    for key, nm, filt in (("RestartPolicy", "RestartPolicy", ()),
                          ("Migrate", "Migrate", ()),
                          ("ReschedulePolicy", "ReschedulePolicy", ()),
                          ("EphemeralDisk", "EphemeralDisk", ()),
                          ("Consul", "Consul", ()),
                          ("Update", "Update", ("Stagger",)),
                          ("Disconnect", "Disconnect", ())):
        d = primitive_object_diff(o.get(key), n.get(key), filt, nm, contextual)
        if d:
            objects.append(d)
    objects += network_diffs(o.get("Networks"), n.get("Networks"), contextual)
    os_, ns_ = o.get("Scaling"), n.get("Scaling")
    if not quirk:
        os_, ns_ = _strip_policy(os_), _strip_policy(ns_)
    d = scaling_diff(os_, ns_, contextual)
    if d:
        objects.append(d)
    objects += service_diffs(o.get("Services"), n.get("Services"), contextual)
    ov, nv = o.get("Volumes") or {}, n.get("Volumes") or {}
    for k in list(ov) + [k for k in nv if k not in ov]:
        d = _nested(ov.get(k), nv.get(k), "Volume", contextual)
        if d:
            objects.append(d)
    tasks = _by_name(o.get("Tasks"), n.get("Tasks"), task_diff, contextual)
    return {"Type": t, "Name": name, "Fields": fields,
            "Objects": objects or None, "Tasks": tasks, "Updates": None}


def _strip_policy(s):
    if not s:
        return s
    return {k: v for k, v in s.items()
            if k not in ("ID", "CreateIndex", "ModifyIndex", "Target")}


def _strip_scaling(tg):
    if not tg.get("Scaling"):
        return tg
    return dict(tg, Scaling=_strip_policy(tg["Scaling"]))


def _by_name(old, new, fn, *args):
    om = {x["Name"]: x for x in old or ()}
    nm = {x["Name"]: x for x in new or ()}
    out = [fn(o, nm.get(k), *args) for k, o in om.items()]
    out += [fn(None, n, *args) for k, n in nm.items() if k not in om]
    out.sort(key=lambda d: d["Name"])
    return out or None


def job_diff(old, new, contextual=True, quirk=True):
    """Job.Diff(old, new): old None means the job is new."""
    if old is None:
        t, of, nf = ADDED, None, flatten_primitive(new, JOB_FILTER)
    else:
        t = NONE
        of, nf = flatten_primitive(old, JOB_FILTER), flatten_primitive(new, JOB_FILTER)
    o = old or {}
    diff = {"Type": t, "ID": new["ID"], "Fields": field_diffs(of, nf, False),
            "Objects": None, "TaskGroups": None}
    objects = []
    dc = string_set_diff(o.get("Datacenters"), new.get("Datacenters"),
                         "Datacenters", contextual)
    if dc and dc["Type"] != NONE:
        objects.append(dc)
    objects += primitive_object_set_diff(o.get("Constraints"), new.get("Constraints"),
                                         ("str",), "Constraint", contextual)
    objects += primitive_object_set_diff(o.get("Affinities"), new.get("Affinities"),
                                         ("str",), "Affinity", contextual)
    diff["TaskGroups"] = _by_name(o.get("TaskGroups"), new.get("TaskGroups"),
                                  group_diff, contextual, quirk)
    for d in (periodic_diff(o.get("Periodic"), new.get("Periodic"), contextual),
              parameterized_diff(o.get("ParameterizedJob"),
                                 new.get("ParameterizedJob"), contextual),
              _nested(o.get("Multiregion"), new.get("Multiregion"),
                      "Multiregion", contextual)):
        if d:
            objects.append(d)
    diff["Objects"] = objects or None
    if diff["Type"] == NONE:
        if (any(f["Type"] != NONE for f in diff["Fields"] or ())
                or any(x["Type"] != NONE for x in objects)
                or any(g["Type"] != NONE for g in diff["TaskGroups"] or ())):
            diff["Type"] = EDITED
    return diff


_UPDATE_KEYS = (("Ignore", "ignore"), ("Place", "create"),
                ("Migrate", "migrate"), ("Stop", "destroy"),
                ("Canary", "canary"), ("InPlaceUpdate", "in-place update"),
                ("DestructiveUpdate", "create/destroy update"))


def annotate(diff, desired):
    """scheduler.Annotate: Updates per group, count and task annotations."""
    for tg in diff["TaskGroups"] or ():
        du = desired.get(tg["Name"])
        if du is not None:
            tg["Updates"] = {k: du[f] for f, k in _UPDATE_KEYS if du[f]}
        for f in tg["Fields"] or ():
            if f["Name"] == "Count":
                ov = int(f["Old"] or 0)
                nv = int(f["New"] or 0)
                if ov < nv:
                    f["Annotations"] = ["forces create"]
                elif nv < ov:
                    f["Annotations"] = ["forces destroy"]
        for td in tg["Tasks"] or ():
            _annotate_task(td, tg)


def _annotate_task(td, parent):
    if td["Type"] == NONE:
        return
    if parent["Type"] in (ADDED, DELETED):
        if td["Type"] == ADDED:
            td["Annotations"] = ["forces create"]
            return
        if td["Type"] == DELETED:
            td["Annotations"] = ["forces destroy"]
            return
    destructive = any(f["Name"] != "KillTimeout" for f in td["Fields"] or ())
    if not destructive:
        for o in td["Objects"] or ():
            if o["Name"] in ("Service", "Constraint", "Affinity", "Spread"):
                continue
            if o["Name"] == "LogConfig":
                if any(f["Name"] == "Disabled" for f in o["Fields"] or ()):
                    destructive = True
                    break
                continue
            destructive = True
            break
    td["Annotations"] = ["forces create/destroy update" if destructive
                         else "forces in-place update"]
