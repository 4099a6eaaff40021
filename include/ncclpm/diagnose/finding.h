// include/ncclpm/diagnose/finding.h
//
// What `diagnose` reports. The JSON rendering of these types is the public
// contract described in shared/DESIGN.md: scripts and alerting rely on the
// `category` values and on the field names.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ncclpm/plan/collective_plan.h"

namespace ncclpm::diagnose {

struct Evidence {
  std::string file;   ///< path relative to the job directory
  int64_t line = 0;
  std::string text;
  int rank = -1;
  std::string host;
  int64_t ts_us = 0;  ///< 0: the line had no time
  int64_t pid = 0;    ///< the process that logged it; 0: unknown (not shown, not stored)
};

/// The collective a finding is about, as the logs name it.
struct CollectiveRef {
  std::string pg;           ///< process group ("0", "default_pg", ...)
  int64_t seq = -1;
  std::string op_type;      ///< PyTorch OpType, e.g. _ALLGATHER_BASE
  std::string op;           ///< canonical: allgather
  int64_t numel_in = -1, numel_out = -1;
  std::string dtype;        ///< empty when the logs do not say
  int64_t bytes = -1;       ///< per-rank bytes when the dtype is known
  int64_t timeout_ms = -1;
  int nranks = -1;
  int64_t hang_start_us = 0;  ///< when it began to hang (watchdog firing minus ran-for); 0: unknown
};

struct Finding {
  std::string rule, category, title, severity;
  double confidence = 0;
  bool root_cause = false;
  std::string summary;                 ///< one or two sentences: what happened
  std::vector<int> culprit_ranks;
  std::vector<std::string> culprit_hosts;
  std::optional<CollectiveRef> collective;
  std::vector<Evidence> evidence;
  std::string advice;
  std::optional<plan::CollectivePlan> replay;
  int64_t first_ts_us = 0;             ///< earliest evidence time; 0: unknown
  int64_t finding_id = 0;              ///< set once stored
};

struct RankState {
  int rank = -1;
  std::string host;
  int64_t last_enqueued = -1, last_completed = -1;
  std::string role;          ///< culprit, victim, crashed, or empty
  std::string phase;         ///< what it was doing when the job hung: "saving a checkpoint", "waiting in ALLREDUCE seq 811"
  std::string last_activity; ///< its last meaningful line
};

/// A host whose clock differs from the reference host's by more than
/// rounding (clock_offsets): its times were shifted onto the reference clock.
struct ClockSkew {
  std::string host, reference;
  double offset_s = 0;        ///< host clock minus reference clock
  int moments = 0;            ///< shared moments the estimate rests on
  std::string basis;          ///< "watchdog timeouts", "communicator inits"
  std::string words() const;  ///< one sentence for the reports
};

/// A stretch of time in which the job's main process said it was in one
/// phase (rules/phases/markers.toml): from the marker that began it to the
/// next marker of another phase.
struct JobPhase {
  std::string phase;     ///< "training", "evaluation", "checkpoint save", ...
  int64_t from_us = 0;
  int64_t to_us = 0;     ///< 0: until the logs end
  Evidence marker;       ///< the line that began it
};

struct Diagnosis {
  std::string job;
  int64_t job_id = 0;
  int world_size = 0;
  std::vector<Finding> findings;       ///< root causes first
  std::vector<RankState> ranks;        ///< ranks that matter (culprits, victims, crashed)
  std::vector<Evidence> timeline;      ///< first failures in time order
  std::vector<ClockSkew> clock_skews;  ///< largest first
  std::vector<JobPhase> phases;        ///< the main process's timed phases, in time order
  std::optional<JobPhase> phase_at_hang;  ///< the phase in which the suspect collective began to hang
  bool years_known = true;             ///< false: the lines gave no year (times carry a placeholder one)
  bool has_root_cause() const;
};

}  // namespace ncclpm::diagnose
