"""Batch and parameterized jobs: dispatch, real processes, exit codes, logs."""

import base64
import json
import re
import unittest
import urllib.parse

from .simtest import SimTestCase, batch_job


def q(jid):
    return urllib.parse.quote(jid, safe="")


class TestDispatch(SimTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        job = batch_job("hook", args=["-c", 'echo "customer=$NOMAD_META_customer '
                                            'job=$NOMAD_JOB_ID"; cat "$NOMAD_TASK_DIR/input.json"; '
                                            'echo oops >&2; exit 3'],
                        parameterized={"Payload": "optional", "MetaRequired": ["customer"],
                                       "MetaOptional": ["note"]},
                        payload_file="input.json")
        r = cls.sim.register(job)
        assert r["EvalID"] == "" and r["EvalCreateIndex"] == 0, r

    def dispatch(self, token=None, **body):
        path = "/v1/job/hook/dispatch"
        if token:
            path += "?idempotency_token=" + token
        return self.sim.put(path, body)

    def test_parent_has_no_allocations(self):
        self.assertEqual(self.sim.allocs("hook"), [])
        self.assertEqual(self.sim.ok("GET", "/v1/job/hook")["Status"], "running")

    def test_dispatch_idempotency(self):
        payload = base64.b64encode(b'{"date":"2024-06-01"}').decode()
        st, _, first = self.dispatch("run-1", Payload=payload, Meta={"customer": "acme"})
        self.assertEqual(st, 200)
        self.assertEqual(sorted(first), ["DispatchedJobID", "EvalCreateIndex", "EvalID",
                                         "Index", "JobCreateIndex"])
        self.assertRegex(first["DispatchedJobID"], r"^hook/dispatch-\d+-[0-9a-f]{8}$")
        self.assertNotEqual(first["EvalID"], "")
        self.assertEqual(first["JobCreateIndex"], first["EvalCreateIndex"])
        st, _, again = self.dispatch("run-1", Payload=payload, Meta={"customer": "acme"})
        self.assertEqual(st, 200)
        self.assertEqual(again["DispatchedJobID"], first["DispatchedJobID"])
        self.assertEqual((again["EvalID"], again["EvalCreateIndex"]), ("", 0))
        self.assertEqual(again["JobCreateIndex"], first["JobCreateIndex"])
        st, _, other = self.dispatch("run-2", Meta={"customer": "acme"})
        self.assertNotEqual(other["DispatchedJobID"], first["DispatchedJobID"])
        child = self.sim.ok("GET", "/v1/job/" + q(first["DispatchedJobID"]))
        self.assertEqual((child["ParentID"], child["Dispatched"],
                          child["DispatchIdempotencyToken"]), ("hook", True, "run-1"))
        self.assertEqual(child["Payload"], payload)
        self.assertEqual(child["Meta"], {"customer": "acme"})
        kids = self.sim.ok("GET", "/v1/jobs?prefix=hook/dispatch-")
        self.assertTrue(all(k["ParentID"] == "hook" for k in kids))

    def test_dispatch_errors(self):
        cases = [
            ({"Meta": {"customer": "a", "bad": "x"}},
             "Dispatch request included unpermitted metadata keys: [bad]"),
            ({"Meta": {}}, "Dispatch did not provide required meta keys: [customer]"),
            ({"Meta": {"customer": "a"},
              "Payload": base64.b64encode(b"x" * 16385).decode()},
             "Payload exceeds maximum size; 16385 > 16384"),
        ]
        for body, want in cases:
            st, h, text = self.dispatch(**body)
            self.assertEqual((st, text), (500, want))
            self.assertEqual(h["content-type"], "text/plain; charset=utf-8")
        st, _, text = self.sim.put("/v1/job/nothing/dispatch", {})
        self.assertEqual((st, text), (500, "parameterized job not found"))
        self.sim.register(batch_job("plain"))
        st, _, text = self.sim.put("/v1/job/plain/dispatch", {})
        self.assertEqual((st, text), (500, 'Specified job "plain" is not a parameterized job'))

    def test_child_runs_command_with_exit_code_and_logs(self):
        payload = base64.b64encode(b'{"x":1}').decode()
        _, _, r = self.dispatch(Payload=payload, Meta={"customer": "acme"})
        child = r["DispatchedJobID"]
        a = self.sim.allocs(child)[0]
        self.assertEqual(a["ClientStatus"], "pending")
        self.assertEqual((a["JobType"], a["TaskGroup"]), ("batch", "gen"))
        st, _, text = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stdout" % a["ID"])
        self.assertEqual((st, text), (404, 'task "gen" not started yet. No logs available'))
        self.sim.advance(1)
        done = self.sim.wait_for(lambda: [x for x in self.sim.allocs(child)
                                          if x["ClientStatus"] in ("complete", "failed")],
                                 what="batch alloc to finish")[0]
        self.assertEqual(done["ClientStatus"], "failed")
        ts = done["TaskStates"]["gen"]
        self.assertEqual((ts["State"], ts["Failed"]), ("dead", True))
        self.assertIsNotNone(ts["FinishedAt"])
        term = next(e for e in ts["Events"] if e["Type"] == "Terminated")
        self.assertEqual(term["ExitCode"], 3)
        self.assertEqual(term["DisplayMessage"], "Exit Code: 3")
        self.assertEqual(term["Details"], {"exit_code": "3", "signal": "0",
                                           "oom_killed": "false"})
        types = [e["Type"] for e in ts["Events"]]
        self.assertEqual(types[:3], ["Received", "Task Setup", "Started"])
        st, h, out = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stdout&plain=true"
                                  % done["ID"])
        self.assertEqual(st, 200)
        self.assertEqual(h["content-type"], "text/plain")
        self.assertEqual(out, 'customer=acme job=%s\n{"x":1}' % child)
        st, h, raw = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stderr" % done["ID"],
                                  raw=True)
        self.assertEqual(h["content-type"], "application/json")
        frames = [json.loads(m.group(0)) for m in re.finditer(rb"\{[^{}]*\}", raw)]
        data = b"".join(base64.b64decode(f["Data"]) for f in frames if "Data" in f)
        self.assertEqual(data, b"oops\n")
        self.assertEqual(frames[-1]["File"], "alloc/logs/gen.stderr.0")
        self.assertEqual(frames[-1]["Offset"], 5)
        st, _, out = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stdout&plain=true"
                                  "&origin=end&offset=7" % done["ID"])
        self.assertEqual(out, '{"x":1}')
        job = self.sim.ok("GET", "/v1/job/" + q(child))
        self.assertEqual(job["Status"], "dead")

    def test_logs_errors(self):
        st, _, t = self.sim.get("/v1/client/fs/logs/nope?task=gen&type=stdout")
        self.assertEqual((st, t), (404, 'Unknown allocation "nope"'))
        _, _, r = self.dispatch(Meta={"customer": "z"})
        aid = self.sim.allocs(r["DispatchedJobID"])[0]["ID"]
        st, _, t = self.sim.get("/v1/client/fs/logs/%s?type=stdout" % aid)
        self.assertEqual((st, t), (400, "must provide task name"))
        st, _, t = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=x" % aid)
        self.assertEqual((st, t), (400, "must provide log type (stdout/stderr)"))
        st, _, t = self.sim.get("/v1/client/fs/logs/%s?task=nope&type=stdout" % aid)
        self.assertEqual((st, t), (400, 'unknown task name "nope"'))
        st, _, t = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stdout&origin=mid" % aid)
        self.assertEqual((st, t), (400, "origin must be start or end"))
        st, _, t = self.sim.get("/v1/client/fs/x/%s" % aid)
        self.assertEqual((st, t), (404, "Invalid method"))


