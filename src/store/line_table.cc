// src/store/line_table.cc
//
// The virtual table `unparsed_lines`: one row per line no parser typed,
// decoded on the fly from `line_runs` (the attribution) and `line_blocks` (the
// compressed texts). Read-only. Equality constraints on the run's columns
// (job, file, rank, host, pid, local rank, producer, severity) and bounds on
// the line number are answered by SQL over the runs, so blocks that cannot
// match are never decompressed.
#include <chrono>
#include <memory>
#include <string>

#include "ncclpm/store/line_blocks.h"

namespace ncclpm::store {
namespace {

enum Column : int {
  kJobId, kFileId, kLineNo, kByteOffset, kTsUs, kTsHasYear, kHost, kPid, kRank, kLocalRank,
  kProducer, kSeverity, kText
};
constexpr const char* kDeclaration =
    "CREATE TABLE x(job_id INTEGER, file_id INTEGER, line_no INTEGER, byte_offset INTEGER, ts_us INTEGER,"
    " ts_has_year INTEGER, host TEXT, pid INTEGER, rank INTEGER, local_rank INTEGER, producer TEXT,"
    " severity TEXT, text TEXT)";

// The columns a run holds for all its lines: an equality on one of them, or
// a test for NULL, selects runs. Bit k of idxNum: `= ?` on kRunColumns[k];
// bit kRunColumnCount + k: IS NULL.
struct RunColumn {
  int column;
  const char* name;  // in line_runs
};
constexpr RunColumn kRunColumns[] = {
    {kJobId, "job_id"}, {kFileId, "file_id"},       {kRank, "rank"},         {kHost, "host"},
    {kPid, "pid"},      {kLocalRank, "local_rank"}, {kProducer, "producer"}, {kSeverity, "severity"},
};
constexpr int kRunColumnCount = static_cast<int>(std::size(kRunColumns));
// Bounds on the line number select the runs whose range can hold it.
constexpr int kLineFromSlot = 2 * kRunColumnCount;  // line_no >= ? (or >)
constexpr int kLineToSlot = kLineFromSlot + 1;      // line_no <= ? (or <)
constexpr int kSlots = kLineToSlot + 1;
constexpr int kRowBits = 13;  // rowid = block_id << kRowBits | row in block
static_assert(int64_t{1} << kRowBits == kLineBlockRows);

struct Table {
  sqlite3_vtab base{};
  sqlite3* db = nullptr;
};

// The run being read: what every one of its lines says.
struct Run {
  int64_t job_id = 0, file_id = 0, block_id = 0, first_row = 0, rows = 0;
  std::string host, producer, severity;
  bool has_host = false, has_pid = false, has_rank = false, has_local_rank = false, has_severity = false;
  int64_t pid = 0, rank = 0, local_rank = 0;
  int64_t ts_has_year = -1;  // -1: NULL
  int64_t ts_year = 0;       // 0: the printed year stands
  int64_t ts_shift_us = 0;
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  sqlite3_stmt* runs = nullptr;
  sqlite3_stmt* block = nullptr;  // data of one block
  bool eof = true;
  Run run;
  int64_t row_in_run = 0;
  int64_t loaded_block = -1;
  std::unique_ptr<LineBlockReader> reader;
  BlockLine line;
  int64_t ts_us = 0;  // the line's time as stored: year given, clock corrected
};

int connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char** err) {
  int rc = sqlite3_declare_vtab(db, kDeclaration);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  // It only reads the database's own tables (see collective_table.cc).
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* t = new Table();
  t->db = db;
  *out = &t->base;
  return SQLITE_OK;
}

int disconnect(sqlite3_vtab* v) {
  delete reinterpret_cast<Table*>(v);
  return SQLITE_OK;
}

// The slot of idxNum a constraint fills, or -1 when the runs cannot answer it.
int slot_of(const sqlite3_index_info::sqlite3_index_constraint& c) {
  if (c.op == SQLITE_INDEX_CONSTRAINT_EQ || c.op == SQLITE_INDEX_CONSTRAINT_ISNULL) {
    for (int k = 0; k < kRunColumnCount; ++k)
      if (kRunColumns[k].column == c.iColumn) return c.op == SQLITE_INDEX_CONSTRAINT_EQ ? k : kRunColumnCount + k;
    return -1;
  }
  if (c.iColumn != kLineNo) return -1;
  if (c.op == SQLITE_INDEX_CONSTRAINT_GE || c.op == SQLITE_INDEX_CONSTRAINT_GT) return kLineFromSlot;
  if (c.op == SQLITE_INDEX_CONSTRAINT_LE || c.op == SQLITE_INDEX_CONSTRAINT_LT) return kLineToSlot;
  return -1;
}

int best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  // One usable constraint per slot is enough; the first one wins.
  int chosen[kSlots];
  std::fill(std::begin(chosen), std::end(chosen), -1);
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    int slot = c.usable ? slot_of(c) : -1;
    if (slot >= 0 && chosen[slot] < 0) chosen[slot] = i;
  }
  double cost = 1e8;
  int argv = 0;
  info->idxNum = 0;
  for (int k = 0; k < kSlots; ++k) {
    if (chosen[k] < 0) continue;
    info->idxNum |= 1 << k;
    // IS NULL takes no value.
    if (k < kRunColumnCount || k >= kLineFromSlot) info->aConstraintUsage[chosen[k]].argvIndex = ++argv;
    // A run's columns hold for each of its lines; a line bound only narrows
    // the runs, so SQLite tests each line again.
    info->aConstraintUsage[chosen[k]].omit = k < kLineFromSlot;
    cost /= k == 1 ? 1000 : k == 0 ? 2 : 20;
  }
  info->estimatedCost = cost;
  info->estimatedRows = static_cast<sqlite3_int64>(cost);
  return SQLITE_OK;
}

