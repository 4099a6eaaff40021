// src/diagnose/settings_check.cc
//
// Field articles recommend NCCL settings that NCCL never reads (NCCL_TIMEOUT,
// NCCL_IB_MTU) or misspell real ones (NCCL_MAX_RINGS). A job that sets one
// believes it changed something it did not: say so.
#include <re2/re2.h>

#include <algorithm>
#include <map>

#include "job_facts.h"
#include "ncclpm/rules/nccl_settings.h"

namespace ncclpm::diagnose {
namespace {

// Variables containers and build systems set to describe an install, not to
// configure NCCL (NGC images export NCCL_VERSION=2.19.3-1).
bool describes_install(const std::string& name) {
  static const char* kNames[] = {"NCCL_VERSION", "NCCL_HOME",    "NCCL_ROOT",        "NCCL_ROOT_DIR",
                                 "NCCL_LIB_DIR", "NCCL_INCLUDE_DIR", "NCCL_DIR",     "NCCL_PATH",
                                 "NCCL_PKG_VERSION", "NCCL_LIBRARY"};
  return std::any_of(std::begin(kNames), std::end(kNames), [&](const char* n) { return name == n; });
}

}  // namespace

Status check_nccl_settings(store::Connection& db, JobFacts& f) {
  auto settings = rules::NcclSettings::load();
  if (!settings) return settings.take_error();
  // The version most banners of the job print.
  std::string version;
  size_t most = 0;
  for (const auto& [v, lines] : f.nccl_versions) {
    if (lines.size() > most) {
      most = lines.size();
      version = v.substr(0, v.find('+'));
    }
  }
  auto stmt = db.prepare(
      "SELECT f.rel_path, u.line_no, u.rank, u.host, 0, u.text FROM unparsed_lines u JOIN files f USING (file_id)"
      " WHERE u.job_id = ?1 AND u.text LIKE '%NCCL\\_%=%' ESCAPE '\\'"
      " UNION ALL SELECT " + std::string(kLocatedColumns) + " FROM events e JOIN files f USING (file_id)"
      " WHERE " + event_kind_not_in(kUnscannedBulkKinds) + " AND e.kind != 'nccl_env'"
      " AND e.text LIKE '%NCCL\\_%=%' ESCAPE '\\'"
      " ORDER BY 1, 2");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({f.job_id}); !s) return s;
  static const RE2 assignment(R"((?:^|[^A-Z0-9_])(NCCL_[A-Z0-9_]+)=)");
  std::map<std::string, IgnoredSetting> found;
  while (stmt->step()) {
    std::string text = stmt->column_text(5);
    re2::StringPiece in(text);
    std::string name;
    while (RE2::FindAndConsume(&in, assignment, &name)) {
      if (found.count(name) != 0 || describes_install(name)) continue;
      std::string reason;
      auto span = settings->span(name);
      if (!span) {
        auto meant = settings->likely_meant(name);
        reason = meant ? "no NCCL release reads " + name + "; did you mean " + *meant + "?"
                       : "no NCCL release reads " + name;
      } else if (!version.empty() && !settings->read_by(name, version)) {
        reason = "NCCL " + version + " does not read " + name + " (read by " + span->first + " to " + span->last + ")";
      } else {
        continue;
      }
      Located at{stmt->column_text(0), stmt->column_int(1),
                 stmt->column_is_null(2) ? -1 : static_cast<int>(stmt->column_int(2)), stmt->column_text(3),
                 stmt->column_int(4), text.substr(0, text.find('\n'))};
      found[name] = IgnoredSetting{at, name, reason};
    }
  }
  for (auto& [name, s] : found) f.ignored_settings.push_back(std::move(s));
  return Ok{};
}

}  // namespace ncclpm::diagnose
