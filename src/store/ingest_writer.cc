// src/store/ingest_writer.cc
#include "ncclpm/store/ingest_writer.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <chrono>
#include <ctime>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"

namespace fs = std::filesystem;

namespace ncclpm::store {

using recognize::Event;
using recognize::EventKind;

namespace {

std::string now_text() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Logs hold invalid UTF-8 and NUL bytes; SQLite TEXT may not. Empty is NULL.
Value text(std::string_view s) {
  if (s.empty()) return Value();
  return Value(util::to_sqlite_text(s));
}

// A killed ingest leaves its temporary database ("X.tmp-<pid>") behind; the
// next ingest removes those whose process is gone.
void remove_stale_temporaries(const fs::path& db_path) {
  std::error_code ec;
  fs::path dir = db_path.has_parent_path() ? db_path.parent_path() : fs::path(".");
  std::string prefix = db_path.filename().string() + ".tmp-";
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    auto pid = util::parse_int(name.substr(prefix.size()));
    if (pid && *pid > 0 && ::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH)
      fs::remove(it->path(), ec);
  }
}

}  // namespace

struct IngestWriter::Statements {
  Statement file, event, version, env, comm, warn, trace, work, status, desync, mismatch,
      traceback, exit, signal, timers, collective, line_block, line_group, progress_stream, fr_entry, fr_status,
      finish;
};

