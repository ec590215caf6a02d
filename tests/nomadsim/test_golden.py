"""Golden fixtures from Nomad itself (golden/*.json): HCL-to-JSON cases
through /v1/jobs/parse and request/answer pairs, each expected value taken
from Nomad's source or documentation and naming where it comes from."""

import json
import os
import re
import unittest

from .simtest import SimTestCase

HERE = os.path.dirname(os.path.abspath(__file__))


def load(name):
    with open(os.path.join(HERE, "golden", name)) as f:
        return json.load(f)


def mismatch(want, got, where="$"):
    """Where `got` differs from `want` (a subset for objects), or None."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return "%s: want an object, got %r" % (where, got)
        for k, v in want.items():
            if k not in got:
                return "%s.%s: missing" % (where, k)
            m = mismatch(v, got[k], "%s.%s" % (where, k))
            if m:
                return m
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return "%s: want %d items, got %r" % (where, len(want), got)
        for i, (w, g) in enumerate(zip(want, got)):
            m = mismatch(w, g, "%s[%d]" % (where, i))
            if m:
                return m
        return None
    # JSON's true is not 1: compare types as well as values.
    if type(want) is not type(got) or want != got:
        return "%s: want %r, got %r" % (where, want, got)
    return None


class TestGoldenParse(SimTestCase):
    """HCL to api.Job JSON, as Nomad's /v1/jobs/parse answers."""


def _parse_case(case):
    def test(self):
        st, h, body = self.sim.request("POST", "/v1/jobs/parse",
                                       case["request"])
        self.assertEqual(st, 200, body)
        self.assertTrue(h["content-type"].startswith("application/json"))
        self.assertIsNone(mismatch(case["expect"], body))
    return test


for _i, _case in enumerate(load("parse.json")["cases"]):
    _slug = re.sub(r"\W+", "_", _case["name"]).strip("_")
    setattr(TestGoldenParse, "test_%02d_%s" % (_i, _slug), _parse_case(_case))


class TestGoldenRequests(SimTestCase):
    """Request/answer pairs, in order, against one simulator."""

    def test_steps(self):
        steps = load("requests.json")["steps"]
        for step in steps:
            with self.subTest(step=step["name"]):
                self.check_step(step)

    def check_step(self, step):
        body = step.get("request_raw", step.get("request"))
        st, h, got = self.sim.request(step["method"], step["path"], body)
        self.assertEqual(st, step["status"], got)
        if "content_type" in step:
            self.assertEqual(h.get("content-type"), step["content_type"])
        if "text" in step:
            self.assertEqual(got, step["text"])
        if "json" in step:
            self.assertEqual(got, step["json"])
        if "keys" in step:
            self.assertEqual(sorted(got), sorted(step["keys"]))
        if "answer" in step:
            self.assertIsNone(mismatch(step["answer"], got))
        if step.get("index_header"):
            self.assertEqual(h.get("x-nomad-index"), str(got["Index"]))


class TestGoldenFixtures(unittest.TestCase):
    """The fixtures themselves: each names its source; the matcher fails."""

    def test_every_case_names_its_source(self):
        cases = load("parse.json")["cases"] + load("requests.json")["steps"]
        self.assertGreater(len(cases), 20)
        for c in cases:
            self.assertTrue(c.get("source", "").strip(), c["name"])

    def test_matcher_finds_differences(self):
        self.assertIsNone(mismatch({"a": [1, {"b": None}]},
                                   {"a": [1, {"b": None, "c": 2}], "d": 3}))
        self.assertEqual(mismatch({"a": 1}, {"a": True}),
                         "$.a: want 1, got True")
        self.assertEqual(mismatch({"a": [1]}, {"a": [1, 2]}),
                         "$.a: want 1 items, got [1, 2]")
        self.assertEqual(mismatch({"a": {"b": 1}}, {"a": {}}), "$.a.b: missing")


if __name__ == "__main__":
    unittest.main()
