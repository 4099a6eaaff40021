// src/store/line_table.cc
//
// The virtual tables `unparsed_lines`, `training_progress`, `nccl_channel_lines` and
// `nccl_network_lines`: one row per
// stored line of their kind, decoded on the fly from `line_groups` (the
// attribution) and `line_blocks` (the compressed texts). Read-only.
// Equalities and IS NULL on a group's columns (job, file, rank, host, pid,
// local rank, producer, severity) and bounds on the line number are answered
// by SQL over the groups, so blocks that cannot match are never decompressed.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "ncclpm/store/line_blocks.h"
#include "read_only_table.h"

namespace ncclpm::store {
namespace {

enum Column : int {
  kJobId, kFileId, kLineNo, kByteOffset, kTsUs, kTsHasYear, kHost, kPid, kRank, kLocalRank,
  kProducer, kSeverity, kText,
  // training_progress only: the fields its parser read.
  kSource, kLabel, kUnit, kStep, kTotal, kSecondsPerStep, kEpoch, kLoss
};
constexpr const char* kLineColumns =
    "job_id INTEGER, file_id INTEGER, line_no INTEGER, byte_offset INTEGER, ts_us INTEGER,"
    " ts_has_year INTEGER, host TEXT, pid INTEGER, rank INTEGER, local_rank INTEGER, producer TEXT,"
    " severity TEXT, text TEXT";
constexpr const char* kProgressColumns =
    ", source TEXT, label TEXT, unit TEXT, step INTEGER, total INTEGER, seconds_per_step REAL, epoch REAL,"
    " loss REAL";

// The columns a group holds for all its lines: an equality on one of them,
// or a test for NULL, selects groups. Bit k of idxNum: `= ?` on kGroupColumns[k];
// bit kGroupColumnCount + k: IS NULL.
struct GroupColumn {
  int column;
  const char* name;  // in line_groups
};
constexpr GroupColumn kGroupColumns[] = {
    {kJobId, "job_id"}, {kFileId, "file_id"},       {kRank, "rank"},         {kHost, "host"},
    {kPid, "pid"},      {kLocalRank, "local_rank"}, {kProducer, "producer"}, {kSeverity, "severity"},
};
constexpr int kGroupColumnCount = static_cast<int>(std::size(kGroupColumns));
// Bounds on the line number select the groups whose range can hold it.
constexpr int kLineFromSlot = 2 * kGroupColumnCount;  // line_no >= ? (or >)
constexpr int kLineToSlot = kLineFromSlot + 1;      // line_no <= ? (or <)
constexpr int kSlots = kLineToSlot + 1;
constexpr int kRowBits = 13;  // rowid = block_id << kRowBits | row in block
static_assert(int64_t{1} << kRowBits == kLineBlockRows);

struct Table {
  sqlite3_vtab base{};
  sqlite3* db = nullptr;
  LineKind kind = LineKind::kUnparsed;  // the lines it shows: CREATE VIRTUAL TABLE ... USING ncclpm_lines(KIND)
};

// A group of the block being read: what every one of its lines says.
struct Group {
  int64_t job_id = 0, file_id = 0, block_id = 0, group_no = 0;
  std::string host, producer, severity;
  bool has_host = false, has_pid = false, has_rank = false, has_local_rank = false, has_severity = false;
  int64_t pid = 0, rank = 0, local_rank = 0;
  int64_t ts_has_year = -1;  // -1: NULL
  int64_t ts_year = 0;       // 0: the printed year stands
  int64_t ts_shift_us = 0;
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  sqlite3_stmt* groups = nullptr;  // the groups that match, by block
  bool groups_done = false;
  sqlite3_stmt* block = nullptr;   // data of one block
  bool eof = true;
  // The block being read, and its groups that match (by group number; null: not wanted).
  int64_t block_id = -1, file_id = 0, row = -1;
  std::vector<std::unique_ptr<Group>> wanted;
  std::unique_ptr<LineBlockReader> reader;
  // The first group of the next block, read ahead.
  std::unique_ptr<Group> next_group;
  const Group* group = nullptr;  // the current line's
  BlockLine line;
  int64_t ts_us = 0;  // the line's time as stored: year given, clock corrected
  // The line's progress fields, read from its text only when a query asks.
  bool progress_read = false;
  BlockProgress progress;
  recognize::TrainingProgress progress_storage;
  // Bounds on line_no from the query, inclusive (SQLite checks them again,
  // strictness included): lines outside are skipped here, not handed to
  // SQLite one by one.
  int64_t line_from = std::numeric_limits<int64_t>::min();
  int64_t line_to = std::numeric_limits<int64_t>::max();
  ~Cursor() {
    sqlite3_finalize(groups);
    sqlite3_finalize(block);
  }
};

int connect(sqlite3* db, void*, int argc, const char* const* argv, sqlite3_vtab** out, char** err) {
  // argv: module, database, table name, then the arguments.
  std::string name = argc > 3 ? argv[3] : "";
  const LineKind* kind = std::find_if(std::begin(kLineKinds), std::end(kLineKinds),
                                      [&](LineKind k) { return name == line_kind_name(k); });
  if (kind == std::end(kLineKinds)) {
    *err = sqlite3_mprintf(
        "ncclpm_lines needs the kind of line it shows (unparsed, training_progress, nccl_channel or nccl_network),"
        " not '%s'",
        name.c_str());
    return SQLITE_ERROR;
  }
  bool progress = *kind == LineKind::kProgress;
  std::string declaration = std::string("CREATE TABLE x(") + kLineColumns + (progress ? kProgressColumns : "") + ")";
  int rc = sqlite3_declare_vtab(db, declaration.c_str());
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  // It only reads the database's own tables (see collective_table.cc).
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* t = new Table();
  t->db = db;
  t->kind = *kind;
  *out = &t->base;
  return SQLITE_OK;
}

// The slot of idxNum a constraint fills, or -1 when the groups cannot answer it.
int slot_of(const sqlite3_index_info::sqlite3_index_constraint& c) {
  if (c.op == SQLITE_INDEX_CONSTRAINT_EQ || c.op == SQLITE_INDEX_CONSTRAINT_ISNULL) {
    for (int k = 0; k < kGroupColumnCount; ++k)
      if (kGroupColumns[k].column == c.iColumn) return c.op == SQLITE_INDEX_CONSTRAINT_EQ ? k : kGroupColumnCount + k;
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
    if (k < kGroupColumnCount || k >= kLineFromSlot) info->aConstraintUsage[chosen[k]].argvIndex = ++argv;
    // A group's columns hold for each of its lines; a line bound only narrows
    // the groups, so SQLite tests each line again.
    info->aConstraintUsage[chosen[k]].omit = k < kLineFromSlot;
    cost /= k == 1 ? 1000 : k == 0 ? 2 : 20;
  }
  info->estimatedCost = cost;
  info->estimatedRows = static_cast<sqlite3_int64>(cost);
  return SQLITE_OK;
}

// A bound on line_no as an integer, loosened where it is not one (a real
// rounds outwards; text, NULL or a real out of range bound nothing: `none`).
int64_t line_bound(sqlite3_value* v, int64_t none) {
  if (sqlite3_value_type(v) == SQLITE_INTEGER) return sqlite3_value_int64(v);
  if (sqlite3_value_type(v) != SQLITE_FLOAT) return none;
  double d = none < 0 ? std::floor(sqlite3_value_double(v)) : std::ceil(sqlite3_value_double(v));
  return d > -9.0e18 && d < 9.0e18 ? static_cast<int64_t>(d) : none;
}

int fail(Cursor* cur, int rc, const std::string& what) {
  cur->eof = true;
  return read_only_table::fail(cur->base.pVtab, rc, what);
}

std::string column_text(sqlite3_stmt* st, int col) {
  const auto* s = reinterpret_cast<const char*>(sqlite3_column_text(st, col));
  return s == nullptr ? std::string() : std::string(s, static_cast<size_t>(sqlite3_column_bytes(st, col)));
}

std::unique_ptr<Group> read_group(sqlite3_stmt* st) {
  auto present = [st](int col) { return sqlite3_column_type(st, col) != SQLITE_NULL; };
  auto g = std::make_unique<Group>();
  g->job_id = sqlite3_column_int64(st, 0);
  g->file_id = sqlite3_column_int64(st, 1);
  g->block_id = sqlite3_column_int64(st, 2);
  g->group_no = sqlite3_column_int64(st, 3);
  g->has_host = present(4);
  g->host = column_text(st, 4);
  g->has_pid = present(5);
  g->pid = sqlite3_column_int64(st, 5);
  g->has_rank = present(6);
  g->rank = sqlite3_column_int64(st, 6);
  g->has_local_rank = present(7);
  g->local_rank = sqlite3_column_int64(st, 7);
  g->producer = column_text(st, 8);
  g->has_severity = present(9);
  g->severity = column_text(st, 9);
  g->ts_has_year = present(10) ? sqlite3_column_int64(st, 10) : -1;
  g->ts_year = sqlite3_column_int64(st, 11);
  g->ts_shift_us = sqlite3_column_int64(st, 12);
  return g;
}

std::string damaged(const Cursor* cur, const std::string& why) {
  return "line block " + std::to_string(cur->block_id) + " of file " + std::to_string(cur->file_id) +
         " is damaged: " + why;
}

// Reads the next block that has a matching group: its groups, then its data.
// Returns SQLITE_DONE when there is none.
int load_next_block(Cursor* cur) {
  auto* table = reinterpret_cast<Table*>(cur->base.pVtab);
  if (!cur->next_group) {
    // Stepped again after SQLITE_DONE, a statement starts over.
    if (cur->groups_done) return SQLITE_DONE;
    int rc = sqlite3_step(cur->groups);
    if (rc == SQLITE_DONE) {
      cur->groups_done = true;
      return SQLITE_DONE;
    }
    if (rc != SQLITE_ROW) return fail(cur, rc, sqlite3_errmsg(table->db));
    cur->next_group = read_group(cur->groups);
  }
  cur->block_id = cur->next_group->block_id;
  cur->file_id = cur->next_group->file_id;
  cur->wanted.clear();
  while (cur->next_group && cur->next_group->block_id == cur->block_id) {
    auto no = static_cast<size_t>(cur->next_group->group_no);
    if (no >= static_cast<size_t>(kLineBlockRows)) return fail(cur, SQLITE_CORRUPT, damaged(cur, "a group number is out of range"));
    if (cur->wanted.size() <= no) cur->wanted.resize(no + 1);
    cur->wanted[no] = std::move(cur->next_group);
    int rc = sqlite3_step(cur->groups);
    if (rc == SQLITE_ROW) cur->next_group = read_group(cur->groups);
    else if (rc == SQLITE_DONE) cur->groups_done = true;
    else return fail(cur, rc, sqlite3_errmsg(table->db));
  }
  if (cur->block == nullptr) {
    int rc = sqlite3_prepare_v2(table->db, "SELECT data FROM line_blocks WHERE block_id = ?", -1, &cur->block, nullptr);
    if (rc != SQLITE_OK) return fail(cur, rc, sqlite3_errmsg(table->db));
  }
  sqlite3_reset(cur->block);
  sqlite3_bind_int64(cur->block, 1, cur->block_id);
  if (sqlite3_step(cur->block) != SQLITE_ROW)
    return fail(cur, SQLITE_CORRUPT, "line block " + std::to_string(cur->block_id) + " of file " +
                                         std::to_string(cur->file_id) + " is missing");
  const void* data = sqlite3_column_blob(cur->block, 0);
  auto size = static_cast<size_t>(sqlite3_column_bytes(cur->block, 0));
  // The reader decompresses into a buffer of its own: the blob may go.
  cur->reader = std::make_unique<LineBlockReader>(
      std::string_view(static_cast<const char*>(data), data == nullptr ? 0 : size));
  cur->row = -1;
  if (!cur->reader->error().empty()) return fail(cur, SQLITE_CORRUPT, damaged(cur, cur->reader->error()));
  return SQLITE_OK;
}

// Moves to the next line of a wanted group, reading the next block when this one is done.
int advance(Cursor* cur) {
  while (true) {
    if (cur->reader) {
      while (cur->reader->next(cur->line)) {
        ++cur->row;
        auto no = static_cast<size_t>(cur->line.group);
        if (no >= cur->wanted.size() || !cur->wanted[no]) continue;
        if (cur->line.line_no < cur->line_from || cur->line.line_no > cur->line_to) continue;
        cur->group = cur->wanted[no].get();
        cur->ts_us = stored_time(cur->line.ts_us, cur->group->ts_year, cur->group->ts_shift_us);
        cur->progress_read = false;
        return SQLITE_OK;
      }
      if (!cur->reader->error().empty()) return fail(cur, SQLITE_CORRUPT, damaged(cur, cur->reader->error()));
      if (cur->row + 1 != cur->reader->rows())
        return fail(cur, SQLITE_CORRUPT, damaged(cur, "fewer rows than it says"));
    }
    int rc = load_next_block(cur);
    if (rc == SQLITE_DONE) {
      cur->eof = true;
      return SQLITE_OK;
    }
    if (rc != SQLITE_OK) return rc;
  }
}

int filter(sqlite3_vtab_cursor* c, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* cur = reinterpret_cast<Cursor*>(c);
  auto* table = reinterpret_cast<Table*>(c->pVtab);
  std::string sql =
      "SELECT g.job_id, g.file_id, g.block_id, g.group_no, g.host, g.pid, g.rank, g.local_rank,"
      " g.producer, g.severity, g.ts_has_year, g.ts_year, g.ts_shift_us FROM line_groups g WHERE g.kind = '" +
      std::string(line_kind_name(table->kind)) + "'";
  // In slot order: the order best_index gave the values in argv.
  for (int k = 0; k < kGroupColumnCount; ++k)
    if (idx_num & (1 << k)) sql += std::string(" AND g.") + kGroupColumns[k].name + " = ?";
  for (int k = 0; k < kGroupColumnCount; ++k)
    if (idx_num & (1 << (kGroupColumnCount + k))) sql += std::string(" AND g.") + kGroupColumns[k].name + " IS NULL";
  if (idx_num & (1 << kLineFromSlot)) sql += " AND g.last_line >= ?";
  if (idx_num & (1 << kLineToSlot)) sql += " AND g.first_line <= ?";
  // A block's lines come in the file's order; blocks in the order they were stored.
  sql += " ORDER BY g.group_id";  // = block and group order: they were stored so
  sqlite3_finalize(cur->groups);
  cur->groups = nullptr;
  cur->reader.reset();
  cur->next_group.reset();
  cur->wanted.clear();
  cur->group = nullptr;
  cur->block_id = -1;
  cur->groups_done = false;
  int rc = sqlite3_prepare_v2(table->db, sql.c_str(), -1, &cur->groups, nullptr);
  if (rc != SQLITE_OK) return fail(cur, rc, sqlite3_errmsg(table->db));
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(cur->groups, i + 1, argv[i]);
  // The line bounds' values come last in argv, after the equalities'.
  int bound = argc - ((idx_num >> kLineFromSlot) & 1) - ((idx_num >> kLineToSlot) & 1);
  cur->line_from = std::numeric_limits<int64_t>::min();
  cur->line_to = std::numeric_limits<int64_t>::max();
  if (idx_num & (1 << kLineFromSlot)) cur->line_from = line_bound(argv[bound++], cur->line_from);
  if (idx_num & (1 << kLineToSlot)) cur->line_to = line_bound(argv[bound], cur->line_to);
  cur->eof = false;
  return advance(cur);
}

int next(sqlite3_vtab_cursor* c) { return advance(reinterpret_cast<Cursor*>(c)); }

int eof(sqlite3_vtab_cursor* c) { return reinterpret_cast<Cursor*>(c)->eof ? 1 : 0; }

using read_only_table::result_int;
using read_only_table::result_text;

// -1 is what a parser gives a number the line did not say.
void result_real(sqlite3_context* ctx, bool present, double v) {
  if (present && v >= 0) sqlite3_result_double(ctx, v);
  else sqlite3_result_null(ctx);
}

const BlockProgress& progress(Cursor* cur) {
  if (!cur->progress_read) {
    cur->progress = progress_of(cur->line, cur->progress_storage);
    cur->progress_read = true;
  }
  return cur->progress;
}

// NULL where the one-row-per-line table had it: what the line did not say.
int column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
  auto* cur = reinterpret_cast<Cursor*>(c);
  const Group& r = *cur->group;
  const BlockLine& l = cur->line;
  if (col >= kSource && col <= kLoss && l.has_progress) {
    const BlockProgress& p = progress(cur);
    switch (col) {
      case kSource: result_text(ctx, true, p.source); break;
      case kLabel: result_text(ctx, true, p.label); break;
      case kUnit: result_text(ctx, true, p.unit); break;
      case kStep: result_int(ctx, p.step >= 0, p.step); break;
      case kTotal: result_int(ctx, p.total >= 0, p.total); break;
      case kSecondsPerStep: result_real(ctx, true, p.seconds_per_step); break;
      case kEpoch: result_real(ctx, true, p.epoch); break;
      default: result_real(ctx, true, p.loss);
    }
    return SQLITE_OK;
  }
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
  *out = cur->block_id << kRowBits | cur->row;
  return SQLITE_OK;
}

const sqlite3_module kModule =
    read_only_table::module<Table, Cursor>(connect, best_index, filter, next, eof, column, rowid);

void stored_time_function(sqlite3_context* ctx, int, sqlite3_value** argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_null(ctx);
    return;
  }
  sqlite3_result_int64(ctx, stored_time(sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
                                        sqlite3_value_int64(argv[2])));
}

}  // namespace

int register_line_table(sqlite3* db) {
  int rc = sqlite3_create_module_v2(db, "ncclpm_lines", &kModule, nullptr, nullptr);
  if (rc != SQLITE_OK) return rc;
  return sqlite3_create_function_v2(db, "ncclpm_stored_time", 3,
                                    SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, nullptr,
                                    stored_time_function, nullptr, nullptr, nullptr);
}

}  // namespace ncclpm::store
