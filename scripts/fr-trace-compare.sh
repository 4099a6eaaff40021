#!/usr/bin/env bash
# scripts/fr-trace-compare.sh -- runs PyTorch's own Flight Recorder analyzer
# (fr_trace) and `ncclpm diagnose` on the same pickled dumps and checks that
# they name the same collective and the same culprit ranks (issue 12): the
# ranks missing from it, or the ranks that called it differently.
#
#   bash scripts/fr-trace-compare.sh PYTORCH_SRC [DUMP_DIR...]
#
# PYTORCH_SRC is a PyTorch source tree (a checkout or a release tarball) that
# has torch/distributed/flight_recorder/fr_trace.py (2.7+). fr_trace is pure
# Python but imports torch; Debian's python3-torch (1.13) is enough to load
# the dumps (torch.jit._pickle for the 2.3-2.5 ones), so the analyzer runs
# from the source tree on top of it, unchanged. Not part of the test suite:
# CI has no PyTorch sources. Default DUMP_DIRs: the pickled fixtures in
# fixtures/flight-recorder/ (fr_trace reads no JSON dumps).
set -euo pipefail

die() { echo "fr-trace-compare: $*" >&2; exit 2; }
[ $# -ge 1 ] || die "usage: bash scripts/fr-trace-compare.sh PYTORCH_SRC [DUMP_DIR...]"
src=$(cd "$1" && pwd) || die "no directory $1"
shift
[ -f "$src/torch/distributed/flight_recorder/fr_trace.py" ] ||
  die "$src/torch/distributed/flight_recorder/fr_trace.py not found: give a PyTorch 2.7+ source tree"
root=$(cd "$(dirname "$0")/.." && pwd)
ncclpm="${NCCLPM:-$root/build/ncclpm}"
[ -x "$ncclpm" ] || die "$ncclpm not built (cmake --build build), or set NCCLPM"

py=/usr/bin/python3  # Debian's python3-* packages install for this one
if ! "$py" -c 'import torch, tabulate, typing_extensions' 2>/dev/null; then
  apt-get install -y -q python3-torch python3-tabulate python3-typing-extensions >/dev/null ||
    die "could not install python3-torch, python3-tabulate, python3-typing-extensions"
fi

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for d in "$root"/fixtures/flight-recorder/*/; do
    case "$d" in *-json/) ;; *) dirs+=("${d%/}") ;; esac
  done
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Installed torch has no flight_recorder package: let torch.distributed find
# the source tree's, then run fr_trace as `python -m` would.
cat >"$work/run_fr_trace.py" <<EOF
import runpy, sys
import torch.distributed
torch.distributed.__path__.append("$src/torch/distributed")
sys.argv[0] = "fr_trace"
runpy.run_module("torch.distributed.flight_recorder.fr_trace", run_name="__main__", alter_sys=True)
EOF

fail=0
for d in "${dirs[@]}"; do
  name=$(basename "$d")
  fr=$("$py" "$work/run_fr_trace.py" "$d" 2>&1) || { echo "$name: fr_trace failed: $fr" >&2; fail=1; continue; }
  # fr_trace's first verdict: "Not all ranks joining collective, sequence
  # number: N" with "missing ranks: {..}", or "Collective sequence number: N
  # has errors" with "error msg: Culprit rank R; ...".
  fr_seq=$(sed -n -e 's/^Not all ranks joining collective, sequence number: \([0-9]*\)$/\1/p' \
    -e 's/^Collective sequence number: \([0-9]*\) has errors$/\1/p' <<<"$fr" | head -1)
  fr_ranks=$(sed -n 's/^missing ranks: {\(.*\)}$/\1/p' <<<"$fr" | head -1 | tr -d ' ')
  [ -n "$fr_ranks" ] ||
    fr_ranks=$( { grep -o 'Culprit rank [0-9]*' <<<"$fr" || true; } | sed 's/Culprit rank //' | sort -n | paste -sd, -)
  db="$work/$name.db"
  "$ncclpm" ingest "$d" --db "$db" --quiet 2>/dev/null || die "ncclpm ingest $d failed"
  read -r ours_seq ours_ranks < <("$ncclpm" diagnose --db "$db" --format json | "$py" -c '
import json, re, sys
for f in json.load(sys.stdin)["findings"]:
    if f["rule"].startswith("flight-recorder-"):
        seq = re.search(r"[Cc]ollective (\d+)", f["summary"]).group(1)
        print(seq, ",".join(str(r) for r in sorted(f["culprit_ranks"])))
        break
else:
    print("- -")')
  if [ "$fr_seq" = "$ours_seq" ] && [ "$fr_ranks" = "$ours_ranks" ]; then
    echo "$name: same: collective $fr_seq, culprit ranks {$fr_ranks}"
  else
    echo "$name: DIFFERENT: fr_trace collective ${fr_seq:--} culprits {${fr_ranks:--}}; ncclpm collective $ours_seq culprits {$ours_ranks}"
    fail=1
  fi
done
exit $fail
