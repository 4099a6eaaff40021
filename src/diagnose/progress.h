// src/diagnose/progress.h
//
// What the ranks' own progress bars say about a hang: a rank that ran out of
// batches before the others (uneven data), a host that stepped slower than
// the rest (a straggler).
#pragma once

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

}  // namespace ncclpm::diagnose
