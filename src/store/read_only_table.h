// src/store/read_only_table.h
//
// What the read-only virtual tables over compact blocks share
// (collective_table.cc, line_table.cc): their module, cursors made and freed
// by type, errors, and NULL for what a line did not say.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ncclpm::store::read_only_table {

/// Sets the table's error message; returns `rc`.
inline int fail(sqlite3_vtab* table, int rc, const std::string& what) {
  sqlite3_free(table->zErrMsg);
  table->zErrMsg = sqlite3_mprintf("%s", what.c_str());
  return rc;
}

inline void result_int(sqlite3_context* ctx, bool present, int64_t v) {
  if (present) sqlite3_result_int64(ctx, v);
  else sqlite3_result_null(ctx);
}

/// NULL when absent or empty.
inline void result_text(sqlite3_context* ctx, bool present, std::string_view s) {
  if (!present || s.empty()) sqlite3_result_null(ctx);
  else sqlite3_result_text(ctx, s.data(), static_cast<int>(s.size()), SQLITE_TRANSIENT);
}

/// `Table` and `Cursor` begin with their sqlite3_vtab / sqlite3_vtab_cursor;
/// a cursor's destructor finalizes its statements.
template <class Table>
int disconnect(sqlite3_vtab* v) {
  delete reinterpret_cast<Table*>(v);
  return SQLITE_OK;
}

template <class Cursor>
int open_cursor(sqlite3_vtab*, sqlite3_vtab_cursor** out) {
  *out = &(new Cursor())->base;
  return SQLITE_OK;
}

template <class Cursor>
int close_cursor(sqlite3_vtab_cursor* c) {
  delete reinterpret_cast<Cursor*>(c);
  return SQLITE_OK;
}

/// A module that reads only: no updates, transactions or renames.
template <class Table, class Cursor>
constexpr sqlite3_module module(decltype(sqlite3_module::xConnect) connect,
                                decltype(sqlite3_module::xBestIndex) best_index,
                                decltype(sqlite3_module::xFilter) filter, decltype(sqlite3_module::xNext) next,
                                decltype(sqlite3_module::xEof) eof, decltype(sqlite3_module::xColumn) column,
                                decltype(sqlite3_module::xRowid) rowid) {
  sqlite3_module m{};
  m.iVersion = 0;
  m.xCreate = connect;
  m.xConnect = connect;
  m.xBestIndex = best_index;
  m.xDisconnect = disconnect<Table>;
  m.xDestroy = disconnect<Table>;
  m.xOpen = open_cursor<Cursor>;
  m.xClose = close_cursor<Cursor>;
  m.xFilter = filter;
  m.xNext = next;
  m.xEof = eof;
  m.xColumn = column;
  m.xRowid = rowid;
  return m;
}

}  // namespace ncclpm::store::read_only_table
