#!/usr/bin/env python3
"""Builds rules/catalog/pytorch.tsv from a git snapshot of PyTorch.

For every tag given, reads the c10d / ProcessGroupNCCL / NCCLUtils / TCPStore /
rendezvous sources and torch.distributed.elastic / torchrun, pulls out the
messages they print or raise, turns each into a printf-style format (literal
text kept, every variable part a %s or %d), and classifies it with the
hand-maintained table scripts/catalog/pytorch-classes.tsv (first matching regex
wins; category "-" drops the message). Messages no regex matches are dropped
too (--unmatched lists them, so the table can be extended).

    scripts/catalog/extract-pytorch.py --git-dir /path/to/pytorch.git \
        --tag v1.8.0=1.8 --tag v1.13.1=1.13 --tag v2.6.0=2.6 \
        --extra scripts/catalog/pytorch-extra.tsv \
        --out rules/catalog/pytorch.tsv

Standard library only. What is extracted:
  C++   TORCH_CHECK / TORCH_CHECK_WITH / TORCH_INTERNAL_ASSERT / C10_THROW_ERROR /
        C10D_THROW_ERROR / TORCH_WARN(_ONCE) / C10D_ERROR|WARNING|INFO (fmt) /
        LOG(ERROR|WARNING|FATAL|INFO) << ... / c10::str(...) / fmt::format(...) /
        std::runtime_error(...) / `ss << ...;` on string streams /
        `x = "..." + y + "...";` concatenations (macros such as C10D_NCCL_CHECK).
        `<<`-streamed, c10::str and `+` pieces are joined; each non-literal
        piece becomes %d when it looks like an integer (rank, seq, size,
        .count(), std::to_string) and %s otherwise. A local variable built from
        a message and used later in the same file is substituted.
  Python (ast) raise X(...), logger/log.<level>(...), warnings.warn(...);
        f-strings, "..." % args, "...".format(...), + concatenation and simple
        local variables are resolved.
Only the first line of a multi-line message is kept. The ProcessGroupNCCL
prefix (logPrefix(), "[Rank N] ", "[PG ... Rank N] ") is not part of the
format: ncclpm's framer peels it before recognizing the message.
"""

import argparse
import ast
import re
import subprocess
import sys
from collections import OrderedDict

HEADER = "format\tcategory\tseverity\trole\tversions\tsource"

CPP_PATH = re.compile(
    r"^torch/(?:lib|csrc/distributed)/c10d/"
    r"(?:ProcessGroupNCCL|NCCLUtils|TCPStore|TCPStoreBackend|TCPStoreLibUvBackend|"
    r"Utils|socket|ProcessGroupWrapper|ProcessGroupGloo|TraceUtils|FlightRecorder|"
    r"FlightRecorderDetail|Work|ProcessGroup|Backend|FileStore|Store|"
    r"PrefixStore|sequence_num|UnixSockUtils)\.(?:cpp|hpp|h)$")
PY_PATH = re.compile(
    r"^torch/distributed/(?:distributed_c10d|rendezvous|run|launch|"
    r"c10d_logger|constants|utils)\.py$"
    r"|^torch/distributed/elastic/.*\.py$"
    r"|^torch/distributed/launcher/.*\.py$")

# --------------------------------------------------------------------------
# C++ lexer


class Tok:
    __slots__ = ("kind", "text")

    def __init__(self, kind, text):
        self.kind = kind  # 'str', 'chr', 'id', 'num', 'op'
        self.text = text

    def __repr__(self):
        return "%s:%r" % (self.kind, self.text)


_OPS = sorted(
    "<<= >>= ->* ... << >> :: -> == != <= >= && || ++ -- += -= *= /= |= &= ^= %= .*"
    .split(), key=len, reverse=True)
_SIMPLE_ESC = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "\\": "\\",
               "'": "'", '"': '"', "?": "?", "a": "\a", "b": "\b", "f": "\f",
               "v": "\v"}


