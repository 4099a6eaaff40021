#!/usr/bin/env python3
"""Generate rules/catalog/nccl-net-ofi.tsv from an aws-ofi-nccl git repository.

The aws-ofi-nccl plugin (libfabric: AWS EFA and other OFI providers) logs its
warnings through NCCL's logger: NCCL_OFI_WARN(fmt, ...) prepends "NET/OFI " and
NCCL prints the line as `host:pid:tid [dev] function:line NCCL WARN NET/OFI ...`.
This script reads every NCCL_OFI_WARN format of every release tag (v1.x), the
same way extract-nccl.py reads NCCL's WARNs (whose helpers it reuses), and
classifies each with ofi-classes.tsv. See README.md in this folder.
"""
import argparse
import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("extract_nccl", os.path.join(HERE, "extract-nccl.py"))
nccl = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nccl)

DEFAULT_CLASSES = os.path.join(HERE, "ofi-classes.tsv")
DEFAULT_OUT = os.path.join(nccl.REPO_ROOT, "rules", "catalog", "nccl-net-ofi.tsv")
PREFIX = "NET/OFI "  # what NCCL_OFI_WARN puts before every format

TAG_RE = re.compile(r"^v1\.(\d+)\.(\d+)(?:-?aws)?$")


def tag_key(tag):
    m = TAG_RE.match(tag)
    # "v1.7.0-aws" after "v1.7.0": the AWS build of a release comes later.
    return (1, int(m.group(1)), int(m.group(2)), tag.endswith("aws")) if m else None


def tag_version(tag):
    m = TAG_RE.match(tag)
    return "1.%s.%s" % m.groups()[:2]


class OfiGit(nccl.Git):
    """The plugin keeps its macros in include/, its code in src/."""

    def ls_tree(self, tag):
        out = []
        for line in self.run("ls-tree", "-r", tag, "--", "src", "include").split("\n"):
            if not line:
                continue
            meta, path = line.split("\t", 1)
            _mode, typ, sha = meta.split()
            if typ == "blob":
                out.append((path, sha))
        return out


class OfiFileInfo(nccl.FileInfo):
    def __init__(self, text):
        super().__init__(text)
        self.calls = {"WARN": self.find_calls("NCCL_OFI_WARN")}


class OfiExtractor(nccl.Extractor):
    def info(self, sha):
        fi = self.finfo.get(sha)
        if fi is None:
            fi = self.finfo[sha] = OfiFileInfo(self.git.blob(sha))
        return fi


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--git-dir", required=True, help="aws-ofi-nccl git directory (bare or .git)")
    ap.add_argument("tags", nargs="*", help="tags to read (default: every v1.X.Y[-aws] release tag)")
    ap.add_argument("--classes", default=DEFAULT_CLASSES)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--unclassified-ok", action="store_true",
                    help="write rows without a class (category '?') instead of failing")
    a = ap.parse_args()

    git = OfiGit(a.git_dir)
    tags = a.tags or [t for t in git.tags() if TAG_RE.match(t)]
    tags = sorted(tags, key=lambda t: tag_key(t) or (0,))
    if not tags:
        sys.exit("no tags")
    ex = OfiExtractor(git)
    table = {}  # format -> {"first", "last", "paths"}
    for tag in tags:
        found = ex.extract_tag(tag, "WARN")
        for fmt, paths in found.items():
            e = table.setdefault(PREFIX + fmt, {"first": tag, "last": tag, "paths": None})
            e["last"] = tag
            e["paths"] = paths
        nccl.log("%-12s %4d WARN formats" % (tag, len(found)))
    for (path, what), ts in sorted(ex.unresolved.items()):
        ts = sorted(ts, key=tag_key)
        nccl.log("unresolved: %s: %s (%s..%s)" % (path, what, ts[0], ts[-1]))

    entries = [(fmt, "%s-%s" % (tag_version(e["first"]), tag_version(e["last"])), sorted(e["paths"])[0])
               for fmt, e in table.items()]
    rows = nccl.classify_and_write(entries, a.classes, a.out, a.unclassified_ok)
    nccl.log("wrote %d rows to %s (tags %s..%s, %d tags)" % (len(rows), a.out, tags[0], tags[-1], len(tags)))


if __name__ == "__main__":
    main()
