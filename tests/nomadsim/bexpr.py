"""A small go-bexpr subset for the `filter` query parameter.

Supports: Selector == "v", !=, "v" in Selector, "v" not in Selector,
Selector contains "v", Selector is empty / is not empty, matches "re",
and / or / not, parentheses.  Selectors are dotted paths (Meta.owner).
"""

import re

_TOKEN = re.compile(r'\s*(\(|\)|==|!=|"(?:[^"\\]|\\.)*"|`[^`]*`|[A-Za-z_][\w.\-\[\]]*|\S)')


class FilterError(Exception):
    pass


def _tokens(s):
    pos, out = 0, []
    s = s.strip()
    while pos < len(s):
        m = _TOKEN.match(s, pos)
        if not m:
            raise FilterError("failed to parse filter")
        out.append(m.group(1))
        pos = m.end()
    return out


def _lit(tok):
    if tok.startswith('"'):
        return bytes(tok[1:-1], "utf-8").decode("unicode_escape")
    if tok.startswith("`"):
        return tok[1:-1]
    return tok


def _select(obj, path):
    cur = obj
    for part in path.split("."):
        if isinstance(cur, dict):
            cur = cur.get(part)
        else:
            return None
    return cur


def _str(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    return "" if v is None else str(v)


class _Parser:
    def __init__(self, toks):
        self.t, self.i = toks, 0

    def peek(self):
        return self.t[self.i].lower() if self.i < len(self.t) else None

    def take(self):
        tok = self.t[self.i]
        self.i += 1
        return tok

    def expr(self):
        left = self.term()
        while self.peek() == "or":
            self.take()
            r = self.term()
            left = (lambda a, b: lambda o: a(o) or b(o))(left, r)
        return left

    def term(self):
        left = self.factor()
        while self.peek() == "and":
            self.take()
            r = self.factor()
            left = (lambda a, b: lambda o: a(o) and b(o))(left, r)
        return left

    def factor(self):
        if self.peek() == "not":
            self.take()
            f = self.factor()
            return lambda o: not f(o)
        if self.peek() == "(":
            self.take()
            e = self.expr()
            if self.peek() != ")":
                raise FilterError("missing )")
            self.take()
            return e
        return self.match()

    def match(self):
        a = self.take()
        op = self.peek()
        if a.startswith(('"', "`")):
            # "value" [not] in Selector
            val = _lit(a)
            neg = False
            if op == "not":
                self.take()
                neg = True
            if self.peek() != "in":
                raise FilterError("expected in")
            self.take()
            sel = self.take()
            return lambda o: (_contains(_select(o, sel), val)) != neg
        sel = a
        if op in ("==", "!="):
            self.take()
            val = _lit(self.take())
            if op == "==":
                return lambda o: _str(_select(o, sel)) == val
            return lambda o: _str(_select(o, sel)) != val
        if op == "contains":
            self.take()
            val = _lit(self.take())
            return lambda o: _contains(_select(o, sel), val)
        if op == "matches":
            self.take()
            rx = re.compile(_lit(self.take()))
            return lambda o: bool(rx.search(_str(_select(o, sel))))
        if op == "is":
            self.take()
            neg = False
            if self.peek() == "not":
                self.take()
                neg = True
            if self.take().lower() != "empty":
                raise FilterError("expected empty")
            return lambda o: (not _select(o, sel)) != neg
        raise FilterError("unexpected token %r" % op)


def _contains(coll, val):
    if isinstance(coll, dict):
        return val in coll
    if isinstance(coll, list):
        return val in [_str(x) for x in coll]
    if isinstance(coll, str):
        return val in coll
    return False


def compile_filter(s):
    p = _Parser(_tokens(s))
    e = p.expr()
    if p.i != len(p.t):
        raise FilterError("unexpected trailing input")
    return e
