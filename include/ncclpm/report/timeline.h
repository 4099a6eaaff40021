// include/ncclpm/report/timeline.h
//
// What the HTML postmortem draws, read from the incident database: one lane
// per rank (per host on big jobs, with the odd ranks kept as their own
// lanes), the moments that matter on each (first error, watchdog firing,
// exit, signal), the collective each rank got to, the moment the hang
// began, and a table of hosts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/store/sqlite.h"
#include "ncclpm/util/result.h"

namespace ncclpm::report {

/// A moment on a lane.
struct Mark {
  std::string kind;  ///< error, watchdog, exit, signal, completed (last collective completed)
  int64_t ts_us = 0;
  std::string text;  ///< the line, clipped
  std::string where; ///< file:line
};

/// A phase of a rank: its start-up (first line to its job-wide communicator's
/// Init COMPLETE, or to its last line when that never came), and the phase a
/// root-cause finding says it was in when the job stalled (a checkpoint save,
/// an evaluation: from the last line that shows it to the end of the logs).
struct Band {
  std::string label;  ///< "checkpoint save"
  int64_t from_us = 0, to_us = 0;
  std::string why;    ///< the line that shows it
};

/// One rank, one host's ranks, or the lines that name neither.
struct Lane {
  std::string label;         ///< "rank 17", "node3 (8 ranks)", "node3", "no rank or host"
  std::string host;
  std::vector<int> ranks;    ///< the ranks the lane stands for (empty: lines without a rank)
  int64_t first_us = 0, last_us = 0;  ///< first and last line with a time; 0: none
  int64_t lines = 0;
  std::vector<Mark> marks;   ///< time order; marks without a time last
  std::vector<Band> bands;
  bool culprit = false;      ///< a root-cause finding names its rank or host
  bool expanded = false;     ///< a rank shown apart from its host's lane on a big job
};

/// How far one rank got in the suspect process group.
struct RankProgress {
  int rank = -1;
  int64_t last_enqueued = -1, last_completed = -1;  ///< PyTorch's status lines or Flight Recorder
  int64_t stuck_seq = -1;    ///< the seq its watchdog timed out in
};

struct HostRow {
  std::string host;
  int ranks = 0;
  int64_t errors = 0;
  int64_t first_error_us = 0;
  std::vector<std::string> nccl_versions;
};

/// A host that was a root-cause culprit in more than one diagnosed job.
struct RecurringHost {
  std::string host;
  int64_t jobs = 0;
  std::string names;  ///< the jobs, comma-separated
};

struct Timeline {
  std::vector<Lane> lanes;   ///< grouped by host, ranks in order within a host
  bool by_host = false;      ///< more ranks than kMaxRankLanes: one lane per host
  int rank_count = 0;
  int64_t start_us = 0, end_us = 0;  ///< span of the lines with a time; 0: no line had one
  bool years_known = true;   ///< false: some times had no year (shown without one)
  int64_t hang_start_us = 0; ///< earliest watchdog firing minus how long its collective ran
  std::vector<RankProgress> progress;
  std::vector<Band> job_phases;  ///< what the main process said the job was doing (diagnose's phases)
  std::vector<HostRow> hosts;
  std::map<std::string, std::string> nccl_settings;  ///< NCCL_* the logs show set
  int64_t jobs_in_database = 1;
  std::vector<RecurringHost> recurring_hosts;  ///< from the stored findings of every job, as `ncclpm history`
};

/// Above this many ranks the timeline draws hosts, not ranks.
inline constexpr int kMaxRankLanes = 256;

/// Reads the timeline of a job; the culprits are taken from `d`'s root causes.
Result<Timeline> load_timeline(store::Connection& db, const diagnose::Diagnosis& d);

}  // namespace ncclpm::report