def _decode_escapes(s):
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c != "\\" or i + 1 >= len(s):
            out.append(c)
            i += 1
            continue
        n = s[i + 1]
        if n == "x":
            m = re.match(r"[0-9a-fA-F]+", s[i + 2:])
            if m:
                out.append(chr(int(m.group(0), 16)))
                i += 2 + len(m.group(0))
                continue
        if n in "01234567":
            m = re.match(r"[0-7]{1,3}", s[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
            continue
        out.append(_SIMPLE_ESC.get(n, n))
        i += 2
    return "".join(out)


def lex_cpp(src):
    toks = []
    i, n = 0, len(src)
    line_start = True
    while i < n:
        c = src[i]
        if c == "\\" and src.startswith("\n", i + 1):  # line continuation
            i += 2
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        if src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
            continue
        if src.startswith("/*", i):
            j = src.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == "#" and line_start:
            m = re.match(r"#\s*(\w+)", src[i:])
            word = m.group(1) if m else ""
            if word == "define":
                m2 = re.match(r"#\s*define\s+\w+(\([^)]*\))?", src[i:])
                i += m2.end()
                line_start = False
                continue
            # any other directive: skip the (possibly continued) line
            while i < n:
                j = src.find("\n", i)
                if j < 0:
                    i = n
                    break
                if src[j - 1] == "\\":
                    i = j + 1
                    continue
                i = j
                break
            continue
        line_start = False
        m = re.match(r'(?:u8|u|U|L)?R"([^(\s]*)\(', src[i:])
        if m:
            delim = ")" + m.group(1) + '"'
            j = src.find(delim, i + m.end())
            j = n if j < 0 else j
            toks.append(Tok("str", src[i + m.end():j]))
            i = j + len(delim)
            continue
        m = re.match(r'(?:u8|u|U|L)?"', src[i:])
        if m:
            j = i + m.end()
            buf = []
            while j < n and src[j] != '"':
                if src[j] == "\\" and j + 1 < n:
                    if src[j + 1] == "\n":
                        j += 2
                        continue
                    buf.append(src[j:j + 2])
                    j += 2
                    continue
                if src[j] == "\n":
                    break
                buf.append(src[j])
                j += 1
            toks.append(Tok("str", _decode_escapes("".join(buf))))
            i = j + 1
            continue
        if c == "'":
            m = re.match(r"'(\\.[^']*|[^'\\])'", src[i:])
            if m:
                toks.append(Tok("chr", _decode_escapes(m.group(1))))
                i += m.end()
                continue
            i += 1
            continue
        if c.isalpha() or c == "_":
            m = re.match(r"[A-Za-z_]\w*", src[i:])
            toks.append(Tok("id", m.group(0)))
            i += m.end()
            continue
        if c.isdigit() or (c == "." and i + 1 < n and src[i + 1].isdigit()):
            m = re.match(r"[0-9.][0-9a-zA-Z_.']*", src[i:])
            toks.append(Tok("num", m.group(0)))
            i += m.end()
            continue
        for op in _OPS:
            if src.startswith(op, i):
                toks.append(Tok("op", op))
                i += len(op)
                break
        else:
            toks.append(Tok("op", c))
            i += 1
    return toks


# --------------------------------------------------------------------------
# C++ message extraction

PREFIX = "\x01"  # stands for the process-group log prefix
OPEN = {"(": ")", "[": "]", "{": "}"}

# macro -> (leading arguments to skip, severity, style)
CALLS = {
    "TORCH_CHECK": (1, "error", "str"),
    "TORCH_CHECK_MSG": (1, "error", "str"),
    "TORCH_CHECK_VALUE": (1, "error", "str"),
    "TORCH_CHECK_TYPE": (1, "error", "str"),
    "TORCH_CHECK_INDEX": (1, "error", "str"),
    "TORCH_CHECK_NOT_IMPLEMENTED": (1, "error", "str"),
    "TORCH_CHECK_WITH": (2, "error", "str"),
    "TORCH_INTERNAL_ASSERT": (1, "error", "str"),
    "C10_THROW_ERROR": (1, "error", "str"),
    "C10D_THROW_ERROR": (1, "error", "str"),
    "C10_BUILD_ERROR": (1, "error", "str"),
    "C10D_CHECK_WITH": (2, "error", "str"),
    "TORCH_WARN": (0, "warning", "str"),
    "TORCH_WARN_ONCE": (0, "warning", "str"),
    "C10D_ERROR": (0, "error", "fmt"),
    "C10D_WARNING": (0, "warning", "fmt"),
    "C10D_INFO": (0, "info", "fmt"),
    # socket.cpp's own helpers: recordError() logs through C10D_WARNING
    # (2.x); logWarning()/logError() through glog's LOG() (1.11-1.13).
    "recordError": (0, "warning", "fmt"),
    "logWarning": (0, "warning", "fmt"),
    "logError": (0, "error", "fmt"),
    "c10::str": (0, "built", "str"),
    "fmt::format": (0, "built", "fmt"),
    "std::runtime_error": (0, "error", "str"),
    "std::invalid_argument": (0, "error", "str"),
    "std::logic_error": (0, "error", "str"),
    "std::system_error": (1, "error", "str"),
}
C10D_LOG_PREFIX = {"C10D_ERROR": "[c10d] ", "C10D_WARNING": "[c10d] ",
                   "C10D_INFO": "[c10d] ", "recordError": "[c10d] "}
LOG_SEV = {"FATAL": "fatal", "ERROR": "error", "WARNING": "warning",
           "INFO": "info"}
STREAM_VAR = re.compile(r"^(?:ss|oss|os|s|msg|errorStream|\w*[sS]tream|\w*Msg|\w*ss)$")
BUILT_VAR = re.compile(r"(?i)(msg|message|err|error|reason|what|str|desc|log|text|info)")
INT_NAME = re.compile(
    r"(?i)(rank|size|seq|seqnum|count|numel|pid|port|idx|index|deviceidx|devidx|"
    r"^id|_id|num\w*|timeout\w*|millis|ms|sec|secs|seconds|attempts|retries|"
    r"tries|workers|lastenqueued\w*|lastcompleted\w*|laststarted\w*|"
    r"opid|fd|line|elapsed\w*|len|length|nranks|exitcode|returncode)_?$")
STR_NAME = re.compile(
    r"(?i)(name|str|msg|reason|prefix|key|type|addr|host|what|desc|path|file|"
    r"repr|version|string|op|status|state|backend|env|err|error|sig|run_id|"
    r"node|signal|endpoint|entrypoint|binary|role|spec|reason|hostname|device_id|device_?$)")


def _find_close(toks, i):
    """toks[i] is an opening bracket; returns the index of its match."""
    depth = 0
    for j in range(i, len(toks)):
        t = toks[j]
        if t.kind == "op" and t.text in OPEN:
            depth += 1
        elif t.kind == "op" and t.text in (")", "]", "}"):
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def _split_top(toks, sep):
    parts, cur, depth = [], [], 0
    for t in toks:
        if t.kind == "op" and t.text in OPEN:
            depth += 1
        elif t.kind == "op" and t.text in (")", "]", "}"):
            depth -= 1
        if depth == 0 and t.kind == "op" and t.text == sep:
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
    parts.append(cur)
    return parts


def _qualname_at(toks, i):
    """Qualified identifier ending at toks[i] ('c10::str')."""
    j = i
    while j >= 2 and toks[j - 1].text == "::" and toks[j - 2].kind == "id":
        j -= 2
    return "".join(t.text for t in toks[j:i + 1]), j


def _guess_conv(toks):
    text = "".join(t.text for t in toks)
    if "to_string" in text or text.endswith(".count()") or text == "__LINE__":
        return "%d"
    if any(t.kind == "str" for t in toks):
        return "%s"
    ids = [t.text for t in toks if t.kind == "id" and t.text not in (
        "this", "std", "c10", "size_t", "int", "int64_t", "uint64_t", "static_cast",
        "get", "value", "load", "c_str", "data")]
    if not ids:
        return "%d" if toks and toks[-1].kind == "num" else "%s"
    last = ids[-1]
    if text.endswith(".size()") or text.endswith(".numel()"):
        return "%d"
    # std::chrono durations print with a unit suffix ("600000ms")
    if re.search(r"(?i)timeout|duration|elapsed|interval", last) and \
            not re.search(r"(?i)(sec|secs|ms|millis|milsec)_?$", last):
        return "%s"
    if STR_NAME.search(last):
        return "%s"
    return "%d" if INT_NAME.search(last) else "%s"


class CppExtractor:
    def __init__(self, src):
        self.toks = lex_cpp(src)
        self.built = {}  # local variable -> rendered text
        self.lits = {}  # local variable -> literal assigned to it
        self.out = []  # (text, severity)

    # rendering -------------------------------------------------------------
    def render_operand(self, ops):
        ops = [t for t in ops]
        while ops and ops[0].kind == "op" and ops[0].text == "(" and \
                _find_close(ops, 0) == len(ops) - 1:
            ops = ops[1:-1]
        if not ops:
            return ""
        if all(t.kind == "str" for t in ops):
            return "".join(t.text for t in ops)
        if len(ops) == 1 and ops[0].kind == "chr":
            return ops[0].text
        texts = [t.text for t in ops]
        if texts in (["std", "::", "endl"], ["endl"]):
            return "\n"
        if texts == ["__FILE__"]:
            return "%s"
        if texts == ["__LINE__"]:
            return "%d"
        if texts[-1:] in (["logPrefix"], ["logPrefix_"]) or \
                texts[-3:] in (["logPrefix", "(", ")"], ["createLogPrefix", "(", ")"]):
            return PREFIX
        # "..." + x + "..." inside an argument
        plus = _split_top(ops, "+")
        if len(plus) > 1 and any(
                p and (all(t.kind == "str" for t in p) or
                       (len(p) == 1 and p[0].text in self.built)) for p in plus):
            return self.render_concat(ops)
        # std::string("..."), std::string_view("...")
        for k in range(len(ops)):
            if ops[k].kind == "op" and ops[k].text == "(":
                name, _ = _qualname_at(ops, k - 1) if k else ("", 0)
                if _find_close(ops, k) == len(ops) - 1 and \
                        "".join(t.text for t in ops[:k]) == name:
                    inner = ops[k + 1:-1]
                    if name in ("std::string", "std::string_view", "string"):
                        return self.render_operand(inner)
                    if name in ("c10::str", "str"):
                        return self.render_args(_split_top(inner, ","), "str")
                    if name in ("fmt::format", "format"):
                        return self.render_args(_split_top(inner, ","), "fmt")
                    if name in ("std::to_string", "to_string"):
                        return "%d"
                break
        if len(ops) == 1 and ops[0].kind == "id" and ops[0].text in self.built:
            return self.built[ops[0].text]
        # ternary with two literal branches
        if any(t.text == "?" for t in ops):
            return "%s"
        return _guess_conv(ops)

    def render_args(self, args, style):
        if style == "fmt":
            if not args or not args[0] or not all(t.kind == "str" for t in args[0]):
                if args and len(args[0]) == 1 and args[0][0].text in self.built:
                    return self.built[args[0][0].text]
                return ""
            fmt = "".join(t.text for t in args[0])
            rest = args[1:]
            out = []
            pos = 0
            for m in re.finditer(r"\{\{|\}\}|\{[^{}]*\}", fmt):
                out.append(_esc_pct(fmt[pos:m.start()]))
                tok = m.group(0)
                if tok == "{{":
                    out.append("{")
                elif tok == "}}":
                    out.append("}")
                else:
                    arg = rest.pop(0) if rest else []
                    conv = _guess_conv(arg) if arg else "%s"
                    if "d}" in tok:
                        conv = "%d"
                    out.append(conv)
                pos = m.end()
            out.append(_esc_pct(fmt[pos:]))
            return "".join(out)
        out = []
        for a in args:
            piece = self.render_operand(a)
            if all(t.kind == "str" for t in a) or (a and a[0].text == "std" and
                                                  piece and "%" not in piece):
                piece = _esc_pct(piece)
            out.append(piece)
        return "".join(out)

    def render_stream(self, toks):
        out = []
        for part in _split_top(toks, "<<"):
            if not part:
                continue
            piece = self.render_operand(part)
            if all(t.kind == "str" for t in part) or (len(part) > 2 and part[0].text == "std"
                                                     and "%" not in piece):
                piece = _esc_pct(piece)
            out.append(piece)
        return "".join(out)

    def render_concat(self, toks):
        out = []
        for part in _split_top(toks, "+"):
            piece = self.render_operand(part)
            if all(t.kind == "str" for t in part):
                piece = _esc_pct(piece)
            out.append(piece)
        return "".join(out)

    # scanning --------------------------------------------------------------
    def _stmt_end(self, i):
        depth = 0
        for j in range(i, len(self.toks)):
            t = self.toks[j]
            if t.kind == "op" and t.text in OPEN:
                depth += 1
            elif t.kind == "op" and t.text in (")", "]", "}"):
                depth -= 1
                if depth < 0:
                    return j
            elif depth == 0 and t.kind == "op" and t.text == ";":
                return j
        return len(self.toks)

    def emit(self, text, sev):
        if text:
            self.out.append((text, sev))

    def run(self):
        toks = self.toks
        i = 0
        while i < len(toks):
            t = toks[i]
            nxt = toks[i + 1] if i + 1 < len(toks) else None
            prev = toks[i - 1] if i else None
            # LOG(SEV) << ... ;   LOG_FIRST_N(SEV, n) << ...
            if t.kind == "id" and t.text in ("LOG", "LOG_FIRST_N", "C10_LOG_FIRST_N",
                                             "LOG_EVERY_N", "LOG_IF") \
                    and nxt is not None and nxt.text == "(":
                close = _find_close(toks, i + 1)
                sev_tok = toks[i + 2].text if i + 2 < len(toks) else ""
                if close + 1 < len(toks) and toks[close + 1].text == "<<":
                    end = self._stmt_end(close + 1)
                    text = self.render_stream(toks[close + 2:end])
                    self.emit(text, LOG_SEV.get(sev_tok, "info"))
                    i = end
                    continue
            # macro / function calls
            if t.kind == "id" and nxt is not None and nxt.text == "(":
                name, _ = _qualname_at(toks, i)
                if name not in CALLS and name.startswith("::"):
                    name = name[2:]
                if name in CALLS and not (prev is not None and prev.text == "define"):
                    skip, sev, style = CALLS[name]
                    close = _find_close(toks, i + 1)
                    args = _split_top(toks[i + 2:close], ",")
                    if len(args) > skip:
                        text = self.render_args(args[skip:], style)
                        if name in C10D_LOG_PREFIX and text:
                            text = C10D_LOG_PREFIX[name] + text
                        if name in ("c10::str", "fmt::format"):
                            self._maybe_bind(i, text)
                        self.emit(text, sev)
                    i += 2  # nested calls are visited too (deduplicated later)
                    continue
            # statements: `ss << ...;`, `name = "..." + x;`, `name += ...;`
            if prev is None or (prev.kind == "op" and prev.text in (";", "{", "}", ":")):
                end = self._stmt_end(i)
                stmt = toks[i:end]
                self._statement(stmt)
            i += 1
        return self.out

    def _maybe_bind(self, i, text):
        # `auto msg = c10::str(...)`, `std::string msg = fmt::format(...)`
        toks = self.toks
        j = i
        while j >= 2 and toks[j - 1].text == "::":
            j -= 2
        if j >= 2 and toks[j - 1].text == "=" and toks[j - 2].kind == "id":
            self.built[toks[j - 2].text] = text

    def _statement(self, stmt):
        if not stmt or not any(t.kind == "str" for t in stmt):
            return
        # return "..." [+ ...];  (message helpers such as getNcclErrorDetailStr)
        if stmt[0].text == "return" and len(stmt) > 1:
            expr = stmt[1:]
            if all(t.kind == "str" for t in expr) or len(_split_top(expr, "+")) > 1:
                self.emit(self.render_concat(expr), "built")
            return
        # ss << ... ;
        if len(stmt) > 2 and stmt[0].kind == "id" and stmt[1].text == "<<" and \
                STREAM_VAR.match(stmt[0].text):
            self.emit(self.render_stream(stmt[2:]), "built")
            return
        # [type] name = expr ;   name += expr ;
        for k, t in enumerate(stmt):
            if t.kind == "op" and t.text in ("=", "+="):
                if k == 0 or stmt[k - 1].kind != "id":
                    return
                var = stmt[k - 1].text
                expr = stmt[k + 1:]
                if all(x.kind == "str" for x in expr) and \
                        len("".join(x.text for x in expr)) >= 15:
                    # a literal assigned to a variable; kept apart from
                    # self.built (never substituted) but extended by `+=`
                    text = _esc_pct("".join(x.text for x in expr))
                    if t.text == "+=" and var in self.lits:
                        text = self.lits[var] + text
                    self.lits[var] = text
                    self.emit(text, "built")
                    return
                if not BUILT_VAR.search(var):
                    return
                if len(_split_top(expr, "+")) < 2 or \
                        not any(p and all(x.kind == "str" for x in p)
                                for p in _split_top(expr, "+")):
                    return
                text = self.render_concat(expr)
                if t.text == "+=" and var in self.built:
                    text = self.built[var] + text
                self.built[var] = text
                self.emit(text, "built")
                return
            if t.kind == "op" and t.text in ("(", "{", "<<"):
                return


def _esc_pct(s):
    return s.replace("%", "%%")


# --------------------------------------------------------------------------
# Python message extraction

PY_LEVEL = {"error": "error", "exception": "error", "critical": "fatal",
            "fatal": "fatal", "warning": "warning", "warn": "warning",
            "info": "info"}


class PyExtractor(ast.NodeVisitor):
    def __init__(self, src):
        self.src = src
        self.out = []
        self.scopes = [{}]

    def run(self):
        try:
            tree = ast.parse(self.src)
        except SyntaxError:
            return []
        self.visit(tree)
        return self.out

    # scopes of simple `name = <string expr>` bindings
    def visit_FunctionDef(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Assign(self, node):
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            text = self.render(node.value, printf=False)
            if text is not None and _literal_len(text) > 0:
                self.scopes[-1][node.targets[0].id] = text
        # self.message = "..." (e.g. ProcessFailure.message)
        if len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute) \
                and re.search(r"(?i)(message|msg|reason)$", node.targets[0].attr):
            text = self.render(node.value, printf=False)
            if text is not None:
                self.out.append((text, "built"))
        self.generic_visit(node)

    def lookup(self, name):
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def render(self, node, printf):
        """Format string for an expression, or None when it has no text."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _norm_printf(node.value) if printf else _esc_pct(node.value)
        if isinstance(node, ast.JoinedStr):
            out = []
            for v in node.values:
                if isinstance(v, ast.Constant):
                    out.append(_esc_pct(str(v.value)))
                else:
                    out.append(_py_conv(v))
            return "".join(out)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
            left = self.render(node.left, printf=True)
            return left
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a = self.render(node.left, printf)
            b = self.render(node.right, printf)
            if a is None and b is None:
                return None
            return (a if a is not None else _py_conv_expr(node.left)) + \
                (b if b is not None else _py_conv_expr(node.right))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "format":
            base = self.render(node.func.value, printf=False)
            if base is None:
                return None
            return re.sub(r"\{[^{}]*\}", "%s", base).replace("{{", "{").replace("}}", "}")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr == "join" and isinstance(node.func.value, ast.Constant):
            return "%s"
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.IfExp):
            return None
        return None

    def visit_Raise(self, node):
        exc = node.exc
        if isinstance(exc, ast.Call) and exc.args:
            text = self.render(exc.args[0], printf=False)
            if text is not None:
                self.out.append((text, "error"))
        self.generic_visit(node)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in PY_LEVEL and node.args:
            base = f.value
            bname = base.id if isinstance(base, ast.Name) else (
                base.attr if isinstance(base, ast.Attribute) else "")
            if re.search(r"(?i)log", bname):
                printf = len(node.args) > 1 or isinstance(node.args[0], ast.Constant)
                text = self.render(node.args[0], printf=printf)
                if text is not None:
                    self.out.append((text, PY_LEVEL[f.attr]))
            if bname == "warnings" and f.attr == "warn":
                text = self.render(node.args[0], printf=False)
                if text is not None:
                    self.out.append((text, "warning"))
        self.generic_visit(node)


def _py_conv(v):
    spec = ""
    if v.format_spec is not None:
        spec = "".join(str(x.value) for x in v.format_spec.values
                       if isinstance(x, ast.Constant))
    if spec.endswith("d"):
        return "%d"
    return _py_conv_expr(v.value)


def _py_conv_expr(e):
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return "%d"
    name = ""
    if isinstance(e, ast.Name):
        name = e.id
    elif isinstance(e, ast.Attribute):
        name = e.attr
    elif isinstance(e, ast.Call) and isinstance(e.func, (ast.Name, ast.Attribute)):
        fname = e.func.id if isinstance(e.func, ast.Name) else e.func.attr
        if fname == "len":
            return "%d"
        if fname == "str":
            return "%s"
    # timeouts and durations are timedelta or float in Python
    if name and not STR_NAME.search(name) and INT_NAME.search(name) and \
            not re.search(r"(?i)timeout|ms$|sec|elapsed|interval", name):
        return "%d"
    return "%s"


def _norm_printf(s):
    """Keeps %s and %d, maps other conversions to them, literal % to %%."""
    def repl(m):
        conv = m.group(0)
        if conv == "%%":
            return "%%"
        return "%d" if conv[-1] in "diu" else "%s"
    return re.sub(r"%%|%(?:\([^)]*\))?[-+ #0]*\d*(?:\.\d+)?[hlLqjzt]*[diouxXeEfFgGcrsa]|%",
                  lambda m: "%%" if m.group(0) == "%" else repl(m), s)


def _literal_len(fmt):
    return len(re.sub(r"%[sd]|\s", "", fmt.replace("%%", "%")))


# --------------------------------------------------------------------------
# normalisation, classification, output

SEV_RANK = {"built": 0, "info": 1, "warning": 2, "error": 3, "fatal": 4}
SEV_OUT = {"built": "error", "info": "notice", "warning": "warning",
           "error": "error", "fatal": "critical"}


def normalise(text):
    """First line, PG prefix stripped, control characters escaped."""
    text = text.lstrip("\n")
    text = text.split("\n", 1)[0]
    prev = None
    while prev != text:
        prev = text
        text = re.sub(r"^(\x01|\[Rank %[ds]\] ?|\[PG %s Rank %[ds]\] ?|\[PG %s\] ?)", "", text)
        text = text.lstrip(" ")
    text = text.replace(PREFIX, "%s").rstrip()
    text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\r", "\\r")
    text = re.sub(r"[\x00-\x1f]", lambda m: "\\x%02x" % ord(m.group(0)), text)
    return text


def load_classes(path):
    rules = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            if cols[0] == "regex":
                continue
            if len(cols) != 4:
                sys.exit("%s:%d: expected 4 tab-separated columns, got %d"
                         % (path, lineno, len(cols)))
            try:
                rx = re.compile(cols[0])
            except re.error as e:
                sys.exit("%s:%d: bad regex: %s" % (path, lineno, e))
            rules.append((rx, cols[1], cols[2], cols[3], lineno))
    return rules


def classify(rules, fmt):
    for rx, cat, sev, role, lineno in rules:
        if rx.search(fmt):
            return cat, sev, role, lineno
    return None


def git(git_dir, *args):
    return subprocess.run(["git", "--git-dir", git_dir] + list(args),
                          check=True, capture_output=True).stdout


def tag_files(git_dir, tag):
    names = git(git_dir, "ls-tree", "-r", "--name-only", tag).decode().splitlines()
    return [p for p in names if CPP_PATH.match(p) or PY_PATH.match(p)]


def extract_file(path, src):
    if path.endswith(".py"):
        return PyExtractor(src).run()
    return CppExtractor(src).run()


def versions_str(labels, present, open_ended):
    idx = [k for k, lab in enumerate(labels) if lab in present]
    first, last = labels[idx[0]], labels[idx[-1]]
    if idx[-1] == len(labels) - 1 and open_ended:
        return first + "-"
    return first + "-" + last if first != last else first


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--tag", action="append", required=True,
                    help="TAG or TAG=LABEL, oldest first (LABEL e.g. 1.13)")
    ap.add_argument("--classes", default="scripts/catalog/pytorch-classes.tsv")
    ap.add_argument("--extra", help="hand-read messages: format, versions, source")
    ap.add_argument("--closed", action="store_true",
                    help="the newest tag is not the current release: never write 'X-'")
    ap.add_argument("--out", default="-")
    ap.add_argument("--unmatched", help="write messages no regex matched here")
    a = ap.parse_args()

    tags = []
    for spec in a.tag:
        tag, _, label = spec.partition("=")
        tags.append((tag, label or re.sub(r"^v", "", tag)))
    labels = [lab for _, lab in tags]
    rules = load_classes(a.classes)

    seen = OrderedDict()  # fmt -> {'labels': set, 'source': str, 'sev': str}
    for tag, label in tags:
        for path in tag_files(a.git_dir, tag):
            src = git(a.git_dir, "show", "%s:%s" % (tag, path)).decode("utf-8", "replace")
            for text, sev in extract_file(path, src):
                fmt = normalise(text)
                if _literal_len(fmt) < 8:
                    continue
                rec = seen.setdefault(fmt, {"labels": set(), "source": path, "sev": sev})
                rec["labels"].add(label)
                rec["source"] = path
                if SEV_RANK[sev] > SEV_RANK[rec["sev"]]:
                    rec["sev"] = sev

    if a.extra:
        with open(a.extra, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line or line.startswith("#") or line.startswith("format\t"):
                    continue
                cols = line.split("\t")
                fmt, vers, source = cols[0], cols[1], cols[2]
                rec = seen.setdefault(fmt, {"labels": set(), "source": source,
                                            "sev": "built"})
                rec["versions"] = vers
                if source:
                    rec["source"] = source

    rows, unmatched = [], []
    for fmt, rec in seen.items():
        hit = classify(rules, fmt)
        if hit is None:
            unmatched.append("%s\t%s" % (fmt, rec["source"]))
            continue
        cat, sev, role, _ = hit
        if cat == "-":
            continue
        if sev == "*":
            sev = SEV_OUT[rec["sev"]]
        vers = rec.get("versions") or versions_str(labels, rec["labels"], not a.closed)
        rows.append((fmt, cat, sev, role, vers, rec["source"]))
    rows.sort(key=lambda r: (r[5], r[0]))

    text = HEADER + "\n" + "".join("\t".join(r) + "\n" for r in rows)
    if a.out == "-":
        sys.stdout.write(text)
    else:
        tmp = a.out + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        import os
        os.replace(tmp, a.out)
    if a.unmatched:
        with open(a.unmatched, "w", encoding="utf-8") as f:
            f.write("".join(u + "\n" for u in unmatched))
    print("%d rows, %d unmatched messages" % (len(rows), len(unmatched)), file=sys.stderr)


if __name__ == "__main__":
    main()
