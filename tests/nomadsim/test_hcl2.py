"""Tests for the simulator's HCL2 parser (hcl2.py) and job decoder
(jobspec.py).

Expected values follow Nomad: jobspec2's own tests (parse_test.go), the
api structs and their Canonicalize methods, and hclsyntax's diagnostics.
Run with ``python3 -m unittest nomadsim.test_hcl2 -v`` from tests/.
"""

import json
import os
import unittest

from . import hcl2, jobspec
from .jobspec import JobParseError, parse_duration, parse_job

HERE = os.path.dirname(os.path.abspath(__file__))
TESTDATA = os.path.join(HERE, "testdata")

S = 1_000_000_000
M = 60 * S
H = 60 * M

# Values for testdata/web.nomad.hcl, as nops sends them in the
# request's Variables field (the content of a vars file).
WEB_VARS = 'image = "nginx:1.26"\ncount = 3\n'


def read(name):
    with open(os.path.join(TESTDATA, name), encoding="utf-8") as f:
        return f.read()


def job(src, **kw):
    """Parse with the file name Nomad's HTTP API uses."""
    return parse_job(src, "input.hcl", **kw)


def values(src, variables=None):
    """Evaluate every top-level attribute of a snippet."""
    body, source = hcl2.parse(src, "input.hcl")
    diags = []
    ctx = hcl2.EvalContext({"var": variables or {}}, hcl2.FUNCTIONS,
                           passthrough=True)
    ev = hcl2.Evaluator(source, diags)
    out = {name: ev.eval(attr.expr, ctx) for name, attr in body.attrs.items()}
    if diags:
        raise hcl2.HCLError(diags)
    return out


def value(expr, variables=None):
    return values("x = " + expr + "\n", variables)["x"]


def task_of(j, group=0, task=0):
    return j["TaskGroups"][group]["Tasks"][task]


class ParseErrorMixin:
    def assertParseError(self, src, message, **kw):
        with self.assertRaises(JobParseError) as cm:
            job(src, **kw)
        self.assertEqual(cm.exception.message, message)
        self.assertEqual(cm.exception.status, 400)
        return cm.exception


# ---------------------------------------------------------------------------
# The HCL language


class TestSyntax(unittest.TestCase):
    def test_attributes_and_blocks(self):
        body, _ = hcl2.parse(
            'a = 1\n'
            'outer "one" two {\n'
            '  inner {\n'
            '    b = "x"\n'
            '  }\n'
            '}\n'
            'single { c = true }\n', "f.hcl")
        self.assertEqual(list(body.attrs), ["a"])
        outer, single = body.blocks
        self.assertEqual((outer.type, outer.labels), ("outer", ["one", "two"]))
        self.assertEqual(outer.body.blocks[0].type, "inner")
        self.assertEqual(list(outer.body.blocks[0].body.attrs), ["b"])
        self.assertEqual(list(single.body.attrs), ["c"])

    def test_literals(self):
        v = values('a = 42\nb = 3.25\nc = 1e3\nd = true\ne = false\n'
                   'f = null\ng = -7\nh = 1.0\n')
        self.assertEqual(v, {"a": 42, "b": 3.25, "c": 1000, "d": True,
                             "e": False, "f": None, "g": -7, "h": 1})
        self.assertIsInstance(v["a"], int)

    def test_collections(self):
        self.assertEqual(value('[1, "two", [3], {}]'), [1, "two", [3], {}])
        self.assertEqual(value('[\n  1,\n  2,\n]'), [1, 2])
        self.assertEqual(value('{ a = 1, "b.c" = 2 }'), {"a": 1, "b.c": 2})
        self.assertEqual(value('{ a: 1, b: "x" }'), {"a": 1, "b": "x"})
        self.assertEqual(value('{\n  a = 1\n  b = { c = [true] }\n}'),
                         {"a": 1, "b": {"c": [True]}})
        self.assertEqual(value('{ (var.k) = 1 }', {"k": "dyn"}), {"dyn": 1})

    def test_comments(self):
        v = values('# hash\n'
                   'a = 1 # trailing\n'
                   '// slashes\n'
                   'b = /* inline */ 2\n'
                   '/* multi\n   line */\n'
                   'c = [1, # in a list\n 2]\n')
        self.assertEqual(v, {"a": 1, "b": 2, "c": [1, 2]})

    def test_escapes(self):
        self.assertEqual(value(r'"tab\there \"q\" back\\slash \u00e9 \n"'),
                         'tab\there "q" back\\slash \u00e9 \n')
        self.assertEqual(value('"$${not} %%{either}"'), "${not} %{either}")
        self.assertEqual(value('"$5 and 100%"'), "$5 and 100%")

    def test_operators(self):
        self.assertEqual(value("1 + 2 * 3"), 7)
        self.assertEqual(value("(1 + 2) * 3"), 9)
        self.assertEqual(value("7 / 2"), 3.5)
        self.assertEqual(value("6 / 2"), 3)
        self.assertEqual(value("7 % 3"), 1)
        self.assertEqual(value("10 - 2 - 3"), 5)
        self.assertIs(value("1 < 2 && !false"), True)
        self.assertIs(value('"a" == "a" || false'), True)
        self.assertIs(value("1 == true"), False)
        self.assertEqual(value('var.n > 2 ? "big" : "small"', {"n": 3}), "big")
        self.assertEqual(value("-(3)"), -3)

    def test_traversals_and_splat(self):
        data = {"m": {"list": [{"n": "a"}, {"n": "b"}], "k": {"x": 1}}}
        self.assertEqual(value("var.m.list[1].n", data), "b")
        self.assertEqual(value("var.m.list.0.n", data), "a")
        self.assertEqual(value('var.m["k"].x', data), 1)
        self.assertEqual(value("var.m.list[*].n", data), ["a", "b"])
        self.assertEqual(value("var.m.list.*.n", data), ["a", "b"])
        self.assertEqual(value('{a = 1}["a"]'), 1)

    def test_for_expressions(self):
        self.assertEqual(value("[for x in [1, 2, 3] : x * 2 if x > 1]"),
                         [4, 6])
        self.assertEqual(value('{for k, v in {a = 1, b = 2} : v => k}'),
                         {"1": "a", "2": "b"})
        self.assertEqual(value('{for s in ["a", "b", "a"] : s => s...}'),
                         {"a": ["a", "a"], "b": ["b"]})
        self.assertEqual(value('[for i, s in ["x", "y"] : "${i}${s}"]'),
                         ["0x", "1y"])

    def test_functions(self):
        self.assertEqual(value('upper("abc")'), "ABC")
        self.assertEqual(value('format("%s-%03d", "x", 7)'), "x-007")
        self.assertEqual(value('join(",", ["a", "b"])'), "a,b")
        self.assertEqual(value('split(",", "a,b")'), ["a", "b"])
        self.assertEqual(value('merge({a = 1}, {b = 2})'), {"a": 1, "b": 2})
        self.assertEqual(value('lookup({a = 1}, "b", 9)'), 9)
        self.assertEqual(value('jsonencode({b = [1, "<x>"], a = true})'),
                         '{"a":true,"b":[1,"\\u003cx\\u003e"]}')
        self.assertEqual(value('jsondecode("{\\"a\\": [1, 2.5]}")'),
                         {"a": [1, 2.5]})
        self.assertEqual(value('replace("a-b-c", "-", "_")'), "a_b_c")
        self.assertEqual(value('replace("a1b22", "/[0-9]+/", "#")'), "a#b#")
        self.assertEqual(value('length([1, 2]) + length("abc")'), 5)
        self.assertEqual(value('concat([1], [2, 3])'), [1, 2, 3])
        self.assertEqual(value('coalesce("", "x")'), "x")
        self.assertEqual(value('keys({b = 1, a = 2})'), ["a", "b"])
        self.assertEqual(value('min(3, 1, 2)'), 1)
        self.assertEqual(value('trimspace("  x \\n")'), "x")
        self.assertEqual(value('base64encode("hi")'), "aGk=")
        self.assertEqual(value('try(var.nope, "fallback")'), "fallback")
        self.assertIs(value('can(var.nope)'), False)
        self.assertEqual(value('max([1, 5]...)'), 5)

    def test_variables_not_allowed_without_context(self):
        body, src = hcl2.parse("a = var.x\nb = upper(\"y\")\n", "f.hcl")
        diags = []
        ev = hcl2.Evaluator(src, diags)
        self.assertIs(ev.eval(body.attrs["a"].expr, None), hcl2.UNKNOWN)
        ev.eval(body.attrs["b"].expr, None)
        self.assertEqual([d.error() for d in diags], [
            "f.hcl:1,5-10: Variables not allowed; Variables may not be used "
            "here.",
            "f.hcl:2,5-10: Function calls not allowed; Functions may not be "
            "called here."])

    def test_ident_block_labels(self):
        body, _ = hcl2.parse("job web {\n}\n", "f.hcl")
        self.assertEqual(body.blocks[0].labels, ["web"])


