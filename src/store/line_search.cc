// src/store/line_search.cc
#include "ncclpm/store/line_search.h"

#include <re2/re2.h>

#include <vector>

#include "ncclpm/frame/timestamp.h"
#include "host_names.h"
#include "ncclpm/util/text.h"

namespace ncclpm::store {
namespace {

constexpr int kProgressSteps = 10000;  // VM instructions between checks for Ctrl-C

// The filter runs inside SQLite, so that only matching rows are sorted and
// returned: a big job holds millions of lines and a search hits a few.
void match_function(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* re = static_cast<const RE2*>(sqlite3_user_data(ctx));
  const auto* text = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  int size = sqlite3_value_bytes(argv[0]);
  sqlite3_result_int(ctx, text != nullptr && RE2::PartialMatch(re2::StringPiece(text, size), *re));
}

int check_cancel(void* cancel) { return static_cast<const std::atomic<bool>*>(cancel)->load() ? 1 : 0; }

// Registers the pattern as ncclpm_match(text) for the life of one search.
class MatchFunction {
 public:
  MatchFunction(Connection& db, const RE2& re, const std::atomic<bool>* cancel) : db_(db) {
    sqlite3_create_function_v2(db_.raw(), "ncclpm_match", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                               const_cast<RE2*>(&re), match_function, nullptr, nullptr, nullptr);
    if (cancel != nullptr) sqlite3_progress_handler(db_.raw(), kProgressSteps, check_cancel, const_cast<std::atomic<bool>*>(cancel));
  }
  ~MatchFunction() {
    sqlite3_create_function_v2(db_.raw(), "ncclpm_match", 1, SQLITE_UTF8, nullptr, nullptr, nullptr, nullptr, nullptr);
    sqlite3_progress_handler(db_.raw(), 0, nullptr, nullptr);
  }
  MatchFunction(const MatchFunction&) = delete;
  MatchFunction& operator=(const MatchFunction&) = delete;

 private:
  Connection& db_;
};

// NCCL's own lines are stored without "NCCL WARN"/"NCCL INFO" (the framer
// reads the level into `severity`); a search puts the words back, since they
// are what a user greps for.
std::string with_nccl_level(const std::string& is_nccl) {
  return "CASE WHEN " + is_nccl + " THEN (CASE severity WHEN 'W' THEN 'NCCL WARN ' ELSE 'NCCL INFO ' END) || text"
         " ELSE text END";
}

std::string search_sql(bool by_time) {
  // Events keep their text with the prefixes taken off, as unparsed lines
  // do; COLL lines are decoded fields, not text, and are left to collective_calls.
  std::string sql =
      "SELECT f.rel_path, x.line_no, x.end_line, coalesce(x.rank, -1), coalesce(x.host, ''),"
      " coalesce(x.ts_us, 0), x.text FROM ("
      " SELECT file_id, line_no, end_line, rank, host, ts_us, " +
      with_nccl_level("kind IN ('nccl_version', 'nccl_env', 'nccl_comm', 'nccl_warn', 'nccl_error_trace')") +
      " AS text FROM events WHERE job_id = ?1"
      " UNION ALL SELECT file_id, line_no, line_no, rank, host, ts_us, " +
      with_nccl_level("producer = 'nccl'") +
      " FROM unparsed_lines WHERE job_id = ?1"
      " UNION ALL SELECT file_id, line_no, line_no, rank, host, ts_us, " +
      with_nccl_level("1") +
      " FROM nccl_channel_lines WHERE job_id = ?1"
      " UNION ALL SELECT file_id, line_no, line_no, rank, host, ts_us, " +
      with_nccl_level("1") +
      " FROM nccl_network_lines WHERE job_id = ?1"
      " UNION ALL SELECT file_id, line_no, line_no, rank, host, ts_us, text FROM training_progress WHERE job_id = ?1)"
      " x JOIN files f USING (file_id)"
      " WHERE ncclpm_match(x.text) AND (?2 IS NULL OR x.rank = ?2)"
      " AND (?3 IS NULL OR " +
      short_host_sql("x.host") +
      " = ?3 OR x.host = ?3) AND (?4 IS NULL OR x.ts_us >= ?4) AND (?5 IS NULL OR x.ts_us <= ?5)";
  sql += by_time ? " ORDER BY x.ts_us IS NULL, x.ts_us, f.rel_path, x.line_no" : " ORDER BY f.rel_path, x.line_no";
  return sql;
}

Value optional_value(const std::optional<int64_t>& v) { return v ? Value(*v) : Value(); }

constexpr int64_t kDayUs = 86'400'000'000LL;

// A number of 1 to `max_digits` digits and nothing else; -1 otherwise.
int small_number(std::string_view s, size_t max_digits) {
  if (s.empty() || s.size() > max_digits) return -1;
  int n = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

struct CivilDate {
  int year, month, day;
};

// The inverse of frame::days_from_civil (H. Hinnant's algorithm).
CivilDate civil_from_days(int64_t days) {
  days += 719468;
  int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  int64_t doe = days - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  return {static_cast<int>(yoe + era * 400 + (month <= 2 ? 1 : 0)), month, day};
}

}  // namespace

Status search_lines(Connection& db, int64_t job_id, const LineFilter& filter,
                    const std::function<bool(const LineHit&)>& on_hit) {
  RE2::Options options;
  options.set_case_sensitive(!filter.ignore_case);
  options.set_log_errors(false);
  RE2 re(filter.pattern, options);
  if (!re.ok()) return Error::plain("the pattern '" + filter.pattern + "' is not a regular expression: " + re.error());
  MatchFunction registered(db, re, filter.cancel);
  auto stmt = db.prepare(search_sql(filter.by_time));
  if (!stmt) return stmt.take_error();
  std::optional<int64_t> rank = filter.rank ? std::optional<int64_t>(*filter.rank) : std::nullopt;
  Status bound = stmt->bind_all({job_id, optional_value(rank), opt_text(filter.host),
                                 optional_value(filter.since_us), optional_value(filter.until_us)});
  if (!bound) return bound;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    LineHit hit{stmt->column_text(0), stmt->column_int(1), static_cast<int>(stmt->column_int(3)),
                stmt->column_text(4), stmt->column_int(5), ""};
    int64_t end_line = stmt->column_int(2);
    std::string text = stmt->column_text(6);
    auto lines = util::split(text, '\n');
    // A multi-line event (a traceback) is reported line by line; the line
    // numbers are exact when its lines were consecutive in the file, else
    // every hit carries the event's first line.
    bool consecutive = static_cast<int64_t>(lines.size()) == end_line - hit.line + 1;
    int64_t first = hit.line;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view l = lines[i];
      if (lines.size() > 1 && !RE2::PartialMatch(re2::StringPiece(l.data(), l.size()), re)) continue;
      hit.line = consecutive ? first + static_cast<int64_t>(i) : first;
      hit.text = std::string(l);
      if (!on_hit(hit)) return Ok{};
    }
  }
  if (filter.cancel != nullptr && filter.cancel->load()) return Error::plain("interrupted");
  if (err) return *err;
  return Ok{};
}

