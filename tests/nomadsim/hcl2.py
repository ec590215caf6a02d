"""HCL2 native syntax for the Nomad simulator: lexer, parser and evaluator.

Nomad parses job files with HashiCorp's hclsyntax package (a fork of
hashicorp/hcl v2).  The simulator has to answer /v1/jobs/parse the way a
real agent does, including the text of its error messages, so this module
follows hclsyntax closely: the same tokens, the same grammar, the same
diagnostic summaries and details, and the same source ranges
("file:line,col-col").  It is written from the language specification and
the observable behaviour, not translated from the Go code.

What it covers:

* bodies of attributes and (labelled) blocks, one-line blocks;
* every expression form: literals, strings with ``${...}`` interpolation
  and ``%{if}``/``%{for}`` directives, ``$${``/``%%{`` escapes, heredocs
  (``<<EOF`` and indent-stripping ``<<-EOF``), tuples, objects (``=`` or
  ``:``), traversals (``a.b[0]``, legacy ``a.0``), splats, function calls,
  ``for`` expressions, unary/binary/conditional operators;
* ``#``, ``//`` and ``/* */`` comments;
* evaluation with an EvalContext, including Nomad's "undefined variable"
  behaviour: a reference whose root is unknown (``attr.kernel.name``,
  ``NOMAD_META_x``, ``node.unique.id``) is kept as the literal text
  ``${...}`` so that Nomad can interpolate it at run time;
* the cty-style conversions (number to string and so on) needed to decode
  values into Nomad's API structures;
* the functions Nomad registers for job files (jobspec2/functions.go),
  except the cryptographic, CIDR, YAML and date ones; the filesystem ones
  fail with "filesystem function disabled" as they do on the HTTP API.

Knowingly not covered: the HCL JSON syntax, ``dynamic`` blocks, the
unknown-value refinements of cty, and full cty type unification.
"""

import base64
import bisect
import functools
import hashlib
import json
import math
import re
import urllib.parse
import uuid
from decimal import Decimal

ERROR = "error"
WARNING = "warning"


# ---------------------------------------------------------------------------
# Positions, ranges, diagnostics


class Pos:
    """A position in a source file: 1-based line and column."""

    __slots__ = ("line", "column", "offset")

    def __init__(self, line, column, offset):
        self.line = line
        self.column = column
        self.offset = offset


class Range:
    """A span of source, printed the way hcl.Range.String() prints it."""

    __slots__ = ("filename", "start", "end")

    def __init__(self, filename, start, end):
        self.filename = filename
        self.start = start
        self.end = end

    def __str__(self):
        if self.start.line == self.end.line:
            return "%s:%d,%d-%d" % (self.filename, self.start.line,
                                    self.start.column, self.end.column)
        return "%s:%d,%d-%d,%d" % (self.filename, self.start.line,
                                   self.start.column, self.end.line,
                                   self.end.column)

    def __repr__(self):
        return "Range(%s)" % self


class Diagnostic:
    """One problem found in a file.

    ``error()`` renders it exactly as hcl.Diagnostic.Error() does, which is
    what Nomad puts in its HTTP error bodies: "<subject>: <summary>;
    <detail>", where a diagnostic without a subject prints "<nil>" (Go's
    fmt output for a nil *hcl.Range).
    """

    __slots__ = ("severity", "summary", "detail", "subject", "context")

    def __init__(self, summary, detail, subject=None, context=None,
                 severity=ERROR):
        self.severity = severity
        self.summary = summary
        self.detail = detail
        self.subject = subject
        self.context = context

    def error(self):
        subject = "<nil>" if self.subject is None else str(self.subject)
        return "%s: %s; %s" % (subject, self.summary, self.detail)

    def __repr__(self):
        return "Diagnostic(%r)" % self.error()


def has_errors(diags):
    return any(d.severity == ERROR for d in diags)


def diagnostics_error(diags):
    """Render a list the way hcl.Diagnostics.Error() does."""
    if not diags:
        return "no diagnostics"
    if len(diags) == 1:
        return diags[0].error()
    return "%s, and %d other diagnostic(s)" % (diags[0].error(),
                                               len(diags) - 1)


class HCLError(Exception):
    """Raised when a file cannot be parsed; carries the diagnostics."""

    def __init__(self, diags):
        self.diags = list(diags)
        super().__init__(diagnostics_error(self.diags))


def go_quote(s):
    """Quote a string like Go's %q verb does for ordinary text."""
    out = ['"']
    for ch in s:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def levenshtein(a, b):
    """Edit distance, used for the "Did you mean ...?" suggestions."""
    if a == b:
        return 0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1,
                           prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def name_suggestion(given, suggestions):
    """HCL suggests the first candidate closer than three edits."""
    for s in suggestions:
        if levenshtein(given, s) < 3:
            return s
    return ""


class Source:
    """Source text plus the line table used to turn offsets into ranges."""

    def __init__(self, text, filename):
        self.text = text
        self.filename = filename
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._starts = starts

    def pos(self, offset):
        line = bisect.bisect_right(self._starts, offset)
        return Pos(line, offset - self._starts[line - 1] + 1, offset)

    def range(self, start, end):
        return Range(self.filename, self.pos(start), self.pos(end))


# ---------------------------------------------------------------------------
# Lexer

# Token types.  Plain strings keep the code readable; the parser compares
# them with "==".
OBRACE, CBRACE, OBRACK, CBRACK, OPAREN, CPAREN = "{", "}", "[", "]", "(", ")"
OQUOTE, CQUOTE = "OQUOTE", "CQUOTE"
OHEREDOC, CHEREDOC = "OHEREDOC", "CHEREDOC"
QLIT, STRLIT = "QLIT", "STRLIT"
INTERP, CONTROL, SEQEND = "${", "%{", "SEQEND"
IDENT, NUMBER = "IDENT", "NUMBER"
EQUAL, COMMA, COLON, DOT, QUESTION = "=", ",", ":", ".", "?"
ELLIPSIS, FATARROW, DCOLON = "...", "=>", "::"
PLUS, MINUS, STAR, SLASH, PERCENT, BANG = "+", "-", "*", "/", "%", "!"
AND, OR, EQOP, NEQ = "&&", "||", "==", "!="
LT, LE, GT, GE = "<", "<=", ">", ">="
NEWLINE, EOF, INVALID, QNEWLINE = "NEWLINE", "EOF", "INVALID", "QNEWLINE"
SEMICOLON, APOSTROPHE, BACKTICK = ";", "'", "`"
BITAND, BITOR, BITXOR, BITNOT, STARSTAR = "&", "|", "^", "~", "**"

_OPPOSITE = {
    OBRACE: CBRACE, CBRACE: OBRACE, OBRACK: CBRACK, CBRACK: OBRACK,
    OPAREN: CPAREN, CPAREN: OPAREN, OQUOTE: CQUOTE, CQUOTE: OQUOTE,
    OHEREDOC: CHEREDOC, CHEREDOC: OHEREDOC, INTERP: SEQEND,
    CONTROL: SEQEND, SEQEND: INTERP,
}


class Token:
    __slots__ = ("type", "start", "end", "text")

    def __init__(self, type_, start, end, text):
        self.type = type_
        self.start = start
        self.end = end
        self.text = text

    def __repr__(self):
        return "Token(%s %r)" % (self.type, self.text)


_NORMAL_RE = re.compile(r"""
    (?P<ws>[ \t\r]+)
  | (?P<nl>\n)
  | (?P<lc>(?:\#|//)[^\n]*)
  | (?P<bc>/\*.*?\*/)
  | (?P<ident>[^\W\d][\w\-]*)
  | (?P<num>\d+(?:\.\d+)?(?:[eE][+\-]?\d+)?)
  | (?P<hd><<(?P<hdflush>-?)(?P<hdmark>[^\W\d][\w\-]*)[ \t]*\r?\n)
  | (?P<op>\.\.\.|==|!=|<=|>=|&&|\|\||=>|::|\*\*|~\}
          |[{}\[\]()=,.:?+\-*/%!<>"&|^;'`~])
""", re.X | re.S)

# A run of literal text inside a quoted string: escapes are kept verbatim
# here and decoded by the parser, so their ranges can be reported.
_QUOTED_RE = re.compile(r"""(?:\\.?|\$\$\{|%%\{|[^"\\\n$%]+|[$%](?!\{))*""")
# The same for one heredoc line (which may end with its newline).
_HEREDOC_RE = re.compile(r"""(?:\$\$\{|%%\{|[^\n$%]+|[$%](?!\{))*\n?""")

_OPS = {
    "...": ELLIPSIS, "==": EQOP, "!=": NEQ, "<=": LE, ">=": GE, "&&": AND,
    "||": OR, "=>": FATARROW, "::": DCOLON, "**": STARSTAR,
    "{": OBRACE, "}": CBRACE, "[": OBRACK, "]": CBRACK, "(": OPAREN,
    ")": CPAREN, "=": EQUAL, ",": COMMA, ".": DOT, ":": COLON,
    "?": QUESTION, "+": PLUS, "-": MINUS, "*": STAR, "/": SLASH,
    "%": PERCENT, "!": BANG, "<": LT, ">": GT, "&": BITAND, "|": BITOR,
    "^": BITXOR, ";": SEMICOLON, "'": APOSTROPHE, "`": BACKTICK,
    "~": BITNOT,
}


def lex(src):
    """Split the source into tokens.

    HCL's scanner is modal: inside a quoted string or a heredoc it yields
    literal chunks, and ``${``/``%{`` switch back to expression mode until
    the matching ``}``.  A stack of frames tracks that nesting; ordinary
    braces are pushed too so that ``${ {a=1}["a"] }`` closes at the right
    brace.
    """
    text = src.text
    n = len(text)
    toks = []
    add = toks.append
    stack = []
    i = 0
    while True:
        frame = stack[-1] if stack else None
        kind = frame[0] if frame else None
        if kind == "quoted":
            j = _QUOTED_RE.match(text, i).end()
            if j > i:
                add(Token(QLIT, i, j, text[i:j]))
            i = j
            if i >= n:
                break
            c = text[i]
            if c == '"':
                add(Token(CQUOTE, i, i + 1, '"'))
                stack.pop()
                i += 1
            elif c == "\n":
                add(Token(QNEWLINE, i, i + 1, "\n"))
                i += 1
            else:
                i = _lex_template_open(text, i, toks, stack)
            continue
        if kind == "heredoc":
            if frame[3]:
                m = frame[1].match(text, i)
                if m:
                    add(Token(CHEREDOC, i, m.end(), text[i:m.end()]))
                    stack.pop()
                    i = m.end()
                    continue
            if i >= n:
                break
            j = _HEREDOC_RE.match(text, i).end()
            if j > i:
                add(Token(STRLIT, i, j, text[i:j]))
            frame[3] = j > i and text[j - 1] == "\n"
            i = j
            if i < n and text[i] in "$%" and text[i + 1:i + 2] == "{":
                frame[3] = False
                i = _lex_template_open(text, i, toks, stack)
            continue
        if i >= n:
            break
        m = _NORMAL_RE.match(text, i)
        if m is None:
            # Only an unterminated block comment gets here.
            if text.startswith("/*", i):
                add(Token(INVALID, i, n, text[i:]))
                i = n
            else:
                add(Token(INVALID, i, i + 1, text[i]))
                i += 1
            continue
        group = m.lastgroup
        j = m.end()
        if group == "ws" or group == "lc" or group == "bc":
            pass
        elif group == "nl":
            add(Token(NEWLINE, i, j, "\n"))
        elif group == "ident":
            add(Token(IDENT, i, j, text[i:j]))
        elif group == "num":
            add(Token(NUMBER, i, j, text[i:j]))
        elif group == "hd":
            flush = m.group("hdflush") == "-"
            marker = m.group("hdmark")
            add(Token(OHEREDOC, i, j, text[i:j]))
            stack.append(["heredoc", _heredoc_end_re(marker), flush, True])
        else:
            op = m.group("op")
            if op == '"':
                add(Token(OQUOTE, i, j, op))
                stack.append(("quoted",))
            elif op == "{":
                add(Token(OBRACE, i, j, op))
                stack.append(("brace",))
            elif op == "}" or op == "~}":
                if stack and stack[-1][0] == "interp":
                    stack.pop()
                    add(Token(SEQEND, i, j, op))
                elif op == "}":
                    if stack and stack[-1][0] == "brace":
                        stack.pop()
                    add(Token(CBRACE, i, j, op))
                else:
                    add(Token(BITNOT, i, i + 1, "~"))
                    j = i + 1
            else:
                add(Token(_OPS[op], i, j, op))
        i = j
    toks.append(Token(EOF, n, n, ""))
    return toks


@functools.lru_cache(maxsize=64)
def _heredoc_end_re(marker):
    """The closing line of a heredoc: optional indentation, the marker."""
    return re.compile(r"[ \t]*" + re.escape(marker) + r"(?=\r?\n|\Z)")


def _lex_template_open(text, i, toks, stack):
    """Emit the ${ or %{ opener at i (with an optional ~) and enter it."""
    j = i + 2
    if text[j:j + 1] == "~":
        j += 1
    ty = INTERP if text[i] == "$" else CONTROL
    toks.append(Token(ty, i, j, text[i:j]))
    stack.append(("interp",))
    return j


