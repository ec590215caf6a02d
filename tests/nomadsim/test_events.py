"""Blocking queries and the event stream."""

import http.client
import json
import threading
import time
import unittest

from .simtest import SimTestCase, service_job


class TestBlocking(SimTestCase):
    def test_blocking_query_returns_on_change(self):
        self.sim.register(service_job("blk", count=1))
        st, h, _ = self.sim.get("/v1/job/blk")
        index = int(h["x-nomad-index"])
        result = {}

        def waiter():
            result["r"] = self.sim.get("/v1/job/blk?index=%d&wait=20s" % index)
        t = threading.Thread(target=waiter)
        t0 = time.monotonic()
        t.start()
        time.sleep(0.2)
        self.assertTrue(t.is_alive(), "blocking query returned early")
        self.sim.register(service_job("blk", count=1, image="nginx:2"))
        t.join(10)
        self.assertFalse(t.is_alive())
        st, h, body = result["r"]
        self.assertEqual(st, 200)
        self.assertGreater(int(h["x-nomad-index"]), index)
        self.assertEqual(body["Version"], 1)
        self.assertLess(time.monotonic() - t0, 10)

    def test_blocking_query_times_out(self):
        self.sim.register(service_job("blk2", count=1))
        _, h, _ = self.sim.get("/v1/job/blk2")
        t0 = time.monotonic()
        st, h2, _ = self.sim.get("/v1/job/blk2?index=%s&wait=300ms" % h["x-nomad-index"])
        self.assertEqual(st, 200)
        self.assertGreaterEqual(time.monotonic() - t0, 0.25)
        self.assertEqual(h2["x-nomad-index"], h["x-nomad-index"])

    def test_bad_blocking_parameters(self):
        st, _, body = self.sim.get("/v1/jobs?wait=soon&index=1")
        self.assertEqual((st, body), (400, "Invalid wait time"))
        st, _, body = self.sim.get("/v1/jobs?index=abc")
        self.assertEqual((st, body), (400, "Invalid index"))


