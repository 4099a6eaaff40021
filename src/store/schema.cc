// src/store/schema.cc
#include "ncclpm/store/schema.h"

#include <system_error>

namespace ncclpm::store {

const char* schema_sql() {
  return R"SQL(
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS jobs (
  job_id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL, ref_year INTEGER);
CREATE TABLE IF NOT EXISTS ingests (
  ingest_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs, started_at TEXT,
  finished_at TEXT, paths TEXT, files_new INTEGER, files_already INTEGER, lines INTEGER,
  bytes INTEGER, seconds REAL, ncclpm_version TEXT);
CREATE TABLE IF NOT EXISTS files (
  file_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL REFERENCES jobs,
  ingest_id INTEGER REFERENCES ingests, path TEXT NOT NULL, rel_path TEXT NOT NULL,
  kind TEXT NOT NULL, compression TEXT NOT NULL, launcher TEXT, size_bytes INTEGER,
  mtime_ns INTEGER, fingerprint TEXT NOT NULL, status TEXT NOT NULL, problem TEXT,
  hint_rank INTEGER, hint_local_rank INTEGER, attempt INTEGER,
  lines_read INTEGER DEFAULT 0, lines_blank INTEGER DEFAULT 0,
  lines_recognized INTEGER DEFAULT 0, lines_unparsed INTEGER DEFAULT 0,
  lines_oversized INTEGER DEFAULT 0, bytes_read INTEGER DEFAULT 0,
  UNIQUE (job_id, fingerprint));
CREATE TABLE IF NOT EXISTS events (
  event_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
  line_no INTEGER NOT NULL, end_line INTEGER NOT NULL, byte_offset INTEGER,
  ts_us INTEGER, ts_has_year INTEGER, host TEXT, pid INTEGER, tid INTEGER, rank INTEGER,
  local_rank INTEGER, device INTEGER, pg_rank INTEGER, pg_id TEXT, pg_name TEXT, pg_desc TEXT,
  kind TEXT NOT NULL, severity TEXT, text TEXT);
CREATE TABLE IF NOT EXISTS nccl_versions (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, version TEXT, cuda TEXT);
CREATE TABLE IF NOT EXISTS nccl_env (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, name TEXT, value TEXT);
CREATE TABLE IF NOT EXISTS communicators (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, event TEXT, api TEXT, comm TEXT, comm_id TEXT,
  bus_id TEXT, parent TEXT, comm_rank INTEGER, nranks INTEGER, nnodes INTEGER,
  local_ranks INTEGER, comm_local_rank INTEGER, cuda_dev INTEGER, nvml_dev INTEGER);
CREATE TABLE IF NOT EXISTS nccl_warnings (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, category TEXT, ib_status INTEGER,
  ib_status_name TEXT, peer TEXT, hca TEXT, detail TEXT);
CREATE TABLE IF NOT EXISTS nccl_error_traces (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, src_file TEXT, src_line INTEGER,
  result INTEGER, result_name TEXT);
CREATE TABLE IF NOT EXISTS work_records (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, context TEXT, seq INTEGER, op_type TEXT,
  op TEXT, numel_in INTEGER, numel_out INTEGER, tensor_shape TEXT, timeout_ms INTEGER,
  ran_for_ms INTEGER);
CREATE TABLE IF NOT EXISTS pg_status (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, wording TEXT, seq INTEGER,
  last_enqueued INTEGER, last_completed INTEGER, source_rank TEXT);
CREATE TABLE IF NOT EXISTS desync_reports (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, kind TEXT, seq INTEGER, op_type TEXT,
  reporter_rank INTEGER, lagging_ranks TEXT);
CREATE TABLE IF NOT EXISTS collective_mismatches (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, seq INTEGER, rank_a INTEGER, op_a TEXT,
  rank_b INTEGER, op_b TEXT);
CREATE TABLE IF NOT EXISTS tracebacks (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, exc_type TEXT, exc_message TEXT,
  last_file TEXT, last_line INTEGER, last_func TEXT, frames INTEGER);
CREATE TABLE IF NOT EXISTS process_exits (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, source TEXT, rank INTEGER, local_rank INTEGER,
  pid INTEGER, exit_code INTEGER, signal TEXT, host TEXT, time TEXT, message TEXT,
  root_cause_block INTEGER);
-- Megatron-LM timer reports: one row per value (a rank's time, or a timer's range).
CREATE TABLE IF NOT EXISTS rank_timer_values (
  event_id INTEGER NOT NULL, job_id INTEGER, option TEXT, timer TEXT, rank INTEGER, ms REAL,
  min_ms REAL, max_ms REAL);
CREATE TABLE IF NOT EXISTS signals_sent (
  event_id INTEGER PRIMARY KEY, job_id INTEGER, pid INTEGER, signal TEXT);
-- NCCL COLL lines, encoded in blocks by the parsing threads (format in
-- include/ncclpm/store/collective_blocks.h); read them through collective_calls.
CREATE TABLE IF NOT EXISTS collective_blocks (
  block_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
  first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, rows INTEGER NOT NULL,
  rank_min INTEGER, rank_max INTEGER, data BLOB NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS collective_calls USING ncclpm_collectives;
CREATE TABLE IF NOT EXISTS collective_summary (
  job_id INTEGER NOT NULL, rank INTEGER, nranks INTEGER, op TEXT, datatype INTEGER,
  calls INTEGER NOT NULL, max_op_count INTEGER);
-- Lines per rank and host, counted by ingest once ranks and hosts are
-- inferred: which host each rank ran on, without reading every line again.
CREATE TABLE IF NOT EXISTS rank_lines (
  job_id INTEGER NOT NULL, rank INTEGER NOT NULL, host TEXT, lines INTEGER NOT NULL);
-- Training-progress lines tallied by ingest per file, process, producer and
-- bar label: how many carry a step time, and the last tqdm bar with n/total.
-- Groups named here are line_groups rows: the sample's gives the stream its
-- rank, the last bar's its host and clock.
CREATE TABLE IF NOT EXISTS progress_streams (
  job_id INTEGER NOT NULL, file_id INTEGER NOT NULL, rank INTEGER, source TEXT NOT NULL,
  label TEXT NOT NULL, timed_lines INTEGER NOT NULL, sample_group_id INTEGER, last_bar_group_id INTEGER,
  last_bar_line INTEGER, last_bar_ts_us INTEGER, last_bar_text TEXT, last_bar_step INTEGER,
  last_bar_total INTEGER, last_bar_seconds_per_step REAL);
-- The lines no parser typed, the training loop's progress lines and NCCL's
-- channel and transport lines, compactly (include/ncclpm/store/line_blocks.h):
-- their numbers, times and texts compressed in blocks, their attribution once
-- per group of a block's lines that share it. The virtual tables
-- unparsed_lines, training_progress, nccl_channel_lines and nccl_network_lines
-- read them back one row per line.
CREATE TABLE IF NOT EXISTS line_blocks (
  block_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, file_id INTEGER NOT NULL,
  first_line INTEGER NOT NULL, last_line INTEGER NOT NULL, rows INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS line_groups (
  group_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, file_id INTEGER NOT NULL, block_id INTEGER NOT NULL,
  group_no INTEGER NOT NULL, rows INTEGER NOT NULL, first_line INTEGER NOT NULL, last_line INTEGER NOT NULL,
  kind TEXT NOT NULL, host TEXT, pid INTEGER, rank INTEGER, local_rank INTEGER, producer TEXT, severity TEXT,
  ts_has_year INTEGER, min_ts_us INTEGER, max_ts_us INTEGER, ts_year INTEGER, ts_shift_us INTEGER NOT NULL DEFAULT 0);
CREATE VIRTUAL TABLE IF NOT EXISTS unparsed_lines USING ncclpm_lines(unparsed);
CREATE VIRTUAL TABLE IF NOT EXISTS training_progress USING ncclpm_lines(training_progress);
CREATE VIRTUAL TABLE IF NOT EXISTS nccl_channel_lines USING ncclpm_lines(nccl_channel);
CREATE VIRTUAL TABLE IF NOT EXISTS nccl_network_lines USING ncclpm_lines(nccl_network);
CREATE TABLE IF NOT EXISTS flight_recorder_entries (
  job_id INTEGER NOT NULL, file_id INTEGER NOT NULL, rank INTEGER, pg_id TEXT, pg_name TEXT,
  pg_desc TEXT, record_id INTEGER, collective_seq_id INTEGER, p2p_seq_id INTEGER,
  op_id INTEGER, profiling_name TEXT, op TEXT, is_p2p INTEGER, state TEXT, retired INTEGER,
  input_sizes TEXT, output_sizes TEXT, input_dtypes TEXT, output_dtypes TEXT,
  numel_in INTEGER, numel_out INTEGER, datatype INTEGER, timeout_ms INTEGER,
  time_created_ns INTEGER, duration_ms REAL);
CREATE TABLE IF NOT EXISTS flight_recorder_pg_status (
  job_id INTEGER NOT NULL, file_id INTEGER NOT NULL, rank INTEGER, pg_id TEXT,
  last_enqueued INTEGER, last_started INTEGER, last_completed INTEGER);
CREATE TABLE IF NOT EXISTS findings (
  finding_id INTEGER PRIMARY KEY, job_id INTEGER NOT NULL, position INTEGER NOT NULL,
  rule TEXT NOT NULL, category TEXT NOT NULL, title TEXT, severity TEXT, confidence REAL,
  root_cause INTEGER, culprit_ranks TEXT, culprit_hosts TEXT, collective TEXT,
  evidence TEXT, advice TEXT, replay TEXT, json TEXT, created_at TEXT);
CREATE TABLE IF NOT EXISTS clock_offsets (
  job_id INTEGER NOT NULL, host TEXT NOT NULL, reference_host TEXT NOT NULL, offset_us INTEGER NOT NULL,
  moments INTEGER NOT NULL, basis TEXT NOT NULL, corrected INTEGER NOT NULL, PRIMARY KEY (job_id, host));
CREATE TABLE IF NOT EXISTS rank_states (
  job_id INTEGER NOT NULL, rank INTEGER NOT NULL, host TEXT, role TEXT, phase TEXT,
  last_enqueued INTEGER, last_completed INTEGER, PRIMARY KEY (job_id, rank));
CREATE TABLE IF NOT EXISTS job_phases (
  job_id INTEGER NOT NULL, phase TEXT NOT NULL, from_us INTEGER NOT NULL, to_us INTEGER,
  file TEXT, line_no INTEGER, rank INTEGER, text TEXT, at_hang INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS replays (
  replay_id INTEGER PRIMARY KEY, finding_id INTEGER REFERENCES findings, job_id INTEGER,
  created_at TEXT, plan TEXT, environment TEXT, devices TEXT, nccl_version TEXT,
  results TEXT, verdict TEXT, confirms INTEGER, exit_code INTEGER);

CREATE VIEW IF NOT EXISTS watchdog_timeouts AS
  SELECT e.job_id, e.file_id, e.line_no, e.ts_us, e.host, e.rank, e.pg_rank, e.pg_id, e.pg_desc,
         w.seq, w.op_type, w.op, w.numel_in, w.numel_out, w.timeout_ms, w.ran_for_ms
  FROM work_records w JOIN events e USING (event_id)
  WHERE w.context = 'watchdog_timeout';
-- Names and sizes are computed when read, so the high-volume table stays lean.
CREATE VIEW IF NOT EXISTS collectives AS
  SELECT job_id, file_id, line_no, ts_us, host, pid, rank, comm_rank, device, op, op_count, count,
    datatype, CASE datatype WHEN 0 THEN 'int8' WHEN 1 THEN 'uint8' WHEN 2 THEN 'int32'
      WHEN 3 THEN 'uint32' WHEN 4 THEN 'int64' WHEN 5 THEN 'uint64' WHEN 6 THEN 'float16'
      WHEN 7 THEN 'float32' WHEN 8 THEN 'float64' WHEN 9 THEN 'bfloat16' WHEN 10 THEN 'float8e4m3'
      WHEN 11 THEN 'float8e5m2' END AS dtype,
    CASE redop_id WHEN 0 THEN 'sum' WHEN 1 THEN 'prod' WHEN 2 THEN 'max' WHEN 3 THEN 'min'
      WHEN 4 THEN 'avg' ELSE 'premulsum' || redop_id END AS redop,
    root, nranks, comm,
    count * CASE WHEN datatype IN (0, 1, 10, 11) THEN 1 WHEN datatype IN (6, 9) THEN 2
      WHEN datatype IN (2, 3, 7) THEN 4 WHEN datatype IN (4, 5, 8) THEN 8 END AS bytes
  FROM collective_calls;
CREATE VIEW IF NOT EXISTS file_accounting AS
  SELECT job_id, file_id, rel_path, status, lines_read, lines_blank, lines_recognized,
         lines_unparsed, lines_read = lines_blank + lines_recognized + lines_unparsed AS adds_up
  FROM files;
)SQL";
}

const char* index_sql() {
  return R"SQL(
CREATE INDEX IF NOT EXISTS events_by_kind ON events (job_id, kind);
CREATE INDEX IF NOT EXISTS events_by_rank ON events (job_id, rank);
CREATE INDEX IF NOT EXISTS events_by_file ON events (file_id, line_no);
CREATE INDEX IF NOT EXISTS line_groups_by_file ON line_groups (file_id, first_line);
CREATE INDEX IF NOT EXISTS line_groups_by_rank ON line_groups (job_id, rank);
CREATE INDEX IF NOT EXISTS work_records_by_seq ON work_records (job_id, seq);
CREATE INDEX IF NOT EXISTS collective_blocks_by_file ON collective_blocks (file_id);
-- Diagnose finds a file by the name its evidence carries, once per file that
-- timed out: thousands of times on a big job.
CREATE INDEX IF NOT EXISTS files_by_path ON files (job_id, rel_path);
)SQL";
}

Error damaged_database(const Connection& db) {
  return Error::at(db.path(), "the database is damaged (" + std::string(sqlite3_errmsg(db.raw())) +
                                  "): truncated or overwritten since ncclpm wrote it",
                   "ingest the logs again into a new database (--db NEW.db); `sqlite3 FILE .recover` may "
                   "save what is left");
}

Status check_or_create_schema(Connection& db, bool create) {
  // Reading user_version is the first access: a file that is not SQLite fails here.
  auto version = db.scalar_int("PRAGMA user_version");
  // A writer holding the file: sqlite_message already says so, and what to do.
  int code = sqlite3_errcode(db.raw()) & 0xff;
  if (!version && (code == SQLITE_BUSY || code == SQLITE_LOCKED)) return version.take_error();
  if (!version && code == SQLITE_CORRUPT) return damaged_database(db);
  if (!version) {
    return Error::at(db.path(), "not an ncclpm incident database (" + version.error().message + ")",
                     "give --db a new file name, or the database that `ncclpm ingest` wrote");
  }
  if (*version > kSchemaVersion) {
    return Error::at(db.path(),
                     "database has schema version " + std::to_string(*version) +
                         ", newer than this ncclpm reads (" + std::to_string(kSchemaVersion) + ")",
                     "use the ncclpm that wrote it, or a newer one");
  }
  if (*version >= kOldestReadableSchema) return Ok{};
  // Version 1 stored one row per collective, version 2 no severity of the
  // lines no parser knows, versions 3 to 5 a row per unparsed and per
  // progress line, version 6 a row per NCCL channel and transport line: all
  // need the logs read again.
  if (*version >= 1) {
    return Error::at(db.path(),
                     "database has schema version " + std::to_string(*version) +
                         ", from an older ncclpm; this one reads version " + std::to_string(kSchemaVersion),
                     "ingest the logs again into a new database (--db NEW.db)");
  }
  auto tables = db.scalar_int("SELECT count(*) FROM sqlite_master");
  if (!tables) return tables.take_error();
  if (*tables > 0) {
    return Error::at(db.path(), "not an ncclpm incident database (it holds other tables)",
                     "give --db a new file name");
  }
  if (!create) return Error::at(db.path(), "database is empty: nothing was ingested into it");
  if (Status s = db.exec(schema_sql()); !s) return s;
  return db.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion));
}

static Result<Connection> open_existing(const std::filesystem::path& path, bool read_only) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Error::at(path.string(), "no incident database here",
                     "run `ncclpm ingest LOG_DIR --db " + path.string() + "` first");
  }
  // Readers open read-write with query_only set: a read-write connection
  // rolls back the journal an interrupted ingest left, which a read-only one
  // cannot. A file we may not write is opened read-only.
  auto db = Connection::open(path, false);
  if (db && read_only) {
    if (Status s = db->exec("PRAGMA query_only = ON"); !s) return s.take_error();
  }
  if (!db) db = Connection::open(path, true);
  if (!db) return db.take_error();
  if (Status s = check_or_create_schema(*db, false); !s) return s.take_error();
  return std::move(db).value();
}

Result<Connection> open_for_reading(const std::filesystem::path& path) {
  return open_existing(path, true);
}

Result<Connection> open_for_update(const std::filesystem::path& path) {
  return open_existing(path, false);
}

}  // namespace ncclpm::store
