"""The simulator's single store: tables, raft-like indexes, clock, events.

Everything is guarded by one re-entrant lock; `cond` (on the same lock) wakes
blocking queries and event streams whenever the index moves.  Callers hold
the lock for a whole request, so a response is always encoded from a
consistent snapshot.
"""

import collections
import heapq
import itertools
import json
import os
import threading
import time


class Clock:
    """Virtual time in nanoseconds.

    speed 0 means manual: time moves only through advance().  A speed factor
    s > 0 lets virtual time run s times faster than the wall clock.
    """

    def __init__(self, start_ns=None, speed=1.0):
        self._base_virtual = int(start_ns if start_ns is not None
                                 else time.time_ns())
        self._base_real = time.monotonic_ns()
        self.speed = float(speed)

    def now(self):
        if self.speed <= 0:
            return self._base_virtual
        real = time.monotonic_ns() - self._base_real
        return self._base_virtual + int(real * self.speed)

    def set(self, ns):
        self._base_virtual = int(ns)
        self._base_real = time.monotonic_ns()

    def set_speed(self, speed):
        self.set(self.now())
        self.speed = float(speed)


class Store:
    # Tables whose index a blocking query can watch (Nomad's table names).
    TABLES = ("jobs", "job_summary", "job_version", "evals", "allocs",
              "deployment", "namespaces", "acl_token", "acl_policy",
              "scaling_policy")

    def __init__(self, clock, first_index=10):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.clock = clock
        self.index = first_index
        self.table_index = {t: first_index for t in self.TABLES}
        self.namespaces = {}
        self.jobs = {}            # (ns, id) -> current struct job
        self.versions = {}        # (ns, id) -> [job versions, newest first]
        self.submissions = {}     # (ns, id, version) -> submission
        self.evals = {}
        self.allocs = {}
        self.allocs_by_job = collections.defaultdict(list)
        self.deployments = {}
        self.deps_by_job = collections.defaultdict(list)
        self.tokens = {}          # secret -> token
        self.policies = {}
        self.events = collections.deque()
        self.event_seq = 0
        self.event_items = 0      # distinct indexes buffered
        self.faults = []          # admin-injected HTTP faults
        self.timers = []          # heap of (due_ns, seq, fn)
        self._seq = itertools.count()
        self.shutting_down = False
        # Set by server.make_sim: the scheduler's evaluate(store, ev) and a
        # revert_job(store, job) that registers an old version again.
        self.scheduler = None
        self.revert_job = None
        # Runtime knobs the admin API can change.
        self.config = {
            "start_delay": 1.0,       # s: pending -> running
            "batch_duration": 1.0,    # s: simulated batch task run time
            "kill_delay": 0.5,        # s: stop -> complete
            "task_timeout": 300.0,    # real s: cap for a real process
            "max_kill_timeout": 5.0,  # real s: cap on kill_timeout
            "scaling_diff_quirk": True,
            # What /v1/agent/self and /v1/status/leader report: a test
            # changes them to play an upgrade or a new leader.
            "version": "2.0.6",
            # Nomad's event_buffer_size: raft indexes kept for streams.
            "event_buffer_size": 100,
            "leader": "127.0.0.1:4647",
        }
        self.hold_health = set()      # (ns, job) whose allocs stay unhealthy
        self.broken = {}              # (ns, job) -> exit code at start
        self.nodes = []
        self.node_used = {}           # node ID -> (cpu, mem) of live allocs

    # -- indexes -----------------------------------------------------------

    def next_index(self, *tables):
        """Allocate a new raft index and stamp the given tables with it."""
        self.index += 1
        for t in tables:
            self.table_index[t] = self.index
        self.cond.notify_all()
        return self.index

    def touch(self, *tables):
        for t in tables:
            self.table_index[t] = self.index
        self.cond.notify_all()

    def max_index(self, *tables):
        return max(self.table_index[t] for t in tables)

    # -- timers on the virtual clock -----------------------------------------

    def at(self, due_ns, fn):
        heapq.heappush(self.timers, (int(due_ns), next(self._seq), fn))
        self.cond.notify_all()

    def after(self, seconds, fn):
        self.at(self.clock.now() + int(seconds * 1e9), fn)

    def run_due(self):
        """Fire every timer that is due now (caller holds the lock)."""
        now = self.clock.now()
        fired = 0
        while self.timers and self.timers[0][0] <= now:
            _, _, fn = heapq.heappop(self.timers)
            fn()
            fired += 1
        return fired

    def advance(self, seconds):
        """Move a manual clock forward, firing timers in time order."""
        target = self.clock.now() + int(seconds * 1e9)
        while self.timers and self.timers[0][0] <= target:
            due, _, fn = heapq.heappop(self.timers)
            if due > self.clock.now():
                self.clock.set(due)
            fn()
        self.clock.set(max(target, self.clock.now()))

    # -- events ----------------------------------------------------------------

    def publish(self, topic, etype, key, namespace, payload, filter_keys=None,
                index=None):
        index = index or self.index
        last = self.events[-1] if self.events else None
        if (last is not None and topic == "Deployment" and last["Topic"] == topic
                and last["Key"] == key and last["Index"] == index):
            # One raft message emits one event per changed row: a second
            # change of the same deployment in it only updates the payload.
            last["Type"], last["Payload"] = etype, payload
            self.cond.notify_all()
            return
        if last is None or last["Index"] != index:
            self.event_items += 1
        self.event_seq += 1
        self.events.append({
            "_seq": self.event_seq, "Topic": topic, "Type": etype, "Key": key,
            "Namespace": namespace, "FilterKeys": filter_keys,
            "Index": index, "Payload": payload,
        })
        # The buffer holds event_buffer_size indexes; older ones drop out.
        while self.event_items > max(1, int(self.config["event_buffer_size"])):
            first = self.events[0]["Index"]
            while self.events and self.events[0]["Index"] == first:
                self.events.popleft()
            self.event_items -= 1
        self.cond.notify_all()

    # -- persistence -------------------------------------------------------------

    PERSISTED = ("index", "table_index", "namespaces", "evals", "allocs",
                 "deployments", "tokens", "policies", "config")

    def dump(self):
        return {
            "Index": self.index,
            "Now": self.clock.now(),
            "Namespaces": self.namespaces,
            "Jobs": [j for j in self.jobs.values()],
            "Versions": {"%s/%s" % k: v for k, v in self.versions.items()},
            "Evaluations": self.evals,
            "Allocations": self.allocs,
            "Deployments": self.deployments,
            "Tokens": list(self.tokens.values()),
            "Policies": self.policies,
            "Config": self.config,
            "HeldHealth": sorted("%s/%s" % k for k in self.hold_health),
        }

    def save(self, directory):
        tmp = os.path.join(directory, "state.json.tmp")
        with open(tmp, "w") as f:
            json.dump(self.dump(), f)
        os.replace(tmp, os.path.join(directory, "state.json"))

    def load(self, directory):
        path = os.path.join(directory, "state.json")
        if not os.path.exists(path):
            return False
        with open(path) as f:
            d = json.load(f)
        self.index = d["Index"]
        for t in self.TABLES:
            self.table_index[t] = self.index
        self.clock.set(d["Now"])
        self.namespaces = d["Namespaces"]
        for key, vers in d["Versions"].items():
            ns, jid = key.split("/", 1)
            self.versions[(ns, jid)] = vers
        for j in d["Jobs"]:
            k = (j["Namespace"], j["ID"])
            vers = self.versions.get(k) or [j]
            vers[0] = j
            self.jobs[k] = j
            self.versions[k] = vers
        self.evals = d["Evaluations"]
        self.allocs = d["Allocations"]
        for a in self.allocs.values():
            self.allocs_by_job[(a["Namespace"], a["JobID"])].append(a["ID"])
            if a.get("_counted"):
                cpu, mem = self.node_used.get(a["NodeID"], (0, 0))
                self.node_used[a["NodeID"]] = (cpu + a["_cpu"], mem + a["_mem"])
            # The alloc's Job is shared with the version it runs.
            for v in self.versions.get((a["Namespace"], a["JobID"]), []):
                if v["Version"] == a["Job"]["Version"]:
                    a["Job"] = v
        self.deployments = d["Deployments"]
        for dep in self.deployments.values():
            self.deps_by_job[(dep["Namespace"], dep["JobID"])].append(dep["ID"])
        self.tokens = {t["SecretID"]: t for t in d["Tokens"]}
        self.policies = d["Policies"]
        self.config.update(d["Config"])
        self.hold_health = {tuple(x.split("/", 1)) for x in d["HeldHealth"]}
        return True
