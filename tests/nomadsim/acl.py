"""ACL tokens and policies, reduced to namespace capabilities.

Policies are given as JSON (the parsed form of Nomad's policy HCL):
  {"Name": "deployer", "Rules": {"namespace": {"apps": {"policy": "write"},
                                              "ops": {"capabilities": ["read-logs"]}}}}
Namespace keys may be globs ("*", "app-*"), like Nomad's.
"""

import fnmatch
import hashlib

from .gojson import rfc3339, uuid

READ = {"list-jobs", "parse-job", "read-job", "csi-list-volume",
        "csi-read-volume", "list-scaling-policies", "read-scaling-policy",
        "read-job-scaling", "host-volume-read"}
WRITE = READ | {"scale-job", "submit-job", "dispatch-job", "read-logs",
                "read-fs", "alloc-exec", "alloc-lifecycle", "csi-mount-volume",
                "csi-write-volume", "submit-recommendation", "host-volume-create",
                "host-volume-register", "host-volume-write"}
SCALE = {"list-scaling-policies", "read-scaling-policy", "read-job-scaling",
         "scale-job"}
POLICIES = {"read": READ, "write": WRITE, "scale": SCALE, "deny": set()}

PERMISSION_DENIED = "Permission denied"
TOKEN_NOT_FOUND = "ACL token not found"


class Denied(Exception):
    def __init__(self, msg=PERMISSION_DENIED):
        super().__init__(msg)
        self.msg = msg


def make_token(store, name="", ttype="client", policies=None, secret=None,
               accessor=None, global_=False):
    now = store.clock.now()
    index = store.next_index("acl_token")
    tok = {
        "AccessorID": accessor or uuid(), "SecretID": secret or uuid(),
        "Name": name, "Type": ttype, "Policies": policies or None,
        "Roles": None, "Global": global_, "Hash": "",
        "CreateTime": _rfc(now), "ExpirationTime": None,
        "ExpirationTTL": 0, "CreateIndex": index, "ModifyIndex": index,
    }
    tok["Hash"] = hashlib.sha256((tok["AccessorID"] + tok["SecretID"]).encode()).hexdigest()
    store.tokens[tok["SecretID"]] = tok
    return tok


def _rfc(ns):
    return rfc3339(ns)


def resolve(store, secret):
    """Token for a secret; None for anonymous; raises Denied if unknown."""
    if not secret:
        return None
    tok = store.tokens.get(secret)
    if tok is None:
        raise Denied(TOKEN_NOT_FOUND)
    return tok


def capabilities(store, tok, namespace):
    if tok is not None and tok["Type"] == "management":
        return None   # everything
    names = (tok["Policies"] or []) if tok is not None else ["anonymous"]
    caps = set()
    for pname in names:
        pol = store.policies.get(pname)
        if pol is None:
            continue
        rules = (pol.get("Rules") or {}).get("namespace") or {}
        # The most specific matching namespace rule wins, like Nomad's.
        best, best_len = None, -1
        for pattern, rule in rules.items():
            if fnmatch.fnmatchcase(namespace, pattern):
                specific = len(pattern.replace("*", ""))
                if specific > best_len:
                    best, best_len = rule, specific
        if best is None:
            continue
        if best.get("policy") == "deny" or "deny" in (best.get("capabilities") or []):
            return set()
        caps |= POLICIES.get(best.get("policy") or "", set())
        caps |= set(best.get("capabilities") or [])
    return caps


def check(store, enabled, tok, namespace, *any_of):
    """Raise Denied unless the token has one of the capabilities."""
    if not enabled:
        return
    caps = capabilities(store, tok, namespace)
    if caps is None:
        return
    if not any(c in caps for c in any_of):
        raise Denied()


def is_management(store, enabled, tok):
    if not enabled:
        return True
    return tok is not None and tok["Type"] == "management"


def token_wire(tok):
    return dict(tok)