class TestProcesses(SimTestCase):
    def test_success_completes_batch_job(self):
        self.sim.register(batch_job("ok-job", args=["-c", "echo done"]))
        self.sim.advance(1)
        a = self.sim.wait_for(lambda: [x for x in self.sim.allocs("ok-job")
                                       if x["ClientStatus"] == "complete"])[0]
        self.assertFalse(a["TaskStates"]["gen"]["Failed"])
        self.assertEqual(self.sim.ok("GET", "/v1/job/ok-job")["Status"], "dead")
        summ = self.sim.ok("GET", "/v1/job/ok-job/summary")
        self.assertEqual(summ["Summary"]["gen"]["Complete"], 1)

    def test_stop_kills_running_process(self):
        self.sim.register(batch_job("sleeper", args=["-c", "sleep 60"]))
        self.sim.advance(1)
        a = self.sim.allocs("sleeper")[0]
        self.assertEqual(a["ClientStatus"], "running")
        self.sim.ok("DELETE", "/v1/job/sleeper")
        a = self.sim.wait_for(lambda: [x for x in self.sim.allocs("sleeper")
                                       if x["ClientStatus"] == "complete"],
                              what="killed alloc")[0]
        types = [e["Type"] for e in a["TaskStates"]["gen"]["Events"]]
        self.assertIn("Killing", types)
        self.assertIn("Killed", types)
        self.assertEqual(a["DesiredStatus"], "stop")

    def test_restart_policy_reruns_failed_task(self):
        self.sim.register(batch_job("flaky", args=["-c", "exit 7"], attempts=1))
        self.sim.advance(1)
        self.sim.wait_for(lambda: self.sim.allocs("flaky")[0]["TaskStates"]["gen"]["Restarts"] == 1,
                          what="first restart")
        self.sim.advance(15)
        a = self.sim.wait_for(lambda: [x for x in self.sim.allocs("flaky")
                                       if x["ClientStatus"] == "failed"])[0]
        types = [e["Type"] for e in a["TaskStates"]["gen"]["Events"]]
        self.assertEqual(types.count("Terminated"), 2)
        self.assertIn("Restarting", types)
        self.assertEqual(types[-1], "Not Restarting")

    def test_missing_command_is_driver_failure(self):
        self.sim.register(batch_job("nocmd", command="/nonexistent/cmd", args=[]))
        self.sim.advance(1)
        a = self.sim.wait_for(lambda: [x for x in self.sim.allocs("nocmd")
                                       if x["ClientStatus"] == "failed"])[0]
        types = [e["Type"] for e in a["TaskStates"]["gen"]["Events"]]
        self.assertIn("Driver Failure", types)

    def test_follow_logs_until_task_ends(self):
        self.sim.register(batch_job("chatty", args=["-c", "echo one; sleep 0.3; echo two"]))
        self.sim.advance(1)
        aid = self.sim.allocs("chatty")[0]["ID"]
        st, h, out = self.sim.get("/v1/client/fs/logs/%s?task=gen&type=stdout&plain=true"
                                  "&follow=true" % aid, timeout=20)
        self.assertEqual((st, out), (200, "one\ntwo\n"))
        self.assertEqual(h["transfer-encoding"], "chunked")

    def test_simulated_driver_batch_completes_on_clock(self):
        job = batch_job("sim-batch")
        job["TaskGroups"][0]["Tasks"][0]["Driver"] = "docker"
        job["TaskGroups"][0]["Tasks"][0]["Config"] = {"image": "busybox"}
        self.sim.register(job)
        self.sim.advance(1)
        self.assertEqual(self.sim.allocs("sim-batch")[0]["ClientStatus"], "running")
        self.sim.advance(1)
        self.assertEqual(self.sim.allocs("sim-batch")[0]["ClientStatus"], "complete")


if __name__ == "__main__":
    unittest.main()