class TestEventStream(SimTestCase):
    def read_stream(self, path, until, timeout=10):
        c = http.client.HTTPConnection(self.sim.host, self.sim.port, timeout=timeout)
        c.request("GET", path)
        r = c.getresponse()
        self.assertEqual(r.status, 200)
        self.assertEqual(r.getheader("Content-Type"), "application/json")
        lines = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            line = r.readline()
            if not line:
                break
            lines.append(json.loads(line))
            if until(lines):
                break
        c.close()
        return lines

    def test_stream_filters_topics_and_keys(self):
        _, h, _ = self.sim.get("/v1/jobs")
        start = h["x-nomad-index"]
        self.sim.register(service_job("ev-other", count=1))
        self.sim.register(service_job("ev", count=1))
        lines = self.read_stream(
            "/v1/event/stream?index=%s&topic=Job:ev&topic=Deployment:ev" % start,
            lambda ls: any(e["Topic"] == "Deployment" for l in ls for e in l.get("Events", [])))
        self.assertEqual(lines[0], {})
        events = [e for l in lines for e in l.get("Events", [])]
        self.assertTrue(events)
        for e in events:
            self.assertIn(e["Topic"], ("Job", "Deployment"))
            if e["Topic"] == "Job":
                self.assertEqual(e["Key"], "ev")
                self.assertEqual(e["Payload"]["Job"]["ID"], "ev")
            else:
                self.assertEqual(e["FilterKeys"], ["ev"])
                self.assertIn("Deployment", e["Payload"])
            for k in ("Topic", "Type", "Key", "Namespace", "FilterKeys", "Index", "Payload"):
                self.assertIn(k, e)
        for l in lines[1:]:
            if l:
                self.assertTrue(all(e["Index"] == l["Index"] for e in l["Events"]))

    def test_heartbeats(self):
        lines = self.read_stream("/v1/event/stream?topic=Job:nothing-here",
                                 lambda ls: len(ls) >= 2, timeout=5)
        self.assertEqual(lines[:2], [{}, {}])

    def test_alloc_events_carry_no_job(self):
        _, h, _ = self.sim.get("/v1/jobs")
        self.sim.register(service_job("ev-alloc", count=1))
        lines = self.read_stream("/v1/event/stream?index=%s&topic=Allocation:ev-alloc"
                                 % h["x-nomad-index"],
                                 lambda ls: any(l.get("Events") for l in ls))
        ev = next(e for l in lines for e in l.get("Events", []))
        self.assertEqual(ev["Topic"], "Allocation")
        self.assertIsNone(ev["Payload"]["Allocation"]["Job"])
        self.assertEqual(ev["FilterKeys"][0], "ev-alloc")

    def test_index_is_inclusive(self):
        """index=N starts at the events of index N (StartAtClosest)."""
        self.sim.register(service_job("ev-incl", count=1))
        _, h, job = self.sim.get("/v1/job/ev-incl")
        jmi = job["JobModifyIndex"]
        lines = self.read_stream(
            "/v1/event/stream?index=%d&topic=Job:ev-incl" % jmi,
            lambda ls: any(l.get("Events") for l in ls))
        ev = next(e for l in lines for e in l.get("Events", []))
        self.assertEqual(ev["Index"], jmi)
        self.assertEqual(ev["Type"], "JobRegistered")

    def test_no_index_replays_the_buffer(self):
        self.sim.register(service_job("ev-replay", count=1))
        lines = self.read_stream("/v1/event/stream?topic=Job:ev-replay",
                                 lambda ls: any(l.get("Events") for l in ls))
        ev = next(e for l in lines for e in l.get("Events", []))
        self.assertEqual(ev["Key"], "ev-replay")

    def test_buffer_drops_old_indexes(self):
        self.sim.ok("POST", "/_sim/config", {"event_buffer_size": 3})
        try:
            for i in range(6):
                self.sim.register(service_job("ev-buf", count=1,
                                              image="nginx:%d" % i))
            # Asked from index 1: the stream starts at the oldest kept.
            lines = self.read_stream("/v1/event/stream?index=1",
                                     lambda ls: len([l for l in ls if l]) >= 3,
                                     timeout=3)
            idx = sorted({l["Index"] for l in lines if l})
            self.assertEqual(len(idx), 3, idx)
            self.assertGreater(idx[0], 1)
        finally:
            self.sim.ok("POST", "/_sim/config", {"event_buffer_size": 100})

    def test_health_updates_the_deployment(self):
        """A client's health report changes the deployment's counts in the
        same raft message: a Deployment event typed AllocationUpdated."""
        _, h, _ = self.sim.get("/v1/jobs")
        self.sim.register(service_job("ev-health", count=1))
        self.sim.advance(1)
        self.sim.advance(11)
        lines = self.read_stream(
            "/v1/event/stream?index=%s&topic=Deployment:ev-health"
            "&topic=Allocation:ev-health" % h["x-nomad-index"],
            lambda ls: any(e["Topic"] == "Deployment" and
                           e["Type"] == "AllocationUpdated"
                           for l in ls for e in l.get("Events", [])), timeout=3)
        evs = [e for l in lines for e in l.get("Events", [])]
        dep = [e for e in evs if e["Topic"] == "Deployment" and
               e["Type"] == "AllocationUpdated"]
        self.assertTrue(dep, [(e["Topic"], e["Type"]) for e in evs])
        self.assertEqual(dep[0]["Payload"]["Deployment"]["TaskGroups"]["web"]
                         ["HealthyAllocs"], 1)
        health = [e for e in evs if e["Topic"] == "Allocation" and
                  e["Index"] == dep[0]["Index"]]
        self.assertEqual(health[0]["Type"], "AllocationUpdated")
        self.assertIs(health[0]["Payload"]["Allocation"]["DeploymentStatus"]
                      ["Healthy"], True)


if __name__ == "__main__":
    unittest.main()