def check_invalid_tokens(src, toks):
    """Report tokens that never belong in HCL, like hclsyntax does first."""
    diags = []
    told = {"bitwise": 0, "exp": 0, "backtick": 0, "apos": 0, "semi": 0}
    for tok in toks:
        t = tok.type
        if t in (BITAND, BITOR, BITXOR, BITNOT):
            if told["bitwise"] < 4:
                hint = {BITAND: ' Did you mean boolean AND ("&&")?',
                        BITOR: ' Did you mean boolean OR ("||")?',
                        BITNOT: ' Did you mean boolean NOT ("!")?'}.get(t, "")
                diags.append(Diagnostic(
                    "Unsupported operator",
                    "Bitwise operators are not supported." + hint,
                    src.range(tok.start, tok.end)))
                told["bitwise"] += 1
        elif t == STARSTAR:
            if told["exp"] < 1:
                diags.append(Diagnostic(
                    "Unsupported operator",
                    '"**" is not a supported operator. Exponentiation is '
                    "not supported as an operator.",
                    src.range(tok.start, tok.end)))
                told["exp"] += 1
        elif t == BACKTICK:
            if told["backtick"] % 2 == 0:
                diags.append(Diagnostic(
                    "Invalid character",
                    'The "`" character is not valid. To create a multi-line '
                    'string, use the "heredoc" syntax, like "<<EOT".',
                    src.range(tok.start, tok.end)))
            if told["backtick"] <= 2:
                told["backtick"] += 1
        elif t == APOSTROPHE:
            if told["apos"] % 2 == 0:
                diags.append(Diagnostic(
                    "Invalid character",
                    'Single quotes are not valid. Use double quotes (") to '
                    "enclose strings.",
                    src.range(tok.start, tok.end)))
            if told["apos"] <= 2:
                told["apos"] += 1
        elif t == SEMICOLON:
            if told["semi"] < 1:
                diags.append(Diagnostic(
                    "Invalid character",
                    'The ";" character is not valid. Use newlines to '
                    "separate arguments and blocks, and commas to separate "
                    "items in collection values.",
                    src.range(tok.start, tok.end)))
                told["semi"] += 1
        elif t == QNEWLINE:
            diags.append(Diagnostic(
                "Invalid multi-line string",
                "Quoted strings may not be split over multiple lines. To "
                "produce a multi-line string, either use the \\n escape to "
                'represent a newline character or use the "heredoc" '
                "multi-line template syntax.",
                src.range(tok.start, tok.end)))
        elif t == INVALID:
            diags.append(Diagnostic(
                "Invalid character",
                "This character is not used within the language.",
                src.range(tok.start, tok.start + 1)))
    return diags


# ---------------------------------------------------------------------------
# Syntax tree


class Body:
    """Attributes (by name, in source order) and blocks of one body.

    ``open_start`` is where the body's opening brace starts; HCL reports
    missing required arguments at that zero-width position.
    """

    __slots__ = ("attrs", "blocks", "open_start", "end", "src")

    def __init__(self, attrs, blocks, open_start, end, src):
        self.attrs = attrs
        self.blocks = blocks
        self.open_start = open_start
        self.end = end
        self.src = src

    def missing_item_range(self):
        return self.src.range(self.open_start, self.open_start)


class Attribute:
    __slots__ = ("name", "expr", "name_rng", "rng")

    def __init__(self, name, expr, name_rng, rng):
        self.name = name
        self.expr = expr
        self.name_rng = name_rng
        self.rng = rng


class Block:
    __slots__ = ("type", "labels", "label_rngs", "body", "type_rng",
                 "open_rng", "close_rng")

    def __init__(self, type_, labels, label_rngs, body, type_rng, open_rng,
                 close_rng):
        self.type = type_
        self.labels = labels
        self.label_rngs = label_rngs
        self.body = body
        self.type_rng = type_rng
        self.open_rng = open_rng
        self.close_rng = close_rng

    @property
    def def_rng(self):
        """From the type keyword to the last label, like Block.DefRange."""
        last = self.label_rngs[-1] if self.label_rngs else self.type_rng
        return (self.type_rng[0], last[1])


class Expr:
    """Base of expression nodes; ``rng`` is a (start, end) offset pair."""

    __slots__ = ("rng",)

    def start_rng(self):
        """The range hcl reports for "the start" of this expression."""
        return self.rng


class Lit(Expr):
    __slots__ = ("value",)

    def __init__(self, value, rng):
        self.value = value
        self.rng = rng


class ErrorExpr(Expr):
    """Placeholder left where a syntax error was found."""

    __slots__ = ()

    def __init__(self, rng):
        self.rng = rng


class Interp(Expr):
    """One ``${...}`` sequence of a template; rng covers the braces."""

    __slots__ = ("expr",)

    def __init__(self, expr, rng):
        self.expr = expr
        self.rng = rng

    def start_rng(self):
        return self.expr.start_rng()


class Template(Expr):
    __slots__ = ("parts",)

    def __init__(self, parts, rng):
        self.parts = parts
        self.rng = rng

    def start_rng(self):
        return self.parts[0].start_rng() if self.parts else self.rng

    def is_string_literal(self):
        return len(self.parts) == 1 and isinstance(self.parts[0], Lit)


class TemplateWrap(Expr):
    """A string that is exactly one interpolation keeps its value's type."""

    __slots__ = ("interp",)

    def __init__(self, interp, rng):
        self.interp = interp
        self.rng = rng


class TemplateIf(Expr):
    __slots__ = ("cond", "then", "other")

    def __init__(self, cond, then, other, rng):
        self.cond = cond
        self.then = then
        self.other = other
        self.rng = rng


class TemplateFor(Expr):
    __slots__ = ("key_var", "val_var", "coll", "body")

    def __init__(self, key_var, val_var, coll, body, rng):
        self.key_var = key_var
        self.val_var = val_var
        self.coll = coll
        self.body = body
        self.rng = rng


class Traversal(Expr):
    """A variable reference: root name then attribute/index steps.

    Each step is ("attr", name, rng) or ("index", key, rng).
    """

    __slots__ = ("root", "root_rng", "steps")

    def __init__(self, root, root_rng, steps, rng):
        self.root = root
        self.root_rng = root_rng
        self.steps = steps
        self.rng = rng


class RelTraversal(Expr):
    __slots__ = ("source", "steps")

    def __init__(self, source, steps, rng):
        self.source = source
        self.steps = steps
        self.rng = rng


class Index(Expr):
    __slots__ = ("coll", "key", "open_rng")

    def __init__(self, coll, key, rng, open_rng):
        self.coll = coll
        self.key = key
        self.rng = rng
        self.open_rng = open_rng

    def start_rng(self):
        return self.open_rng


class AnonSymbol(Expr):
    """The "current item" inside a splat expression."""

    __slots__ = ()

    def __init__(self, rng):
        self.rng = rng


class Splat(Expr):
    __slots__ = ("source", "each")

    def __init__(self, source, each, rng):
        self.source = source
        self.each = each
        self.rng = rng


class Call(Expr):
    __slots__ = ("name", "args", "expand_final", "name_rng", "open_rng")

    def __init__(self, name, args, expand_final, name_rng, open_rng, rng):
        self.name = name
        self.args = args
        self.expand_final = expand_final
        self.name_rng = name_rng
        self.open_rng = open_rng
        self.rng = rng

    def start_rng(self):
        return (self.name_rng[0], self.open_rng[1])


class TupleCons(Expr):
    __slots__ = ("items",)

    def __init__(self, items, rng):
        self.items = items
        self.rng = rng

    def start_rng(self):
        return (self.rng[0], self.rng[0] + 1)


class ObjKey(Expr):
    """An object key: a bare name means the literal string, as in HCL."""

    __slots__ = ("wrapped", "force_non_literal")

    def __init__(self, wrapped, force_non_literal):
        self.wrapped = wrapped
        self.force_non_literal = force_non_literal
        self.rng = wrapped.rng

    def literal_name(self):
        w = self.wrapped
        if (not self.force_non_literal and isinstance(w, Traversal)
                and not w.steps):
            return w.root
        return None


class ObjectCons(Expr):
    __slots__ = ("items",)

    def __init__(self, items, rng):
        self.items = items
        self.rng = rng

    def start_rng(self):
        return (self.rng[0], self.rng[0] + 1)


class Cond(Expr):
    __slots__ = ("cond", "true", "false")

    def __init__(self, cond, true, false, rng):
        self.cond = cond
        self.true = true
        self.false = false
        self.rng = rng

    def start_rng(self):
        return self.cond.start_rng()


class Binary(Expr):
    __slots__ = ("op", "lhs", "rhs")

    def __init__(self, op, lhs, rhs, rng):
        self.op = op
        self.lhs = lhs
        self.rhs = rhs
        self.rng = rng

    def start_rng(self):
        return self.lhs.start_rng()


class Unary(Expr):
    __slots__ = ("op", "val", "sym_rng")

    def __init__(self, op, val, rng, sym_rng):
        self.op = op
        self.val = val
        self.rng = rng
        self.sym_rng = sym_rng

    def start_rng(self):
        return self.sym_rng


class Paren(Expr):
    __slots__ = ("expr",)

    def __init__(self, expr, rng):
        self.expr = expr
        self.rng = rng


class For(Expr):
    __slots__ = ("key_var", "val_var", "coll", "key_expr", "val_expr",
                 "cond", "group", "make_obj", "open_rng")

    def __init__(self, key_var, val_var, coll, key_expr, val_expr, cond,
                 group, make_obj, rng, open_rng):
        self.key_var = key_var
        self.val_var = val_var
        self.coll = coll
        self.key_expr = key_expr
        self.val_expr = val_expr
        self.cond = cond
        self.group = group
        self.make_obj = make_obj
        self.rng = rng
        self.open_rng = open_rng

    def start_rng(self):
        return self.open_rng


# ---------------------------------------------------------------------------
# Parser


# Binary operator precedence, lowest first (HCL's binaryOps table).
_BINARY_PREC = {OR: 1, AND: 2, EQOP: 3, NEQ: 3, GT: 4, GE: 4, LT: 4, LE: 4,
                PLUS: 5, MINUS: 5, STAR: 6, SLASH: 6, PERCENT: 6}


class _TLit:
    __slots__ = ("val", "rng")

    def __init__(self, val, rng):
        self.val = val
        self.rng = rng


class _TInterp:
    __slots__ = ("expr", "rng")

    def __init__(self, expr, rng):
        self.expr = expr
        self.rng = rng


class _TCtl:
    """A template directive: kind is if/else/endif/for/endfor."""

    __slots__ = ("kind", "rng", "cond", "key_var", "val_var", "coll")

    def __init__(self, kind, rng, cond=None, key_var=None, val_var=None,
                 coll=None):
        self.kind = kind
        self.rng = rng
        self.cond = cond
        self.key_var = key_var
        self.val_var = val_var
        self.coll = coll


class _TEnd:
    __slots__ = ("rng",)

    def __init__(self, rng):
        self.rng = rng


