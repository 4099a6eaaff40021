#!/usr/bin/env bash
# Scores ncclpm diagnose on the field corpus (fixtures/field/): recall of the
# expected categories, top-1 root category and culprit accuracy, per category,
# for the dev and holdout splits, and last a line
#   overall: recall R top1 T culprit C (N incidents)
# Options go to field_score: --verbose (each miss and the scoreboard),
# --write-scoreboard (record today's results for the regression test),
# --only SLUG, --rules DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
bash scripts/build.sh >/dev/null
exec build/tests/field_score "$@"
