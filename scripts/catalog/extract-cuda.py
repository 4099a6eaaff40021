#!/usr/bin/env python3
"""Generate rules/catalog/cuda.tsv from the CUDA runtime library.

PyTorch reports a failed CUDA call as "CUDA error: " followed by the string
cudaGetErrorString returns (c10/cuda/CUDAException.cpp; "RuntimeError: CUDA
error: an illegal memory access was encountered"). The runtime is not open
source, but its table of those strings is in the library itself: the
printable strings from "no error" (cudaSuccess's) up to the next API symbol.
This script reads them from libcudart, classifies each with
cuda-classes.tsv, and writes one catalogue row per string. See README.md in
this folder.
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

DEFAULT_LIB = "/usr/local/cuda/lib64/libcudart.so"
DEFAULT_CLASSES = os.path.join(HERE, "cuda-classes.tsv")
DEFAULT_OUT = os.path.join(nccl.REPO_ROOT, "rules", "catalog", "cuda.tsv")
PREFIX = "CUDA error: "  # what c10's C10_CUDA_CHECK puts before the string
SOURCE = "libcudart %s cudaGetErrorString, as c10/cuda/CUDAException.cpp prints it"

PRINTABLE = re.compile(rb"[\x20-\x7e]{3,}")
SYMBOL = re.compile(r"^cuda[A-Za-z0-9_]+$")


def error_strings(blob):
    """The runtime's error strings: after "cudaSuccess", "no error", the
    printable runs that are not the enum names between them ("cudaErrorX"),
    up to the first other symbol."""
    runs = [m.group().decode("ascii") for m in PRINTABLE.finditer(blob)]
    for i in range(len(runs) - 1):
        if runs[i] == "cudaSuccess" and runs[i + 1] == "no error":
            out = []
            for s in runs[i + 2:]:
                if SYMBOL.match(s):
                    if s.startswith("cudaError"):
                        continue
                    return out
                out.append(s)
    sys.exit("no error string table found (no 'cudaSuccess' followed by 'no error')")


def runtime_version(lib):
    """"13.0" from the toolkit's directory (/usr/local/cuda-13.0), else the
    library's soname ("13")."""
    real = os.path.realpath(lib)
    m = re.search(r"cuda-(\d+\.\d+)", real) or re.search(r"libcudart\.so\.(\d+(?:\.\d+)?)", real)
    return m.group(1) if m else "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", default=DEFAULT_LIB, help="libcudart.so to read (default %(default)s)")
    ap.add_argument("--classes", default=DEFAULT_CLASSES)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--show-rule", action="store_true", help="print the classes line that classified each row")
    args = ap.parse_args()
    with open(args.lib, "rb") as f:
        strings = error_strings(f.read())
    version = runtime_version(args.lib)
    nccl.log("%d error strings in %s (CUDA %s)" % (len(strings), args.lib, version))
    entries = [(PREFIX + s, version + "-", SOURCE % version) for s in strings]
    rows = nccl.classify_and_write(entries, args.classes, args.out, show_rule=args.show_rule)
    nccl.log("wrote %d rows to %s" % (len(rows), args.out))


if __name__ == "__main__":
    main()
