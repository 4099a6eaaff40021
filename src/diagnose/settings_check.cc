// src/diagnose/settings_check.cc
//
// Field articles recommend NCCL settings that NCCL never reads (NCCL_TIMEOUT,
// NCCL_IB_MTU) or misspell real ones (NCCL_MAX_RINGS). A job that sets one
// believes it changed something it did not: say so.
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

Result<std::vector<IgnoredSetting>> ignored_nccl_settings(const std::map<std::string, Located>& assignments,
                                                          const JobFacts& f) {
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
  std::vector<IgnoredSetting> ignored;
  for (const auto& [name, at] : assignments) {
    if (describes_install(name)) continue;
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
    ignored.push_back(IgnoredSetting{at, name, reason});
  }
  return ignored;
}

}  // namespace ncclpm::diagnose
