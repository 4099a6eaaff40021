#!/usr/bin/env bash
# Rewrites fixtures/incidents/*/expected/{findings.json,report.txt} from the
# current build. Read the diff before committing it.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --build build
NCCLPM_UPDATE_GOLDENS=1 build/tests/ncclpm_tests --gtest_filter='Fixtures/Incidents.*' >/dev/null
git status --short fixtures/incidents
