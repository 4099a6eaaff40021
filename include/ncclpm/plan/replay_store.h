// include/ncclpm/plan/replay_store.h
//
// Replay's side of the incident database: reading the finding to replay
// (table findings, its JSON) and recording the outcome (table replays), so a
// postmortem can later ask which findings a replay confirmed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ncclpm/plan/finding_ref.h"
#include "ncclpm/store/sqlite.h"
#include "ncclpm/util/result.h"

namespace ncclpm::plan {

/// The finding with id `finding_id`, with its job's id and name.
Result<FindingRef> load_finding(store::Connection& db, int64_t finding_id);

/// One row of the replays table; the JSON columns hold one JSON value each.
struct ReplayRecord {
  int64_t finding_id = 0;  ///< 0: NULL (an explicit collective)
  int64_t job_id = 0;      ///< 0: NULL
  std::string plan_json, environment_json, devices_json, results_json;
  std::string nccl_version;
  std::string verdict;
  std::optional<bool> confirms;  ///< NULL when undecided
  int exit_code = 0;
};

/// Inserts `r` with the current time (UTC, ISO 8601); returns its replay_id.
Result<int64_t> store_replay(store::Connection& db, const ReplayRecord& r);

}  // namespace ncclpm::plan