_ESCAPE_RE = re.compile(
    r"\\(u[0-9A-Fa-f]{0,4}|U[0-9A-Fa-f]{0,8}|.?)|\$\$\{|%%\{", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\"}


class Parser:
    """Recursive-descent parser producing the syntax tree above.

    It keeps hclsyntax's error recovery: after the first syntax error the
    ``recovery`` flag is set for good and most follow-on complaints are
    suppressed, so the number of diagnostics matches what Nomad reports.
    """

    def __init__(self, src, toks):
        self.src = src
        self.toks = toks
        self.i = 0
        self.nl = [True]
        self.recovery = False
        self.diags = []
        self.prev = toks[0]

    # -- token access

    def _peek_index(self):
        i = self.i
        if not self.nl[-1]:
            toks = self.toks
            while toks[i].type == NEWLINE:
                i += 1
        return i

    def peek(self):
        tok = self.toks[self.i]
        if tok.type == NEWLINE and not self.nl[-1]:
            return self.toks[self._peek_index()]
        return tok

    def read(self):
        j = self.i
        tok = self.toks[j]
        if tok.type == NEWLINE and not self.nl[-1]:
            j = self._peek_index()
            tok = self.toks[j]
        if tok.type != EOF:
            self.i = j + 1
        self.prev = tok
        return tok

    def rng(self, a, b=None):
        """Range from token/offset-pair a to b as a Range object."""
        if b is None:
            b = a
        sa = a.start if isinstance(a, Token) else a[0]
        eb = b.end if isinstance(b, Token) else b[1]
        return self.src.range(sa, eb)

    def error(self, summary, detail, subject, context=None):
        self.diags.append(Diagnostic(summary, detail, subject, context))

    def mark(self):
        return len(self.diags)

    def errs_since(self, mark):
        return len(self.diags) > mark

    # -- recovery

    def recover(self, end):
        """Skip to the token closing the current construct."""
        self.recovery = True
        start = _OPPOSITE.get(end)
        nest = 0
        while True:
            tok = self.read()
            ty = tok.type
            if end == SEQEND and ty == CONTROL:
                ty = INTERP
            if ty == start:
                nest += 1
            elif ty == end:
                if nest < 1:
                    return tok
                nest -= 1
            elif ty == EOF:
                return tok

    def recover_over(self, start):
        while True:
            tok = self.read()
            if tok.type in (start, EOF):
                break
        self.recover(_OPPOSITE[start])

    def recover_after_body_item(self):
        """Skip to the end of the current line, minding open brackets."""
        self.recovery = True
        open_ = []
        while True:
            tok = self.read()
            ty = tok.type
            if ty == NEWLINE:
                if not open_:
                    return
            elif ty == EOF:
                return
            elif ty in (OBRACE, OBRACK, OPAREN, OQUOTE, OHEREDOC, INTERP,
                        CONTROL):
                open_.append(ty)
            elif ty in (CBRACE, CBRACK, CPAREN, CQUOTE, CHEREDOC):
                opener = _OPPOSITE[ty]
                while open_ and open_[-1] != opener:
                    open_.pop()
                if open_:
                    open_.pop()
            elif ty == SEQEND:
                while open_ and open_[-1] not in (INTERP, CONTROL):
                    open_.pop()
                if open_:
                    open_.pop()

    # -- bodies

    def parse_file(self):
        body = self.parse_body(EOF, None)
        return body

    def parse_body(self, end, open_tok):
        attrs = {}
        blocks = []
        open_start = open_tok.start if open_tok is not None else 0
        while True:
            tok = self.peek()
            if tok.type == end:
                self.read()
                break
            if tok.type == NEWLINE:
                self.read()
                continue
            if tok.type == IDENT:
                item = self.parse_body_item()
                if isinstance(item, Block):
                    blocks.append(item)
                elif isinstance(item, Attribute):
                    old = attrs.get(item.name)
                    if old is not None:
                        self.error(
                            "Attribute redefined",
                            "The argument %s was already set at %s. Each "
                            "argument may be set only once." %
                            (go_quote(item.name), self.rng(old.name_rng)),
                            self.rng(item.name_rng))
                    else:
                        attrs[item.name] = item
                continue
            bad = self.read()
            if not self.recovery:
                if bad.type == OQUOTE:
                    self.error("Invalid argument name",
                               "Argument names must not be quoted.",
                               self.rng(bad))
                elif bad.type == EOF:
                    start = self.rng(open_tok) if open_tok else None
                    if end == CBRACE:
                        self.error(
                            "Unclosed configuration block",
                            "There is no closing brace for this block "
                            "before the end of the file. This may be caused "
                            "by incorrect brace nesting elsewhere in this "
                            "file.", start)
                    else:
                        self.error(
                            "Unclosed configuration body",
                            "Found end of file before the end of this "
                            "configuration body.", start)
                else:
                    self.error("Argument or block definition required",
                               "An argument or block definition is required "
                               "here.", self.rng(bad))
            self.recover(end)
            break
        return Body(attrs, blocks, open_start, self.prev.end, self.src)

    def parse_body_item(self):
        ident = self.read()
        nxt = self.peek()
        if nxt.type == EQUAL:
            return self.finish_attribute(ident, False)
        if nxt.type in (OQUOTE, OBRACE, IDENT):
            return self.finish_block(ident)
        self.recover_after_body_item()
        self.error("Argument or block definition required",
                   "An argument or block definition is required here. To "
                   'set an argument, use the equals sign "=" to introduce '
                   "the argument value.", self.rng(ident))
        return None

    def finish_attribute(self, ident, single_line):
        self.read()  # the equals sign
        mark = self.mark()
        expr = self.parse_expression()
        end_off = self.prev.end
        if self.recovery and self.errs_since(mark):
            self.recover_after_body_item()
        elif not single_line:
            end = self.peek()
            if end.type not in (NEWLINE, EOF):
                if not self.recovery:
                    summary = "Missing newline after argument"
                    detail = "An argument definition must end with a newline."
                    if end.type == COMMA:
                        summary = "Unexpected comma after argument"
                        detail = ("Argument definitions must be separated by "
                                  "newlines, not commas. " + detail)
                    self.error(summary, detail, self.rng(end),
                               self.rng(ident, end))
                self.recover_after_body_item()
            else:
                self.read()
        return Attribute(ident.text, expr, (ident.start, ident.end),
                         (ident.start, end_off))

    def finish_block(self, ident):
        labels = []
        label_rngs = []
        while True:
            tok = self.peek()
            if tok.type == OBRACE:
                obrace = self.read()
                break
            if tok.type == OQUOTE:
                label, lrng = self.parse_quoted_string_literal()
                labels.append(label)
                label_rngs.append(lrng)
                continue
            if tok.type == IDENT:
                self.read()
                labels.append(tok.text)
                label_rngs.append((tok.start, tok.end))
                continue
            if tok.type == EQUAL:
                self.error("Invalid block definition",
                           'The equals sign "=" indicates an argument '
                           "definition, and must not be used when defining "
                           "a block.", self.rng(tok), self.rng(ident, tok))
            elif tok.type == NEWLINE:
                self.error("Invalid block definition",
                           'A block definition must have block content '
                           'delimited by "{" and "}", starting on the same '
                           "line as the block header.", self.rng(tok),
                           self.rng(ident, tok))
            elif not self.recovery:
                self.error("Invalid block definition",
                           "Either a quoted string block label or an "
                           'opening brace ("{") is expected here.',
                           self.rng(tok), self.rng(ident, tok))
            self.recover_after_body_item()
            empty = Body({}, [], ident.start, ident.end, self.src)
            rng = (ident.start, ident.end)
            return Block(ident.text, labels, label_rngs, empty, rng, rng, rng)

        nxt = self.peek().type
        if nxt in (NEWLINE, EOF, CBRACE):
            body = self.parse_body(CBRACE, obrace)
        else:
            body = self.parse_single_attr_body(obrace, ident)
        close = self.prev
        eol = self.peek()
        if eol.type in (NEWLINE, EOF):
            self.read()
        else:
            if not self.recovery:
                self.error("Missing newline after block definition",
                           "A block definition must end with a newline.",
                           self.rng(eol), self.rng(ident, eol))
            self.recover_after_body_item()
        return Block(ident.text, labels, label_rngs, body,
                     (ident.start, ident.end), (obrace.start, obrace.end),
                     (close.start, close.end))

    def parse_single_attr_body(self, obrace, block_ident):
        """``name { arg = value }`` on one line holds exactly one argument."""
        attrs = {}
        ident = self.read()
        if ident.type != IDENT:
            self.recover_after_body_item()
            self.error("Argument or block definition required",
                       "An argument or block definition is required here.",
                       self.rng(ident))
            return Body({}, [], obrace.start, self.prev.end, self.src)
        nxt = self.peek()
        if nxt.type == EQUAL:
            attr = self.finish_attribute(ident, True)
            attrs[attr.name] = attr
        elif nxt.type in (OQUOTE, OBRACE, IDENT):
            self.recover_after_body_item()
            self.error("Argument definition required",
                       "A single-line block definition can contain only a "
                       "single argument. If you meant to define argument "
                       "%s, use an equals sign to assign it a value. To "
                       "define a nested block, place it on a line of its "
                       "own within its parent block." % go_quote(ident.text),
                       self.rng(ident, nxt))
            return Body({}, [], obrace.start, self.prev.end, self.src)
        else:
            self.recover_after_body_item()
            self.error("Argument or block definition required",
                       "An argument or block definition is required here. "
                       'To set an argument, use the equals sign "=" to '
                       "introduce the argument value.", self.rng(ident))
            return Body({}, [], obrace.start, self.prev.end, self.src)

        tok = self.peek()
        if tok.type == CBRACE:
            self.read()
        elif tok.type == COMMA:
            self.error("Invalid single-argument block definition",
                       "Single-line block syntax can include only one "
                       "argument definition. To define multiple arguments, "
                       "use the multi-line block syntax with one argument "
                       "definition per line.", self.rng(tok))
            self.recover(CBRACE)
        elif tok.type == NEWLINE:
            self.error("Invalid single-argument block definition",
                       "An argument definition on the same line as its "
                       "containing block creates a single-line block "
                       "definition, which must also be closed on the same "
                       "line. Place the block's closing brace immediately "
                       "after the argument definition.", self.rng(tok))
            self.recover(CBRACE)
        else:
            if not self.recovery:
                if tok.type == EOF:
                    self.error("Unclosed configuration block",
                               "There is no closing brace for this block "
                               "before the end of the file. This may be "
                               "caused by incorrect brace nesting elsewhere "
                               "in this file.", self.rng(obrace),
                               self.rng(block_ident, obrace))
                else:
                    self.error("Invalid single-argument block definition",
                               "A single-line block definition must end "
                               "with a closing brace immediately after its "
                               "single argument definition.", self.rng(tok))
            self.recover(CBRACE)
        return Body(attrs, [], obrace.start, self.prev.end, self.src)

    # -- expressions

    def parse_expression(self):
        start = self.peek()
        mark = self.mark()
        cond = self.parse_binary()
        if self.recovery and self.errs_since(mark):
            return cond
        if self.peek().type != QUESTION:
            return cond
        self.read()
        mark = self.mark()
        true = self.parse_expression()
        if self.recovery and self.errs_since(mark):
            return cond
        colon = self.peek()
        if colon.type != COLON:
            self.error("Missing false expression in conditional",
                       "The conditional operator (...?...:...) requires a "
                       "false expression, delimited by a colon.",
                       self.rng(colon), self.rng(start, colon))
            return cond
        self.read()
        mark = self.mark()
        false = self.parse_expression()
        if self.recovery and self.errs_since(mark):
            return cond
        return Cond(cond, true, false, (cond.rng[0], false.rng[1]))

    def parse_binary(self, min_prec=1):
        """Binary operators by precedence climbing, left-associative."""
        mark = self.mark()
        lhs = self.parse_with_traversals()
        if self.recovery and self.errs_since(mark):
            return lhs
        while True:
            tok = self.peek()
            prec = _BINARY_PREC.get(tok.type)
            if prec is None or prec < min_prec:
                return lhs
            self.read()
            mark = self.mark()
            rhs = self.parse_binary(prec + 1)
            lhs = Binary(tok.text, lhs, rhs, (lhs.rng[0], rhs.rng[1]))
            if self.recovery and self.errs_since(mark):
                return lhs

    def parse_with_traversals(self):
        return self.parse_traversals(self.parse_term())

    def _add_step(self, expr, step):
        rng_end = step[2][1]
        if isinstance(expr, (Traversal, RelTraversal)):
            expr.steps.append(step)
            expr.rng = (expr.rng[0], rng_end)
            return expr
        return RelTraversal(expr, [step], (expr.rng[0], rng_end))

    def parse_traversals(self, expr):
        from_start = expr.rng[0]
        while True:
            nxt = self.peek()
            if nxt.type == DOT:
                dot = self.read()
                at = self.peek()
                if at.type == IDENT:
                    self.read()
                    expr = self._add_step(
                        expr, ("attr", at.text, (dot.start, at.end)))
                elif at.type == NUMBER:
                    self.read()
                    if "." in at.text:
                        first, second = at.text.split(".", 1)
                        self.error("Invalid legacy index syntax",
                                   "When using the legacy index syntax, "
                                   "chaining two indexes together is not "
                                   "permitted. Use the proper index syntax "
                                   "instead, like [%s][%s]." % (first, second),
                                   self.rng(at))
                        key = UNKNOWN
                    else:
                        key = _parse_number(at.text)
                    expr = self._add_step(
                        expr, ("index", key, (dot.start, at.end)))
                elif at.type == STAR:
                    star = self.read()
                    steps = []
                    last = star.end
                    while self.peek().type == DOT:
                        d = self.read()
                        t = self.peek()
                        if t.type == IDENT:
                            self.read()
                            steps.append(("attr", t.text, (d.start, t.end)))
                            last = t.end
                        elif t.type == NUMBER and "." not in t.text:
                            self.read()
                            steps.append(("index", _parse_number(t.text),
                                          (d.start, t.end)))
                            last = t.end
                        else:
                            if not self.recovery:
                                self.error("Invalid attribute name",
                                           "An attribute name is required "
                                           "after a dot.", self.rng(t))
                            self.recovery = True
                            break
                    item = AnonSymbol((dot.start, star.end))
                    each = RelTraversal(item, steps, (dot.start, last)) \
                        if steps else item
                    expr = Splat(expr, each, (from_start, last))
                else:
                    self.error("Invalid attribute name",
                               "An attribute name is required after a dot.",
                               self.rng(at))
                    self.recovery = True
                    return ErrorExpr((from_start, dot.end))
            elif nxt.type == OBRACK:
                open_ = self.read()
                if self.peek().type == STAR:
                    self.read()
                    close = self.read()
                    if close.type != CBRACK and not self.recovery:
                        self.error("Missing close bracket on splat index",
                                   "The star for a full splat operator must "
                                   "be immediately followed by a closing "
                                   'bracket ("]").', self.rng(close))
                        close = self.recover(CBRACK)
                    item = AnonSymbol((open_.start, close.end))
                    each = self.parse_traversals(item)
                    expr = Splat(expr, each, (from_start, each.rng[1]))
                    continue
                self.nl.append(False)
                mark = self.mark()
                key = self.parse_expression()
                if self.recovery and self.errs_since(mark):
                    close = self.recover(CBRACK)
                else:
                    close = self.read()
                    if close.type != CBRACK and not self.recovery:
                        self.error("Missing close bracket on index",
                                   'The index operator must end with a '
                                   'closing bracket ("]").', self.rng(close))
                        close = self.recover(CBRACK)
                self.nl.pop()
                rng = (open_.start, close.end)
                if isinstance(key, Lit):
                    expr = self._add_step(expr, ("index", key.value, rng))
                elif isinstance(key, Template) and key.is_string_literal():
                    expr = self._add_step(
                        expr, ("index", key.parts[0].value, rng))
                else:
                    expr = Index(expr, key, (from_start, close.end),
                                 (open_.start, open_.end))
            else:
                return expr

    def parse_term(self):
        start = self.peek()
        ty = start.type
        if ty == OPAREN:
            self.read()
            self.nl.append(False)
            mark = self.mark()
            expr = self.parse_expression()
            if self.errs_since(mark):
                self.recover(CPAREN)
                self.nl.pop()
                return expr
            close = self.peek()
            if close.type != CPAREN:
                self.error("Unbalanced parentheses",
                           "Expected a closing parenthesis to terminate the "
                           "expression.", self.rng(close),
                           self.rng(start, close))
                self.recovery = True
            cparen = self.read()
            self.nl.pop()
            return Paren(expr, (start.start, cparen.end))
        if ty == NUMBER:
            self.read()
            return Lit(_parse_number(start.text), (start.start, start.end))
        if ty == IDENT:
            self.read()
            if self.peek().type in (OPAREN, DCOLON):
                return self.finish_call(start)
            name = start.text
            rng = (start.start, start.end)
            if name == "true":
                return Lit(True, rng)
            if name == "false":
                return Lit(False, rng)
            if name == "null":
                return Lit(None, rng)
            return Traversal(name, rng, [], rng)
        if ty == OQUOTE or ty == OHEREDOC:
            self.read()
            closer = CQUOTE if ty == OQUOTE else CHEREDOC
            flush = ty == OHEREDOC and start.text.startswith("<<-")
            parts, passthru = self.parse_template_inner(closer, flush)
            rng = (start.start, self.prev.end)
            if passthru:
                return TemplateWrap(parts[0], rng)
            return Template(parts, rng)
        if ty == MINUS or ty == BANG:
            self.read()
            operand = self.parse_with_traversals()
            return Unary("-" if ty == MINUS else "!", operand,
                         (start.start, operand.rng[1]),
                         (start.start, start.end))
        if ty == OBRACK:
            return self.parse_tuple()
        if ty == OBRACE:
            return self.parse_object()
        if not self.recovery:
            if ty == EOF:
                self.error("Missing expression",
                           "Expected the start of an expression, but found "
                           "the end of the file.", self.rng(start))
            else:
                self.error("Invalid expression",
                           "Expected the start of an expression, but found "
                           "an invalid expression token.", self.rng(start))
        self.recovery = True
        return ErrorExpr((start.start, start.end))

    def finish_call(self, name_tok):
        open_ = self.read()
        name = name_tok.text
        name_end = name_tok.end
        while open_.type == DCOLON:
            nn = self.read()
            if nn.type != IDENT:
                self.error("Missing function name",
                           "Function scope resolution symbol :: must be "
                           "followed by a function name in this scope.",
                           self.rng(nn), self.rng(name_tok, nn))
                self.recover_over(OPAREN)
                return ErrorExpr((name_tok.start, nn.end))
            name = name + "::" + nn.text
            name_end = nn.end
            open_ = self.read()
        if open_.type != OPAREN:
            self.error("Missing open parenthesis",
                       "Function selector must be followed by an open "
                       "parenthesis to begin the function call.",
                       self.rng(open_), self.rng(name_tok, open_))
            self.recover_over(OPAREN)
            return ErrorExpr((name_tok.start, open_.end))
        args = []
        expand = False
        self.nl.append(False)
        while True:
            if self.peek().type == CPAREN:
                close = self.read()
                break
            mark = self.mark()
            arg = self.parse_expression()
            args.append(arg)
            if self.recovery and self.errs_since(mark):
                close = self.recover(CPAREN)
                break
            sep = self.read()
            if sep.type == CPAREN:
                close = sep
                break
            if sep.type == ELLIPSIS:
                expand = True
                if self.peek().type != CPAREN:
                    if not self.recovery:
                        self.error("Missing closing parenthesis",
                                   "An expanded function argument (with ...) "
                                   "must be immediately followed by closing "
                                   "parentheses.", self.rng(sep),
                                   self.rng(name_tok, sep))
                    close = self.recover(CPAREN)
                else:
                    close = self.read()
                break
            if sep.type != COMMA:
                if sep.type == EOF:
                    self.error("Unterminated function call",
                               "There is no closing parenthesis for this "
                               "function call before the end of the file. "
                               "This may be caused by incorrect parenthesis "
                               "nesting elsewhere in this file.",
                               self.rng(name_tok, open_))
                else:
                    self.error("Missing argument separator",
                               "A comma is required to separate each "
                               "function argument from the next.",
                               self.rng(sep), self.rng(name_tok, sep))
                close = self.recover(CPAREN)
                break
            if self.peek().type == CPAREN:
                close = self.read()
                break
        self.nl.pop()
        return Call(name, args, expand, (name_tok.start, name_end),
                    (open_.start, open_.end), (name_tok.start, close.end))

    def parse_tuple(self):
        open_ = self.read()
        self.nl.append(False)
        try:
            nxt = self.peek()
            if nxt.type == IDENT and nxt.text == "for":
                return self.finish_for(open_)
            items = []
            while True:
                if self.peek().type == CBRACK:
                    close = self.read()
                    break
                mark = self.mark()
                items.append(self.parse_expression())
                if self.recovery and self.errs_since(mark):
                    close = self.recover(CBRACK)
                    break
                nxt = self.peek()
                if nxt.type == CBRACK:
                    close = self.read()
                    break
                if nxt.type != COMMA:
                    if not self.recovery:
                        if nxt.type == EOF:
                            self.error("Unterminated tuple constructor "
                                       "expression",
                                       "There is no corresponding closing "
                                       "bracket before the end of the file. "
                                       "This may be caused by incorrect "
                                       "bracket nesting elsewhere in this "
                                       "file.", self.rng(open_))
                        else:
                            self.error("Missing item separator",
                                       "Expected a comma to mark the "
                                       "beginning of the next item.",
                                       self.rng(nxt), self.rng(open_, nxt))
                    close = self.recover(CBRACK)
                    break
                self.read()
            return TupleCons(items, (open_.start, close.end))
        finally:
            self.nl.pop()

    def parse_object(self):
        open_ = self.read()
        self.nl.append(False)
        nxt = self.peek()
        is_for = nxt.type == IDENT and nxt.text == "for"
        self.nl.pop()
        if is_for:
            return self.finish_for(open_)
        self.nl.append(True)
        items = []
        try:
            while True:
                nxt = self.peek()
                if nxt.type == NEWLINE:
                    self.read()
                    continue
                if nxt.type == CBRACE:
                    close = self.read()
                    break
                force = nxt.type == OPAREN
                mark = self.mark()
                key = self.parse_expression()
                if self.recovery and self.errs_since(mark):
                    close = self.recover(CBRACE)
                    break
                key = ObjKey(key, force)
                nxt = self.peek()
                if nxt.type not in (EQUAL, COLON):
                    if not self.recovery:
                        if nxt.type in (NEWLINE, COMMA):
                            self.error("Missing attribute value",
                                       "Expected an attribute value, "
                                       'introduced by an equals sign ("=").',
                                       self.rng(nxt), self.rng(open_, nxt))
                        elif nxt.type == IDENT:
                            self.error("Missing key/value separator",
                                       'Expected an equals sign ("=") to mark '
                                       "the beginning of the attribute value. "
                                       "If you intended to given an attribute "
                                       "name containing periods or spaces, "
                                       "write the name in quotes to create a "
                                       "string literal.", self.rng(nxt),
                                       self.rng(open_, nxt))
                        elif nxt.type == EOF:
                            self.error("Unterminated object constructor "
                                       "expression",
                                       "There is no corresponding closing "
                                       "brace before the end of the file. "
                                       "This may be caused by incorrect brace "
                                       "nesting elsewhere in this file.",
                                       self.rng(open_))
                        else:
                            self.error("Missing key/value separator",
                                       'Expected an equals sign ("=") to mark '
                                       "the beginning of the attribute value.",
                                       self.rng(nxt), self.rng(open_, nxt))
                    close = self.recover(CBRACE)
                    break
                self.read()
                mark = self.mark()
                value = self.parse_expression()
                items.append((key, value))
                if self.recovery and self.errs_since(mark):
                    close = self.recover(CBRACE)
                    break
                nxt = self.peek()
                if nxt.type == CBRACE:
                    close = self.read()
                    break
                if nxt.type not in (COMMA, NEWLINE):
                    if not self.recovery:
                        if nxt.type == EOF:
                            self.error("Unterminated object constructor "
                                       "expression",
                                       "There is no corresponding closing "
                                       "brace before the end of the file. "
                                       "This may be caused by incorrect brace "
                                       "nesting elsewhere in this file.",
                                       self.rng(open_))
                        else:
                            self.error("Missing attribute separator",
                                       "Expected a newline or comma to mark "
                                       "the beginning of the next attribute.",
                                       self.rng(nxt), self.rng(open_, nxt))
                    close = self.recover(CBRACE)
                    break
                self.read()
        finally:
            self.nl.pop()
        return ObjectCons(items, (open_.start, close.end))

    def finish_for(self, open_):
        self.nl.append(False)
        try:
            return self._finish_for(open_)
        finally:
            self.nl.pop()

    def _finish_for(self, open_):
        self.read()  # "for"
        make_obj = open_.type == OBRACE
        close_type = CBRACE if make_obj else CBRACK

        def fail(detail):
            tok = self.peek()
            if not self.recovery:
                self.error("Invalid 'for' expression", detail, self.rng(tok),
                           self.rng(open_, tok))
            close = self.recover(close_type)
            return ErrorExpr((open_.start, close.end))

        if self.peek().type != IDENT:
            return fail("For expression requires variable name after 'for'.")
        val_name = self.read().text
        key_name = None
        if self.peek().type == COMMA:
            key_name = val_name
            self.read()
            if self.peek().type != IDENT:
                return fail("For expression requires value variable name "
                            "after comma.")
            val_name = self.read().text
        tok = self.peek()
        if not (tok.type == IDENT and tok.text == "in"):
            return fail("For expression requires the 'in' keyword after its "
                        "name declarations.")
        self.read()
        mark = self.mark()
        coll = self.parse_expression()
        if self.recovery and self.errs_since(mark):
            close = self.recover(close_type)
            return ErrorExpr((open_.start, close.end))
        if self.peek().type != COLON:
            return fail("For expression requires a colon after the "
                        "collection expression.")
        self.read()
        mark = self.mark()
        key_expr = None
        val_expr = self.parse_expression()
        if self.peek().type == FATARROW:
            self.read()
            key_expr = val_expr
            val_expr = self.parse_expression()
        if self.recovery and self.errs_since(mark):
            close = self.recover(close_type)
            return ErrorExpr((open_.start, close.end))
        group = False
        ellipsis = None
        if self.peek().type == ELLIPSIS:
            ellipsis = self.read()
            group = True
        cond = None
        tok = self.peek()
        if tok.type == IDENT and tok.text == "if":
            self.read()
            mark = self.mark()
            cond = self.parse_expression()
            if self.recovery and self.errs_since(mark):
                close = self.recover(close_type)
                return ErrorExpr((open_.start, close.end))
        if self.peek().type == close_type:
            close = self.read()
        else:
            tok = self.peek()
            if not self.recovery:
                self.error("Invalid 'for' expression",
                           "Extra characters after the end of the 'for' "
                           "expression.", self.rng(tok), self.rng(open_, tok))
            close = self.recover(close_type)
        whole = self.rng(open_, close)
        if not make_obj:
            if key_expr is not None:
                self.error("Invalid 'for' expression",
                           "Key expression is not valid when building a "
                           "tuple.", self.rng(key_expr.rng), whole)
            if group:
                self.error("Invalid 'for' expression",
                           "Grouping ellipsis (...) cannot be used when "
                           "building a tuple.", self.rng(ellipsis), whole)
        elif key_expr is None:
            self.error("Invalid 'for' expression",
                       "Key expression is required when building an object.",
                       self.rng(val_expr.rng), whole)
        return For(key_name, val_name, coll, key_expr, val_expr, cond, group,
                   make_obj, (open_.start, close.end),
                   (open_.start, open_.end))

    # -- strings and templates

    def decode_literal(self, tok, quoted):
        """Resolve escapes in a literal chunk, reporting bad ones."""
        text = tok.text
        if "\\" not in text and "$${" not in text and "%%{" not in text:
            return text
        out = []
        last = 0
        for m in _ESCAPE_RE.finditer(text):
            whole = m.group(0)
            if whole[0] != "\\":
                out.append(text[last:m.start()])
                out.append(whole[1:])
                last = m.end()
                continue
            if not quoted:
                continue
            out.append(text[last:m.start()])
            last = m.end()
            rng = self.src.range(tok.start + m.start(), tok.start + m.end())
            sel = m.group(1)
            if sel == "":
                self.error("Invalid escape sequence",
                           "Backslash must be followed by an escape sequence "
                           "selector character.", rng)
                continue
            if sel in _SIMPLE_ESCAPES:
                out.append(_SIMPLE_ESCAPES[sel])
            elif sel[0] == "u":
                if len(sel) != 5:
                    self.error("Invalid escape sequence",
                               "The \\u escape sequence must be followed by "
                               "four hexadecimal digits.", rng)
                    continue
                out.append(chr(int(sel[1:], 16)))
            elif sel[0] == "U":
                if len(sel) != 9:
                    self.error("Invalid escape sequence",
                               "The \\U escape sequence must be followed by "
                               "eight hexadecimal digits.", rng)
                    continue
                cp = int(sel[1:], 16)
                if cp > 0x10FFFF or 0xD800 <= cp <= 0xDFFF:
                    self.error("Invalid escape sequence",
                               "Cannot encode character U+%04x in UTF-8." % cp,
                               rng)
                    continue
                out.append(chr(cp))
            else:
                self.error("Invalid escape sequence",
                           "The symbol %s is not a valid escape sequence "
                           "selector." % go_quote(sel), rng)
                out.append(sel)
        out.append(text[last:])
        return "".join(out)

    def parse_quoted_string_literal(self):
        """A quoted string that may not contain templates (block labels)."""
        oq = self.read()
        buf = []
        while True:
            tok = self.read()
            if tok.type == CQUOTE:
                end = tok.end
                break
            if tok.type == QLIT:
                buf.append(self.decode_literal(tok, True))
                continue
            if tok.type in (INTERP, CONTROL):
                which = "$" if tok.type == INTERP else "%"
                self.error("Invalid string literal",
                           "Template sequences are not allowed in this "
                           "string. To include a literal %s, double it (as "
                           '"%s%s") to escape it.' % (go_quote(which), which,
                                                      which),
                           self.rng(tok), self.rng(oq, tok))
                buf.append(which + "{ ... }")
                self.recover(SEQEND)
                continue
            if tok.type == EOF:
                self.error("Unterminated string literal",
                           "Unable to find the closing quote mark before the "
                           "end of the file.", self.rng(tok),
                           self.rng(oq, tok))
                end = tok.end
                break
            self.error("Invalid string literal",
                       "This item is not valid in a string literal.",
                       self.rng(tok), self.rng(oq, tok))
            self.recover(CQUOTE)
            end = tok.end
            break
        return "".join(buf), (oq.start, end)

    def parse_template_inner(self, end, flush):
        parts = []
        start = self.peek()
        start_rng = (start.start, start.end)
        ltrim_next = False
        next_can_trim = False
        end_rng = None
        while True:
            tok = self.read()
            if tok.type == end:
                end_rng = (tok.start, tok.end)
                break
            ltrim = ltrim_next
            ltrim_next = False
            can_trim = next_can_trim
            next_can_trim = False
            ty = tok.type
            if ty == STRLIT or ty == QLIT:
                s = self.decode_literal(tok, ty == QLIT)
                if ltrim:
                    s = s.lstrip()
                parts.append(_TLit(s, (tok.start, tok.end)))
                next_can_trim = True
            elif ty == INTERP:
                if can_trim and tok.text.endswith("~") and parts and \
                        isinstance(parts[-1], _TLit):
                    parts[-1].val = parts[-1].val.rstrip()
                self.nl.append(False)
                expr = self.parse_expression()
                close = self.peek()
                if close.type != SEQEND:
                    if not self.recovery:
                        self._interp_close_error(close, end, start_rng)
                    close = self.recover(SEQEND)
                else:
                    self.read()
                    if close.text.startswith("~"):
                        ltrim_next = True
                self.nl.pop()
                parts.append(_TInterp(expr, (tok.start, close.end)))
            elif ty == CONTROL:
                if can_trim and tok.text.endswith("~") and parts and \
                        isinstance(parts[-1], _TLit):
                    parts[-1].val = parts[-1].val.rstrip()
                self.nl.append(False)
                ctl = self._parse_directive(tok, start_rng)
                self.nl.pop()
                if ctl is None:
                    continue
                if isinstance(ctl, tuple):
                    ctl, ltrim_next = ctl
                parts.append(ctl)
            else:
                if not self.recovery:
                    self.error("Unterminated template string",
                               "No closing marker was found for the string.",
                               self.rng(tok), self.rng(start_rng, tok))
                final = self.recover(end)
                end_rng = (final.start, final.end)
                break
        if not parts:
            s = start_rng[0]
            parts.append(_TLit("", (s, s)))
        parts.append(_TEnd(end_rng))
        if flush:
            _flush_heredoc(parts)
        _meld_literals(parts)
        passthru = len(parts) == 2 and isinstance(parts[0], _TInterp)
        exprs = _TemplateBuilder(self, parts).build()
        return exprs, passthru

    def _interp_close_error(self, close, end, start_rng):
        if close.type == EOF:
            self.error("Unclosed template interpolation sequence",
                       "There is no closing brace for this interpolation "
                       "sequence before the end of the file. This might be "
                       "caused by incorrect nesting inside the given "
                       "expression.", self.rng(start_rng))
        elif close.type == COLON:
            self.error("Extra characters after interpolation expression",
                       "Template interpolation doesn't expect a colon at "
                       "this location. Did you intend this to be a literal "
                       "sequence to be processed as part of another "
                       'language? If so, you can escape it by starting with '
                       '"$${" instead of just "${".', self.rng(close),
                       self.rng(start_rng, close))
        elif close.type in (CQUOTE, OQUOTE) and end == CQUOTE:
            self.error("Unclosed template interpolation sequence",
                       "There is no closing brace for this interpolation "
                       "sequence before the end of the quoted template. "
                       "This might be caused by incorrect nesting inside "
                       "the given expression.", self.rng(start_rng))
        else:
            self.error("Extra characters after interpolation expression",
                       "Expected a closing brace to end the interpolation "
                       "expression, but found extra characters.\n\nThis can "
                       "happen when you include interpolation syntax for "
                       "another language, such as shell scripting, but "
                       "forget to escape the interpolation start token. If "
                       "this is an embedded sequence for another language, "
                       'escape it by starting with "$${" instead of just '
                       '"${".', self.rng(close), self.rng(start_rng, close))

    def _parse_directive(self, opener, start_rng):
        kw = self.peek()
        if kw.type != IDENT:
            if not self.recovery:
                self.error("Invalid template directive",
                           'A template directive keyword ("if", "for", etc) '
                           "is expected at the beginning of a %{ sequence.",
                           self.rng(kw), self.rng(opener, kw))
            self.recover(SEQEND)
            return None
        self.read()
        word = kw.text
        ctl = None
        if word == "if":
            cond = self.parse_expression()
            ctl = _TCtl("if", (opener.start, self.peek().end), cond=cond)
        elif word in ("else", "endif", "endfor"):
            ctl = _TCtl(word, (opener.start, self.peek().end))
        elif word == "for":
            if self.peek().type != IDENT:
                if not self.recovery:
                    self.error("Invalid 'for' directive",
                               "For directive requires variable name after "
                               "'for'.", self.rng(self.peek()))
                self.recover(SEQEND)
                return None
            val_name = self.read().text
            key_name = None
            if self.peek().type == COMMA:
                key_name = val_name
                self.read()
                if self.peek().type != IDENT:
                    if not self.recovery:
                        self.error("Invalid 'for' directive",
                                   "For directive requires value variable "
                                   "name after comma.", self.rng(self.peek()))
                    self.recover(SEQEND)
                    return None
                val_name = self.read().text
            tok = self.peek()
            if not (tok.type == IDENT and tok.text == "in"):
                if not self.recovery:
                    self.error("Invalid 'for' directive",
                               "For directive requires 'in' keyword after "
                               "names.", self.rng(tok))
                self.recover(SEQEND)
                return None
            self.read()
            coll = self.parse_expression()
            ctl = _TCtl("for", (opener.start, self.peek().end),
                        key_var=key_name, val_var=val_name, coll=coll)
        else:
            if not self.recovery:
                hint = name_suggestion(word, ["if", "for", "else", "endif",
                                              "endfor"])
                hint = " Did you mean %s?" % go_quote(hint) if hint else ""
                self.error("Invalid template control keyword",
                           "%s is not a valid template control keyword.%s" %
                           (go_quote(word), hint), self.rng(kw),
                           self.rng(opener, kw))
            self.recover(SEQEND)
            return None
        close = self.peek()
        ltrim = False
        if close.type != SEQEND:
            if not self.recovery:
                self.error("Extra characters in %s marker" % word,
                           "Expected a closing brace to end the sequence, "
                           "but found extra characters.", self.rng(close),
                           self.rng(start_rng, close))
            self.recover(SEQEND)
        else:
            self.read()
            ltrim = close.text.startswith("~")
        ctl.rng = (ctl.rng[0], close.end)
        return ctl, ltrim


def _flush_heredoc(parts):
    """Apply ``<<-`` indentation stripping to line-leading literals.

    The smallest indentation among non-blank lines is removed from every
    line.  It is decided on the literal source, so interpolated values
    with leading spaces cannot change it; a line starting with an
    interpolation counts as not indented at all.
    """
    min_spaces = None
    newline = True
    adjust = []
    for p in parts:
        if newline:
            newline = False
            if isinstance(p, _TLit):
                trimmed = p.val.lstrip()
                if not trimmed and p.val.endswith("\n"):
                    spaces = None
                else:
                    spaces = len(p.val) - len(trimmed)
                    adjust.append(p)
            elif isinstance(p, _TEnd):
                break
            else:
                spaces = 0
            if spaces is not None and (min_spaces is None or
                                       spaces < min_spaces):
                min_spaces = spaces
        if isinstance(p, _TLit) and p.val.endswith("\n"):
            newline = True
    if min_spaces:
        for p in adjust:
            p.val = p.val[min_spaces:]


def _meld_literals(parts):
    i = 1
    while i < len(parts):
        a, b = parts[i - 1], parts[i]
        if isinstance(a, _TLit) and isinstance(b, _TLit):
            a.val += b.val
            a.rng = (a.rng[0], b.rng[1])
            del parts[i]
        else:
            i += 1


class _TemplateBuilder:
    """Turn flat template tokens into expressions, nesting if/for."""

    def __init__(self, parser, parts):
        self.p = parser
        self.parts = parts
        self.i = 0

    def peek(self):
        return self.parts[self.i]

    def read(self):
        t = self.parts[self.i]
        if not isinstance(t, _TEnd):
            self.i += 1
        return t

    def build(self):
        exprs = []
        while not isinstance(self.peek(), _TEnd):
            exprs.append(self.expr())
        return exprs

    def expr(self):
        t = self.read()
        if isinstance(t, _TLit):
            return Lit(t.val, t.rng)
        if isinstance(t, _TInterp):
            return Interp(t.expr, t.rng)
        if isinstance(t, _TCtl) and t.kind == "if":
            return self.finish_if(t)
        if isinstance(t, _TCtl) and t.kind == "for":
            return self.finish_for(t)
        if isinstance(t, _TEnd):
            self.p.error("Unexpected end of template",
                         "The control directives within this template are "
                         "unbalanced.", self.p.rng(t.rng))
            return ErrorExpr(t.rng)
        self.p.error("Unexpected %s directive" % t.kind,
                     "The control directives within this template are "
                     "unbalanced.", self.p.rng(t.rng))
        return ErrorExpr(t.rng)

    def finish_if(self, opener):
        then, other = [], []
        current = then
        while True:
            t = self.peek()
            if isinstance(t, _TEnd):
                self.p.error("Unexpected end of template",
                             "The if directive at %s is missing its "
                             "corresponding endif directive." %
                             self.p.rng(opener.rng), self.p.rng(t.rng))
                return ErrorExpr(t.rng)
            if isinstance(t, _TCtl) and t.kind in ("else", "endif", "endfor"):
                self.read()
                if t.kind == "else" and current is then:
                    current = other
                    continue
                if t.kind == "endif":
                    return TemplateIf(
                        opener.cond, Template(then, opener.rng),
                        Template(other, opener.rng),
                        (opener.rng[0], t.rng[1]))
                if t.kind == "else":
                    self.p.error("Unexpected else directive",
                                 "Already in the else clause for the if "
                                 "started at %s." % self.p.rng(opener.rng),
                                 self.p.rng(t.rng))
                else:
                    self.p.error("Unexpected %s directive" % t.kind,
                                 "Expecting an endif directive for the if "
                                 "started at %s." % self.p.rng(opener.rng),
                                 self.p.rng(t.rng))
                return ErrorExpr(t.rng)
            current.append(self.expr())

    def finish_for(self, opener):
        body = []
        while True:
            t = self.peek()
            if isinstance(t, _TEnd):
                self.p.error("Unexpected end of template",
                             "The for directive at %s is missing its "
                             "corresponding endfor directive." %
                             self.p.rng(opener.rng), self.p.rng(t.rng))
                return ErrorExpr(t.rng)
            if isinstance(t, _TCtl) and t.kind in ("else", "endif", "endfor"):
                self.read()
                if t.kind == "endfor":
                    return TemplateFor(opener.key_var, opener.val_var,
                                       opener.coll,
                                       Template(body, opener.rng),
                                       (opener.rng[0], t.rng[1]))
                if t.kind == "else":
                    self.p.error("Unexpected else directive",
                                 "An else clause is not expected for a for "
                                 "directive.", self.p.rng(t.rng))
                else:
                    self.p.error("Unexpected %s directive" % t.kind,
                                 "Expecting an endfor directive corresponding "
                                 "to the for directive at %s." %
                                 self.p.rng(opener.rng), self.p.rng(t.rng))
                return ErrorExpr(t.rng)
            body.append(self.expr())


def _parse_number(text):
    if "." in text or "e" in text or "E" in text:
        f = float(text)
        return int(f) if f.is_integer() and abs(f) < 2 ** 63 else f
    return int(text)


def parse(text, filename):
    """Parse a whole file; return (Body, Source) or raise HCLError.

    Tokens that never belong in HCL are reported before grammar errors,
    as hclsyntax does, and a file with any syntax error is rejected as a
    whole.
    """
    src = Source(text, filename)
    toks = lex(src)
    diags = check_invalid_tokens(src, toks)
    parser = Parser(src, toks)
    body = parser.parse_file()
    diags.extend(parser.diags)
    if has_errors(diags):
        raise HCLError(diags)
    return body, src


def parse_expression(text, filename):
    """Parse a standalone expression (used for -var values)."""
    src = Source(text, filename)
    toks = lex(src)
    diags = check_invalid_tokens(src, toks)
    parser = Parser(src, toks)
    parser.nl = [False]
    expr = parser.parse_expression()
    tok = parser.peek()
    if tok.type != EOF and not parser.recovery:
        parser.error("Extra characters after expression",
                     "An expression was successfully parsed, but extra "
                     "characters were found after it.", parser.rng(tok))
    diags.extend(parser.diags)
    if has_errors(diags):
        raise HCLError(diags)
    return expr, src


# ---------------------------------------------------------------------------
# Values and conversions
#
# Values are plain Python data: str, int/float, bool, None for null, list
# for tuples/lists, dict for objects/maps, and the UNKNOWN singleton for a
# value that is not known (an unset variable, or the result of an
# expression that failed).


class _Unknown:
    __slots__ = ()

    def __repr__(self):
        return "UNKNOWN"


UNKNOWN = _Unknown()


def is_number(v):
    return (isinstance(v, (int, float)) and not isinstance(v, bool))


def type_name(v):
    """The cty friendly type name of a value, for messages."""
    if v is None:
        return "dynamic"
    if isinstance(v, bool):
        return "bool"
    if is_number(v):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "tuple"
    if isinstance(v, dict):
        return "object"
    return "dynamic"


def format_number(v):
    """A number as cty writes it: no exponent, no trailing ".0"."""
    if isinstance(v, int):
        return str(v)
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v.is_integer():
        return str(int(v))
    text = format(Decimal(repr(v)), "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


_NUMBER_TEXT = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\Z")


class ConversionError(Exception):
    """A value could not be converted; the text is cty's message."""


def parse_number_text(s):
    if not _NUMBER_TEXT.match(s):
        raise ConversionError("a number is required")
    return _parse_number(s.lstrip("+")) if not s.startswith(".") \
        else _parse_number("0" + s)


def to_string(v):
    if v is None or v is UNKNOWN or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if is_number(v):
        return format_number(v)
    raise ConversionError("string required")


def to_number(v):
    if v is None or v is UNKNOWN:
        return v
    if isinstance(v, bool):
        raise ConversionError("number required")
    if is_number(v):
        return v
    if isinstance(v, str):
        return parse_number_text(v)
    raise ConversionError("number required")


def to_bool(v):
    if v is None or v is UNKNOWN or isinstance(v, bool):
        return v
    if isinstance(v, str):
        if v in ("true", "1"):
            return True
        if v in ("false", "0"):
            return False
        if v.lower() in ("true", "false"):
            raise ConversionError('a bool is required; to convert from '
                                  'string, use lowercase "%s"' % v.lower())
        raise ConversionError("a bool is required")
    raise ConversionError("bool required")


# Type constraints, as written in variable blocks: ("string",),
# ("list", T), ("map", T), ("set", T), ("object", {name: T}),
# ("tuple", [T...]), ("any",).
ANY = ("any",)
STRING = ("string",)
NUMBER_T = ("number",)
BOOL = ("bool",)


def type_friendly(t):
    kind = t[0]
    if kind in ("string", "number", "bool"):
        return kind
    if kind == "any":
        return "any type"
    if kind in ("list", "set", "map"):
        return "%s of %s" % (kind, type_friendly(t[1]))
    return kind


def convert(v, t):
    """Convert a value to a type constraint, cty style."""
    kind = t[0]
    if v is None or v is UNKNOWN or kind == "any":
        return v
    if kind == "string":
        return to_string(v)
    if kind == "number":
        return to_number(v)
    if kind == "bool":
        return to_bool(v)
    if kind in ("list", "set"):
        if not isinstance(v, list):
            raise ConversionError("%s required" % type_friendly(t))
        out = [convert(x, t[1]) for x in v]
        if kind == "set":
            uniq = []
            for x in out:
                if not any(values_equal(x, y) for y in uniq):
                    uniq.append(x)
            out = uniq
        return out
    if kind == "map":
        if not isinstance(v, dict):
            raise ConversionError("%s required" % type_friendly(t))
        return {k: convert(x, t[1]) for k, x in v.items()}
    if kind == "object":
        if not isinstance(v, dict):
            raise ConversionError("object required")
        out = {}
        for name, at in t[1].items():
            if name not in v:
                raise ConversionError('attribute "%s" is required' % name)
            out[name] = convert(v[name], at)
        return out
    if kind == "tuple":
        if not isinstance(v, list) or len(v) != len(t[1]):
            raise ConversionError("tuple required")
        return [convert(x, et) for x, et in zip(v, t[1])]
    return v


def values_equal(a, b):
    """cty equality: values of different kinds are never equal."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(values_equal(x, y)
                                        for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(values_equal(a[k], b[k])
                                            for k in a)
    return type(a) is type(b) and a == b


def has_unknown(v):
    if v is UNKNOWN:
        return True
    if isinstance(v, list):
        return any(has_unknown(x) for x in v)
    if isinstance(v, dict):
        return any(has_unknown(x) for x in v.values())
    return False


def type_expr(expr, src):
    """Read a ``type = ...`` constraint; return (type, diags)."""
    def bad(e, detail):
        return None, [Diagnostic("Invalid type specification", detail,
                                 src.range(*e.rng))]

    if isinstance(expr, Traversal) and not expr.steps:
        name = expr.root
        if name in ("string", "number", "bool", "any"):
            return (name,), []
        if name in ("list", "map", "set"):
            return bad(expr, "The %s type constructor requires one argument "
                       "specifying the element type." % name)
        return bad(expr, "The keyword %s is not a valid type specification."
                   % go_quote(name))
    if isinstance(expr, Call):
        name = expr.name
        if name in ("list", "map", "set"):
            if len(expr.args) != 1:
                return bad(expr, "The %s type constructor requires one "
                           "argument specifying the element type." % name)
            et, diags = type_expr(expr.args[0], src)
            return ((name, et) if et else None), diags
        if name == "object":
            if len(expr.args) != 1 or not isinstance(expr.args[0], ObjectCons):
                return bad(expr, "The object type constructor requires one "
                           "argument specifying the attribute types as a map.")
            attrs = {}
            for k, ve in expr.args[0].items:
                kname = k.literal_name()
                if kname is None and isinstance(k.wrapped, Template) and \
                        k.wrapped.is_string_literal():
                    kname = k.wrapped.parts[0].value
                if kname is None:
                    return bad(k, "Object constructor map keys must be "
                               "attribute names.")
                at, diags = type_expr(ve, src)
                if at is None:
                    return None, diags
                attrs[kname] = at
            return ("object", attrs), []
        if name == "tuple":
            if len(expr.args) != 1 or not isinstance(expr.args[0], TupleCons):
                return bad(expr, "The tuple type constructor requires one "
                           "argument specifying the element types as a list.")
            ets = []
            for e in expr.args[0].items:
                et, diags = type_expr(e, src)
                if et is None:
                    return None, diags
                ets.append(et)
            return ("tuple", ets), []
        return bad(expr, "Keyword %s is not a valid type constructor."
                   % go_quote(name))
    return bad(expr, "A type specification is either a primitive type "
               "keyword (bool, number, string) or a complex type "
               "constructor call, like list(string).")


def implied_type(v):
    """The type a default value gives an untyped variable."""
    if isinstance(v, bool):
        return BOOL
    if is_number(v):
        return NUMBER_T
    if isinstance(v, str):
        return STRING
    if isinstance(v, list):
        return ("tuple", [implied_type(x) for x in v])
    if isinstance(v, dict):
        return ("object", {k: implied_type(x) for k, x in v.items()})
    return ANY


# ---------------------------------------------------------------------------
# Evaluation


class EvalContext:
    """Variables and functions visible to expressions.

    ``passthrough`` turns on Nomad's handling of undefined roots: the
    reference is kept as ``${...}`` text instead of being an error.
    """

    def __init__(self, variables=None, functions=None, passthrough=False,
                 parent=None):
        self.variables = variables or {}
        self.functions = functions
        self.passthrough = passthrough
        self.parent = parent

    def child(self, variables):
        return EvalContext(variables, None, False, self)

    def lookup(self, name):
        ctx = self
        while ctx is not None:
            if name in ctx.variables:
                return True, ctx.variables[name]
            ctx = ctx.parent
        return False, None

    def get_function(self, name):
        ctx = self
        while ctx is not None:
            if ctx.functions is not None and name in ctx.functions:
                return ctx.functions[name]
            ctx = ctx.parent
        return None

    def all_functions(self):
        names = set()
        ctx = self
        while ctx is not None:
            if ctx.functions:
                names.update(ctx.functions)
            ctx = ctx.parent
        return sorted(names)

    def passes_through(self):
        ctx = self
        while ctx is not None:
            if ctx.passthrough:
                return True
            ctx = ctx.parent
        return False


class FunctionError(Exception):
    """Raised by a function implementation; ``param`` names a bad arg."""

    def __init__(self, message, param=None):
        super().__init__(message)
        self.param = param


class Function:
    """A callable for expressions: params are (name, kind) pairs.

    kind is one of "string", "number", "bool", "list", "map", "any"; args
    are converted to it before ``impl`` is called.  ``var`` is the
    variadic parameter, if any.  ``allow_null`` is True when every
    argument may be null, "var" when only the variadic ones may.
    """

    def __init__(self, params, impl, var=None, allow_null=False):
        self.params = params
        self.impl = impl
        self.var = var
        self.allow_null = allow_null


class Evaluator:
    """Evaluates expressions of one source file, collecting diagnostics."""

    def __init__(self, src, diags=None):
        self.src = src
        self.diags = diags if diags is not None else []

    def rng(self, r):
        return self.src.range(r[0], r[1])

    def error(self, summary, detail, subject, context=None):
        self.diags.append(Diagnostic(summary, detail, self.rng(subject),
                                     self.rng(context) if context else None))

    def eval(self, e, ctx):
        method = getattr(self, "eval_" + type(e).__name__)
        return method(e, ctx)

    # -- simple forms

    def eval_Lit(self, e, ctx):
        return e.value

    def eval_ErrorExpr(self, e, ctx):
        return UNKNOWN

    def eval_Paren(self, e, ctx):
        return self.eval(e.expr, ctx)

    def eval_AnonSymbol(self, e, ctx):
        return ctx.lookup("\x00item")[1]

    def eval_ObjKey(self, e, ctx):
        name = e.literal_name()
        if name is not None:
            return name
        return self.eval(e.wrapped, ctx)

    # -- templates

    def _passthrough_text(self, expr, ctx):
        """Raw source of a reference whose root the context does not know.

        Nomad keeps such references for runtime interpolation; the text is
        taken verbatim from the file so that ``${attr.a-b.0}`` survives in
        exactly the form it was written.
        """
        root = expr
        while isinstance(root, RelTraversal):
            root = root.source
        if not isinstance(root, Traversal) or ctx is None:
            return None
        found, _ = ctx.lookup(root.root)
        if found or not ctx.passes_through():
            return None
        return self.src.text[expr.rng[0]:expr.rng[1]]

    def eval_Interp(self, e, ctx):
        return self.eval(e.expr, ctx)

    def _template_part(self, part, ctx):
        if isinstance(part, Interp):
            if self._passthrough_text(part.expr, ctx) is not None:
                return self.src.text[part.rng[0]:part.rng[1]]
            v = self.eval(part.expr, ctx)
        else:
            v = self.eval(part, ctx)
        if v is UNKNOWN:
            return UNKNOWN
        if v is None:
            self.error("Invalid template interpolation value",
                       "The expression result is null. Cannot include a null "
                       "value in a string template.", part.rng)
            return UNKNOWN
        try:
            return to_string(v)
        except ConversionError as exc:
            self.error("Invalid template interpolation value",
                       "Cannot include the given value in a string template: "
                       "%s." % exc, part.rng)
            return UNKNOWN

    def eval_Template(self, e, ctx):
        out = []
        unknown = False
        for part in e.parts:
            s = self._template_part(part, ctx)
            if s is UNKNOWN:
                unknown = True
            else:
                out.append(s)
        return UNKNOWN if unknown else "".join(out)

    def eval_TemplateWrap(self, e, ctx):
        text = self._passthrough_text(e.interp.expr, ctx)
        if text is not None:
            return self.src.text[e.interp.rng[0]:e.interp.rng[1]]
        return self.eval(e.interp.expr, ctx)

    def eval_TemplateIf(self, e, ctx):
        c = self._condition(e.cond, ctx)
        if c is UNKNOWN:
            return UNKNOWN
        return self.eval(e.then if c else e.other, ctx)

    def eval_TemplateFor(self, e, ctx):
        coll = self.eval(e.coll, ctx)
        if coll is UNKNOWN:
            return UNKNOWN
        out = []
        for k, v in self._iterate(coll, e.coll):
            scope = {e.val_var: v}
            if e.key_var:
                scope[e.key_var] = k
            s = self.eval(e.body, ctx.child(scope))
            if s is UNKNOWN:
                return UNKNOWN
            out.append(s)
        return "".join(out)

    # -- references

    def eval_Traversal(self, e, ctx):
        if ctx is None:
            self.error("Variables not allowed",
                       "Variables may not be used here.", e.rng)
            return UNKNOWN
        found, v = ctx.lookup(e.root)
        if not found:
            if ctx.passes_through():
                return "${" + self.src.text[e.rng[0]:e.rng[1]] + "}"
            self.error("Unknown variable",
                       "There is no variable named %s." % go_quote(e.root),
                       e.root_rng)
            return UNKNOWN
        return self._apply_steps(v, e.steps)

    def eval_RelTraversal(self, e, ctx):
        text = self._passthrough_text(e, ctx)
        if text is not None:
            return "${" + text + "}"
        return self._apply_steps(self.eval(e.source, ctx), e.steps)

    def _apply_steps(self, v, steps):
        for kind, key, rng in steps:
            if v is UNKNOWN:
                return UNKNOWN
            if kind == "attr":
                v = self._get_attr(v, key, rng)
            else:
                v = self._index(v, key, rng)
        return v

    def _get_attr(self, v, name, rng):
        if v is None:
            self.error("Attempt to get attribute from null value",
                       "This value is null, so it does not have any "
                       "attributes.", rng)
            return UNKNOWN
        if isinstance(v, dict):
            if name not in v:
                self.error("Unsupported attribute",
                           "This object does not have an attribute named %s."
                           % go_quote(name), rng)
                return UNKNOWN
            return v[name]
        if isinstance(v, list):
            self.error("Unsupported attribute",
                       "This value does not have any attributes.", rng)
            return UNKNOWN
        self.error("Unsupported attribute",
                   "Can't access attributes on a primitive-typed value (%s)."
                   % type_name(v), rng)
        return UNKNOWN

    def _index(self, v, key, rng, context=None):
        if v is UNKNOWN or key is UNKNOWN:
            return UNKNOWN
        if v is None:
            self.error("Attempt to index null value",
                       "This value is null, so it does not have any indices.",
                       rng, context)
            return UNKNOWN
        if isinstance(v, list):
            try:
                n = to_number(key)
            except ConversionError:
                n = None
            if n is None or not float(n).is_integer() or \
                    not 0 <= n < len(v):
                self.error("Invalid index",
                           "The given key does not identify an element in "
                           "this collection value.", rng, context)
                return UNKNOWN
            return v[int(n)]
        if isinstance(v, dict):
            try:
                k = to_string(key)
            except ConversionError:
                k = None
            if k is None or k not in v:
                self.error("Invalid index",
                           "The given key does not identify an element in "
                           "this collection value.", rng, context)
                return UNKNOWN
            return v[k]
        self.error("Invalid index",
                   "This value does not have any indices.", rng, context)
        return UNKNOWN

    def eval_Index(self, e, ctx):
        coll = self.eval(e.coll, ctx)
        key = self.eval(e.key, ctx)
        return self._index(coll, key, (e.open_rng[0], e.rng[1]), e.rng)

    def eval_Splat(self, e, ctx):
        src = self.eval(e.source, ctx)
        if src is UNKNOWN:
            return UNKNOWN
        if src is None:
            return []
        items = src if isinstance(src, list) else [src]
        out = []
        for item in items:
            out.append(self.eval(e.each, ctx.child({"\x00item": item})))
        return out

    # -- constructors

    def eval_TupleCons(self, e, ctx):
        return [self.eval(x, ctx) for x in e.items]

    def eval_ObjectCons(self, e, ctx):
        out = {}
        unknown = False
        for k, v in e.items:
            key = self.eval(k, ctx)
            val = self.eval(v, ctx)
            if key is UNKNOWN:
                unknown = True
                continue
            if key is None:
                self.error("Null value as key",
                           "Can't use a null value as a key.", k.rng)
                continue
            try:
                key = to_string(key)
            except ConversionError as exc:
                self.error("Incorrect key type",
                           "Can't use this value as a key: %s." % exc, k.rng)
                continue
            out[key] = val
        return UNKNOWN if unknown else out

    def _iterate(self, coll, expr):
        if isinstance(coll, list):
            return list(enumerate(coll))
        if isinstance(coll, dict):
            return [(k, coll[k]) for k in sorted(coll)]
        if coll is None:
            self.error("Iteration over null value",
                       "A null value cannot be used as the collection in a "
                       "'for' expression.", expr.rng)
        else:
            self.error("Iteration over non-iterable value",
                       "A value of type %s cannot be used as the collection "
                       "in a 'for' expression." % type_name(coll), expr.rng)
        return []

    def eval_For(self, e, ctx):
        coll = self.eval(e.coll, ctx)
        if coll is UNKNOWN:
            return UNKNOWN
        out_list = []
        out_obj = {}
        for k, v in self._iterate(coll, e.coll):
            scope = {e.val_var: v}
            if e.key_var:
                scope[e.key_var] = k
            child = ctx.child(scope)
            if e.cond is not None:
                c = self._condition(e.cond, child)
                if c is UNKNOWN:
                    return UNKNOWN
                if not c:
                    continue
            val = self.eval(e.val_expr, child)
            if not e.make_obj:
                out_list.append(val)
                continue
            key = self.eval(e.key_expr, child)
            if key is UNKNOWN:
                return UNKNOWN
            try:
                key = to_string(key)
            except ConversionError as exc:
                self.error("Invalid object key",
                           "Key expression in 'for' expression must be a "
                           "string: %s." % exc, e.key_expr.rng)
                continue
            if e.group:
                out_obj.setdefault(key, []).append(val)
            elif key in out_obj:
                self.error("Duplicate object key",
                           "Two different items produced the key %s in this "
                           "'for' expression. If duplicates are expected, "
                           "use the ellipsis (...) after the value expression "
                           "to enable grouping by key." % go_quote(key),
                           e.key_expr.rng, e.rng)
            else:
                out_obj[key] = val
        return out_obj if e.make_obj else out_list

    # -- operators

    def _condition(self, expr, ctx):
        v = self.eval(expr, ctx)
        if v is UNKNOWN:
            return UNKNOWN
        if v is None:
            self.error("Null condition",
                       "The condition value is null. Conditions must either "
                       "be true or false.", expr.rng)
            return UNKNOWN
        try:
            return to_bool(v)
        except ConversionError as exc:
            self.error("Incorrect condition type",
                       "The condition expression must be of type bool: %s."
                       % exc, expr.rng)
            return UNKNOWN

    def eval_Cond(self, e, ctx):
        c = self._condition(e.cond, ctx)
        if c is UNKNOWN:
            return UNKNOWN
        return self.eval(e.true if c else e.false, ctx)

    def _operand(self, v, side, expr, whole, conv):
        try:
            return conv(v)
        except ConversionError as exc:
            self.error("Invalid operand",
                       "Unsuitable value for %s operand: %s." % (side, exc),
                       expr.rng, whole.rng)
            return UNKNOWN

    def eval_Binary(self, e, ctx):
        lhs = self.eval(e.lhs, ctx)
        rhs = self.eval(e.rhs, ctx)
        op = e.op
        if op in ("==", "!="):
            if lhs is UNKNOWN or rhs is UNKNOWN:
                return UNKNOWN
            eq = values_equal(lhs, rhs)
            return eq if op == "==" else not eq
        conv = to_bool if op in ("&&", "||") else to_number
        a = self._operand(lhs, "left", e.lhs, e, conv)
        b = self._operand(rhs, "right", e.rhs, e, conv)
        if a is UNKNOWN or b is UNKNOWN:
            return UNKNOWN
        if a is None or b is None:
            self.error("Invalid operand",
                       "Unsuitable value for %s operand: argument must not "
                       "be null." % ("left" if a is None else "right"),
                       (e.lhs if a is None else e.rhs).rng, e.rng)
            return UNKNOWN
        try:
            return self._arith(op, a, b, e)
        except (ArithmeticError, ValueError) as exc:
            self.error("Operation failed", "Error during operation: %s." % exc,
                       e.rng)
            return UNKNOWN

    def _arith(self, op, a, b, e):
        if op == "&&":
            return a and b
        if op == "||":
            return a or b
        if op == "+":
            return _norm_number(a + b)
        if op == "-":
            return _norm_number(a - b)
        if op == "*":
            return _norm_number(a * b)
        if op in ("/", "%"):
            if b == 0:
                self.error("Operation failed",
                           "Error during operation: can't %s by zero." %
                           ("divide" if op == "/" else "modulo"), e.rng)
                return UNKNOWN
            if op == "/":
                if isinstance(a, int) and isinstance(b, int) and a % b == 0:
                    return a // b
                return _norm_number(a / b)
            return _norm_number(math.fmod(a, b))
        if op == "<":
            return a < b
        if op == "<=":
            return a <= b
        if op == ">":
            return a > b
        return a >= b

    def eval_Unary(self, e, ctx):
        v = self.eval(e.val, ctx)
        conv = to_number if e.op == "-" else to_bool
        v = self._operand(v, "unary", e.val, e, conv)
        if v is UNKNOWN or v is None:
            return UNKNOWN
        return _norm_number(-v) if e.op == "-" else not v

    # -- function calls

    def eval_Call(self, e, ctx):
        if ctx is None:
            self.error("Function calls not allowed",
                       "Functions may not be called here.", e.name_rng)
            return UNKNOWN
        if e.name in ("try", "can") and ctx.get_function(e.name) is not None:
            return self._try_can(e, ctx)
        fn = ctx.get_function(e.name)
        if fn is None:
            hint = name_suggestion(e.name, ctx.all_functions())
            hint = " Did you mean %s?" % go_quote(hint) if hint else ""
            self.error("Call to unknown function",
                       "There is no function named %s.%s" %
                       (go_quote(e.name), hint), e.name_rng, e.rng)
            return UNKNOWN
        args = [self.eval(a, ctx) for a in e.args]
        if e.expand_final and args:
            last = args.pop()
            if last is UNKNOWN:
                return UNKNOWN
            if not isinstance(last, list):
                self.error("Invalid expanding argument value",
                           "The expanding argument (indicated by ...) must "
                           "be of a tuple, list, or set type.",
                           e.args[-1].rng, e.rng)
                return UNKNOWN
            args.extend(last)
        return self._call(fn, e, args)

    def _call(self, fn, e, args):
        nparams = len(fn.params)
        if len(args) < nparams:
            missing = fn.params[len(args)][0]
            self.error("Not enough function arguments",
                       "Function %s expects %d argument(s). Missing value "
                       "for %s." % (go_quote(e.name), nparams,
                                    go_quote(missing)),
                       (e.rng[1] - 1, e.rng[1]), e.rng)
            return UNKNOWN
        if len(args) > nparams and fn.var is None:
            extra = e.args[nparams] if nparams < len(e.args) else e
            self.error("Too many function arguments",
                       "Function %s expects only %d argument(s)." %
                       (go_quote(e.name), nparams), extra.rng, e.rng)
            return UNKNOWN
        converted = []
        for i, v in enumerate(args):
            pname, kind = fn.params[i] if i < nparams else fn.var
            arg_expr = e.args[min(i, len(e.args) - 1)] if e.args else e
            if v is UNKNOWN or has_unknown(v):
                return UNKNOWN
            nullable = fn.allow_null is True or (
                fn.allow_null == "var" and i >= nparams)
            if v is None and not nullable:
                self.error("Invalid function argument",
                           "Invalid value for %s parameter: argument must "
                           "not be null." % go_quote(pname), arg_expr.rng,
                           e.rng)
                return UNKNOWN
            try:
                converted.append(_convert_arg(v, kind))
            except ConversionError as exc:
                self.error("Invalid function argument",
                           "Invalid value for %s parameter: %s." %
                           (go_quote(pname), exc), arg_expr.rng, e.rng)
                return UNKNOWN
        try:
            return fn.impl(*converted)
        except (ConversionError, ArithmeticError, ValueError, TypeError,
                IndexError, KeyError, re.error) as exc:
            # A value the implementation could not handle: cty reports
            # these as a failed call too.
            self.error("Error in function call",
                       "Call to function %s failed: %s." %
                       (go_quote(e.name), exc), e.start_rng(), e.rng)
            return UNKNOWN
        except FunctionError as exc:
            if exc.param is not None and exc.param < len(e.args):
                pname = (fn.params[exc.param][0] if exc.param < nparams
                         else fn.var[0])
                self.error("Invalid function argument",
                           "Invalid value for %s parameter: %s." %
                           (go_quote(pname), exc), e.args[exc.param].rng,
                           e.rng)
            else:
                self.error("Error in function call",
                           "Call to function %s failed: %s." %
                           (go_quote(e.name), exc), e.start_rng(), e.rng)
            return UNKNOWN

    def _try_can(self, e, ctx):
        if e.name == "can":
            if len(e.args) != 1:
                self.error("Invalid function argument",
                           "Function \"can\" expects 1 argument(s).", e.rng)
                return UNKNOWN
            probe = Evaluator(self.src, [])
            v = probe.eval(e.args[0], ctx)
            if has_errors(probe.diags):
                return False
            return UNKNOWN if v is UNKNOWN else True
        if not e.args:
            self.error("Error in function call",
                       'Call to function "try" failed: at least one argument '
                       "is required.", e.start_rng(), e.rng)
            return UNKNOWN
        for arg in e.args:
            probe = Evaluator(self.src, [])
            v = probe.eval(arg, ctx)
            if not has_errors(probe.diags):
                return v
        self.error("Error in function call",
                   'Call to function "try" failed: no expression succeeded.',
                   e.start_rng(), e.rng)
        return UNKNOWN


def _norm_number(v):
    if isinstance(v, float) and v.is_integer() and abs(v) < 2 ** 63:
        return int(v)
    return v


def _convert_arg(v, kind):
    if kind == "string":
        return to_string(v)
    if kind == "number":
        return to_number(v)
    if kind == "bool":
        return to_bool(v)
    if kind == "list":
        if not isinstance(v, list):
            raise ConversionError("list of any single type required")
        return v
    if kind == "map":
        if not isinstance(v, dict):
            raise ConversionError("map of any single type required")
        return v
    return v


def evaluate(expr, ctx, src, diags):
    """Evaluate one expression, appending any diagnostics to ``diags``."""
    return Evaluator(src, diags).eval(expr, ctx)


# ---------------------------------------------------------------------------
# Functions available in job files (jobspec2/functions.go)


def _fmt_go(fmt_str, args):
    """The cty "format" function: Go-like verbs over cty values."""
    out = []
    i = 0
    argi = 0
    n = len(fmt_str)
    spec_re = re.compile(r"%([-+# 0]*)(\d+|\*)?(?:\.(\d+))?([a-zA-Z%])")
    while i < n:
        j = fmt_str.find("%", i)
        if j < 0:
            out.append(fmt_str[i:])
            break
        out.append(fmt_str[i:j])
        m = spec_re.match(fmt_str, j)
        if not m:
            raise FunctionError("invalid format string starting at offset %d"
                                % j)
        flags, width, prec, verb = m.groups()
        i = m.end()
        if verb == "%":
            out.append("%")
            continue
        if argi >= len(args):
            raise FunctionError("not enough arguments for %%%s at %d" %
                                (verb, j))
        v = args[argi]
        argi += 1
        if verb in ("v", "s"):
            if isinstance(v, (dict, list)) and verb == "v":
                text = json_encode(v)
            else:
                try:
                    text = to_string(v)
                except ConversionError:
                    raise FunctionError("unsupported value for %%%s at %d: "
                                        "string required" % (verb, j))
                if text is None:
                    text = "null"
            if prec:
                text = text[:int(prec)]
        elif verb == "q":
            text = json.dumps(to_string(v), ensure_ascii=False)
        elif verb == "t":
            text = "true" if to_bool(v) else "false"
        elif verb in ("d", "b", "o", "x", "X", "e", "E", "f", "g", "G"):
            num = to_number(v)
            if verb == "d":
                if not float(num).is_integer():
                    raise FunctionError("unsupported value for %%d at %d: "
                                        "value must be a whole number" % j)
                text = str(int(num))
            elif verb in ("b", "o", "x", "X"):
                text = format(int(num), {"b": "b", "o": "o", "x": "x",
                                         "X": "X"}[verb])
            else:
                pyfmt = "." + (prec or "6") + verb
                text = format(num, pyfmt)
        else:
            raise FunctionError("unrecognized format character %s at offset "
                                "%d" % (go_quote(verb), j))
        if width:
            w = int(width)
            if "-" in flags:
                text = text.ljust(w)
            elif "0" in flags and verb not in ("s", "q", "v"):
                text = text.rjust(w, "0")
            else:
                text = text.rjust(w)
        out.append(text)
    if argi < len(args):
        raise FunctionError("too many arguments; only %d used by format "
                            "string" % argi)
    return "".join(out)


def json_encode(v):
    """JSON as cty writes it: compact, sorted keys, HTML-safe strings."""
    def conv(x):
        if is_number(x):
            return x if isinstance(x, int) else _norm_number(x)
        if isinstance(x, list):
            return [conv(y) for y in x]
        if isinstance(x, dict):
            return {k: conv(y) for k, y in x.items()}
        return x
    text = json.dumps(conv(v), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026").replace("\u2028", "\\u2028")
            .replace("\u2029", "\\u2029"))


def _json_decode(s):
    try:
        return _norm_tree(json.loads(s))
    except ValueError as exc:
        raise FunctionError(str(exc), 0)


def _norm_tree(v):
    if isinstance(v, float):
        return _norm_number(v)
    if isinstance(v, list):
        return [_norm_tree(x) for x in v]
    if isinstance(v, dict):
        return {k: _norm_tree(x) for k, x in v.items()}
    return v


def _element(lst, idx):
    if not lst:
        raise FunctionError("cannot use element function with an empty list")
    if not float(idx).is_integer():
        raise FunctionError("invalid index: value must be a whole number", 1)
    if idx < 0:
        raise FunctionError("cannot use element function with a negative "
                            "index")
    return lst[int(idx) % len(lst)]


def _lookup(m, key, *default):
    if key in m:
        return m[key]
    if default:
        return default[0]
    raise FunctionError("the given key %s does not exist in the map" %
                        go_quote(key))


def _merge(*maps):
    out = {}
    for m in maps:
        if m is None:
            continue
        if not isinstance(m, dict):
            raise FunctionError("arguments must be maps or objects, got %s" %
                                go_quote(type_name(m)))
        out.update(m)
    return out


def _flatten(lst):
    out = []
    for x in lst:
        if isinstance(x, list):
            out.extend(_flatten(x))
        else:
            out.append(x)
    return out


def _distinct(lst):
    out = []
    for x in lst:
        if not any(values_equal(x, y) for y in out):
            out.append(x)
    return out


def _coalesce(*vals):
    for v in vals:
        if v is not None and v != "":
            return v
    raise FunctionError("no non-null, non-empty-string arguments")


def _replace(s, old, new):
    if len(old) > 1 and old.startswith("/") and old.endswith("/"):
        try:
            pattern = re.compile(old[1:-1])
        except re.error as exc:
            raise FunctionError("invalid regular expression: %s" % exc, 1)
        return pattern.sub(new.replace("$", "\\"), s)
    return s.replace(old, new)


def _regex_replace(s, pattern, new):
    try:
        return re.sub(pattern, new.replace("$", "\\"), s)
    except re.error as exc:
        raise FunctionError("invalid regular expression: %s" % exc, 1)


def _substr(s, offset, length):
    offset, length = int(offset), int(length)
    n = len(s)
    if offset < 0:
        offset += n
    if offset < 0 or offset > n:
        raise FunctionError("offset out of range", 1)
    if length < 0:
        return s[offset:]
    return s[offset:offset + length]


def _range(*args):
    nums = [to_number(a) for a in args]
    if len(nums) == 1:
        start, end, step = 0, nums[0], 1
    elif len(nums) == 2:
        start, end, step = nums[0], nums[1], 1 if nums[1] >= nums[0] else -1
    elif len(nums) == 3:
        start, end, step = nums
    else:
        raise FunctionError("must have one, two, or three arguments")
    if step == 0:
        raise FunctionError("step must not be zero")
    out = []
    v = start
    while (step > 0 and v < end) or (step < 0 and v > end):
        out.append(_norm_number(v))
        v += step
        if len(out) > 1024:
            raise FunctionError("more than 1024 values were generated")
    return out


def _indent(spaces, s):
    pad = " " * int(spaces)
    return s.replace("\n", "\n" + pad)


def _parseint(s, base):
    try:
        return int(s, int(base))
    except ValueError:
        raise FunctionError("cannot parse %s as a base %d integer" %
                            (go_quote(s), int(base)))


def _fs_disabled(*_):
    raise FunctionError("filesystem function disabled")


def _keys(m):
    return sorted(m)


def _values(m):
    return [m[k] for k in sorted(m)]


def _sort(lst):
    try:
        return sorted(to_string(x) for x in lst)
    except ConversionError:
        raise FunctionError("given list element is not a string", 0)


def _slice(lst, start, end):
    start, end = int(start), int(end)
    if start < 0 or end > len(lst) or start > end:
        raise FunctionError("index out of range")
    return lst[start:end]


def _index_of(lst, value):
    for i, x in enumerate(lst):
        if values_equal(x, value):
            return i
    raise FunctionError("item not found")


def _zipmap(keys, values):
    if len(keys) != len(values):
        raise FunctionError("number of keys (%d) does not match number of "
                            "values (%d)" % (len(keys), len(values)))
    return {to_string(k): v for k, v in zip(keys, values)}


def _chunklist(lst, size):
    size = int(size)
    if size <= 0:
        return [lst]
    return [lst[i:i + size] for i in range(0, len(lst), size)]


def _formatlist(fmt_str, *lists):
    n = None
    for x in lists:
        if isinstance(x, list):
            if n is not None and n != len(x):
                raise FunctionError("all list arguments must have the same "
                                    "length")
            n = len(x)
    if n is None:
        return [_fmt_go(fmt_str, list(lists))]
    return [_fmt_go(fmt_str, [x[i] if isinstance(x, list) else x
                              for x in lists]) for i in range(n)]


def _title(s):
    return re.sub(r"\b(\w)", lambda m: m.group(1).upper(), s)


def _b64decode(s):
    try:
        return base64.b64decode(s, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise FunctionError("failed to decode base64 data %s" % go_quote(s),
                            0)


def _uuidv5(namespace, name):
    spaces = {"dns": uuid.NAMESPACE_DNS, "url": uuid.NAMESPACE_URL,
              "oid": uuid.NAMESPACE_OID, "x500": uuid.NAMESPACE_X500}
    ns = spaces.get(namespace)
    if ns is None:
        try:
            ns = uuid.UUID(namespace)
        except ValueError:
            raise FunctionError("uuidv5() doesn't support namespace %s" %
                                go_quote(namespace), 0)
    return str(uuid.uuid5(ns, name))


def _min(*nums):
    if not nums:
        raise FunctionError("must pass at least one number")
    return min(nums)


def _max(*nums):
    if not nums:
        raise FunctionError("must pass at least one number")
    return max(nums)


def _log(num, base):
    try:
        return _norm_number(math.log(num, base))
    except (ValueError, ZeroDivisionError) as exc:
        raise FunctionError(str(exc))


def _signum(n):
    return (n > 0) - (n < 0)


def _trim(s, cutset):
    return s.strip(cutset)


def _set_op(op):
    def impl(*sets):
        acc = _distinct(sets[0]) if sets else []
        for s in sets[1:]:
            if op == "union":
                acc = _distinct(acc + list(s))
            else:
                acc = [x for x in acc if any(values_equal(x, y) for y in s)]
        return acc
    return impl


def _S(name):
    return (name, "string")


def _N(name):
    return (name, "number")


def _L(name):
    return (name, "list")


def _M(name):
    return (name, "map")


def _A(name):
    return (name, "any")


FUNCTIONS = {
    "abs": Function([_N("num")], lambda n: abs(n)),
    "base64decode": Function([_S("str")], _b64decode),
    "base64encode": Function([_S("str")], lambda s: base64.b64encode(
        s.encode("utf-8")).decode("ascii")),
    "can": Function([_A("expression")], None),
    "ceil": Function([_N("num")], lambda n: int(math.ceil(n))),
    "chomp": Function([_S("str")], lambda s: re.sub(r"(?:\r\n|\r|\n)+\Z",
                                                    "", s)),
    "chunklist": Function([_L("list"), _N("size")], _chunklist),
    "coalesce": Function([], _coalesce, var=_A("vals"), allow_null="var"),
    "coalescelist": Function([], lambda *ls: next(
        (l for l in ls if l), []), var=_L("vals")),
    "compact": Function([_L("list")], lambda l: [x for x in l
                                                  if x not in ("", None)]),
    "concat": Function([], lambda *ls: [x for l in ls for x in l],
                       var=_L("seqs")),
    "contains": Function([_L("list"), _A("value")], lambda l, v: any(
        values_equal(x, v) for x in l)),
    "distinct": Function([_L("list")], _distinct),
    "element": Function([_L("list"), _N("index")], _element),
    "flatten": Function([_L("list")], _flatten),
    "floor": Function([_N("num")], lambda n: int(math.floor(n))),
    "format": Function([_S("format")], lambda f, *a: _fmt_go(f, list(a)),
                       var=_A("args"), allow_null="var"),
    "formatlist": Function([_S("format")], _formatlist, var=_A("args")),
    "indent": Function([_N("spaces"), _S("str")], _indent),
    "index": Function([_L("list"), _A("value")], _index_of),
    "join": Function([_S("separator")], lambda sep, *ls: sep.join(
        to_string(x) for l in ls for x in l), var=_L("lists")),
    "jsondecode": Function([_S("str")], _json_decode),
    "jsonencode": Function([_A("val")], json_encode, allow_null=True),
    "keys": Function([_M("inputMap")], _keys),
    "length": Function([_A("value")], lambda v: len(v) if isinstance(
        v, (list, dict, str)) else _raise("argument must be a string, a "
                                          "collection type, or a structural "
                                          "type")),
    "log": Function([_N("num"), _N("base")], _log),
    "lookup": Function([_M("inputMap"), _S("key")], _lookup,
                       var=_A("default")),
    "lower": Function([_S("str")], lambda s: s.lower()),
    "max": Function([], _max, var=_N("numbers")),
    "md5": Function([_S("str")], lambda s: hashlib.md5(
        s.encode("utf-8")).hexdigest()),
    "merge": Function([], _merge, var=_A("maps"), allow_null="var"),
    "min": Function([], _min, var=_N("numbers")),
    "parseint": Function([_A("number"), _N("base")], lambda s, b: _parseint(
        to_string(s), b)),
    "pow": Function([_N("num"), _N("power")], lambda a, b: _norm_number(
        float(a) ** float(b))),
    "range": Function([], _range, var=_N("params")),
    "regex_replace": Function([_S("str"), _S("substr"), _S("replace")],
                              _regex_replace),
    "replace": Function([_S("str"), _S("substr"), _S("replace")], _replace),
    "reverse": Function([_L("list")], lambda l: list(reversed(l))),
    "setintersection": Function([_L("first_set")], _set_op("intersection"),
                                var=_L("other_sets")),
    "setunion": Function([_L("first_set")], _set_op("union"),
                         var=_L("other_sets")),
    "sha1": Function([_S("str")], lambda s: hashlib.sha1(
        s.encode("utf-8")).hexdigest()),
    "sha256": Function([_S("str")], lambda s: hashlib.sha256(
        s.encode("utf-8")).hexdigest()),
    "sha512": Function([_S("str")], lambda s: hashlib.sha512(
        s.encode("utf-8")).hexdigest()),
    "signum": Function([_N("num")], _signum),
    "slice": Function([_L("list"), _N("start_index"), _N("end_index")],
                      _slice),
    "sort": Function([_L("list")], _sort),
    "split": Function([_S("separator"), _S("str")], lambda sep, s: s.split(
        sep) if sep else list(s)),
    "strlen": Function([_S("str")], len),
    "strrev": Function([_S("str")], lambda s: s[::-1]),
    "substr": Function([_S("str"), _N("offset"), _N("length")], _substr),
    "title": Function([_S("str")], _title),
    "trim": Function([_S("str"), _S("cutset")], _trim),
    "trimprefix": Function([_S("str"), _S("prefix")], lambda s, p: s[len(p):]
                           if p and s.startswith(p) else s),
    "trimspace": Function([_S("str")], lambda s: s.strip()),
    "trimsuffix": Function([_S("str"), _S("suffix")], lambda s, p: s[:-len(p)]
                           if p and s.endswith(p) else s),
    "try": Function([], None, var=_A("expressions")),
    "upper": Function([_S("str")], lambda s: s.upper()),
    "urlencode": Function([_S("str")], lambda s: urllib.parse.quote_plus(s)),
    "uuidv4": Function([], lambda: str(uuid.uuid4())),
    "uuidv5": Function([_S("namespace"), _S("name")], _uuidv5),
    "values": Function([_M("mapping")], _values),
    "zipmap": Function([_L("keys"), _L("values")], _zipmap),
}

for _name, _params in (("abspath", [_S("path")]), ("basename", [_S("path")]),
                       ("dirname", [_S("path")]), ("file", [_S("path")]),
                       ("filebase64", [_S("path")]),
                       ("fileexists", [_S("path")]),
                       ("fileset", [_S("path"), _S("pattern")]),
                       ("pathexpand", [_S("path")])):
    FUNCTIONS[_name] = Function(_params, _fs_disabled)


def _raise(msg):
    raise FunctionError(msg, 0)
