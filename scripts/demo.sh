#!/usr/bin/env bash
# The README's first command: installs what is missing, builds, and runs the
# postmortem of a bundled crashed job: ingest, what was found, the diagnosis.
#   bash scripts/demo.sh [LOG_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh >/dev/null
job=${1:-fixtures/incidents/save-phase-stall-torchrun-logdir/logs}
workdir=$(mktemp -d)
db=$workdir/incidents.db
run() { echo "\$ $*"; "$@"; echo; }
run build/ncclpm ingest "$job" --db "$db"
run build/ncclpm query --db "$db" \
  "SELECT rank, seq, op_type, numel_in, numel_out, timeout_ms, ran_for_ms FROM watchdog_timeouts ORDER BY rank"
run build/ncclpm query --db "$db" \
  "SELECT rel_path, lines_read, lines_blank, lines_recognized, lines_unparsed, adds_up FROM file_accounting"
run build/ncclpm diagnose --db "$db"
echo "(the incident database is $db; try: build/ncclpm query --db $db \"SELECT * FROM findings\")"