class TestTemplates(unittest.TestCase):
    def test_interpolation(self):
        self.assertEqual(value('"x${var.a}y${1 + 1}"', {"a": "A"}), "xAy2")
        self.assertEqual(value('"${var.n}"', {"n": 3}), 3)  # keeps its type
        self.assertEqual(value('"n=${var.n}"', {"n": 2.5}), "n=2.5")
        self.assertEqual(value('"${true}"'), True)

    def test_unknown_references_pass_through(self):
        # jobspec2 TestParse_UndefinedVariables: kept verbatim.
        cases = [
            "plain",
            "foo-${BAR}",
            "foo-${attr.network.dev-us-east1-relay-vpc.external-ip.0}",
            '${env["BLAH"]}',
            '${mixed-indexing.0[3]["FOO"].5}',
            'with spaces ${   root.  field[  "FOO"].5  }',
            "${NOMAD_META_x}",
            "${attr.kernel.name}",
            "${node.unique.id}",
        ]
        for case in cases:
            with self.subTest(case=case):
                src = 'x = "' + case + '"\n'
                self.assertEqual(values(src)["x"], case)

    def test_unquoted_unknown_reference(self):
        self.assertEqual(value("meta.mytest"), "${meta.mytest}")
        self.assertEqual(value('upper(node.class)'), "${NODE.CLASS}")

    def test_directives(self):
        self.assertEqual(
            value('"%{ if var.n > 2 }yes%{ else }no%{ endif }"', {"n": 3}),
            "yes")
        self.assertEqual(value('"%{ for x in ["a", "b"] }<${x}>%{ endfor }"'),
                         "<a><b>")
        self.assertEqual(value('"a  ${~ "b" ~}  c"'), "abc")

    def test_heredoc_keeps_indentation(self):
        v = values("x = <<EOF\n  hello ${var.a}\n    world\nEOF\n",
                   {"a": "A"})
        self.assertEqual(v["x"], "  hello A\n    world\n")

    def test_flush_heredoc_strips_common_indentation(self):
        v = values("x = <<-EOT\n"
                   "    line one\n"
                   "\n"
                   "      indented ${var.a}\n"
                   "    EOT\n", {"a": "A"})
        self.assertEqual(v["x"], "line one\n\n  indented A\n")

    def test_flush_heredoc_line_starting_with_interpolation(self):
        # A line that starts with ${...} has no indentation, so nothing is
        # stripped from the others.
        v = values("x = <<-EOT\n    a\n${var.a}\nEOT\n", {"a": "A"})
        self.assertEqual(v["x"], "    a\nA\n")

    def test_heredoc_closing_marker_indented_and_passthrough(self):
        v = values("  x = <<EOF\n"
                   "#!/bin/sh\n"
                   "echo ${NOMAD_ALLOC_DIR} $${HOME}\n"
                   "  EOF\n"
                   "y = 1\n")
        self.assertEqual(v["x"],
                         "#!/bin/sh\necho ${NOMAD_ALLOC_DIR} ${HOME}\n")
        self.assertEqual(v["y"], 1)


class TestSyntaxErrors(unittest.TestCase):
    def err(self, src):
        with self.assertRaises(hcl2.HCLError) as cm:
            hcl2.parse(src, "input.hcl")
        return str(cm.exception)

    def test_messages_and_positions(self):
        cases = [
            ('job "x" {\n  group "g" {\n    count = \n  }\n}\n',
             "input.hcl:3,13-4,1: Invalid expression; Expected the start of "
             "an expression, but found an invalid expression token."),
            ('job "x" {\n  type = "service"\n',
             "input.hcl:1,9-10: Unclosed configuration block; There is no "
             "closing brace for this block before the end of the file. This "
             "may be caused by incorrect brace nesting elsewhere in this "
             "file."),
            ("a = 1 2\n",
             "input.hcl:1,7-8: Missing newline after argument; An argument "
             "definition must end with a newline."),
            ("a = [1 2]\n",
             "input.hcl:1,8-9: Missing item separator; Expected a comma to "
             "mark the beginning of the next item."),
            ('"a" = 1\n',
             "input.hcl:1,1-2: Invalid argument name; Argument names must not "
             "be quoted."),
            ('job "x" = {\n}\n',
             'input.hcl:1,9-10: Invalid block definition; The equals sign "=" '
             "indicates an argument definition, and must not be used when "
             "defining a block."),
            ("a = 1\na = 2\n",
             'input.hcl:2,1-2: Attribute redefined; The argument "a" was '
             "already set at input.hcl:1,1-2. Each argument may be set only "
             "once."),
            ('a = "\\q"\n',
             'input.hcl:1,6-8: Invalid escape sequence; The symbol "q" is not '
             "a valid escape sequence selector."),
            ("foo\n",
             "input.hcl:1,1-4: Argument or block definition required; An "
             'argument or block definition is required here. To set an '
             'argument, use the equals sign "=" to introduce the argument '
             "value."),
        ]
        for src, want in cases:
            with self.subTest(src=src):
                self.assertEqual(self.err(src), want)

    def test_invalid_tokens_come_first(self):
        self.assertEqual(
            self.err("a = 'x'\n"),
            "input.hcl:1,5-6: Invalid character; Single quotes are not valid. "
            'Use double quotes (") to enclose strings., and 1 other '
            "diagnostic(s)")

    def test_interpolation_in_label_rejected(self):
        self.assertIn('Invalid string literal; Template sequences are not '
                      'allowed in this string. To include a literal "$", '
                      'double it (as "$$") to escape it.',
                      self.err('job "${x}" {\n}\n'))

    def test_shell_syntax_in_interpolation(self):
        self.assertEqual(
            self.err('a = "${HOME:-/root}"\n'),
            "input.hcl:1,12-13: Extra characters after interpolation "
            "expression; Template interpolation doesn't expect a colon at "
            "this location. Did you intend this to be a literal sequence to "
            "be processed as part of another language? If so, you can escape "
            'it by starting with "$${" instead of just "${".')


# ---------------------------------------------------------------------------
# Jobs


class TestMinimalJob(unittest.TestCase):
    def test_uncanonicalized_fields_are_null(self):
        j = job('job "example" {\n}\n')
        self.assertEqual(j["ID"], "example")
        self.assertEqual(j["Name"], "example")
        for key in ("Region", "Namespace", "Type", "Priority", "AllAtOnce",
                    "Datacenters", "NodePool", "TaskGroups", "Update",
                    "Periodic", "ParameterizedJob", "Meta", "Stop",
                    "ParentID", "Version", "Status", "SubmitTime"):
            self.assertIsNone(j[key], key)
        self.assertIs(j["Dispatched"], False)
        json.dumps(j)

    def test_all_api_job_fields_present(self):
        j = job('job "example" {\n}\n')
        self.assertEqual(list(j), [
            "Region", "Namespace", "ID", "Name", "Type", "Priority",
            "AllAtOnce", "Datacenters", "NodePool", "Constraints",
            "Affinities", "TaskGroups", "Update", "Multiregion", "Spreads",
            "Periodic", "ParameterizedJob", "Reschedule", "Migrate", "Meta",
            "UI", "Stop", "ParentID", "Dispatched",
            "DispatchIdempotencyToken", "Payload", "ConsulNamespace",
            "VaultNamespace", "NomadTokenID", "Status", "StatusDescription",
            "Stable", "Version", "SubmitTime", "CreateIndex", "ModifyIndex",
            "JobModifyIndex", "VersionTag"])

    def test_id_and_name_attributes_override_label(self):
        j = job('job "label" {\n  id = "the-id"\n  name = "The Name"\n}\n')
        self.assertEqual((j["ID"], j["Name"]), ("the-id", "The Name"))

    def test_task_defaults_without_canonicalize(self):
        t = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                        '      driver = "exec"\n    }\n  }\n}\n'))
        self.assertEqual(t["Name"], "t")
        self.assertEqual(t["Driver"], "exec")
        self.assertIsNone(t["Config"])
        self.assertIsNone(t["Resources"])
        self.assertIsNone(t["KillTimeout"])
        self.assertEqual(t["ShutdownDelay"], 0)
        self.assertIs(t["Leader"], False)
        self.assertNotIn("CSIPluginConfig", t)  # json:",omitempty"


