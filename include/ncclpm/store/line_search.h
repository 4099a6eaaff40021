// include/ncclpm/store/line_search.h
//
// `ncclpm grep`: the stored text of a job searched with a regular expression,
// each hit with the rank, host, time and file:line ingest attributed to it, so
// that the original log directory is no longer needed. Searched: every typed
// event's text (a multi-line event line by line) and every line no parser
// knew (`unparsed_lines`). Not searched: NCCL COLL lines, which are stored as
// their fields (query `collective_calls`), and blank lines.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "ncclpm/store/sqlite.h"
#include "ncclpm/util/result.h"

namespace ncclpm::store {

struct LineFilter {
  std::string pattern;            ///< RE2 syntax, matched anywhere in the line
  bool ignore_case = false;
  std::optional<int> rank;        ///< global rank
  std::string host;               ///< full name, or its short name ("node3" for "node3.cluster")
  std::optional<int64_t> since_us, until_us;  ///< on the job's time axis (stored ts_us), inclusive
  bool by_time = false;           ///< order hits by time (lines without one last), else by file and line
  const std::atomic<bool>* cancel = nullptr;  ///< set (Ctrl-C) to stop the search with an error
};

struct LineHit {
  std::string file;  ///< path relative to the ingested directory
  int64_t line = 0;
  int rank = -1;
  std::string host;
  int64_t ts_us = 0;  ///< 0: the line had no time
  std::string text;   ///< the line without its launcher and producer prefixes
};

/// Calls `on_hit` for each matching line of job `job_id` until it returns
/// false. An invalid pattern is an error that quotes RE2's reason.
Status search_lines(Connection& db, int64_t job_id, const LineFilter& filter,
                    const std::function<bool(const LineHit&)>& on_hit);

/// A moment given on the command line: "YYYY-MM-DD HH:MM[:SS]" (or with 'T'),
/// "MM-DD HH:MM[:SS]", or "HH:MM[:SS]"; the parts left out are taken from
/// `reference_us` (the job's first time). Error text says what is accepted.
Result<int64_t> parse_moment(const std::string& text, int64_t reference_us);

}  // namespace ncclpm::store