int open_cursor(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new Cursor())->base;
  return SQLITE_OK;
}

int close_cursor(sqlite3_vtab_cursor* c) {
  auto* cur = reinterpret_cast<Cursor*>(c);
  sqlite3_finalize(cur->runs);
  sqlite3_finalize(cur->block);
  delete cur;
  return SQLITE_OK;
}

int fail(Cursor* cur, int rc, const std::string& what) {
  sqlite3_vtab* v = cur->base.pVtab;
  sqlite3_free(v->zErrMsg);
  v->zErrMsg = sqlite3_mprintf("%s", what.c_str());
  cur->eof = true;
  return rc;
}

std::string column_text(sqlite3_stmt* st, int col) {
  const auto* s = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return s == nullptr ? std::string() : std::string(s, static_cast<size_t>(sqlite3_column_bytes(st, col)));
}

void read_run(sqlite3_stmt* st, Run& r) {
  auto present = [st](int col) { return sqlite3_column_type(st, col) != SQLITE_NULL; };
  r.job_id = sqlite3_column_int64(st, 0);
  r.file_id = sqlite3_column_int64(st, 1);
  r.block_id = sqlite3_column_int64(st, 2);
  r.first_row = sqlite3_column_int64(st, 3);
  r.rows = sqlite3_column_int64(st, 4);
  r.has_host = present(5);
  r.host = column_text(st, 5);
  r.has_pid = present(6);
  r.pid = sqlite3_column_int64(st, 6);
  r.has_rank = present(7);
  r.rank = sqlite3_column_int64(st, 7);
  r.has_local_rank = present(8);
  r.local_rank = sqlite3_column_int64(st, 8);
  r.producer = column_text(st, 9);
  r.has_severity = present(10);
  r.severity = column_text(st, 10);
  r.ts_has_year = present(11) ? sqlite3_column_int64(st, 11) : -1;
  r.ts_year = sqlite3_column_int64(st, 12);
  r.ts_shift_us = sqlite3_column_int64(st, 13);
}

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm): a date
// past its month's end rolls into the next month, as SQLite's does.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// `ts_us` with its year replaced: a year-less time takes the job's year.
int64_t with_year(int64_t ts_us, int64_t year) {
  using namespace std::chrono;
  constexpr int64_t kDayUs = 86400LL * 1000000;
  int64_t days = ts_us >= 0 ? ts_us / kDayUs : (ts_us - kDayUs + 1) / kDayUs;
  year_month_day ymd{sys_days{std::chrono::days{days}}};
  int64_t in_day = ts_us - days * kDayUs;
  return days_from_civil(year, static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day())) * kDayUs +
         in_day;
}