class TestServiceJob(unittest.TestCase):
    """testdata/web.nomad.hcl: service job with a canary update."""

    @classmethod
    def setUpClass(cls):
        cls.job = job(read("web.nomad.hcl"), variables=WEB_VARS)

    def test_job_fields(self):
        j = self.job
        self.assertEqual(j["ID"], "web")
        self.assertEqual(j["Namespace"], "apps")
        self.assertEqual(j["Type"], "service")
        self.assertEqual(j["Priority"], 60)
        self.assertEqual(j["Datacenters"], ["dc1"])
        self.assertEqual(j["Meta"], {"git_sha": "def456",
                                     "owner": "team-web"})

    def test_update_block(self):
        self.assertEqual(self.job["Update"], {
            "Stagger": None, "MaxParallel": 1, "HealthCheck": None,
            "MinHealthyTime": 10 * S, "HealthyDeadline": 5 * M,
            "ProgressDeadline": 10 * M, "Canary": 1, "AutoRevert": True,
            "AutoPromote": False})

    def test_constraints_affinities_spreads(self):
        j = self.job
        self.assertEqual(j["Constraints"], [
            {"LTarget": "${attr.kernel.name}", "RTarget": "linux",
             "Operand": "="},
            {"LTarget": "", "RTarget": "", "Operand": "distinct_hosts"}])
        self.assertEqual(j["Affinities"], [
            {"LTarget": "${node.datacenter}", "RTarget": "dc1",
             "Operand": "=", "Weight": 70}])
        self.assertEqual(j["Spreads"], [{
            "Attribute": "${node.datacenter}", "Weight": 100,
            "SpreadTarget": [{"Value": "dc1", "Percent": 60},
                             {"Value": "dc2", "Percent": 40}]}])

    def test_group(self):
        tg = self.job["TaskGroups"][0]
        self.assertEqual(tg["Name"], "web")
        self.assertEqual(tg["Count"], 3)  # from the vars file
        self.assertEqual(tg["RestartPolicy"], {
            "Interval": 90 * S, "Attempts": 3, "Delay": 15 * S,
            "Mode": "delay", "RenderTemplates": None})
        self.assertEqual(tg["EphemeralDisk"], {"Sticky": None,
                                               "Migrate": None, "SizeMB": 500})

    def test_network_ports(self):
        net = self.job["TaskGroups"][0]["Networks"][0]
        self.assertEqual(net["Mode"], "bridge")
        self.assertEqual(net["DynamicPorts"], [
            {"Label": "http", "Value": 0, "To": 8080, "HostNetwork": "",
             "IgnoreCollision": False}])
        # A port with "static" becomes a reserved port.
        self.assertEqual(net["ReservedPorts"], [
            {"Label": "metrics", "Value": 9100, "To": 0, "HostNetwork": "",
             "IgnoreCollision": False}])

    def test_service(self):
        svc = self.job["TaskGroups"][0]["Services"][0]
        self.assertEqual(svc["Name"], "web")
        self.assertEqual(svc["PortLabel"], "http")
        self.assertEqual(svc["Tags"], ["urlprefix-/", "v3"])
        check = svc["Checks"][0]
        self.assertEqual(
            (check["Type"], check["Path"], check["Interval"],
             check["Timeout"]), ("http", "/health", 10 * S, 2 * S))

    def test_task(self):
        t = task_of(self.job)
        self.assertEqual(t["Driver"], "docker")
        self.assertEqual(t["KillTimeout"], 30 * S)
        self.assertEqual(t["Resources"]["CPU"], 200)
        self.assertEqual(t["Resources"]["MemoryMB"], 128)
        self.assertEqual(t["Env"], {"PORT": "8080", "LOG_LEVEL": "info",
                                    "NODE": "${node.unique.id}"})

    def test_driver_config(self):
        config = task_of(self.job)["Config"]
        self.assertEqual(config["image"], "nginx:1.26")
        self.assertEqual(config["ports"], ["http"])
        self.assertEqual(config["args"], ["-listen", ":${NOMAD_PORT_http}"])
        # A map value that is not written as a literal stays a map ...
        self.assertEqual(config["labels"], {"app": "web",
                                            "tier": "frontend"})
        # ... and nested blocks become lists of maps.
        self.assertEqual(config["logging"], [
            {"type": "journald", "config": [{"tag": "web"}]}])
        self.assertEqual(config["mount"], [
            {"type": "bind", "source": "local/web.conf",
             "target": "/etc/web.conf"},
            {"type": "tmpfs", "target": "/tmp"}])

    def test_template(self):
        tmpl = task_of(self.job)["Templates"][0]
        self.assertEqual(tmpl["EmbeddedTmpl"],
                         'listen = ":{{ env "NOMAD_PORT_http" }}"\n'
                         'greeting = "hello from ${NOMAD_ALLOC_ID}"\n')
        self.assertEqual(tmpl["DestPath"], "local/web.conf")
        self.assertEqual(tmpl["ChangeMode"], "signal")
        self.assertEqual(tmpl["ChangeSignal"], "SIGHUP")
        # jobspec2's normalizeTemplates defaults.
        self.assertEqual(tmpl["Perms"], "0644")
        self.assertEqual(tmpl["Splay"], 5 * S)
        self.assertIs(tmpl["ErrMissingKey"], False)
        self.assertIsNone(tmpl["LeftDelim"])

    def test_json_serialisable(self):
        text = json.dumps(self.job, sort_keys=True)
        self.assertEqual(json.loads(text), self.job)


class TestHookJob(unittest.TestCase):
    """testdata/hook.nomad.hcl: a parameterized batch job nops dispatches."""

    def test_parameterized(self):
        j = job(read("hook.nomad.hcl"))
        self.assertEqual(j["Type"], "batch")
        self.assertEqual(j["Meta"], {"nops_role": "hook"})
        self.assertEqual(j["ParameterizedJob"], {
            "Payload": "optional", "MetaRequired": ["git_sha"],
            "MetaOptional": ["dry_run"]})
        tg = j["TaskGroups"][0]
        self.assertEqual(tg["ReschedulePolicy"]["Attempts"], 0)
        self.assertIs(tg["ReschedulePolicy"]["Unlimited"], False)
        t = task_of(j)
        self.assertEqual(t["DispatchPayload"], {"File": "payload.json"})
        self.assertEqual(t["Config"]["args"][1], "${NOMAD_META_git_sha}")

    def test_canonical_batch_defaults(self):
        j = job(read("hook.nomad.hcl"), canonicalize=True)
        self.assertIsNone(j["Update"])  # only service jobs get one
        tg = j["TaskGroups"][0]
        self.assertIsNone(tg["Update"])
        self.assertIsNone(tg["Migrate"])
        self.assertEqual(tg["RestartPolicy"], {
            "Interval": 24 * H, "Attempts": 0, "Delay": 15 * S,
            "Mode": "fail", "RenderTemplates": False})
        self.assertEqual(tg["ReschedulePolicy"], {
            "Attempts": 0, "Interval": 24 * H, "Delay": 5 * S,
            "DelayFunction": "constant", "MaxDelay": 0, "Unlimited": False})


class TestPeriodicJob(unittest.TestCase):
    def test_periodic(self):
        j = job(read("periodic.nomad.hcl"))
        self.assertEqual(j["Periodic"], {
            "Enabled": None, "Spec": "0 3 * * *", "Specs": None,
            "SpecType": "cron", "ProhibitOverlap": True,
            "TimeZone": "Europe/Berlin"})
        logs = task_of(j)["LogConfig"]
        self.assertEqual((logs["MaxFiles"], logs["MaxFileSizeMB"]), (3, 5))

    def test_canonical(self):
        j = job(read("periodic.nomad.hcl"), canonicalize=True)
        self.assertIs(j["Periodic"]["Enabled"], True)
        j = job('job "p" {\n  type = "batch"\n  periodic {\n'
                '    cron = "@daily"\n  }\n}\n', canonicalize=True)
        self.assertEqual(j["Periodic"]["TimeZone"], "UTC")
        self.assertIs(j["Periodic"]["ProhibitOverlap"], False)


