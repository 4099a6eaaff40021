// src/diagnose/duplicate_gpu.h
//
// Two ranks of one communicator on one GPU, read from NCCL's own Init lines
// when its "Duplicate GPU detected" warning is not in the logs (a paste of
// INFO lines, a WARN cut away). NCCL compares the ranks' host and bus id
// right after "Init START" (init.cc) and fails the communicator before
// "Init COMPLETE"; the lines say the same: one commId, one host, one busId,
// two ranks, and neither finished its init.
#pragma once

#include <optional>

#include "job_facts.h"

namespace ncclpm::diagnose {

Result<std::optional<DuplicateGpu>> find_duplicate_gpu(store::Connection& db, int64_t job_id);

}  // namespace ncclpm::diagnose
