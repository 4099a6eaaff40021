// include/ncclpm/store/sqlite.h
//
// A thin RAII layer over the SQLite C API: a Connection that owns the handle
// and Statements that bind any mix of integers, reals, text and NULL in one
// call. Errors come back as Error values that name the database file.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ncclpm/util/result.h"

namespace ncclpm::store {

/// A value bound to or read from SQL. std::monostate is NULL.
using Value = std::variant<std::monostate, int64_t, double, std::string>;

/// Integer or NULL when negative: ncclpm uses -1 for "not known" in C++ and
/// NULL for it in SQL.
inline Value opt_int(int64_t v) { return v < 0 ? Value() : Value(v); }
inline Value opt_text(std::string_view s) { return s.empty() ? Value() : Value(std::string(s)); }

/// SQLite's last message on `db`, saying plainly what a damaged file or a full
/// disk means for the user.
std::string sqlite_message(sqlite3* db);

class Statement {
 public:
  Statement() = default;
  Statement(sqlite3_stmt* stmt, std::string db_path) : stmt_(stmt), db_path_(std::move(db_path)) {}
  Statement(Statement&& o) noexcept : stmt_(o.stmt_), db_path_(std::move(o.db_path_)) { o.stmt_ = nullptr; }
  Statement& operator=(Statement&& o) noexcept;
  ~Statement();

  /// Binds `values` in order, steps once (no rows expected) and resets.
  Status run(const std::vector<Value>& values);
  /// Binds `values`; then call step() until it returns false.
  Status bind_all(const std::vector<Value>& values);
  /// Advances to the next row; false at the end (errors are in `error`).
  bool step(std::optional<Error>* error = nullptr);
  int columns() const { return sqlite3_column_count(stmt_); }
  std::string column_name(int i) const { return sqlite3_column_name(stmt_, i); }
  Value column(int i) const;
  int64_t column_int(int i) const { return sqlite3_column_int64(stmt_, i); }
  std::string column_text(int i) const;
  bool column_is_null(int i) const { return sqlite3_column_type(stmt_, i) == SQLITE_NULL; }
  void reset();
  sqlite3_stmt* raw() const { return stmt_; }

 private:
  Status bind(const std::vector<Value>& values, sqlite3_destructor_type text_lifetime);
  sqlite3_stmt* stmt_ = nullptr;
  std::string db_path_;
};

class Connection {
 public:
  /// Opens `path`; read-only connections never create a file.
  static Result<Connection> open(const std::filesystem::path& path, bool read_only);
  Connection() = default;
  Connection(Connection&& o) noexcept : db_(o.db_), path_(std::move(o.path_)) { o.db_ = nullptr; }
  Connection& operator=(Connection&& o) noexcept;
  ~Connection();

  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  /// First column of the first row of `sql`, as an integer (0 when no row).
  Result<int64_t> scalar_int(std::string_view sql, const std::vector<Value>& values = {});
  /// Runs `sql` with `values` bound and calls `on_row` for each row.
  Status each_row(std::string_view sql, const std::vector<Value>& values,
                  const std::function<void(const Statement&)>& on_row);
  int64_t last_insert_id() const { return sqlite3_last_insert_rowid(db_); }
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }
  void close();

 private:
  Error error(std::string_view what) const;
  sqlite3* db_ = nullptr;
  std::string path_;
};

}  // namespace ncclpm::store