class TestScalingJob(unittest.TestCase):
    def test_group_scaling(self):
        tg = job(read("scaling.nomad.hcl"))["TaskGroups"][0]
        self.assertEqual(tg["Scaling"], {
            "Min": 2, "Max": 10, "Enabled": True, "Type": "horizontal",
            "Policy": {
                "cooldown": "1m", "evaluation_interval": "30s",
                "check": [{"avg_cpu": [{
                    "source": "nomad-apm", "query": "avg_cpu-allocated",
                    "strategy": [{"target-value": [{"target": 70}]}]}]}]},
            "ID": "", "Namespace": "", "Target": None, "CreateIndex": 0,
            "ModifyIndex": 0})
        self.assertIsNone(tg["Count"])

    def test_task_scaling(self):
        t = task_of(job(read("scaling.nomad.hcl")))
        (policy,) = t["ScalingPolicies"]
        self.assertEqual(policy["Type"], "vertical_cpu")
        self.assertEqual(policy["Max"], 1000)
        self.assertEqual(policy["Policy"], {"evaluation_interval": "5m"})

    def test_count_from_scaling_min(self):
        tg = job(read("scaling.nomad.hcl"),
                 canonicalize=True)["TaskGroups"][0]
        self.assertEqual(tg["Count"], 2)
        self.assertEqual(tg["Scaling"]["Min"], 2)

    def test_min_defaults_to_count(self):
        tg = job('job "j" {\n  group "g" {\n    count = 4\n    scaling {\n'
                 '      max = 9\n    }\n  }\n}\n',
                 canonicalize=True)["TaskGroups"][0]
        self.assertEqual((tg["Count"], tg["Scaling"]["Min"]), (4, 4))
        self.assertIs(tg["Scaling"]["Enabled"], True)


class TestNomadSpecialCases(unittest.TestCase, ParseErrorMixin):
    def test_meta_and_env_as_attributes(self):
        # jobspec2 TestParse_Meta_Alternatives / TestParse_TaskEnvs.
        blocks = job('job "j" {\n  meta {\n    a = "1"\n  }\n'
                     '  group "g" {\n    meta {\n      b = 2\n    }\n'
                     '    task "t" {\n      meta {\n        c = true\n'
                     '      }\n      env {\n        key = "v"\n      }\n'
                     '    }\n  }\n}\n')
        attrs = job('job "j" {\n  meta = {\n    a = "1"\n  }\n'
                    '  group "g" {\n    meta = { b = 2 }\n'
                    '    task "t" {\n      meta = { c = true }\n'
                    '      env = {\n        "key" : "v"\n      }\n'
                    '    }\n  }\n}\n')
        self.assertEqual(blocks, attrs)
        self.assertEqual(blocks["Meta"], {"a": "1"})
        self.assertEqual(blocks["TaskGroups"][0]["Meta"], {"b": "2"})
        self.assertEqual(task_of(blocks)["Meta"], {"c": "true"})
        env = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                          '      env = { "key.dot" = "x", plain = "y" }\n'
                          '    }\n  }\n}\n'))["Env"]
        self.assertEqual(env, {"key.dot": "x", "plain": "y"})

    def test_env_attribute_and_block_conflict(self):
        self.assertParseError(
            'job "j" {\n  group "g" {\n    task "t" {\n'
            '      env = {"a": "b"}\n      env {\n        c = "d"\n      }\n'
            '    }\n  }\n}\n',
            "Failed to parse job: input.hcl:5,7-10: Duplicate env block; env "
            "may not be defined more than once. Another definition is "
            "defined at input.hcl:4,7-23.")

    def test_constraint_shorthands(self):
        # jobspec2 TestParse_Constraint_Alternatives.
        j = job('job "j" {\n'
                '  constraint {\n    distinct_hosts = true\n  }\n'
                '  constraint {\n    distinct_property = "${meta.rack}"\n'
                '    value = "1"\n  }\n'
                '  constraint {\n    attribute = "${attr.os.version}"\n'
                '    version = ">= 1.2"\n  }\n'
                '  constraint {\n    attribute = "${meta.tags}"\n'
                '    regexp = "^web"\n  }\n'
                '  constraint {\n    attribute = "${meta.x}"\n'
                '    operator = "is_set"\n  }\n}\n')
        self.assertEqual(j["Constraints"], [
            {"LTarget": "", "RTarget": "", "Operand": "distinct_hosts"},
            {"LTarget": "${meta.rack}", "RTarget": "1",
             "Operand": "distinct_property"},
            {"LTarget": "${attr.os.version}", "RTarget": ">= 1.2",
             "Operand": "version"},
            {"LTarget": "${meta.tags}", "RTarget": "^web",
             "Operand": "regexp"},
            {"LTarget": "${meta.x}", "RTarget": "", "Operand": "is_set"}])

    def test_constraint_rejects_unknown_argument(self):
        self.assertParseError(
            'job "j" {\n  constraint {\n    atribute = "x"\n  }\n}\n',
            'Failed to parse job: input.hcl:3,5-13: Unsupported argument; An '
            'argument named "atribute" is not expected here. Did you mean '
            '"attribute"?')

    def test_bare_task_becomes_group(self):
        j = job('job "j" {\n  task "solo" {\n    driver = "exec"\n  }\n'
                '  group "g" {\n  }\n}\n')
        self.assertEqual([g["Name"] for g in j["TaskGroups"]], ["solo", "g"])
        self.assertEqual(task_of(j)["Driver"], "exec")

    def test_job_level_vault_is_inherited(self):
        j = job('job "j" {\n  vault {\n    policies = ["p"]\n  }\n'
                '  group "g" {\n    task "a" {\n    }\n    task "b" {\n'
                '      vault {\n        role = "r"\n      }\n    }\n  }\n}\n')
        a, b = j["TaskGroups"][0]["Tasks"]
        self.assertEqual(a["Vault"]["Policies"], ["p"])
        self.assertIs(a["Vault"]["Env"], True)
        self.assertEqual(a["Vault"]["ChangeMode"], "restart")
        self.assertEqual(b["Vault"]["Role"], "r")
        self.assertIsNone(b["Vault"]["Policies"])

    def test_config_object_attribute_is_wrapped_in_a_list(self):
        # hclutil.BlocksAsAttrs turns a literal object into [object].
        cfg = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                          '      config {\n        labels = { a = "b" }\n'
                          '        port_map {\n          http = 80\n'
                          '        }\n        auth "reg" {\n'
                          '          user = "u"\n        }\n'
                          '        empty = []\n      }\n    }\n  }\n}\n'))
        self.assertEqual(cfg["Config"], {
            "labels": [{"a": "b"}], "port_map": [{"http": 80}],
            "auth": [{"reg": [{"user": "u"}]}], "empty": []})

    def test_volumes_and_mounts(self):
        j = job('job "j" {\n  group "g" {\n'
                '    volume "data" {\n      type = "host"\n'
                '      source = "data"\n      read_only = true\n    }\n'
                '    volume "certs" {\n      type = "csi"\n'
                '      source = "certs"\n'
                '      access_mode = "single-node-writer"\n'
                '      attachment_mode = "file-system"\n    }\n'
                '    task "t" {\n      volume_mount {\n'
                '        volume = "data"\n        destination = "/data"\n'
                '      }\n    }\n  }\n}\n', canonicalize=True)
        vols = j["TaskGroups"][0]["Volumes"]
        self.assertEqual(sorted(vols), ["certs", "data"])
        self.assertEqual(vols["data"]["Name"], "data")
        self.assertIs(vols["data"]["ReadOnly"], True)
        self.assertEqual(vols["certs"]["AccessMode"], "single-node-writer")
        mount = task_of(j)["VolumeMounts"][0]
        self.assertEqual(mount, {"Volume": "data", "Destination": "/data",
                                 "ReadOnly": False,
                                 "PropagationMode": "private",
                                 "SELinuxLabel": ""})

    def test_artifact_lifecycle_identity(self):
        t = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                        '      lifecycle {\n        hook = "prestart"\n'
                        '        sidecar = false\n      }\n'
                        '      artifact {\n'
                        '        source = "https://e.com/app.tgz"\n'
                        '        options {\n          checksum = "sha256:ab"\n'
                        '        }\n      }\n'
                        '      identity {\n        env = true\n'
                        '        ttl = "1h"\n      }\n'
                        '      user = "nobody"\n    }\n  }\n}\n'))
        self.assertEqual(t["Lifecycle"], {"Hook": "prestart",
                                          "Sidecar": False})
        self.assertEqual(t["Artifacts"][0]["GetterSource"],
                         "https://e.com/app.tgz")
        self.assertEqual(t["Artifacts"][0]["GetterOptions"],
                         {"checksum": "sha256:ab"})
        self.assertEqual(t["Identities"][0]["TTL"], H)
        self.assertIs(t["Identities"][0]["Env"], True)
        self.assertEqual(t["User"], "nobody")

    def test_service_check_header_and_connect(self):
        tg = job('job "j" {\n  group "g" {\n    service {\n'
                 '      name = "api"\n      port = "8080"\n'
                 '      connect {\n        sidecar_service {\n'
                 '          proxy {\n            upstreams {\n'
                 '              destination_name = "db"\n'
                 '              local_bind_port = 5432\n            }\n'
                 '          }\n        }\n      }\n'
                 '      check {\n        type = "http"\n        path = "/"\n'
                 '        interval = "5s"\n        timeout = "1s"\n'
                 '        header {\n          Authorization = ["Basic x"]\n'
                 '        }\n      }\n    }\n  }\n}\n')["TaskGroups"][0]
        svc = tg["Services"][0]
        self.assertEqual(svc["Checks"][0]["Header"],
                         {"Authorization": ["Basic x"]})
        up = svc["Connect"]["SidecarService"]["Proxy"]["Upstreams"][0]
        self.assertEqual((up["DestinationName"], up["LocalBindPort"]),
                         ("db", 5432))

    def test_task_scaling_errors(self):
        # jobspec2 TestParse_InvalidScalingSyntax.
        base = ('job "example" {\n  group "g1" {\n    scaling {\n%s    }\n\n'
                '    task "t1" {\n%s    }\n  }\n}\n')
        ok_task = ('      scaling "cpu" {\n        max = 20\n      }\n'
                   '      scaling "mem" {\n        max = 15\n      }\n')
        job(base % ('      max  = 40\n      type = "horizontal"\n', ok_task))
        cases = [
            (base % ('      type = "horizontal"\n', ok_task),
             'argument "max" is required'),
            (base % ('      max = 40\n      type = "invalid_type"\n', ok_task),
             "task group scaling policy had invalid type"),
            (base % ('      max = 40\n',
                     '      scaling "not_cpu" {\n        max = 20\n'
                     '      }\n'),
             'scaling policy name must be "cpu" or "mem"'),
            (base % ('      max = 40\n',
                     '      scaling "cpu" {\n        max = 20\n      }\n'
                     '      scaling "cpu" {\n        max = 15\n      }\n'),
             'Duplicate scaling "cpu" block'),
            (base % ('      max = 40\n',
                     '      scaling "cpu" {\n        max = 20\n'
                     '        type = "invalid"\n      }\n'),
             "Invalid scaling policy type"),
        ]
        for src, fragment in cases:
            with self.subTest(fragment=fragment):
                with self.assertRaises(JobParseError) as cm:
                    job(src)
                self.assertIn(fragment, cm.exception.message)

    def test_template_change_script(self):
        tmpl = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                           '      template {\n        data = "x"\n'
                           '        destination = "local/x"\n'
                           '        change_mode = "script"\n'
                           '        change_script {\n'
                           '          command = "/bin/reload"\n'
                           '          fail_on_error = true\n        }\n'
                           '        wait {\n          min = "5s"\n'
                           '          max = "1m"\n        }\n      }\n'
                           '    }\n  }\n}\n'))["Templates"][0]
        self.assertEqual(tmpl["ChangeScript"], {
            "Command": "/bin/reload", "Args": [], "Timeout": 5 * S,
            "FailOnError": True, "RunOnFirstRender": None})
        self.assertEqual(tmpl["Wait"], {"Min": 5 * S, "Max": M})

    def test_numbers_and_bools_from_strings(self):
        j = job('job "j" {\n  priority = "70"\n  all_at_once = "true"\n'
                '  group "g" {\n    count = 2.0\n  }\n}\n')
        self.assertEqual(j["Priority"], 70)
        self.assertIs(j["AllAtOnce"], True)
        self.assertEqual(j["TaskGroups"][0]["Count"], 2)

    def test_durations_accept_numbers(self):
        t = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                        '      kill_timeout = 1500000000\n'
                        '      shutdown_delay = "250ms"\n    }\n  }\n}\n'))
        self.assertEqual(t["KillTimeout"], 1500000000)
        self.assertEqual(t["ShutdownDelay"], 250_000_000)


