// src/store/sqlite.cc
#include "ncclpm/store/sqlite.h"

#include <cstdio>
#include <cstdlib>

#include "ncclpm/store/collective_blocks.h"
#include "ncclpm/store/line_blocks.h"

namespace ncclpm::store {

std::string sqlite_message(sqlite3* db) {
  std::string msg = sqlite3_errmsg(db);
  int code = sqlite3_errcode(db) & 0xff;
  // NOTADB (a file that never was SQLite) keeps SQLite's words: the caller
  // says "not an ncclpm incident database".
  if (code == SQLITE_CORRUPT)
    return "the database is damaged (" + msg + "); ingest the logs again into a new database";
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
    return "the database is locked by another writer (an ingest still running?); waited 5 s. Run this again when it "
           "has finished";
  if (code == SQLITE_FULL)
    return "the disk is full (" + msg + "): nothing of this run was kept and an existing database is as it was;"
           " free space there or give --db on another disk";
  return msg;
}

Statement& Statement::operator=(Statement&& o) noexcept {
  if (this != &o) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = o.stmt_;
    db_path_ = std::move(o.db_path_);
    o.stmt_ = nullptr;
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Status Statement::bind_all(const std::vector<Value>& values) { return bind(values, SQLITE_TRANSIENT); }

Status Statement::bind(const std::vector<Value>& values, sqlite3_destructor_type text_lifetime) {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  for (size_t i = 0; i < values.size(); ++i) {
    int idx = static_cast<int>(i) + 1;
    int rc = SQLITE_OK;
    const Value& v = values[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      rc = sqlite3_bind_int64(stmt_, idx, *n);
    } else if (const auto* d = std::get_if<double>(&v)) {
      rc = sqlite3_bind_double(stmt_, idx, *d);
    } else if (const auto* s = std::get_if<std::string>(&v)) {
      rc = sqlite3_bind_text(stmt_, idx, s->data(), static_cast<int>(s->size()), text_lifetime);
    } else {
      rc = sqlite3_bind_null(stmt_, idx);
    }
    if (rc != SQLITE_OK)
      return Error::at(db_path_, std::string("cannot bind value: ") + sqlite3_errstr(rc));
  }
  return Ok{};
}

Status Statement::run(const std::vector<Value>& values) {
  // `values` outlives the step: SQLite need not copy the text (ingest binds
  // millions of strings).
  if (Status s = bind(values, SQLITE_STATIC); !s) return s;
  int rc = sqlite3_step(stmt_);
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);  // no pointer into `values` outlives this call
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
    return Error::at(db_path_, "write failed: " + sqlite_message(sqlite3_db_handle(stmt_)));
  }
  return Ok{};
}

bool Statement::step(std::optional<Error>* error) {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc != SQLITE_DONE && error != nullptr) {
    *error = Error::at(db_path_, sqlite_message(sqlite3_db_handle(stmt_)));
  }
  return false;
}

Value Statement::column(int i) const {
  switch (sqlite3_column_type(stmt_, i)) {
    case SQLITE_INTEGER: return sqlite3_column_int64(stmt_, i);
    case SQLITE_FLOAT: return sqlite3_column_double(stmt_, i);
    case SQLITE_NULL: return std::monostate{};
    default: return column_text(i);
  }
}

std::string Statement::column_text(int i) const {
  const unsigned char* t = sqlite3_column_text(stmt_, i);
  if (t == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(t), static_cast<size_t>(sqlite3_column_bytes(stmt_, i)));
}

void Statement::reset() { sqlite3_reset(stmt_); }

namespace {

// NCCLPM_SQL_PROFILE=MS prints every statement that ran MS milliseconds or
// more to stderr, with its time: how bench/README.md finds where diagnose
// and report spend theirs on a big database.
int print_slow_statement(unsigned type, void* threshold_ns, void* stmt, void* elapsed_ns) {
  auto ns = *static_cast<sqlite3_int64*>(elapsed_ns);
  if (type != SQLITE_TRACE_PROFILE || ns < *static_cast<sqlite3_int64*>(threshold_ns)) return 0;
  char* sql = sqlite3_expanded_sql(static_cast<sqlite3_stmt*>(stmt));
  std::fprintf(stderr, "ncclpm sql %8.1f ms  %s\n", static_cast<double>(ns) / 1e6, sql != nullptr ? sql : "?");
  sqlite3_free(sql);
  return 0;
}

void trace_slow_statements(sqlite3* db) {
  static sqlite3_int64 threshold_ns = [] {
    const char* ms = std::getenv("NCCLPM_SQL_PROFILE");
    return ms != nullptr && *ms != '\0' ? static_cast<sqlite3_int64>(std::atof(ms) * 1e6) : -1;
  }();
  if (threshold_ns >= 0) sqlite3_trace_v2(db, SQLITE_TRACE_PROFILE, print_slow_statement, &threshold_ns);
}

}  // namespace

Result<Connection> Connection::open(const std::filesystem::path& path, bool read_only) {
  Connection c;
  c.path_ = path.string();
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  int rc = sqlite3_open_v2(c.path_.c_str(), &c.db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = c.db_ != nullptr ? sqlite3_errmsg(c.db_) : sqlite3_errstr(rc);
    return Error::at(c.path_, "cannot open database: " + msg);
  }
  sqlite3_busy_timeout(c.db_, 5000);
  trace_slow_statements(c.db_);
  // Every connection reads the collectives, stored in blocks (see collective_blocks.h).
  if (int reg = register_collective_table(c.db_); reg != SQLITE_OK)
    return Error::at(c.path_, std::string("cannot register the collectives table: ") + sqlite3_errstr(reg));
  // ... and the unparsed lines, stored in blocks too (see line_blocks.h).
  if (int reg = register_line_table(c.db_); reg != SQLITE_OK)
    return Error::at(c.path_, std::string("cannot register the unparsed lines table: ") + sqlite3_errstr(reg));
  return c;
}

Connection& Connection::operator=(Connection&& o) noexcept {
  if (this != &o) {
    close();
    db_ = o.db_;
    path_ = std::move(o.path_);
    o.db_ = nullptr;
  }
  return *this;
}

Connection::~Connection() { close(); }

void Connection::close() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
  db_ = nullptr;
}

Error Connection::error(std::string_view what) const {
  return Error::at(path_, std::string(what) + ": " + sqlite_message(db_));
}

Status Connection::exec(std::string_view sql) {
  char* msg = nullptr;
  std::string s(sql);
  if (sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg) != SQLITE_OK) {
    sqlite3_free(msg);  // the same text as sqlite3_errmsg, which sqlite_message reads
    return Error::at(path_, sqlite_message(db_));
  }
  return Ok{};
}

Result<Statement> Connection::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr) != SQLITE_OK)
    return Error::at(path_, sqlite_message(db_));
  return Statement(stmt, path_);
}

Result<int64_t> Connection::scalar_int(std::string_view sql, const std::vector<Value>& values) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all(values); !s) return s.take_error();
  std::optional<Error> err;
  if (stmt->step(&err)) return stmt->column_int(0);
  if (err) return *err;
  return int64_t{0};
}

Status Connection::each_row(std::string_view sql, const std::vector<Value>& values,
                            const std::function<void(const Statement&)>& on_row) {
  auto stmt = prepare(sql);
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all(values); !s) return s;
  std::optional<Error> err;
  while (stmt->step(&err)) on_row(*stmt);
  if (err) return *err;
  return Ok{};
}

}  // namespace ncclpm::store
