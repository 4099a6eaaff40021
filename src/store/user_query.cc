// src/store/user_query.cc
#include "ncclpm/store/user_query.h"

#include <array>
#include <cctype>

namespace ncclpm::store {
namespace {

constexpr int kProgressSteps = 10000;  // VM instructions between checks of cancel and deadline

// Pragmas that only read, whatever their argument names (a table, an index).
constexpr std::array<std::string_view, 16> kReadingPragmas = {
    "table_info",   "table_xinfo",       "table_list",     "index_list",    "index_info",  "index_xinfo",
    "foreign_key_list", "foreign_key_check", "collation_list", "function_list", "module_list", "pragma_list",
    "database_list", "compile_options",  "integrity_check", "quick_check"};
// Pragmas that read without an argument and set something with one.
constexpr std::array<std::string_view, 8> kReadingWithoutArgument = {
    "user_version", "schema_version", "application_id", "page_count",
    "page_size",    "freelist_count", "data_version",   "encoding"};
// Functions that reach outside the database or into the process.
constexpr std::array<std::string_view, 5> kRefusedFunctions = {"load_extension", "fts3_tokenizer", "readfile",
                                                               "writefile", "edit"};

template <size_t N>
bool listed(const std::array<std::string_view, N>& names, const char* name) {
  if (name == nullptr) return false;
  std::string lower(name);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view n : names)
    if (n == lower) return true;
  return false;
}

int authorizer(void* self, int action, const char* a, const char* b, const char*, const char*) {
  return static_cast<UserQuery*>(self)->authorize(action, a, b);
}

int progress(void* self) { return static_cast<UserQuery*>(self)->should_stop() ? 1 : 0; }

// What a refused action does, in the words of the error message. Creating
// or dropping anything writes to a schema table first.
std::string refused_action(int action, const char* table) {
  std::string_view t = table != nullptr ? table : "";
  if (t == "sqlite_master" || t == "sqlite_temp_master") return "it creates or drops something";
  switch (action) {
    case SQLITE_INSERT: return "INSERT writes to the database";
    case SQLITE_UPDATE: return "UPDATE writes to the database";
    case SQLITE_DELETE: return "DELETE writes to the database";
    case SQLITE_ATTACH: return "ATTACH would open (or create) another database file";
    case SQLITE_DETACH: return "DETACH changes the connection";
    case SQLITE_TRANSACTION:
    case SQLITE_SAVEPOINT: return "transaction control has no place in a read-only query";
    case SQLITE_ALTER_TABLE:
    case SQLITE_REINDEX:
    case SQLITE_ANALYZE: return "it changes the database";
    default: return "it creates or drops something";
  }
}

}  // namespace

