// src/diagnose/progress.h
//
// What the ranks' own progress bars say about a hang: a rank that ran out of
// batches before the others (uneven data), a host that stepped slower than
// the rest (a straggler).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "job_facts.h"

namespace ncclpm::diagnose {

/// Each rank's last bar per label, of bars that count steps ("it"), not
/// examples (a dataset's map), with the rank known.
Result<std::vector<ProgressBar>> load_last_bars(store::Connection& db, int64_t job_id);

std::optional<UnevenBatches> find_uneven_batches(const std::vector<ProgressBar>& bars);

/// Slower than the others' median by this factor or more: a straggler, not
/// the noise of a bar's smoothed rate.
inline constexpr double kStragglerFactor = 1.2;

std::optional<SlowHost> find_slow_host(const std::vector<ProgressBar>& bars);

/// Each rank's time in the timers of its own work (forward-compute,
/// backward-compute, batch-generator, optimizer-inner-step) from the job's
/// last Megatron report with a time per rank (`--timing-log-option all`), as
/// bars: the timer is the label, its seconds the rate; the host is the rank's.
Result<std::vector<ProgressBar>> load_rank_timers(store::Connection& db, int64_t job_id,
                                                  const std::map<int, std::string>& host_of_rank);

/// Of those timers, the one where a host (or rank) is slowest against the rest
/// by kStragglerFactor or more. The others' waiting timers (grads-sync, recv)
/// are not compared: the ranks that wait are the fast ones.
std::optional<SlowHost> find_slow_host_in_timers(const std::vector<ProgressBar>& timers);

/// One timed progress line of a rank's loop, in the order it was written.
struct TimedStep {
  Located at;
  std::string label;
  int64_t step = -1;
  double seconds_per_step = 0;
};

/// The longest stream of timed progress lines: one rank's one loop (label
/// and source), the lines in file order.
Result<std::vector<TimedStep>> load_timed_steps(store::Connection& db, int64_t job_id);

/// The last steps slower than the steady pace by this factor or more: a
/// slowdown, not the jitter of a bar's smoothed rate or an evaluation's pause.
inline constexpr double kSlowdownFactor = 1.5;
/// Fewer timed lines than this say nothing about a trend.
inline constexpr size_t kMinTimedSteps = 8;

std::optional<Slowdown> find_slowdown(const std::vector<TimedStep>& steps);

}  // namespace ncclpm::diagnose