Result<std::unique_ptr<IngestWriter>> IngestWriter::begin(const fs::path& db_path,
                                                          const std::string& job_name,
                                                          const std::string& paths_text) {
  std::unique_ptr<IngestWriter> w(new IngestWriter());
  w->final_path_ = db_path;
  std::error_code ec;
  fs::path parent = db_path.has_parent_path() ? db_path.parent_path() : fs::path(".");
  if (!fs::is_directory(parent, ec)) {
    return Error::at(db_path.string(), "cannot create the database: directory " +
                                           util::quoted(parent.string()) + " does not exist",
                     "create it first, or give --db a path in an existing directory");
  }
  remove_stale_temporaries(db_path);
  bool exists = fs::exists(db_path, ec);
  if (exists && fs::file_size(db_path, ec) == 0) exists = false;  // an empty file is a new database
  fs::path open_path = db_path;
  if (!exists) {
    w->temp_path_ = db_path;
    w->temp_path_ += ".tmp-" + std::to_string(::getpid());
    fs::remove(w->temp_path_, ec);
    open_path = w->temp_path_;
  }
  auto db = Connection::open(open_path, false);
  if (!db) return db.take_error();
  w->db_ = std::move(db).value();
  if (!exists) {
    // Built under a temporary name: durability comes from the final rename.
    if (Status s = w->db_.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"); !s) return s.take_error();
  }
  if (Status s = check_or_create_schema(w->db_, true); !s) {
    w->abort();
    Error e = s.take_error();
    e.where = db_path.string();
    return e;
  }
  if (Status s = w->db_.exec("PRAGMA cache_size=-65536; BEGIN IMMEDIATE"); !s) {
    w->abort();
    return s.take_error();
  }
  w->open_transaction_ = true;
  std::string now = now_text();
  auto job = w->db_.prepare("INSERT INTO jobs(name, created_at, updated_at) VALUES(?, ?, ?) "
                            "ON CONFLICT(name) DO UPDATE SET updated_at = excluded.updated_at");
  if (!job) return job.take_error();
  if (Status s = job->run({job_name, now, now}); !s) return s.take_error();
  auto id = w->db_.scalar_int("SELECT job_id FROM jobs WHERE name = ?", {job_name});
  if (!id) return id.take_error();
  w->job_id_ = *id;
  auto ingest = w->db_.prepare(
      "INSERT INTO ingests(job_id, started_at, paths, ncclpm_version) VALUES(?, ?, ?, ?)");
  if (!ingest) return ingest.take_error();
  if (Status s = ingest->run({w->job_id_, now, paths_text, std::string(NCCLPM_VERSION)}); !s)
    return s.take_error();
  w->ingest_id_ = w->db_.last_insert_id();
  auto known = w->db_.prepare("SELECT fingerprint, rel_path, file_id FROM files WHERE job_id = ?");
  if (!known) return known.take_error();
  if (Status s = known->bind_all({w->job_id_}); !s) return s.take_error();
  while (known->step()) {
    w->known_.insert(known->column_text(0));
    w->known_paths_[known->column_text(1)] = known->column_int(2);
  }
  if (Status s = w->prepare_statements(); !s) return s.take_error();
  return w;
}

IngestWriter::~IngestWriter() { abort(); }

Status IngestWriter::prepare_statements() {
  st_ = std::make_unique<Statements>();
  struct Def {
    Statement* target;
    const char* sql;
  };
  const Def defs[] = {
      {&st_->file,
       "INSERT INTO files(job_id, ingest_id, path, rel_path, kind, compression, size_bytes, mtime_ns,"
       " fingerprint, status, problem, hint_rank, hint_local_rank, attempt)"
       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->event,
       "INSERT INTO events(job_id, file_id, line_no, end_line, byte_offset, ts_us, ts_has_year, host,"
       " pid, tid, rank, local_rank, device, pg_rank, pg_id, pg_name, pg_desc, kind, severity, text)"
       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->version, "INSERT INTO nccl_versions VALUES(?,?,?,?)"},
      {&st_->env, "INSERT INTO nccl_env VALUES(?,?,?,?)"},
      {&st_->comm, "INSERT INTO communicators VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->warn, "INSERT INTO nccl_warnings VALUES(?,?,?,?,?,?,?,?)"},
      {&st_->trace, "INSERT INTO nccl_error_traces VALUES(?,?,?,?,?,?)"},
      {&st_->work, "INSERT INTO work_records VALUES(?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->status, "INSERT INTO pg_status VALUES(?,?,?,?,?,?,?)"},
      {&st_->desync, "INSERT INTO desync_reports VALUES(?,?,?,?,?,?,?)"},
      {&st_->mismatch, "INSERT INTO collective_mismatches VALUES(?,?,?,?,?,?,?)"},
      {&st_->traceback, "INSERT INTO tracebacks VALUES(?,?,?,?,?,?,?,?)"},
      {&st_->exit, "INSERT INTO process_exits VALUES(?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->signal, "INSERT INTO signals_sent VALUES(?,?,?,?)"},
      {&st_->timers, "INSERT INTO rank_timer_values VALUES(?,?,?,?,?,?,?,?)"},
      {&st_->collective,
       "INSERT INTO collective_blocks(job_id, file_id, first_line, last_line, rows, rank_min, rank_max, data)"
       " VALUES(?,?,?,?,?,?,?,?)"},
      {&st_->line_block,
       "INSERT INTO line_blocks(job_id, file_id, first_line, last_line, rows, data) VALUES(?,?,?,?,?,?)"},
      {&st_->line_group,
       "INSERT INTO line_groups(job_id, file_id, block_id, group_no, rows, first_line, last_line, kind, host, pid,"
       " rank, local_rank, producer, severity, ts_has_year, min_ts_us, max_ts_us)"
       " VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->progress_stream,
       "INSERT INTO progress_streams(job_id, file_id, rank, source, label, timed_lines, sample_group_id,"
       " last_bar_group_id, last_bar_line, last_bar_ts_us, last_bar_text, last_bar_step, last_bar_total,"
       " last_bar_seconds_per_step) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->fr_entry,
       "INSERT INTO flight_recorder_entries VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"},
      {&st_->fr_status, "INSERT INTO flight_recorder_pg_status VALUES(?,?,?,?,?,?,?)"},
      {&st_->finish,
       "UPDATE files SET status=?, problem=?, launcher=?, lines_read=?, lines_blank=?,"
       " lines_recognized=?, lines_unparsed=?, lines_oversized=?, bytes_read=? WHERE file_id=?"},
  };
  for (const Def& d : defs) {
    auto s = db_.prepare(d.sql);
    if (!s) return s.take_error();
    *d.target = std::move(s).value();
  }
  return Ok{};
}

std::optional<int64_t> IngestWriter::file_at(const std::string& rel_path) const {
  auto it = known_paths_.find(rel_path);
  if (it == known_paths_.end()) return std::nullopt;
  return it->second;
}

Status IngestWriter::forget_file(int64_t file_id) {
  auto blocks = db_.scalar_int("SELECT count(*) FROM collective_blocks WHERE file_id = ?", {file_id});
  if (!blocks) return blocks.take_error();
  rebuild_summary_ = rebuild_summary_ || *blocks > 0;
  // Every table keyed by an event's id, found in the schema so that a new
  // typed table is never forgotten here.
  auto typed = db_.prepare(
      "SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) c"
      " WHERE m.type = 'table' AND m.name != 'events' AND c.name = 'event_id'");
  if (!typed) return typed.take_error();
  std::vector<std::string> tables;
  while (typed->step()) tables.push_back(typed->column_text(0));
  for (const std::string& t : tables) {
    std::string sql = "DELETE FROM " + t + " WHERE event_id IN (SELECT event_id FROM events WHERE file_id = ?)";
    auto del = db_.prepare(sql);
    if (!del) return del.take_error();
    if (Status s = del->run({file_id}); !s) return s;
  }
  for (const char* t : {"events", "line_groups", "line_blocks", "collective_blocks", "flight_recorder_entries",
                        "flight_recorder_pg_status", "progress_streams", "files"}) {
    auto del = db_.prepare(std::string("DELETE FROM ") + t + " WHERE file_id = ?");
    if (!del) return del.take_error();
    if (Status s = del->run({file_id}); !s) return s;
  }
  std::erase_if(known_paths_, [&](const auto& kv) { return kv.second == file_id; });
  return Ok{};
}

// Counted again from the stored blocks: a replaced file's calls must leave the
// summary with it.
Status IngestWriter::rebuild_collective_summary() {
  if (Status s = db_.exec("DELETE FROM collective_summary WHERE job_id = " + std::to_string(job_id_)); !s) return s;
  auto ins = db_.prepare(
      "INSERT INTO collective_summary SELECT job_id, rank, nranks, op, datatype, count(*), max(op_count)"
      " FROM collective_calls WHERE job_id = ? GROUP BY rank, nranks, op, datatype");
  if (!ins) return ins.take_error();
  return ins->run({job_id_});
}

Result<int64_t> IngestWriter::add_file(const discover::DiscoveredFile& f) {
  std::string status = f.kind == discover::FileKind::kBinary       ? "skipped"
                       : f.kind == discover::FileKind::kUnreadable ? "error"
                                                                   : "ok";
  Status s = st_->file.run(
      {job_id_, ingest_id_, text(fs::absolute(f.path).string()), text(f.rel_path),
       std::string(discover::file_kind_name(f.kind)), std::string(read::compression_name(f.compression)),
       f.size_bytes, f.mtime_ns, f.fingerprint, status, text(f.skip_reason),
       opt_int(f.hints.rank.value_or(-1)), opt_int(f.hints.local_rank.value_or(-1)),
       opt_int(f.hints.attempt.value_or(-1))});
  if (!s) return s.take_error();
  int64_t id = db_.last_insert_id();
  if (first_new_file_id_ == 0) first_new_file_id_ = id;
  known_.insert(f.fingerprint);
  return id;
}

Status IngestWriter::write_event(int64_t file_id, const Event& e) {
  Status s = st_->event.run(
      {job_id_, file_id, e.line_no, e.end_line, e.byte_offset, e.ts_us != 0 ? Value(e.ts_us) : Value(),
       e.ts_us != 0 ? Value(int64_t{e.ts_has_year}) : Value(), text(e.host), opt_int(e.pid),
       opt_int(e.tid), opt_int(e.rank), opt_int(e.local_rank), opt_int(e.device), opt_int(e.pg_rank),
       text(e.pg_id), text(e.pg_name), text(e.pg_desc),
       std::string(recognize::event_kind_name(e.kind)),
       e.severity != 0 ? Value(std::string(1, e.severity)) : Value(), text(e.text)});
  if (!s) return s;
  int64_t id = db_.last_insert_id();
  using namespace recognize;
  return std::visit(
      [&](const auto& d) -> Status {
        using T = std::decay_t<decltype(d)>;
        if constexpr (std::is_same_v<T, NcclVersion>) {
          return st_->version.run({id, job_id_, d.version, text(d.cuda)});
        } else if constexpr (std::is_same_v<T, EnvSetting>) {
          return st_->env.run({id, job_id_, text(d.name), text(d.value)});
        } else if constexpr (std::is_same_v<T, CommInfo>) {
          return st_->comm.run({id, job_id_, d.event, text(d.api), text(d.comm), text(d.comm_id),
                                text(d.bus_id), text(d.parent), opt_int(d.rank), opt_int(d.nranks),
                                opt_int(d.nnodes), opt_int(d.local_ranks), opt_int(d.local_rank),
                                opt_int(d.cuda_dev), opt_int(d.nvml_dev)});
        } else if constexpr (std::is_same_v<T, NcclWarning>) {
          return st_->warn.run({id, job_id_, d.category, opt_int(d.ib_status), text(d.ib_status_name),
                                text(d.peer), text(d.hca), text(d.detail)});
        } else if constexpr (std::is_same_v<T, ErrorTrace>) {
          return st_->trace.run({id, job_id_, text(d.src_file), opt_int(d.src_line),
                                 opt_int(d.result), opt_text(vocab::result_name(d.result))});
        } else if constexpr (std::is_same_v<T, WorkRecord>) {
          return st_->work.run({id, job_id_, d.context, opt_int(d.seq), d.op_type,
                                opt_text(vocab::canonical_op(d.op_type)), opt_int(d.numel_in),
                                opt_int(d.numel_out), text(d.tensor_shape), opt_int(d.timeout_ms),
                                opt_int(d.ran_for_ms)});
        } else if constexpr (std::is_same_v<T, PgStatus>) {
          return st_->status.run({id, job_id_, d.wording, opt_int(d.seq), opt_int(d.last_enqueued),
                                  opt_int(d.last_completed), text(d.source_rank)});
        } else if constexpr (std::is_same_v<T, DesyncReport>) {
          return st_->desync.run({id, job_id_, d.kind, opt_int(d.seq), text(d.op_type),
                                  opt_int(d.reporter_rank), text(d.lagging_ranks)});
        } else if constexpr (std::is_same_v<T, Mismatch>) {
          return st_->mismatch.run({id, job_id_, opt_int(d.seq), opt_int(d.rank_a), text(d.op_a),
                                    opt_int(d.rank_b), text(d.op_b)});
        } else if constexpr (std::is_same_v<T, Traceback>) {
          return st_->traceback.run({id, job_id_, text(d.exc_type), text(d.exc_message),
                                     text(d.last_file), opt_int(d.last_line), text(d.last_func),
                                     int64_t{d.frames}});
        } else if constexpr (std::is_same_v<T, ProcessExit>) {
          return st_->exit.run({id, job_id_, d.source, opt_int(d.rank), opt_int(d.local_rank),
                                opt_int(d.pid),
                                d.exit_code == INT64_MIN ? Value() : Value(d.exit_code),
                                text(d.signal), text(d.host), text(d.time), text(d.message),
                                int64_t{d.root_cause_block}});
        } else if constexpr (std::is_same_v<T, SignalSent>) {
          return st_->signal.run({id, job_id_, opt_int(d.pid), d.signal});
        } else if constexpr (std::is_same_v<T, RankTimers>) {
          auto opt_real = [](double v) { return v < 0 ? Value() : Value(v); };
          for (const RankTimerValue& v : d.values) {
            Status s = st_->timers.run({id, job_id_, d.option, v.timer, opt_int(v.rank), opt_real(v.ms),
                                        opt_real(v.min_ms), opt_real(v.max_ms)});
            if (!s) return s;
          }
          return Ok{};
        } else {
          return Ok{};
        }
      },
      e.detail);
}

Status IngestWriter::write_rows(int64_t file_id, recognize::Rows& rows) {
  // Text files arrive with these lines encoded by their parsing thread;
  // anything else is encoded here.
  bool progress = std::any_of(rows.events.begin(), rows.events.end(),
                              [](const Event& e) { return e.kind == EventKind::kTrainingProgress; });
  if (progress || !rows.unparsed.empty()) {
    LineSink sink;
    sink.add(rows);
    std::vector<ProgressStream> streams = sink.take_streams();
    if (Status s = write_lines(file_id, sink.take_lines()); !s) return s;
    if (Status s = write_progress_streams(file_id, streams); !s) return s;
  }
  for (const Event& e : rows.events)
    if (Status s = write_event(file_id, e); !s) return s;
  if (!rows.collectives.empty()) {
    // Text files arrive encoded by their parsing thread; anything else is encoded here.
    CollectiveEncoder encoder;
    for (const auto& c : rows.collectives) encoder.add(c);
    if (Status s = write_collectives(file_id, encoder.take()); !s) return s;
  }
  rows.events.clear();
  rows.collectives.clear();
  rows.unparsed.clear();
  return Ok{};
}

// One row per block: the blob is bound without a copy.
Status IngestWriter::write_collectives(int64_t file_id, const EncodedCollectives& collectives) {
  sqlite3_stmt* st = st_->collective.raw();
  auto int_or_null = [st](int col, int64_t v) {
    return v < 0 ? sqlite3_bind_null(st, col) : sqlite3_bind_int64(st, col, v);
  };
  for (const CollectiveBlock& b : collectives.blocks) {
    sqlite3_bind_int64(st, 1, job_id_);
    sqlite3_bind_int64(st, 2, file_id);
    sqlite3_bind_int64(st, 3, b.first_line);
    sqlite3_bind_int64(st, 4, b.last_line);
    sqlite3_bind_int64(st, 5, b.rows);
    int_or_null(6, b.rank_min);
    int_or_null(7, b.rank_max);
    sqlite3_bind_blob64(st, 8, b.data.data(), b.data.size(), SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE)
      return Error::at(db_.path(), "write failed: " + sqlite_message(db_.raw()));
  }
  merge_summary(collective_summary_, collectives.summary);
  return Ok{};
}

// A block, then its groups, which name it.
Status IngestWriter::write_lines(int64_t file_id, const EncodedLines& lines) {
  sqlite3_stmt* st = st_->line_block.raw();
  std::vector<int64_t>& first_groups = first_group_of_block_[file_id];
  for (const LineBlock& b : lines.blocks) {
    sqlite3_bind_int64(st, 1, job_id_);
    sqlite3_bind_int64(st, 2, file_id);
    sqlite3_bind_int64(st, 3, b.first_line);
    sqlite3_bind_int64(st, 4, b.last_line);
    sqlite3_bind_int64(st, 5, b.rows);
    sqlite3_bind_blob64(st, 6, b.data.data(), b.data.size(), SQLITE_STATIC);
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    if (rc != SQLITE_DONE) return Error::at(db_.path(), "write failed: " + sqlite_message(db_.raw()));
    int64_t block_id = db_.last_insert_id();
    for (size_t i = 0; i < b.groups.size(); ++i) {
      const LineGroup& g = b.groups[i];
      Status s = st_->line_group.run(
          {job_id_, file_id, block_id, static_cast<int64_t>(i), g.rows, g.first_line, g.last_line,
           std::string(line_kind_name(g.kind)), text(g.host), opt_int(g.pid), opt_int(g.rank),
           opt_int(g.local_rank), g.producer, g.severity != 0 ? Value(std::string(1, g.severity)) : Value(),
           g.ts_has_year >= 0 ? Value(int64_t{g.ts_has_year}) : Value(),
           g.min_ts_us != 0 ? Value(g.min_ts_us) : Value(), g.max_ts_us != 0 ? Value(g.max_ts_us) : Value()});
      if (!s) return s;
      // A block's groups get consecutive ids: its first is all it takes to
      // find any of them (write_progress_streams).
      if (i == 0) {
        if (first_groups.size() <= static_cast<size_t>(b.seq)) first_groups.resize(static_cast<size_t>(b.seq) + 1, 0);
        first_groups[static_cast<size_t>(b.seq)] = db_.last_insert_id();
      }
    }
  }
  return Ok{};
}

Status IngestWriter::write_progress_streams(int64_t file_id, const std::vector<ProgressStream>& streams) {
  const std::vector<int64_t>& first_groups = first_group_of_block_[file_id];
  auto group_id = [&](const LineRef& ref) -> Value {
    if (!ref.valid() || static_cast<size_t>(ref.block_seq) >= first_groups.size()) return Value();
    return first_groups[static_cast<size_t>(ref.block_seq)] + ref.group;
  };
  for (const ProgressStream& p : streams) {
    bool bar = p.last_bar.valid();
    auto opt_real = [](double v) { return v < 0 ? Value() : Value(v); };
    Status s = st_->progress_stream.run(
        {job_id_, file_id, opt_int(p.rank), text(p.source), p.label.empty() ? Value(std::string()) : text(p.label),
         p.timed_lines, group_id(p.sample), group_id(p.last_bar), bar ? Value(p.last_bar_line) : Value(),
         bar && p.last_bar_ts_us != 0 ? Value(p.last_bar_ts_us) : Value(), bar ? text(p.last_bar_text) : Value(),
         bar ? opt_int(p.last_bar_step) : Value(), bar ? opt_int(p.last_bar_total) : Value(),
         bar ? opt_real(p.last_bar_seconds_per_step) : Value()});
    if (!s) return s;
  }
  return Ok{};
}

Status IngestWriter::write_collective_summary() {
  auto ins = db_.prepare("INSERT INTO collective_summary VALUES(?,?,?,?,?,?,?)");
  if (!ins) return ins.take_error();
  for (const auto& [k, v] : collective_summary_) {
    Status s = ins->run({job_id_, opt_int(k.rank), opt_int(k.nranks), k.op, int64_t{k.datatype}, v.calls,
                         static_cast<int64_t>(v.max_op_count)});
    if (!s) return s;
  }
  return Ok{};
}

Status IngestWriter::write_flight_recorder(
    int64_t file_id, const std::vector<recognize::FlightRecorderEntry>& entries,
    const std::vector<recognize::FlightRecorderPgStatus>& status) {
  for (const auto& r : entries) {
    Status s = st_->fr_entry.run(
        {job_id_, file_id, opt_int(r.rank), text(r.pg_id), text(r.pg_name), text(r.pg_desc),
         opt_int(r.record_id), opt_int(r.collective_seq_id), opt_int(r.p2p_seq_id), opt_int(r.op_id),
         text(r.profiling_name), text(r.op), int64_t{r.is_p2p}, text(r.state), int64_t{r.retired},
         text(r.input_sizes), text(r.output_sizes), text(r.input_dtypes), text(r.output_dtypes),
         opt_int(r.numel_in), opt_int(r.numel_out), opt_int(r.datatype), opt_int(r.timeout_ms),
         opt_int(r.time_created_ns), r.duration_ms >= 0 ? Value(r.duration_ms) : Value()});
    if (!s) return s;
  }
  for (const auto& p : status) {
    Status s = st_->fr_status.run({job_id_, file_id, opt_int(p.rank), text(p.pg_id),
                                   opt_int(p.last_enqueued), opt_int(p.last_started),
                                   opt_int(p.last_completed)});
    if (!s) return s;
  }
  return Ok{};
}

Status IngestWriter::finish_file(int64_t file_id, const FileOutcome& o) {
  first_group_of_block_.erase(file_id);
  return st_->finish.run({o.status, text(o.problem), text(o.launcher), o.counts.read, o.counts.blank,
                          o.counts.recognized, o.counts.unparsed, o.counts.oversized, o.counts.bytes,
                          file_id});
}

Status IngestWriter::commit(const Totals& t) {
  if (Status s = rebuild_summary_ ? rebuild_collective_summary() : write_collective_summary(); !s) return s;
  if (Status s = post_process(); !s) return s;
  auto done = db_.prepare(
      "UPDATE ingests SET finished_at=?, files_new=?, files_already=?, lines=?, bytes=?, seconds=?"
      " WHERE ingest_id=?");
  if (!done) return done.take_error();
  if (Status s = done->run({now_text(), t.files_new, t.files_already, t.lines, t.bytes, t.seconds,
                            ingest_id_});
      !s)
    return s;
  st_.reset();
  // A database of an older readable schema now holds this one's blocks.
  if (Status s = db_.exec("PRAGMA user_version = " + std::to_string(kSchemaVersion)); !s) return s;
  if (Status s = db_.exec("COMMIT"); !s) return s;
  open_transaction_ = false;
  if (!temp_path_.empty()) {
    db_.close();
    std::error_code ec;
    fs::rename(temp_path_, final_path_, ec);
    if (ec) return Error::at(final_path_.string(), "cannot move the new database into place: " + ec.message());
    temp_path_.clear();
  }
  return Ok{};
}

void IngestWriter::abort() {
  st_.reset();
  if (open_transaction_) {
    (void)db_.exec("ROLLBACK");
    open_transaction_ = false;
  }
  if (!temp_path_.empty()) {
    db_.close();
    std::error_code ec;
    fs::remove(temp_path_, ec);
    temp_path_.clear();
  }
}

}  // namespace ncclpm::store
