// src/diagnose/flight_recorder.h
//
// The verdict PyTorch's fr_trace gives first on a job's Flight Recorder dumps
// ("Not all ranks joining collective N ... missing ranks: {2}"), from the
// dumps' per-group status: the first collective seq some rank never enqueued;
// and the one it reports next, a collective whose ranks' calls differ.
#pragma once

#include <optional>

#include "job_facts.h"

namespace ncclpm::diagnose {

Result<std::optional<FrMissingRanks>> find_fr_missing_ranks(store::Connection& db, int64_t job_id);

/// The first collective whose ranks' entries differ in type, sizes or dtypes
/// (fr_trace's type, size and dtype checks).
Result<std::optional<FrMismatch>> find_fr_mismatch(store::Connection& db, int64_t job_id);

}  // namespace ncclpm::diagnose
