// include/ncclpm/store/user_query.h
//
// A user's SQL, run the way `ncclpm query` promises: exactly one statement,
// reading only, stoppable. An authorizer refuses every write, ATTACH,
// transaction control, pragmas that set something, and the functions that
// reach outside the database (load_extension, fts3_tokenizer), each with a
// message that says what was refused; a progress handler stops a runaway
// query when the caller's cancel flag is set (Ctrl-C) or its time is up.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "ncclpm/store/sqlite.h"

namespace ncclpm::store {

/// Why a query stopped before its end.
enum class QueryStop { kNone, kCancelled, kTimedOut };

class UserQuery {
 public:
  /// `db` must be open read-only and outlive the query. `cancel`, when given,
  /// is polled while the query runs; `timeout`, when given, bounds its time.
  UserQuery(Connection& db, const std::atomic<bool>* cancel, std::optional<std::chrono::milliseconds> timeout);
  ~UserQuery();
  UserQuery(const UserQuery&) = delete;
  UserQuery& operator=(const UserQuery&) = delete;

  /// Checks and compiles `sql`: one statement, nothing that writes or reaches
  /// outside the database. The error says what was refused.
  Status prepare(std::string_view sql);
  Statement& statement() { return stmt_; }
  /// Next row; false at the end, on an error (in `error`) or when stopped.
  bool step(std::optional<Error>* error);
  QueryStop stopped() const { return stop_; }

  // The SQLite callbacks; public so that the C functions can reach them.
  int authorize(int action, const char* a, const char* b);
  bool should_stop();

 private:
  Connection& db_;
  const std::atomic<bool>* cancel_;
  std::optional<std::chrono::steady_clock::time_point> deadline_;
  Statement stmt_;
  std::string refusal_;  // what the authorizer refused, for the error message
  QueryStop stop_ = QueryStop::kNone;
};

/// The text after the first statement of `sql` that is more than blanks,
/// comments and semicolons; empty when there is none.
std::string_view extra_statement_text(std::string_view rest);

}  // namespace ncclpm::store
