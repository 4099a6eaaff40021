// src/store/collective_table.cc
//
// The virtual table `collective_calls`: one row per NCCL COLL line, decoded
// on the fly from the blocks in `collective_blocks`. Read-only. Constraints
// `job_id = ?`, `file_id = ?` and `rank = ?` skip whole blocks unread.
#include <cstring>
#include <memory>
#include <string>

#include "ncclpm/store/collective_blocks.h"
#include "read_only_table.h"

namespace ncclpm::store {
namespace {

enum Column : int {
  kJobId, kFileId, kLineNo, kTsUs, kHost, kPid, kRank, kCommRank, kDevice, kOp, kOpCount,
  kCount, kDatatype, kRedopId, kRoot, kNranks, kComm
};
constexpr const char* kDeclaration =
    "CREATE TABLE x(job_id INTEGER, file_id INTEGER, line_no INTEGER, ts_us INTEGER, host TEXT,"
    " pid INTEGER, rank INTEGER, comm_rank INTEGER, device INTEGER, op TEXT, op_count INTEGER,"
    " count INTEGER, datatype INTEGER, redop_id INTEGER, root INTEGER, nranks INTEGER, comm TEXT)";

// Which constraints xBestIndex chose, as idxNum bits, in argv order.
enum Filter : int { kByJob = 1, kByFile = 2, kByRank = 4 };
constexpr int kRowBits = 14;  // rowid = block_id << kRowBits | row in block
static_assert(int64_t{1} << kRowBits == kBlockRows);

struct Table {
  sqlite3_vtab base{};
  sqlite3* db = nullptr;
};

struct Cursor {
  sqlite3_vtab_cursor base{};
  sqlite3_stmt* blocks = nullptr;  // job_id, file_id, block_id, data
  bool eof = true;
  int64_t job_id = 0, file_id = 0, block_id = 0, row_in_block = -1;
  std::unique_ptr<CollectiveBlockReader> reader;
  CollectiveRow row;
  ~Cursor() { sqlite3_finalize(blocks); }
};

int connect(sqlite3* db, void*, int, const char* const*, sqlite3_vtab** out, char** err) {
  int rc = sqlite3_declare_vtab(db, kDeclaration);
  if (rc != SQLITE_OK) {
    *err = sqlite3_mprintf("%s", sqlite3_errmsg(db));
    return rc;
  }
  // It only reads the database's own blocks: safe to use from a view even
  // where the schema is not trusted (`ncclpm query` turns that trust off).
  sqlite3_vtab_config(db, SQLITE_VTAB_INNOCUOUS);
  auto* t = new Table();
  t->db = db;
  *out = &t->base;
  return SQLITE_OK;
}

int best_index(sqlite3_vtab*, sqlite3_index_info* info) {
  // One usable equality per column is enough; the first one wins.
  int chosen[3] = {-1, -1, -1};
  const int columns[3] = {kJobId, kFileId, kRank};
  for (int i = 0; i < info->nConstraint; ++i) {
    const auto& c = info->aConstraint[i];
    if (!c.usable || c.op != SQLITE_INDEX_CONSTRAINT_EQ) continue;
    for (int k = 0; k < 3; ++k)
      if (c.iColumn == columns[k] && chosen[k] < 0) chosen[k] = i;
  }
  double cost = 1e7;
  int argv = 0;
  info->idxNum = 0;
  for (int k = 0; k < 3; ++k) {
    if (chosen[k] < 0) continue;
    info->idxNum |= 1 << k;
    info->aConstraintUsage[chosen[k]].argvIndex = ++argv;
    // Job and file are exact per block; a rank only narrows the blocks.
    info->aConstraintUsage[chosen[k]].omit = columns[k] != kRank;
    cost /= columns[k] == kFileId ? 1000 : columns[k] == kRank ? 100 : 2;
  }
  info->estimatedCost = cost;
  info->estimatedRows = static_cast<sqlite3_int64>(cost);
  return SQLITE_OK;
}

int fail(Cursor* cur, int rc, const std::string& what) {
  cur->eof = true;
  return read_only_table::fail(cur->base.pVtab, rc, what);
}

// Moves to the next row, reading the next block when this one is done.
int advance(Cursor* cur) {
  while (true) {
    if (cur->reader && cur->reader->next(cur->row)) {
      ++cur->row_in_block;
      return SQLITE_OK;
    }
    if (cur->reader && !cur->reader->error().empty()) {
      return fail(cur, SQLITE_CORRUPT,
                  "collective block " + std::to_string(cur->block_id) + " of file " +
                      std::to_string(cur->file_id) + " is damaged: " + cur->reader->error());
    }
    int rc = sqlite3_step(cur->blocks);
    if (rc == SQLITE_DONE) {
      cur->eof = true;
      return SQLITE_OK;
    }
    if (rc != SQLITE_ROW) return fail(cur, rc, sqlite3_errmsg(sqlite3_db_handle(cur->blocks)));
    cur->job_id = sqlite3_column_int64(cur->blocks, 0);
    cur->file_id = sqlite3_column_int64(cur->blocks, 1);
    cur->block_id = sqlite3_column_int64(cur->blocks, 2);
    // The blob stays valid until the next step: the reader points into it.
    const void* data = sqlite3_column_blob(cur->blocks, 3);
    auto size = static_cast<size_t>(sqlite3_column_bytes(cur->blocks, 3));
    cur->reader = std::make_unique<CollectiveBlockReader>(
        std::string_view(static_cast<const char*>(data), data == nullptr ? 0 : size));
    cur->row_in_block = -1;
  }
}

int filter(sqlite3_vtab_cursor* c, int idx_num, const char*, int argc, sqlite3_value** argv) {
  auto* cur = reinterpret_cast<Cursor*>(c);
  auto* table = reinterpret_cast<Table*>(c->pVtab);
  std::string sql = "SELECT job_id, file_id, block_id, data FROM collective_blocks WHERE 1";
  if (idx_num & kByJob) sql += " AND job_id = ?";
  if (idx_num & kByFile) sql += " AND file_id = ?";
  if (idx_num & kByRank) sql += " AND ? BETWEEN rank_min AND rank_max";
  sql += " ORDER BY block_id";
  sqlite3_finalize(cur->blocks);
  cur->blocks = nullptr;
  cur->reader.reset();
  int rc = sqlite3_prepare_v2(table->db, sql.c_str(), -1, &cur->blocks, nullptr);
  if (rc != SQLITE_OK) return fail(cur, rc, sqlite3_errmsg(table->db));
  for (int i = 0; i < argc; ++i) sqlite3_bind_value(cur->blocks, i + 1, argv[i]);
  cur->eof = false;
  return advance(cur);
}

int next(sqlite3_vtab_cursor* c) { return advance(reinterpret_cast<Cursor*>(c)); }

int eof(sqlite3_vtab_cursor* c) { return reinterpret_cast<Cursor*>(c)->eof ? 1 : 0; }

void result_int_or_null(sqlite3_context* ctx, int64_t v) { read_only_table::result_int(ctx, v >= 0, v); }

void result_text_or_null(sqlite3_context* ctx, std::string_view s) { read_only_table::result_text(ctx, true, s); }

// NULLs where the old one-row-per-line table had them: unknown time, host,
// process, ranks and device; the numbers of the line itself are never NULL.
int column(sqlite3_vtab_cursor* c, sqlite3_context* ctx, int col) {
  const auto* cur = reinterpret_cast<Cursor*>(c);
  const CollectiveRow& r = cur->row;
  switch (col) {
    case kJobId: sqlite3_result_int64(ctx, cur->job_id); break;
    case kFileId: sqlite3_result_int64(ctx, cur->file_id); break;
    case kLineNo: sqlite3_result_int64(ctx, r.line_no); break;
    case kTsUs: if (r.ts_us != 0) sqlite3_result_int64(ctx, r.ts_us); else sqlite3_result_null(ctx); break;
    case kHost: result_text_or_null(ctx, r.host); break;
    case kPid: result_int_or_null(ctx, r.pid); break;
    case kRank: result_int_or_null(ctx, r.rank); break;
    case kCommRank: result_int_or_null(ctx, r.comm_rank); break;
    case kDevice: result_int_or_null(ctx, r.device); break;
    case kOp: result_text_or_null(ctx, r.op); break;
    case kOpCount: sqlite3_result_int64(ctx, static_cast<int64_t>(r.op_count)); break;
    case kCount: sqlite3_result_int64(ctx, r.count); break;
    case kDatatype: sqlite3_result_int64(ctx, r.datatype); break;
    case kRedopId: sqlite3_result_int64(ctx, r.redop); break;
    case kRoot: sqlite3_result_int64(ctx, r.root); break;
    case kNranks: result_int_or_null(ctx, r.nranks); break;
    case kComm: result_text_or_null(ctx, r.comm); break;
    default: sqlite3_result_null(ctx);
  }
  return SQLITE_OK;
}

int rowid(sqlite3_vtab_cursor* c, sqlite3_int64* out) {
  const auto* cur = reinterpret_cast<Cursor*>(c);
  *out = cur->block_id << kRowBits | cur->row_in_block;
  return SQLITE_OK;
}

const sqlite3_module kModule =
    read_only_table::module<Table, Cursor>(connect, best_index, filter, next, eof, column, rowid);

}  // namespace

int register_collective_table(sqlite3* db) {
  return sqlite3_create_module_v2(db, "ncclpm_collectives", &kModule, nullptr, nullptr);
}

}  // namespace ncclpm::store