class TestVariables(unittest.TestCase, ParseErrorMixin):
    SRC = ('variable "image" {\n  type = string\n}\n'
           'variable "count" {\n  default = 1\n}\n'
           'variable "dcs" {\n  type = list(string)\n  default = ["dc1"]\n}\n'
           'variables {\n  region_var = "global"\n}\n'
           'locals {\n  full = "${var.image}-${local.suffix}"\n'
           '  suffix = "v${var.count}"\n}\n'
           'job "j" {\n  region = var.region_var\n'
           '  datacenters = var.dcs\n  meta {\n    image = local.full\n'
           '  }\n  group "g" {\n    count = var.count\n  }\n}\n')

    def test_defaults_vars_file_and_locals(self):
        j = job(self.SRC, variables='image = "nginx"\n')
        self.assertEqual(j["Region"], "global")
        self.assertEqual(j["Datacenters"], ["dc1"])
        self.assertEqual(j["Meta"], {"image": "nginx-v1"})
        self.assertEqual(j["TaskGroups"][0]["Count"], 1)

    def test_var_values_override_vars_file(self):
        j = job(self.SRC, variables='image = "nginx"\ncount = 2\n',
                var_values={"image": "redis", "dcs": '["a", "b"]',
                            "count": "5"})
        self.assertEqual(j["Meta"], {"image": "redis-v5"})
        self.assertEqual(j["Datacenters"], ["a", "b"])
        self.assertEqual(j["TaskGroups"][0]["Count"], 5)

    def test_unset_variable(self):
        e = self.assertParseError(
            'variable "image" {\n  type = string\n}\njob "j" {\n}\n',
            'Failed to parse job: <nil>: Unset variable "image"; '
            + jobspec.UNSET_VARIABLE_DETAIL)
        self.assertEqual(e.diagnostics[0].summary, 'Unset variable "image"')

    def test_unset_variable_used_in_job(self):
        self.assertParseError(
            'variable "image" {\n  type = string\n}\n'
            'job "j" {\n  region = var.image\n}\n',
            'Failed to parse job: <nil>: Unset variable "image"; '
            + jobspec.UNSET_VARIABLE_DETAIL + "\n"
            "input.hcl:5,12-21: Unsuitable value type; Unsuitable value: "
            "value must be known")

    def test_reference_to_undeclared_variable(self):
        self.assertParseError(
            'job "j" {\n  region = var.nope\n}\n',
            'Failed to parse job: input.hcl:2,15-20: Unsupported attribute; '
            'This object does not have an attribute named "nope".\n'
            "input.hcl:2,12-20: Unsuitable value type; Unsuitable value: "
            "value must be known")

    def test_vars_file_value_for_undeclared_variable(self):
        # The HTTP API parses with Strict=false: only a warning, dropped.
        j = job('job "j" {\n}\n', variables='nope = "x"\n')
        self.assertEqual(j["ID"], "j")
        # With -hcl2-strict semantics it is an error.
        self.assertParseError(
            'job "j" {\n}\n',
            'Failed to parse job: <nil>: Undefined variable; A "nope" '
            "variable was set but was not found in known variables. To "
            'declare variable "nope", place this block in your job files',
            variables='nope = "x"\n', strict=True)

    def test_warnings_are_listed_with_errors(self):
        self.assertParseError(
            'variable "x" {}\n', 'Failed to parse job: <nil>: Undefined '
            'variable; A "nope" variable was set but was not found in known '
            'variables. To declare variable "nope", place this block in your '
            'job files\n<nil>: Unset variable "x"; '
            + jobspec.UNSET_VARIABLE_DETAIL + "\n"
            "<nil>: Missing job block; A job block is required",
            variables='nope = "x"\n')

    def test_undeclared_var_flag(self):
        job('job "j" {\n}\n', var_values={"nope": "x"})
        self.assertParseError(
            'job "j" {\n}\n',
            'Failed to parse job: <nil>: Undefined -var variable; A "nope" '
            "variable was passed in the command line but was not found in "
            'known variables. To declare variable "nope", place this block '
            "in your job file", var_values={"nope": "x"}, strict=True)

    def test_vars_file_syntax_error(self):
        self.assertParseError(
            'job "j" {\n}\n',
            "Failed to parse job: unable to parse var content: "
            "input.hcl:1,9-10: Missing newline after argument; An argument "
            "definition must end with a newline.",
            variables='a = "x" b\n')

    def test_vars_file_may_not_use_variables(self):
        self.assertParseError(
            'variable "a" {\n  default = "x"\n}\njob "j" {\n}\n',
            "Failed to parse job: input.hcl:1,5-10: Variables not allowed; "
            "Variables may not be used here.", variables="a = var.b\n")

    def test_variable_declaration_in_vars_file(self):
        e = self.assertParseError(
            'job "j" {\n}\n',
            'Failed to parse job: input.hcl:1,1-9: Variable declaration in a '
            '.var file; A .var file is used to assign values to variables '
            'that have already been declared in job files, not to declare '
            'new variables. To declare variable "x", place this block in one '
            "of your job files\n\nTo set a value for this variable in "
            "input.hcl, use the definition syntax instead:\n    x = <value>",
            variables='variable "x" {\n}\n')
        self.assertEqual(len(e.diagnostics), 1)

    def test_type_mismatch(self):
        self.assertParseError(
            'variable "n" {\n  type = number\n}\njob "j" {\n}\n',
            "Failed to parse job: input.hcl:1,5-10: Invalid value for "
            "variable; The value for n is not compatible with the variable's "
            "type constraint: a number is required.",
            variables='n = "ten"\n')
        self.assertParseError(
            'variable "n" {\n  type = number\n  default = "x"\n}\n'
            'job "j" {\n}\n',
            "Failed to parse job: input.hcl:3,13-16: Invalid default value "
            "for variable; This default value is not compatible with the "
            "variable's type constraint: a number is required.")

    def test_duplicate_variable(self):
        self.assertParseError(
            'variable "a" {\n  default = 1\n}\nvariable "a" {\n'
            '  default = 2\n}\njob "j" {\n}\n',
            "Failed to parse job: <nil>: Duplicate variable; Duplicate a "
            "variable definition found.")

    def test_variable_validation(self):
        src = ('variable "env" {\n  type = string\n  validation {\n'
               '    condition = contains(["dev", "prod"], var.env)\n'
               '    error_message = "Env must be dev or prod."\n  }\n}\n'
               'job "j" {\n  meta {\n    env = var.env\n  }\n}\n')
        self.assertEqual(job(src, var_values={"env": "dev"})["Meta"],
                         {"env": "dev"})
        with self.assertRaises(JobParseError) as cm:
            job(src, var_values={"env": "qa"})
        self.assertIn("Invalid value for cmd variable; Env must be dev or "
                      "prod.\n\nThis was checked by the validation rule at "
                      "input.hcl:3,3-13.", cm.exception.message)

    def test_sensitive_is_not_supported(self):
        self.assertParseError(
            'variable "a" {\n  sensitive = true\n}\njob "j" {\n}\n',
            'Failed to parse job: input.hcl:2,3-12: Unsupported argument; An '
            'argument named "sensitive" is not expected here.\n'
            '<nil>: Unset variable "a"; ' + jobspec.UNSET_VARIABLE_DETAIL)


