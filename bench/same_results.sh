#!/usr/bin/env bash
# bench/same_results.sh: speed never at the cost of truth. Ingests each corpus
# with two ncclpm binaries and compares what they stored and what they
# diagnosed: per-table aggregates over every column that matters, the
# collective summary and the diagnosis as JSON. Exits 1 on any difference.
#
#   bash bench/same_results.sh /tmp/ncclpm-before build-bench/ncclpm bench/.corpus/coll-512 ...
set -euo pipefail

if [[ $# -lt 3 ]]; then
  echo "usage: $0 BASELINE_NCCLPM NEW_NCCLPM CORPUS_DIR..." >&2
  exit 2
fi
baseline=$1 new=$2
shift 2

# Every column of the collective rows, folded so that sums cannot overflow.
checks=(
  "collectives|SELECT count(*), sum(line_no), sum(op_count % 1000003), sum(count % 1000003),
     sum(coalesce(rank, -7)), sum(coalesce(comm_rank, -7)), sum(coalesce(pid, -7) % 1000),
     sum(coalesce(ts_us, -7) % 1000003), sum(datatype), sum(redop_id), sum(root),
     sum(coalesce(nranks, -7)), sum(coalesce(device, -7)), count(DISTINCT comm),
     count(DISTINCT host), count(DISTINCT op) FROM collective_calls"
  "events|SELECT kind, count(*), sum(coalesce(rank, -9)), sum(line_no), sum(end_line),
     sum(length(text)), sum(coalesce(ts_us, 0) % 1000003), count(DISTINCT host)
     FROM events WHERE kind NOT IN ('training_progress', 'nccl_channel', 'nccl_network') GROUP BY kind ORDER BY kind"
  # Every column of every NCCL channel and transport line (CHANNEL, NETWORK: see setup_lines below).
  "channel|SELECT f.rel_path, c.* FROM CHANNEL c JOIN files f USING (file_id) ORDER BY 1, line_no"
  "network|SELECT f.rel_path, n.* FROM NETWORK n JOIN files f USING (file_id) ORDER BY 1, line_no"
  # Every column of every progress line (PROGRESS: see progress_lines below).
  "progress|SELECT f.rel_path, p.* FROM PROGRESS p JOIN files f USING (file_id) ORDER BY 1, line_no, text"
  "unparsed|SELECT count(*), sum(coalesce(rank, -9)), sum(line_no), sum(length(text)) FROM unparsed_lines"
  # Every column of every unparsed line, in file order.
  "lines|SELECT f.rel_path, u.line_no, u.byte_offset, u.ts_us, u.ts_has_year, u.host, u.pid, u.rank,
     u.local_rank, u.producer, u.severity, u.text FROM unparsed_lines u JOIN files f USING (file_id) ORDER BY 1, 2"
  "files|SELECT rel_path, status, hint_rank, lines_read, lines_blank, lines_recognized,
     lines_unparsed FROM files ORDER BY rel_path"
  "summary|SELECT rank, nranks, op, datatype, sum(calls), max(max_op_count) FROM collective_summary
     GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4"
  # Who said each line, line by line: sums of ranks would not see two swapped.
  "attribution|SELECT f.rel_path, e.line_no, e.kind, e.rank, e.host, e.pid FROM events e JOIN files f USING (file_id)
     WHERE e.kind NOT IN ('training_progress', 'nccl_channel', 'nccl_network')
     UNION ALL SELECT f.rel_path, c.line_no, 'nccl_channel', c.rank, c.host, c.pid FROM CHANNEL c
       JOIN files f USING (file_id)
     UNION ALL SELECT f.rel_path, n.line_no, 'nccl_network', n.rank, n.host, n.pid FROM NETWORK n
       JOIN files f USING (file_id)
     UNION ALL SELECT f.rel_path, u.line_no, '-', u.rank, u.host, u.pid FROM unparsed_lines u JOIN files f USING (file_id)
     UNION ALL SELECT f.rel_path, p.line_no, 'training_progress', p.rank, p.host, p.pid FROM PROGRESS p
       JOIN files f USING (file_id)
     ORDER BY 1, 2, 3"
)

# The progress lines, whichever way the binary stores them: before schema 6
# events rows with a training_progress row each, since then the virtual table.
progress_columns="file_id, line_no, ts_us, host, pid, rank, local_rank, severity, text, source, label, unit,
  step, total, seconds_per_step, epoch, loss"
progress_lines() {  # BINARY DB
  if "$1" query --db "$2" "SELECT event_id FROM training_progress LIMIT 1" > /dev/null 2>&1; then
    echo "(SELECT ${progress_columns//file_id/e.file_id} FROM training_progress JOIN events e USING (event_id))"
  else
    echo "(SELECT $progress_columns FROM training_progress)"
  fi
}

# NCCL's channel or transport lines (KIND nccl_channel or nccl_network),
# whichever way the binary stores them: before schema 7 events rows of that
# kind, since then the virtual table KIND_lines.
setup_columns="file_id, line_no, ts_us, host, pid, rank, local_rank, severity, text"
setup_lines() {  # BINARY DB KIND
  if "$1" query --db "$2" "SELECT 1 FROM $3_lines LIMIT 1" > /dev/null 2>&1; then
    echo "(SELECT $setup_columns FROM $3_lines)"
  else
    echo "(SELECT $setup_columns FROM events WHERE kind = '$3')"
  fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for corpus in "$@"; do
  name=$(basename "$corpus")
  for which in baseline new; do
    bin=${!which}
    # The same database path for both: it appears in the diagnosis.
    rm -f "$tmp/incident.db"
    "$bin" ingest "$corpus" --db "$tmp/incident.db" --quiet > /dev/null
    progress=$(progress_lines "$bin" "$tmp/incident.db")
    channel=$(setup_lines "$bin" "$tmp/incident.db" nccl_channel)
    network=$(setup_lines "$bin" "$tmp/incident.db" nccl_network)
    for check in "${checks[@]}"; do
      sql=${check#*|}
      sql=${sql//PROGRESS/$progress}
      sql=${sql//CHANNEL/$channel}
      "$bin" query --db "$tmp/incident.db" --format csv "${sql//NETWORK/$network}" > "$tmp/$which.${check%%|*}"
    done
    "$bin" diagnose --db "$tmp/incident.db" --format json > "$tmp/$which.diagnosis"
  done
  for part in collectives events channel network progress unparsed lines files summary attribution diagnosis; do
    if cmp -s "$tmp/baseline.$part" "$tmp/new.$part"; then
      echo "$name: $part same ($(wc -l < "$tmp/new.$part") lines)"
    else
      echo "$name: $part DIFFERS:"
      diff "$tmp/baseline.$part" "$tmp/new.$part" | head -20 || true
      status=1
    fi
  done
done
exit $status