// Moves to the next line, reading the next run (and block) when this run is done.
int advance(Cursor* cur) {
  auto* table = reinterpret_cast<Table*>(cur->base.pVtab);
  while (true) {
    if (cur->reader && cur->row_in_run + 1 < cur->run.rows) {
      ++cur->row_in_run;
      if (!cur->reader->seek(cur->run.first_row + cur->row_in_run, cur->line)) {
        std::string why = cur->reader->error().empty() ? "a run reaches past its block's rows" : cur->reader->error();
        return fail(cur, SQLITE_CORRUPT, "line block " + std::to_string(cur->run.block_id) + " of file " +
                                             std::to_string(cur->run.file_id) + " is damaged: " + why);
      }
      cur->ts_us = cur->line.ts_us;
      if (cur->ts_us != 0) {
        if (cur->run.ts_year > 0) cur->ts_us = with_year(cur->ts_us, cur->run.ts_year);
        cur->ts_us += cur->run.ts_shift_us;
      }
      return SQLITE_OK;
    }
    int rc = sqlite3_step(cur->runs);
    if (rc == SQLITE_DONE) {
      cur->eof = true;
      return SQLITE_OK;
    }
    if (rc != SQLITE_ROW) return fail(cur, rc, sqlite3_errmsg(table->db));
    read_run(cur->runs, cur->run);
    cur->row_in_run = -1;
    if (cur->run.block_id == cur->loaded_block) continue;
    if (cur->block == nullptr) {
      rc = sqlite3_prepare_v2(table->db, "SELECT data FROM line_blocks WHERE block_id = ?", -1, &cur->block, nullptr);
      if (rc != SQLITE_OK) return fail(cur, rc, sqlite3_errmsg(table->db));
    }
    sqlite3_reset(cur->block);
    sqlite3_bind_int64(cur->block, 1, cur->run.block_id);
    if (sqlite3_step(cur->block) != SQLITE_ROW)
      return fail(cur, SQLITE_CORRUPT, "line block " + std::to_string(cur->run.block_id) + " of file " +
                                           std::to_string(cur->run.file_id) + " is missing");
    const void* data = sqlite3_column_blob(cur->block, 0);
    auto size = static_cast<size_t>(sqlite3_column_bytes(cur->block, 0));
    cur->reader = std::make_unique<LineBlockReader>(
        std::string_view(static_cast<const char*>(data), data == nullptr ? 0 : size));
    cur->loaded_block = cur->run.block_id;
    if (!cur->reader->error().empty())
      return fail(cur, SQLITE_CORRUPT, "line block " + std::to_string(cur->run.block_id) + " of file " +
                                           std::to_string(cur->run.file_id) + " is damaged: " + cur->reader->error());
  }
}

int filter(sqlite3_vtab_cursor* c, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* cur = reinterpret_cast<Cursor*>(c);
  auto* table = reinterpret_cast<Table*>(c->pVtab);
  std::string sql =
      "SELECT r.job_id, r.file_id, r.block_id, r.first_row, r.rows, r.host, r.pid, r.rank, r.local_rank,"
      " r.producer, r.severity, r.ts_has_year, r.ts_year, r.ts_shift_us FROM line_runs r WHERE 1";
  // In slot order: the order best_index gave the values in argv.
  for (int k = 0; k < kRunColumnCount; ++k)
    if (idx_num & (1 << k)) sql += std::string(" AND r.") + kRunColumns[k].name + " = ?";
  for (int k = 0; k < kRunColumnCount; ++k)
    if (idx_num & (1 << (kRunColumnCount + k))) sql += std::string(" AND r.") + kRunColumns[k].name + " IS NULL";
  if (idx_num & (1 << kLineFromSlot)) sql += " AND r.last_line >= ?";
  if (idx_num & (1 << kLineToSlot)) sql += " AND r.first_line <= ?";
  // Runs are stored in block and row order.
  sql += " ORDER BY r.run_id";
  sqlite3_finalize(cur->runs);
  cur->runs = nullptr;
  cur->reader.reset();
  cur->loaded_block = -1;
  cur->run = Run{};
  cur->row_in_run = 0;
  int rc = sqlite3_prepare_v2(table->db, sql.c_str(), -1, &cur->runs, nullptr);
  if (rc != SQLITE_OK) return fail(cur, rc, sqlite3_errmsg(table->db));
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(cur->runs, i + 1, argv[i]);
  cur->eof = false;
  return advance(cur);
}

