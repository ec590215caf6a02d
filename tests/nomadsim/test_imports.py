"""The package's shape: every module imports, sibling modules are imported
relatively (never by a bare name found through sys.path), and the graph of
imports between modules, including those inside functions, has no cycle."""

import ast
import glob
import importlib
import os
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = __package__


def modules():
    return sorted(os.path.basename(p)[:-3]
                  for p in glob.glob(os.path.join(HERE, "*.py"))
                  if not p.endswith("__main__.py"))


def imports(name, names):
    """(sibling modules `name` imports, bare imports of sibling names)."""
    with open(os.path.join(HERE, name + ".py")) as f:
        tree = ast.parse(f.read(), name + ".py")
    deps, bare = set(), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in names:
                    bare.append("line %d: import %s" % (node.lineno, a.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if (node.module or "").split(".")[0] in names:
                    bare.append("line %d: from %s import"
                                % (node.lineno, node.module))
                continue
            if node.level != 1:
                continue
            if node.module:
                deps.add(node.module.split(".")[0])
            else:
                deps.update(a.name for a in node.names if a.name in names)
    deps.discard(name)
    return deps, bare


def find_cycle(graph):
    """One import cycle as a list of names, or None."""
    state = {}
    path = []

    def visit(v):
        state[v] = "open"
        path.append(v)
        for w in sorted(graph[v]):
            if state.get(w) == "open":
                return path[path.index(w):] + [w]
            if w not in state:
                c = visit(w)
                if c:
                    return c
        state[v] = "done"
        path.pop()
        return None

    for v in sorted(graph):
        if v not in state:
            c = visit(v)
            if c:
                return c
    return None


class TestImports(unittest.TestCase):
    def test_every_module_imports(self):
        for name in modules():
            with self.subTest(module=name):
                importlib.import_module("%s.%s" % (PACKAGE, name))

    def test_relative_imports_only(self):
        names = set(modules())
        for name in names:
            _deps, bare = imports(name, names)
            self.assertEqual(bare, [], "%s.py imports a sibling by its "
                             "bare name" % name)

    def test_no_cycle(self):
        names = set(modules())
        graph = {n: imports(n, names)[0] & names for n in names}
        self.assertIn("lookup", graph["scheduler"])     # the graph is read
        self.assertIsNone(find_cycle(graph))

    def test_cycle_finder(self):
        # The check itself can fail: a cycle through three modules is found.
        self.assertEqual(find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}),
                         ["a", "b", "c", "a"])
        self.assertIsNone(find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}))


if __name__ == "__main__":
    unittest.main()
