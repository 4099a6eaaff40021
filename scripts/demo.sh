#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the
# postmortem on a bundled crashed job (ingest, then what was found).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
job=${1:-fixtures/incidents/save-phase-stall-torchrun-logdir/logs}
db=$(mktemp -d)/incidents.db
echo "\$ ncclpm ingest $job --db $db"
build/ncclpm ingest "$job" --db "$db"
echo
echo "\$ ncclpm query \"SELECT rank, seq, op_type, numel_in, numel_out, timeout_ms FROM watchdog_timeouts ORDER BY rank\""
build/ncclpm query --db "$db" "SELECT rank, seq, op_type, numel_in, numel_out, timeout_ms FROM watchdog_timeouts ORDER BY rank"