Result<int64_t> parse_moment(const std::string& text, int64_t reference_us) {
  auto [year, month, day] = civil_from_days(reference_us / kDayUs);
  std::string t(util::trim(text));
  // "DATE TIME", "DATEtTIME" or "TIME"; DATE is YYYY-MM-DD or MM-DD, TIME HH:MM[:SS].
  size_t gap = t.find_first_of(" T");
  std::string_view date = gap == std::string::npos ? std::string_view() : std::string_view(t).substr(0, gap);
  std::string_view clock = gap == std::string::npos ? std::string_view(t) : std::string_view(t).substr(gap + 1);
  auto date_parts = util::split(date, '-');
  auto clock_parts = util::split(clock, ':');
  std::vector<int> clock_values;
  bool ok = clock_parts.size() == 2 || clock_parts.size() == 3;
  for (std::string_view p : clock_parts) clock_values.push_back(ok ? small_number(p, 2) : -1);
  if (ok && !date.empty()) {
    ok = date_parts.size() == 3 || date_parts.size() == 2;
    if (ok && date_parts.size() == 3) {
      year = small_number(date_parts[0], 4);
      ok = date_parts[0].size() == 4;
      date_parts.erase(date_parts.begin());
    }
    if (ok) {
      month = small_number(date_parts[0], 2);
      day = small_number(date_parts[1], 2);
    }
  }
  int hour = ok ? clock_values[0] : -1, minute = ok ? clock_values[1] : -1;
  int second = ok && clock_values.size() == 3 ? clock_values[2] : 0;
  ok = ok && year >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= 31 && hour >= 0 && hour < 24 &&
       minute >= 0 && minute < 60 && second >= 0 && second < 61;
  if (!ok) {
    return Error::plain("'" + text + "' is not a time: give YYYY-MM-DD HH:MM[:SS], MM-DD HH:MM[:SS] or HH:MM[:SS]");
  }
  return frame::days_from_civil(year, month, day) * kDayUs + (hour * 3600 + minute * 60 + second) * 1'000'000LL;
}

}  // namespace ncclpm::store