int next(sqlite3_vtab_cursor* c) { return advance(reinterpret_cast<Cursor*>(c)); }

int eof(sqlite3_vtab_cursor* c) { return reinterpret_cast<Cursor*>(c)->eof ? 1 : 0; }

void result_text(sqlite3_context* ctx, bool present, std::string_view s) {
  if (!present || s.empty()) sqlite3_result_null(ctx);
  else sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

void result_int(sqlite3_context* ctx, bool present, int64_t v) {
  if (present) sqlite3_result_int64(ctx, v);
  else sqlite3_result_null(ctx);
}

// NULL where the one-row-per-line table had it: what the line did not say.
int column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
  const auto* cur = reinterpret_cast<Cursor*>(c);
  const Run& r = cur->run;
  const BlockLine& l = cur->line;
  switch (col) {
    case kJobId: sqlite3_result_int64(ctx, r.job_id); break;
    case kFileId: sqlite3_result_int64(ctx, r.file_id); break;
    case kLineNo: sqlite3_result_int64(ctx, l.line_no); break;
    case kByteOffset: sqlite3_result_int64(ctx, l.byte_offset); break;
    case kTsUs: result_int(ctx, l.ts_us != 0, cur->ts_us); break;
    case kTsHasYear: result_int(ctx, l.ts_us != 0 && r.ts_has_year >= 0, r.ts_has_year); break;
    case kHost: result_text(ctx, r.has_host, r.host); break;
    case kPid: result_int(ctx, r.has_pid, r.pid); break;
    case kRank: result_int(ctx, r.has_rank, r.rank); break;
    case kLocalRank: result_int(ctx, r.has_local_rank, r.local_rank); break;
    case kProducer: result_text(ctx, true, r.producer); break;
    case kSeverity: result_text(ctx, r.has_severity, r.severity); break;
    case kText: result_text(ctx, true, l.text); break;
    default: sqlite3_result_null(ctx);
  }
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* c, sqlite3_int64* out) {
  const auto* cur = reinterpret_cast<Cursor*>(c);
  *out = cur->run.block_id << kRowBits | (cur->run.first_row + cur->row_in_run);
  return SQLITE_OK;
}

const sqlite3_module kModule = {
    /* iVersion */ 0,
    /* xCreate */ connect,
    /* xConnect */ connect,
    /* xBestIndex */ best_index,
    /* xDisconnect */ disconnect,
    /* xDestroy */ disconnect,
    /* xOpen */ open_cursor,
    /* xClose */ close_cursor,
    /* xFilter */ filter,
    /* xNext */ next,
    /* xEof */ eof,
    /* xColumn */ column,
    /* xRowid */ rowid,
    /* xUpdate: read-only */ nullptr,
    /* xBegin */ nullptr,
    /* xSync */ nullptr,
    /* xCommit */ nullptr,
    /* xRollback */ nullptr,
    /* xFindFunction */ nullptr,
    /* xRename */ nullptr,
    /* xSavepoint */ nullptr,
    /* xRelease */ nullptr,
    /* xRollbackTo */ nullptr,
    /* xShadowName */ nullptr,
};

}  // namespace

int register_line_table(sqlite3* db) {
  return sqlite3_create_module_v2(db, "ncclpm_lines", &kModule, nullptr, nullptr);
}

}  // namespace ncclpm::store
