#!/usr/bin/env python3
"""Extract every NCCL WARN format string from an NCCL git repository.

Reads the C/C++ sources under src/ of each release tag straight from the git
object store (no work tree needed), finds every WARN(...) call, decodes its
format string (adjacent literals concatenated, PRIu64-style macros mapped to
their printf conversion, macro parameters substituted from the macro's call
sites), merges the strings across tags and classifies them with the rules in
nccl-classes.tsv.  Writes rules/catalog/nccl.tsv.

Standard library only.  Usage:
    python3 scripts/catalog/extract-nccl.py --git-dir /path/to/nccl.git [TAG ...]
See scripts/catalog/README.md.
"""

import argparse
import os
import re
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_CLASSES = os.path.join(HERE, "nccl-classes.tsv")
DEFAULT_OUT = os.path.join(REPO_ROOT, "rules", "catalog", "nccl.tsv")

HEADER = "format\tcategory\tseverity\trole\tversions\tsource"

CATEGORIES = {
    "collective_timeout", "desync", "rank_crash_oom", "rank_crash", "network_ib",
    "network_socket", "cuda_error", "gpu_hardware", "nccl_setup_error",
    "version_mismatch", "duplicate_gpu", "init_failure", "watchdog_stuck",
}
SEVERITIES = {"critical", "error", "warning", "notice"}
ROLES = {"cause", "consequence", "either"}

SOURCE_EXTS = (".cc", ".cu", ".h", ".cpp", ".hpp", ".cuh", ".c")

# <inttypes.h> macros as glibc defines them on LP64 Linux (what NCCL is built for).
PRI_MAP = {}
for _conv in "diouxX":
    PRI_MAP["PRI%s8" % _conv] = _conv
    PRI_MAP["PRI%s16" % _conv] = _conv
    PRI_MAP["PRI%s32" % _conv] = _conv
    PRI_MAP["PRI%s64" % _conv] = "l" + _conv
    PRI_MAP["PRI%sPTR" % _conv] = "l" + _conv
    PRI_MAP["PRI%sMAX" % _conv] = "l" + _conv

# INFO messages that are the only report of a real failure (no WARN goes with
# them), kept explicitly and few.  Each regex is matched (re.search) against the
# decoded format of INFO(FLAGS, fmt, ...) calls (INFO_LOC and other wrappers
# included).  Such rows get source "<path> [INFO]": they follow "NCCL INFO ",
# not "NCCL WARN ".
INFO_FAILURE_PATTERNS = [re.compile(p) for p in [
    # NCCLCHECK-family back-trace ("file.cc:123 -> 2", 2.30+ "file.cc:123 (func) -> 2"):
    # the chain under every WARN, and the only report of a failure returned under NOWARN.
    r"^%s:%d (\(%s\) )?-> %d( \(%s\)| \[[A-Za-z ]*[Tt]hread\])?$",
    # CUDACHECKIGNORE / CUCHECKIGNORE: a CUDA error reported, cleared, and ignored.
    r"^%s:%d (\(%s\) )?Cuda failure ",
    # The proxy service thread saw a local rank's connection close (that rank died).
    r"^\[Service thread\] Connection closed by localRank %d$",
    # RAS (2.24+): the NCCL-side evidence that a peer process died or hung.
    r"^RAS (keep-alive|init|send stuck) timeout error ",
    r"^RAS collective %s:%l[ud] timeout error ",
    r"^RAS (%s )?socket connection with %s closed by peer on (receive|send)",
    # A socket connect or accept NCCL retries (refused, timed out): when the job then
    # failed, often the only word of the network trouble (no WARN if a retry wins).
    r"^Call to (connect|accept) returned %s, retrying$",
    r"^%s: connect (to %s )?returned %s, retrying ",
    # IB resiliency (2.30+): a NIC/port failure handled by fail-over, reported as INFO only.
    r"^NET/IB: %s: (Marking device %d as permanently failed|Recovery for device %d failed|Port recovery failed for)",
]]

IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFINE_FN_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)\(([^)]*)\)")
DEFINE_STR_RE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]+(\"(?:[^\"\\\n]|\\.)*\"(?:[ \t]*\"(?:[^\"\\\n]|\\.)*\")*)[ \t]*$", re.M)


def log(msg):
    print(msg, file=sys.stderr)


# --------------------------------------------------------------------------- git

class Git:
    def __init__(self, git_dir):
        self.git_dir = git_dir
        self.proc = subprocess.Popen(
            ["git", "--git-dir", git_dir, "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.cache = {}

    def run(self, *args):
        return subprocess.run(["git", "--git-dir", self.git_dir] + list(args),
                              check=True, stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")

    def tags(self):
        return [t for t in self.run("tag", "--list").split("\n") if t]

    def ls_tree(self, tag):
        out = []
        for line in self.run("ls-tree", "-r", tag, "--", "src").split("\n"):
            if not line:
                continue
            meta, path = line.split("\t", 1)
            mode, typ, sha = meta.split()
            if typ == "blob":
                out.append((path, sha))
        return out

    def blob(self, sha):
        if sha in self.cache:
            return self.cache[sha]
        self.proc.stdin.write((sha + "\n").encode())
        self.proc.stdin.flush()
        header = self.proc.stdout.readline().decode()
        size = int(header.split()[2])
        data = self.proc.stdout.read(size)
        self.proc.stdout.read(1)
        text = data.decode("utf-8", "replace")
        self.cache[sha] = text
        return text


# ---------------------------------------------------------------------- versions

TAG_RE = re.compile(r"^v(2)\.(\d+)\.(\d+)-(\d+)$")


def tag_key(tag):
    m = TAG_RE.match(tag)
    return tuple(int(x) for x in m.groups()) if m else None


def tag_version(tag):
    m = TAG_RE.match(tag)
    return "%s.%s.%s" % m.groups()[:3]


def default_tags(all_tags):
    tags = [t for t in all_tags if TAG_RE.match(t) and tag_key(t) >= (2, 4, 0, 0)]
    return sorted(tags, key=tag_key)


# ------------------------------------------------------------- C source reading

def preprocess(text):
    """Remove comments (keeping string/char literals) and join continued lines."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = i + 2
            while j < n:
                if text[j] == "\n":
                    break
                if text[j] == "\\" and j + 1 < n and text[j + 1] == "\n":
                    j += 2
                    continue
                j += 1
            i = j
            continue
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
            continue
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
            continue
        # raw string literals R"delim( ... )delim" (rare; skip them whole)
        if c == "R" and i + 1 < n and text[i + 1] == '"' and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            k = text.find("(", i + 2)
            if k > 0:
                delim = text[i + 2:k]
                j = text.find(")" + delim + '"', k)
                if j > 0:
                    out.append('""')
                    i = j + len(delim) + 2
                    continue
        out.append(c)
        i += 1
    s = "".join(out)
    return re.sub(r"\\[ \t]*\r?\n", " ", s)


ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'",
           "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?", "e": "\x1b"}


def decode_c_string(body):
    out = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\" or i + 1 >= n:
            out.append(c)
            i += 1
            continue
        d = body[i + 1]
        if d in ESCAPES:
            out.append(ESCAPES[d])
            i += 2
        elif d == "x":
            m = re.match(r"[0-9A-Fa-f]+", body[i + 2:])
            out.append(chr(int(m.group(0), 16)) if m else "x")
            i += 2 + (len(m.group(0)) if m else 0)
        elif d in "01234567":
            m = re.match(r"[0-7]{1,3}", body[i + 1:])
            out.append(chr(int(m.group(0), 8)))
            i += 1 + len(m.group(0))
        else:
            out.append(d)
            i += 2
    return "".join(out)


def encode_field(s):
    out = []
    for ch in s:
        if ch == "\\":
            out.append("\\\\")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append("\\x%02x" % ord(ch))
        else:
            out.append(ch)
    return "".join(out)


def split_args(text, open_pos):
    """Arguments of the call whose '(' is at open_pos; None if unbalanced."""
    depth = 0
    args, cur_start = [], open_pos + 1
    i, n = open_pos, len(text)
    while i < n:
        c = text[i]
        if c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(text[cur_start:i].strip())
                return args
        elif c == "," and depth == 1:
            args.append(text[cur_start:i].strip())
            cur_start = i + 1
        i += 1
    return None


TOKEN_RE = re.compile(r'\s*(?:(?:u8|u|U|L)?"((?:[^"\\]|\\.)*)"|(#)\s*([A-Za-z_]\w*)|([A-Za-z_]\w*))', re.S)


def tokenize_format(arg):
    """A format argument as a list of ('lit', s) / ('id', name) / ('str', name); None if not a literal expression."""
    toks, pos = [], 0
    arg = arg.strip()
    while pos < len(arg):
        m = TOKEN_RE.match(arg, pos)
        if not m or m.end() == pos:
            return None
        if m.group(1) is not None:
            toks.append(("lit", decode_c_string(m.group(1))))
        elif m.group(2):
            toks.append(("str", m.group(3)))
        else:
            toks.append(("id", m.group(4)))
        pos = m.end()
        while pos < len(arg) and arg[pos].isspace():
            pos += 1
    return toks or None


def line_start(text, pos):
    return text.rfind("\n", 0, pos) + 1


def enclosing_macro(text, pos):
    """(name, [params]) if pos lies in a function-like #define."""
    ls = line_start(text, pos)
    le = text.find("\n", pos)
    m = DEFINE_FN_RE.match(text[ls:le if le >= 0 else len(text)])
    if not m:
        return None
    params = [p.strip() for p in m.group(2).split(",") if p.strip()]
    return m.group(1), params


class FileInfo:
    """What one source blob contributes (cached by blob sha)."""

    def __init__(self, text):
        self.text = preprocess(text)
        self.string_defines = {}
        for m in DEFINE_STR_RE.finditer(self.text):
            toks = tokenize_format(m.group(2))
            if toks:
                self.string_defines[m.group(1)] = "".join(t[1] for t in toks if t[0] == "lit")
        self.calls = {"WARN": self.find_calls("WARN"), "INFO": self.find_calls("INFO")}

    def find_calls(self, name):
        """[(fmt_tokens, enclosing_macro)] for each call of name(...)."""
        res = []
        argi = 1 if name == "INFO" else 0
        for m in re.finditer(r"(?<![A-Za-z0-9_#])%s\s*\(" % name, self.text):
            ls = line_start(self.text, m.start())
            if re.match(r"[ \t]*#[ \t]*define[ \t]+$", self.text[ls:m.start()]):
                continue  # the macro's own definition
            args = split_args(self.text, m.end() - 1)
            if not args or len(args) <= argi:
                continue
            toks = tokenize_format(args[argi])
            res.append((toks, args[argi], enclosing_macro(self.text, m.start())))
        return res

    def macro_calls(self, name):
        """Argument lists of each call of macro `name` (definition excluded)."""
        res = []
        if name not in self.text:
            return res
        for m in re.finditer(r"(?<![A-Za-z0-9_#])%s\s*\(" % re.escape(name), self.text):
            ls = line_start(self.text, m.start())
            if re.match(r"[ \t]*#[ \t]*define[ \t]+$", self.text[ls:m.start()]):
                continue
            args = split_args(self.text, m.end() - 1)
            if args is not None:
                res.append((args, enclosing_macro(self.text, m.start())))
        return res


# ------------------------------------------------------------------ extraction

class Extractor:
    def __init__(self, git):
        self.git = git
        self.finfo = {}
        self.unresolved = defaultdict(set)

    def info(self, sha):
        fi = self.finfo.get(sha)
        if fi is None:
            fi = self.finfo[sha] = FileInfo(self.git.blob(sha))
        return fi

    def resolve(self, toks, macro, string_defines, tag, path):
        """Tokens -> list of ('lit', s) / ('param', idx) / ('strparam', idx); None if not resolvable."""
        out = []
        params = macro[1] if macro else []
        for kind, val in toks:
            if kind == "lit":
                out.append(("lit", val))
            elif kind == "str":
                if val in params:
                    out.append(("strparam", params.index(val)))
                else:
                    out.append(("lit", val))
            elif val in params:
                out.append(("param", params.index(val)))
            elif val in PRI_MAP:
                out.append(("lit", PRI_MAP[val]))
            elif val in string_defines:
                out.append(("lit", string_defines[val]))
            else:
                self.unresolved[(path, val)].add(tag)
                return None
        return out

    def extract_tag(self, tag, level):
        """{format: set(paths)} for WARN (level 'WARN') or INFO calls in tag."""
        files = [(p, s) for p, s in self.git.ls_tree(tag)
                 if p.endswith(SOURCE_EXTS) and not re.search(r"(^|/)tests?(/|$)|_test\.", p)]
        infos = [(p, self.info(s)) for p, s in files]
        string_defines = {}
        for _, fi in infos:
            string_defines.update(fi.string_defines)
        found = defaultdict(set)
        templates = []  # (macro_name, resolved tokens)
        for path, fi in infos:
            for toks, raw, macro in fi.calls[level]:
                if toks is None:
                    if level == "WARN":
                        self.unresolved[(path, "non-literal format: " + raw[:60])].add(tag)
                    continue
                res = self.resolve(toks, macro, string_defines, tag, path)
                if res is None:
                    continue
                if any(k != "lit" for k, _ in res):
                    templates.append((macro[0], res))
                else:
                    found["".join(v for _, v in res)].add(path)
        # Expand templates at the macros' call sites (repeat for macros that call macros).
        seen = set()
        while templates:
            name, res = templates.pop()
            key = (name, tuple(res))
            if key in seen:
                continue
            seen.add(key)
            for path, fi in infos:
                for args, macro in fi.macro_calls(name):
                    new, ok = [], True
                    for kind, val in res:
                        if kind == "lit":
                            new.append(("lit", val))
                            continue
                        if val >= len(args):
                            ok = False
                            break
                        if kind == "strparam":
                            new.append(("lit", re.sub(r"\s+", " ", args[val])))
                            continue
                        atoks = tokenize_format(args[val])
                        if atoks is None:
                            self.unresolved[(path, "%s arg %r" % (name, args[val][:40]))].add(tag)
                            ok = False
                            break
                        sub = self.resolve(atoks, macro, string_defines, tag, path)
                        if sub is None:
                            ok = False
                            break
                        new.extend(sub)
                    if not ok:
                        continue
                    if any(k != "lit" for k, _ in new):
                        templates.append((macro[0], new))
                    else:
                        found["".join(v for _, v in new)].add(path)
        return found


# -------------------------------------------------------------- classification

def load_classes(path):
    exact, rules = {}, []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                sys.exit("%s:%d: expected 4 tab-separated fields, got %d" % (path, lineno, len(parts)))
            pat, cat, sev, role = parts
            if cat not in CATEGORIES or sev not in SEVERITIES or role not in ROLES:
                sys.exit("%s:%d: bad category/severity/role %r/%r/%r" % (path, lineno, cat, sev, role))
            if pat.startswith("="):
                exact[pat[1:]] = (cat, sev, role, lineno)
            else:
                try:
                    rules.append((re.compile(pat), (cat, sev, role, lineno)))
                except re.error as e:
                    sys.exit("%s:%d: bad regex: %s" % (path, lineno, e))
    return exact, rules


def classify(fmt, exact, rules):
    if fmt in exact:
        return exact[fmt]
    for rx, cls in rules:
        if rx.search(fmt):
            return cls
    return None


def classify_and_write(entries, classes_path, out_path, unclassified_ok=False, show_rule=False):
    """Classifies each (format, versions, source) with the classes file and
    writes the catalogue, rows sorted by source, then format. Exits, writing
    nothing, when a format has no class (unless unclassified_ok: category '?').
    Returns the rows written."""
    exact, rules = load_classes(classes_path)
    rows, missing = [], []
    for fmt, versions, source in entries:
        enc = encode_field(fmt)
        cls = classify(enc, exact, rules)
        if cls is None:
            missing.append(enc)
            cls = ("?", "?", "?", 0)
        rows.append((enc, cls[0], cls[1], cls[2], versions, source))
        if show_rule:
            log("classes:%d\t%s" % (cls[3], enc))
    if missing and not unclassified_ok:
        for m in sorted(missing):
            log("unclassified: " + m)
        sys.exit("%d formats have no class; add rules to %s" % (len(missing), classes_path))
    rows.sort(key=lambda r: (r[5], r[0]))
    os.makedirs(os.path.dirname(os.path.abspath(out_path)), exist_ok=True)
    with open(out_path, "w", encoding="utf-8", newline="\n") as f:
        f.write(HEADER + "\n")
        for r in rows:
            f.write("\t".join(r) + "\n")
    return rows


# ------------------------------------------------------------------------ main

def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git-dir", required=True, help="NCCL git directory (bare or .git)")
    ap.add_argument("tags", nargs="*", help="tags to read (default: every v2.X.Y-Z tag from v2.4 up)")
    ap.add_argument("--classes", default=DEFAULT_CLASSES)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--no-info", action="store_true", help="leave out the explicit INFO failure lines")
    ap.add_argument("--unclassified-ok", action="store_true",
                    help="write rows without a class (category '?') instead of failing")
    ap.add_argument("--show-rule", action="store_true", help="print the classes line used for each row to stderr")
    a = ap.parse_args()

    git = Git(a.git_dir)
    tags = a.tags or default_tags(git.tags())
    tags = sorted(tags, key=lambda t: tag_key(t) or (0,))
    if not tags:
        sys.exit("no tags")
    ex = Extractor(git)

    # (format, level) -> {"first": tag, "last": tag, "paths": {tag: set(paths)}}
    table = {}
    for tag in tags:
        warn = ex.extract_tag(tag, "WARN")
        levels = [("WARN", warn)]
        if not a.no_info:
            info = ex.extract_tag(tag, "INFO")
            levels.append(("INFO", {f: p for f, p in info.items()
                                   if any(rx.search(f) for rx in INFO_FAILURE_PATTERNS)}))
        for level, found in levels:
            for fmt, paths in found.items():
                key = (fmt, level)
                e = table.setdefault(key, {"first": tag, "last": tag, "paths": None})
                e["last"] = tag
                e["paths"] = paths
        log("%-12s %4d WARN formats" % (tag, len(warn)))

    for (path, what), ts in sorted(ex.unresolved.items()):
        ts = sorted(ts, key=tag_key)
        log("unresolved: %s: %s (%s..%s)" % (path, what, ts[0], ts[-1]))

    entries = []
    for (fmt, level), e in table.items():
        source = sorted(e["paths"])[0] + (" [INFO]" if level == "INFO" else "")
        entries.append((fmt, "%s-%s" % (tag_version(e["first"]), tag_version(e["last"])), source))
    rows = classify_and_write(entries, a.classes, a.out, a.unclassified_ok, a.show_rule)
    log("wrote %d rows to %s (tags %s..%s, %d tags)" % (len(rows), a.out, tags[0], tags[-1], len(tags)))


if __name__ == "__main__":
    main()