class TestNomadParseTests(unittest.TestCase, ParseErrorMixin):
    """Cases from Nomad's jobspec2/parse_test.go, with its expectations."""

    def test_vars_and_functions(self):
        j = job('variables {\n  region_var = "default"\n}\n'
                'job "example" {\n'
                '  datacenters = [for s in ["dc1", "dc2"] : upper(s)]\n'
                '  region      = var.region_var\n}\n',
                var_values={"region_var": "aug"})
        self.assertEqual(j["Datacenters"], ["DC1", "DC2"])
        self.assertEqual(j["Region"], "aug")

    def test_unknown_variables(self):
        j = job('variables {\n  region_var = "default"\n}\n'
                'job "example" {\n  meta {\n'
                '    known_var   = "${var.region_var}"\n'
                '    unknown_var = "${UNKNOWN}"\n  }\n}\n',
                var_values={"region_var": "aug"})
        self.assertEqual(j["Meta"], {"known_var": "aug",
                                     "unknown_var": "${UNKNOWN}"})

    def test_locals(self):
        src = ('variables {\n  region_var = "default_region"\n}\n'
               'locals {\n  # literal local\n  dc = "local_dc"\n'
               '  # local that depends on a variable\n'
               '  region = "${var.region_var}.example"\n}\n'
               'job "example" {\n  datacenters = [local.dc]\n'
               '  region      = local.region\n}\n')
        j = job(src)
        self.assertEqual((j["Datacenters"], j["Region"]),
                         (["local_dc"], "default_region.example"))
        j = job(src, var_values={"region_var": "set_region"})
        self.assertEqual(j["Region"], "set_region.example")

    def test_functions_and_lookups(self):
        src = ('variable "env" {\n'
               '  description = "target environment for the job"\n}\n'
               'locals {\n  environments = {\n'
               '    prod    = { count = 20, dcs = ["prod-dc1", '
               '"prod-dc2"] },\n'
               '    staging = { count = 3, dcs = ["dc1"] },\n  }\n\n'
               '  env = lookup(local.environments, var.env, '
               '{ count = 0, dcs = [] })\n}\n'
               'job "job-webserver" {\n  datacenters = local.env.dcs\n'
               '  group "group-webserver" {\n    count = local.env.count\n'
               '    task "server" {\n      driver = "docker"\n'
               '      config {\n        image = "hashicorp/http-echo"\n'
               '        args  = ["-text", "Hello from ${var.env}"]\n'
               '      }\n    }\n  }\n}\n')
        for env, dcs, count in (("prod", ["prod-dc1", "prod-dc2"], 20),
                                ("staging", ["dc1"], 3), ("unknown", [], 0)):
            with self.subTest(env=env):
                j = job(src, var_values={"env": env})
                self.assertEqual(j["Datacenters"], dcs)
                tg = j["TaskGroups"][0]
                self.assertEqual(tg["Count"], count)
                self.assertEqual(tg["Tasks"][0]["Config"], {
                    "image": "hashicorp/http-echo",
                    "args": ["-text", "Hello from " + env]})

    def test_unset_variable_without_type(self):
        with self.assertRaises(JobParseError) as cm:
            job('variable "region_var" {}\njob "example" {\n'
                '  datacenters = [for s in ["dc1", "dc2"] : upper(s)]\n'
                '  region      = var.region_var\n}\n')
        self.assertIn("Unset variable", cm.exception.message)

    def test_task_env_forms(self):
        def env_of(snippet):
            return task_of(job('job "example" {\n  group "group" {\n'
                               '    task "task" {\n      driver = "docker"\n'
                               '      config {}\n\n      ' + snippet +
                               '\n    }\n  }\n}'))["Env"]
        self.assertIsNone(env_of(""))
        self.assertEqual(env_of('env {\n  key = "value"\n} '),
                         {"key": "value"})
        self.assertEqual(env_of('env = {\n  "key.dot" = "val1"\n'
                                '  key_unquoted_without_dot = "val2"\n} '),
                         {"key.dot": "val1",
                          "key_unquoted_without_dot": "val2"})
        self.assertEqual(env_of('env = {}'), {})
        self.assertEqual(
            env_of('env = {for k in ["a", "b"]: k => "val-${k}" }'),
            {"a": "val-a", "b": "val-b"})
        for snippet, fragment in (
                ('env = { key = local.undefined_local }',
                 'does not have an attribute named "undefined_local"'),
                ('env {\n  for k in ["a", "b"]: k => k\n}',
                 "Invalid block definition"),
                ('env = [ "a" ]', "Unsuitable value: map of string required")):
            with self.subTest(snippet=snippet):
                with self.assertRaises(JobParseError) as cm:
                    env_of(snippet)
                self.assertIn(fragment, cm.exception.message)

    def test_service_check(self):
        j = job(' job "group_service_check_script" {\n  group "group" {\n'
                '    service {\n      name = "foo-service"\n'
                '      port = "http"\n      check {\n'
                '        name   = "check-name"\n        type   = "http"\n'
                '        method = "POST"\n'
                '        body   = "{\\"check\\":\\"mem\\"}"\n      }\n'
                '    }\n  }\n}\n')
        check = j["TaskGroups"][0]["Services"][0]["Checks"][0]
        self.assertEqual((check["Name"], check["Type"], check["Method"],
                          check["Body"]),
                         ("check-name", "http", "POST", '{"check":"mem"}'))

    def test_restart_render_templates(self):
        j = job('job "j" {\n  group "g" {\n    restart {\n'
                '      render_templates = true\n    }\n'
                '    task "a" {\n    }\n    task "b" {\n      restart {\n'
                '        render_templates = false\n      }\n    }\n  }\n}\n')
        tg = j["TaskGroups"][0]
        self.assertIs(tg["RestartPolicy"]["RenderTemplates"], True)
        self.assertIsNone(tg["Tasks"][0]["RestartPolicy"])
        self.assertIs(tg["Tasks"][1]["RestartPolicy"]["RenderTemplates"],
                      False)

    def test_locals_cycle(self):
        with self.assertRaises(JobParseError) as cm:
            job('locals {\n  a = local.b\n  b = local.a\n}\njob "j" {\n}\n')
        self.assertIn('Unsupported attribute; This object does not have an '
                      'attribute named', cm.exception.message)

    def test_dynamic_blocks_are_not_supported(self):
        self.assertParseError(
            'job "j" {\n  dynamic "group" {\n    for_each = []\n'
            '    content {\n    }\n  }\n}\n',
            'Failed to parse job: input.hcl:2,3-10: Unsupported block type; '
            'Blocks of type "dynamic" are not expected here.')