UserQuery::UserQuery(Connection& db, const std::atomic<bool>* cancel, std::optional<std::chrono::milliseconds> timeout)
    : db_(db), cancel_(cancel) {
  if (timeout) deadline_ = std::chrono::steady_clock::now() + *timeout;
  sqlite3* raw = db_.raw();
  // Belt and braces under the authorizer: no extensions, no tokenizer
  // pointers, no writes to the schema, no functions run from the schema.
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
  sqlite3_db_config(raw, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
  sqlite3_progress_handler(raw, kProgressSteps, progress, this);
}

UserQuery::~UserQuery() {
  stmt_ = Statement();
  sqlite3_set_authorizer(db_.raw(), nullptr, nullptr);
  sqlite3_progress_handler(db_.raw(), 0, nullptr, nullptr);
}

int UserQuery::authorize(int action, const char* a, const char* b) {
  switch (action) {
    case SQLITE_SELECT:
    case SQLITE_READ:
    case SQLITE_RECURSIVE:
      return SQLITE_OK;
    case SQLITE_FUNCTION:
      if (!listed(kRefusedFunctions, b)) return SQLITE_OK;
      if (refusal_.empty()) refusal_ = std::string(b) + "() reaches outside the database";
      return SQLITE_DENY;
    case SQLITE_PRAGMA:
      if (listed(kReadingPragmas, a) || (b == nullptr && listed(kReadingWithoutArgument, a))) return SQLITE_OK;
      if (refusal_.empty()) {
        refusal_ = "PRAGMA " + std::string(a != nullptr ? a : "") +
                   (b != nullptr ? " with a value sets something" : " is not one that only reads");
      }
      return SQLITE_DENY;
    case SQLITE_UPDATE:
      // A table-valued pragma (pragma_table_info('files')) asks for this while
      // it reads the schema; a real write to sqlite_master is refused anyway,
      // by the read-only connection and defensive mode.
      if (a != nullptr && std::string_view(a) == "sqlite_master") return SQLITE_OK;
      [[fallthrough]];
    default:
      if (refusal_.empty()) refusal_ = refused_action(action, a);
      return SQLITE_DENY;
  }
}

bool UserQuery::should_stop() {
  if (cancel_ != nullptr && cancel_->load()) stop_ = QueryStop::kCancelled;
  else if (deadline_ && std::chrono::steady_clock::now() > *deadline_) stop_ = QueryStop::kTimedOut;
  return stop_ != QueryStop::kNone;
}

std::string_view extra_statement_text(std::string_view rest) {
  size_t i = 0;
  while (i < rest.size()) {
    char c = rest[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ';') {
      ++i;
    } else if (rest.compare(i, 2, "--") == 0) {
      size_t end = rest.find('\n', i);
      i = end == std::string_view::npos ? rest.size() : end + 1;
    } else if (rest.compare(i, 2, "/*") == 0) {
      size_t end = rest.find("*/", i + 2);
      i = end == std::string_view::npos ? rest.size() : end + 2;
    } else {
      return rest.substr(i);
    }
  }
  return {};
}

Status UserQuery::prepare(std::string_view sql) {
  refusal_.clear();
  sqlite3_set_authorizer(db_.raw(), authorizer, this);
  sqlite3_stmt* raw = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_.raw(), sql.data(), static_cast<int>(sql.size()), &raw, &tail);
  if (rc != SQLITE_OK) {
    if (!refusal_.empty()) {
      return Error::plain("query refused: " + refusal_,
                          "`ncclpm query` only reads; copy the database to change it with the sqlite3 shell");
    }
    return Error::plain(std::string("SQL: ") + sqlite3_errmsg(db_.raw()),
                        "run `ncclpm schema` for the tables and columns");
  }
  stmt_ = Statement(raw, db_.path());
  if (raw == nullptr) return Error::plain("SQL: no statement to run (only blanks or comments)");
  // What the authorizer has no action for (VACUUM) SQLite still knows writes.
  if (sqlite3_stmt_readonly(raw) == 0) {
    return Error::plain("query refused: the statement writes (VACUUM, or a change to the database)",
                        "`ncclpm query` only reads; copy the database to change it with the sqlite3 shell");
  }
  std::string_view rest = tail != nullptr ? sql.substr(static_cast<size_t>(tail - sql.data())) : std::string_view();
  if (std::string_view extra = extra_statement_text(rest); !extra.empty()) {
    std::string shown(extra.substr(0, 60));
    if (extra.size() > 60) shown += "...";
    return Error::plain("query runs exactly one statement; this follows the first: \"" + shown + "\"",
                        "run each statement with its own `ncclpm query`");
  }
  return Ok{};
}

bool UserQuery::step(std::optional<Error>* error) {
  std::optional<Error> e;
  bool row = stmt_.step(&e);
  if (row || !e || stop_ != QueryStop::kNone || error == nullptr) return row;
  // Some statements ask the authorizer only while they run.
  *error = refusal_.empty() ? std::move(*e) : Error::plain("query refused: " + refusal_);
  return false;
}

}  // namespace ncclpm::store
