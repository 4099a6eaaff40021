#!/usr/bin/env python3
"""Does diagnose hold when the same logs arrive wrapped by something else?

Real logs reach ncclpm through collectors, terminals and chat clients that put
their own text around every line. For each field incident given (default:
every dev incident the scoreboard records as right), this wraps each line of
its logs as a collector or a paste would, diagnoses the wrapped copy with
build/ncclpm and compares its first root finding with the plain logs':
category and culprit ranks always, culprit hosts only under wrappers that
name no host of their own. It prints, per wrapper, the incidents that differ.

    python3 scripts/field-wrapped.py [SLUG...]

It found the bars lost behind colour codes, the launcher not learnt behind a
collector and the quoted terminal rows of 2026-12-08 (see README.md).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NCCLPM = os.path.join(ROOT, "build", "ncclpm")
FIELD = os.path.join(ROOT, "fixtures", "field")

# name -> (wrap(line index, line), whether the wrapper names a host)
WRAPPERS = {
    "kubectl": (lambda i, l: "[pod/trainer-0/main] " + l, True),
    "cri": (lambda i, l: "2024-05-01T10:00:%02d.%06dZ stdout F %s" % (i % 60, i, l), False),
    "quote": (lambda i, l: "> " + l, False),
    "crlf": (lambda i, l: l + "\r", False),
    "hosttag": (lambda i, l: "node-3 [stderr] " + l, True),
    "journald": (lambda i, l: "Nov 23 10:11:%02d gpu-node-7 python[4242]: %s" % (i % 60, l), True),
    "compose": (lambda i, l: "trainer-1  | " + l, True),
    "ansi": (lambda i, l: "\x1b[36m" + l + "\x1b[0m" if i % 3 == 0 else l, False),
}


def first_root(logs, work):
    """(category, culprit ranks, culprit hosts) of the first root finding."""
    db = os.path.join(work, "wrapped.db")
    if os.path.exists(db):
        os.remove(db)
    ingest = subprocess.run([NCCLPM, "ingest", logs, "--db", db, "--job", "j"], capture_output=True)
    if ingest.returncode != 0:
        return ("ingest failed: " + ingest.stderr.decode(errors="replace").strip(), (), ())
    diagnosis = subprocess.run([NCCLPM, "diagnose", "--db", db, "--format", "json"], capture_output=True)
    try:
        findings = json.loads(diagnosis.stdout)["findings"]
    except (ValueError, KeyError):
        return ("diagnose failed: exit %d" % diagnosis.returncode, (), ())
    roots = [f for f in findings if f.get("root_cause")]
    if not roots:
        return ("none", (), ())
    f = roots[0]
    return (f["category"], tuple(f.get("culprit_ranks", [])), tuple(sorted(f.get("culprit_hosts", []))))


def wrap_logs(src, dst, wrap):
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for name in os.listdir(src):
        with open(os.path.join(src, name), "rb") as f:
            lines = f.read().decode("utf-8", "replace").split("\n")
        wrapped = [wrap(i, l) if l.strip() else l for i, l in enumerate(lines)]
        with open(os.path.join(dst, name), "w", encoding="utf-8") as f:
            f.write("\n".join(wrapped))


def right_dev_incidents():
    with open(os.path.join(FIELD, "scoreboard.tsv"), encoding="utf-8") as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    return [r[0] for r in rows if len(r) > 4 and r[1] == "dev" and r[4] == "yes"]


def main():
    slugs = sys.argv[1:] or right_dev_incidents()
    work = tempfile.mkdtemp()
    differ = {name: [] for name in WRAPPERS}
    try:
        for slug in slugs:
            logs = os.path.join(FIELD, slug, "logs")
            plain = first_root(logs, work)
            for name, (wrap, names_host) in WRAPPERS.items():
                wrap_logs(logs, os.path.join(work, "logs"), wrap)
                got = first_root(os.path.join(work, "logs"), work)
                same = got[:2] == plain[:2] and (names_host or got[2] == plain[2])
                if not same:
                    differ[name].append((slug, plain, got))
    finally:
        shutil.rmtree(work)
    for name, rows in differ.items():
        print("%-9s %d of %d differ" % (name, len(rows), len(slugs)))
        for slug, plain, got in rows:
            print("  %s: %s -> %s" % (slug, plain, got))


if __name__ == "__main__":
    main()