class TestJobErrors(unittest.TestCase, ParseErrorMixin):
    def test_empty(self):
        self.assertParseError("", "Job spec is empty")

    def test_missing_job_block(self):
        self.assertParseError(
            "# nothing\n",
            "Failed to parse job: <nil>: Missing job block; A job block is "
            "required")

    def test_more_than_one_job(self):
        self.assertParseError(
            'job "a" {\n}\n\njob "b" {\n}\n',
            'Failed to parse job: input.hcl:4,1-8: Duplicate job block; Only '
            'one block of type "job" is allowed. Previous definition was at '
            "input.hcl:1,1-8.")

    def test_syntax_error_uses_diagnostics_format(self):
        self.assertParseError(
            'job "a" {\n  group "g" {\n    count = \n  }\n}\n',
            "Failed to parse job: input.hcl:3,13-4,1: Invalid expression; "
            "Expected the start of an expression, but found an invalid "
            "expression token.")

    def test_filename_appears_in_message(self):
        with self.assertRaises(JobParseError) as cm:
            parse_job('job "a" {\n  foo = 1\n}\n', "web.nomad.hcl")
        self.assertTrue(cm.exception.message.startswith(
            "Failed to parse job: web.nomad.hcl:2,3-6: Unsupported "
            "argument;"))

    def test_top_level_argument(self):
        self.assertParseError(
            'job = "x"\n',
            'Failed to parse job: input.hcl:1,1-4: Unsupported argument; An '
            'argument named "job" is not expected here. Did you mean to '
            'define a block of type "job"?')

    def test_unsupported_block_and_argument(self):
        self.assertParseError(
            'job "a" {\n  groop "g" {\n  }\n  foo = 1\n}\n',
            'Failed to parse job: input.hcl:4,3-6: Unsupported argument; An '
            'argument named "foo" is not expected here.\n'
            'input.hcl:2,3-8: Unsupported block type; Blocks of type "groop" '
            'are not expected here. Did you mean "group"?')

    def test_block_where_argument_expected(self):
        self.assertParseError(
            'job "a" {\n  priority {\n  }\n}\n',
            'Failed to parse job: input.hcl:2,3-11: Unsupported block type; '
            'Blocks of type "priority" are not expected here. Did you mean '
            'to define argument "priority"? If so, use the equals sign to '
            "assign it a value.")

    def test_missing_label(self):
        self.assertParseError(
            'job "a" {\n  group {\n  }\n}\n',
            "Failed to parse job: input.hcl:2,9-10: Missing name for group; "
            "All group blocks must have 1 labels (name).")

    def test_duplicate_single_block(self):
        self.assertParseError(
            'job "a" {\n  update {\n  }\n  update {\n  }\n}\n',
            "Failed to parse job: input.hcl:4,3-9: Duplicate update block; "
            "Only one update block is allowed. Another was defined at "
            "input.hcl:2,3-9.")

    def test_missing_required_argument(self):
        self.assertParseError(
            'job "a" {\n  group "g" {\n    task "t" {\n'
            '      lifecycle {\n        sidecar = true\n      }\n'
            '    }\n  }\n}\n',
            "Failed to parse job: input.hcl:4,17-17: Missing required "
            'argument; The argument "hook" is required, but no definition '
            "was found.")

    def test_bad_values(self):
        self.assertParseError(
            'job "a" {\n  priority = "high"\n}\n',
            "Failed to parse job: input.hcl:2,15-19: Unsuitable value type; "
            "Unsuitable value: a number is required")
        self.assertParseError(
            'job "a" {\n  group "g" {\n    count = 1.5\n  }\n}\n',
            "Failed to parse job: input.hcl:3,13-16: Unsuitable value type; "
            "Unsuitable value: value must be a whole number, between "
            "-9223372036854775808 and 9223372036854775807")
        self.assertParseError(
            'job "a" {\n  datacenters = "dc1"\n}\n',
            "Failed to parse job: input.hcl:2,18-21: Unsuitable value type; "
            "Unsuitable value: list of string required")

    def test_bad_duration(self):
        self.assertParseError(
            'job "a" {\n  group "g" {\n    task "t" {\n'
            '      kill_timeout = "10x"\n    }\n  }\n}\n',
            "Failed to parse job: input.hcl:4,23-26: Unsuitable value type; "
            'Unsuitable duration value: time: unknown unit "x" in duration '
            '"10x"')
        self.assertParseError(
            'job "a" {\n  update {\n    stagger = true\n  }\n}\n',
            "Failed to parse job: input.hcl:3,15-19: Unsuitable value type; "
            "Unsuitable value: expected a string but found bool")

    def test_function_errors(self):
        self.assertParseError(
            'job "a" {\n  region = file("x")\n}\n',
            'Failed to parse job: input.hcl:2,12-17: Error in function call; '
            'Call to function "file" failed: filesystem function disabled.\n'
            "input.hcl:2,12-17: Unsuitable value type; Unsuitable value: "
            "value must be known")
        with self.assertRaises(JobParseError) as cm:
            job('job "a" {\n  region = uper("x")\n}\n')
        self.assertTrue(cm.exception.message.startswith(
            'Failed to parse job: input.hcl:2,12-16: Call to unknown '
            'function; There is no function named "uper". Did you mean '
            '"upper"?'))

    def test_errors_in_driver_config_are_reported_after_decoding(self):
        # Free-form maps are evaluated last, and those diagnostics use
        # hcl's "first, and N other" form.
        self.assertParseError(
            'job "a" {\n  group "g" {\n    task "t" {\n      config {\n'
            '        a = var.x\n        b = var.y\n      }\n    }\n  }\n}\n',
            "Failed to parse job: input.hcl:5,16-18: Unsupported attribute; "
            'This object does not have an attribute named "x"., and 3 other '
            "diagnostic(s)")

    def test_json_syntax_not_supported(self):
        with self.assertRaises(JobParseError):
            job('{"Job": {}}')


