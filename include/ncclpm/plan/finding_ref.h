// include/ncclpm/plan/finding_ref.h
//
// What `replay` needs to know about a stored finding: its id, job, category
// and rule (the verdict depends on them), the watchdog timeout the job allowed,
// and the replay plan `diagnose` wrote. Read back from the finding's JSON (the
// `findings.json` column), the same document `diagnose --format json` prints,
// so replay depends on the public contract and not on diagnose's internals.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclpm/plan/collective_plan.h"
#include "ncclpm/util/result.h"

namespace ncclpm::plan {

struct FindingRef {
  int64_t finding_id = 0;
  int64_t job_id = 0;
  std::string job;  ///< job name, when known
  std::string rule, category, title;
  bool root_cause = false;
  std::vector<int> culprit_ranks;
  std::vector<std::string> culprit_hosts;
  std::string op_type;  ///< as the logs name it: _ALLGATHER_BASE
  int64_t numel_in = -1, numel_out = -1;
  int64_t timeout_ms = -1;             ///< the job's watchdog timeout; -1: not known
  std::optional<CollectivePlan> plan;  ///< absent when the finding has no collective to replay
};

/// Parses one finding as `diagnose --format json` writes it. The plan's `count`
/// is per rank; `dtype`, `redop` are names; `root` is optional (default 0).
Result<FindingRef> parse_finding_json(std::string_view json);

/// Where the plan's per-rank count came from, for people who check it against
/// the logs: "NumelIn" (AllGather), "NumelOut" (ReduceScatter), "NumelIn / 8"
/// (AllToAll), or "" when it cannot be told.
std::string count_source(const FindingRef& f);

}  // namespace ncclpm::plan