class TestCanonicalize(unittest.TestCase):
    def test_service_defaults(self):
        j = job('job "web" {\n  group "g" {\n    task "t" {\n'
                '      driver = "docker"\n    }\n  }\n}\n', canonicalize=True)
        self.assertEqual((j["Namespace"], j["Region"], j["Priority"],
                          j["Type"], j["Stop"], j["NodePool"]),
                         ("default", "global", 50, "service", False, ""))
        update = {"Stagger": 30 * S, "MaxParallel": 1,
                  "HealthCheck": "checks", "MinHealthyTime": 10 * S,
                  "HealthyDeadline": 5 * M, "ProgressDeadline": 10 * M,
                  "Canary": 0, "AutoRevert": False, "AutoPromote": False}
        self.assertEqual(j["Update"], update)
        tg = j["TaskGroups"][0]
        self.assertEqual(tg["Count"], 1)
        self.assertEqual(tg["Update"], update)
        self.assertEqual(tg["EphemeralDisk"], {"Sticky": False,
                                               "Migrate": False,
                                               "SizeMB": 300})
        self.assertEqual(tg["RestartPolicy"], {
            "Interval": 30 * M, "Attempts": 2, "Delay": 15 * S,
            "Mode": "fail", "RenderTemplates": False})
        self.assertEqual(tg["ReschedulePolicy"], {
            "Attempts": 0, "Interval": 0, "Delay": 30 * S,
            "DelayFunction": "exponential", "MaxDelay": H,
            "Unlimited": True})
        self.assertEqual(tg["Migrate"], {"MaxParallel": 1,
                                         "HealthCheck": "checks",
                                         "MinHealthyTime": 10 * S,
                                         "HealthyDeadline": 5 * M})
        t = tg["Tasks"][0]
        self.assertEqual(t["KillTimeout"], 5 * S)
        self.assertEqual(t["LogConfig"], {"MaxFiles": 10, "MaxFileSizeMB": 10,
                                          "Enabled": None, "Disabled": False})
        self.assertEqual((t["Resources"]["CPU"], t["Resources"]["Cores"],
                          t["Resources"]["MemoryMB"]), (100, 0, 300))
        self.assertEqual(t["RestartPolicy"], tg["RestartPolicy"])

    def test_cores_without_cpu(self):
        r = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                        '      resources {\n        cores = 2\n      }\n'
                        '    }\n  }\n}\n', canonicalize=True))["Resources"]
        self.assertEqual((r["CPU"], r["Cores"], r["MemoryMB"]), (0, 2, 300))

    def test_system_job_has_no_reschedule_policy(self):
        tg = job('job "j" {\n  type = "system"\n  group "g" {\n  }\n}\n',
                 canonicalize=True)["TaskGroups"][0]
        self.assertIsNone(tg["ReschedulePolicy"])
        self.assertEqual(tg["RestartPolicy"]["Attempts"], 2)
        self.assertIsNone(tg["Update"])

    def test_job_update_merged_into_group(self):
        j = job('job "j" {\n  update {\n    max_parallel = 2\n'
                '    stagger = "10s"\n  }\n  group "g" {\n    update {\n'
                '      canary = 1\n    }\n  }\n}\n', canonicalize=True)
        u = j["TaskGroups"][0]["Update"]
        self.assertEqual((u["MaxParallel"], u["Stagger"], u["Canary"],
                          u["HealthCheck"]), (2, 10 * S, 1, "checks"))

    def test_service_and_check_defaults(self):
        j = job('job "web" {\n  group "g" {\n    service {\n'
                '      port = "http"\n      check_restart {\n'
                '        limit = 3\n      }\n      check {\n'
                '        type = "tcp"\n        interval = "10s"\n'
                '        timeout = "2s"\n      }\n    }\n'
                '    task "t" {\n      service {\n        port = "x"\n'
                '      }\n    }\n  }\n}\n', canonicalize=True)
        tg = j["TaskGroups"][0]
        svc = tg["Services"][0]
        self.assertEqual((svc["Name"], svc["AddressMode"], svc["OnUpdate"],
                          svc["Provider"], svc["Cluster"]),
                         ("web-g", "auto", "require_healthy", "consul",
                          "default"))
        check = svc["Checks"][0]
        self.assertEqual(check["CheckRestart"], {"Limit": 3, "Grace": S,
                                                 "IgnoreWarnings": False})
        self.assertEqual(check["OnUpdate"], "require_healthy")
        self.assertEqual(tg["Tasks"][0]["Services"][0]["Name"], "web-g-t")

    def test_template_and_artifact_defaults(self):
        t = task_of(job('job "j" {\n  group "g" {\n    task "t" {\n'
                        '      template {\n        data = "x"\n'
                        '        destination = "local/x"\n'
                        '        change_mode = "signal"\n      }\n'
                        '      artifact {\n'
                        '        source = "https://e.com/a/tool.bin"\n'
                        '        mode = "file"\n      }\n'
                        '      artifact {\n        source = "git::x"\n'
                        '      }\n    }\n  }\n}\n', canonicalize=True))
        tmpl = t["Templates"][0]
        self.assertEqual((tmpl["ChangeSignal"], tmpl["LeftDelim"],
                          tmpl["RightDelim"], tmpl["SourcePath"],
                          tmpl["Envvars"], tmpl["Once"], tmpl["VaultGrace"]),
                         ("SIGHUP", "{{", "}}", "", False, False, 0))
        a1, a2 = t["Artifacts"]
        self.assertEqual(a1["RelativeDest"], "local/tool.bin")
        self.assertEqual((a2["RelativeDest"], a2["GetterMode"],
                          a2["GetterInsecure"]), ("local/", "any", False))

    def test_canonicalize_json_job(self):
        # What a client sends to /v1/jobs: Go's decoder ignores case and
        # unknown keys.
        j = jobspec.canonicalize({
            "id": "api", "Type": "batch", "Bogus": 1,
            "TaskGroups": [{"name": "g", "tasks": [
                {"Name": "t", "Driver": "exec",
                 "Resources": {"MemoryMB": 64}}]}]})
        self.assertEqual((j["ID"], j["Name"], j["Type"]), ("api", "api",
                                                           "batch"))
        self.assertNotIn("Bogus", j)
        tg = j["TaskGroups"][0]
        self.assertEqual((tg["Name"], tg["Count"]), ("g", 1))
        t = tg["Tasks"][0]
        self.assertEqual((t["Resources"]["CPU"], t["Resources"]["MemoryMB"]),
                         (100, 64))
        self.assertEqual(t["RestartPolicy"]["Attempts"], 3)
        self.assertNotIn("CSIPluginConfig", t)

    def test_canonicalize_is_idempotent(self):
        j = job(read("web.nomad.hcl"), variables=WEB_VARS,
                canonicalize=True)
        self.assertEqual(jobspec.canonicalize(j), j)

    def test_parse_then_canonicalize_matches_flag(self):
        src, v = read("web.nomad.hcl"), WEB_VARS
        self.assertEqual(jobspec.canonicalize(job(src, variables=v)),
                         job(src, variables=v, canonicalize=True))


class TestDurations(unittest.TestCase):
    def test_valid(self):
        cases = {"30s": 30 * S, "5m": 5 * M, "1h30m": H + 30 * M,
                 "1.5h": H + 30 * M, "250ms": 250_000_000, "10us": 10_000,
                 "10\u00b5s": 10_000, "7ns": 7, "0": 0, "-2s": -2 * S,
                 ".5s": S // 2, "2h45m10.5s": 2 * H + 45 * M + 10 * S + S // 2}
        for text, want in cases.items():
            with self.subTest(text=text):
                self.assertEqual(parse_duration(text), want)

    def test_invalid(self):
        cases = {"": 'time: invalid duration ""',
                 "10": 'time: missing unit in duration "10"',
                 "10y": 'time: unknown unit "y" in duration "10y"',
                 "abc": 'time: invalid duration "abc"',
                 "1.s": None}
        for text, want in cases.items():
            with self.subTest(text=text):
                if want is None:
                    self.assertEqual(parse_duration(text), S)
                    continue
                with self.assertRaises(ValueError) as cm:
                    parse_duration(text)
                self.assertEqual(str(cm.exception), want)


if __name__ == "__main__":
    unittest.main()
