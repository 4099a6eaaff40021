// include/ncclpm/plan/replay_result.h
//
// What a replay measured, per rank and in total, in the units nccl-tests
// prints: time per iteration in microseconds, algbw and busbw in GB/s (1e9
// bytes per second). algbw is nccl-tests' size (CollectivePlan::
// nccl_tests_size_bytes) over the time; busbw is algbw times bus_factor(op,
// nranks), the traffic each link carries in the ring algorithm, so one number
// compares across ops and rank counts. The engine fills these; formatting,
// the verdict and storage read them, so tests give them fake results.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ncclpm/plan/collective_plan.h"
#include "ncclpm/util/error.h"

namespace ncclpm::plan {

/// How the replay ended, from the point of view of the process reporting it.
enum class Outcome { kCompleted, kFailed, kTimedOut, kInterrupted };
const char* outcome_name(Outcome o);  ///< "completed", "failed", "timed_out", "interrupted"
/// 0 completed, 1 failed, 3 timed out, 130 interrupted.
ExitCode exit_code_for(Outcome o);

/// One GPU as the CUDA runtime describes it.
struct GpuInfo {
  int device = -1;     ///< CUDA device ordinal in this process
  std::string name;    ///< "NVIDIA H100 80GB HBM3"
  std::string bus_id;  ///< "0000:18:00.0"
  int64_t memory_bytes = 0;
};

/// One rank of the replay's communicator.
struct RankResult {
  int rank = -1;
  std::string host;
  GpuInfo gpu;
  bool reported = false;  ///< its result reached the reporting process
  Outcome outcome = Outcome::kFailed;
  std::string stage;    ///< where it stopped: init, exchange, warmup, timed, check, finalize
  std::string call;     ///< the call that failed: "ncclCommInitRankConfig"
  std::string message;  ///< what that call said
  double time_us = 0;   ///< average time per timed iteration
  int64_t wrong = -1;   ///< elements that failed the check; -1: not checked
};

struct ReplayResult {
  Outcome outcome = Outcome::kFailed;
  std::string stage;                      ///< the stage where it stopped, when it did not complete
  std::string failure;                    ///< the first error, as the user reads it
  std::string nccl_version;               ///< "2.28.9", from the library
  std::string cuda_driver, cuda_runtime;  ///< "13.0"
  int processes = 1, gpus_per_process = 1;
  int warmup = 0, iters = 0;
  std::vector<RankResult> ranks;  ///< every rank of the communicator, ordered by rank
  double elapsed_s = 0;           ///< wall time from start to the end of the timed loop

  // Filled by summarize():
  double time_us = 0, time_us_min = 0, time_us_max = 0;  ///< over ranks that completed
  double algbw_gbps = 0, busbw_gbps = 0;
  int64_t wrong = -1;  ///< summed over checked ranks; -1: not checked
};

/// Averages time over the ranks that completed (nccl-tests' default is the
/// average over ranks) and computes algbw and busbw for `plan`.
void summarize(ReplayResult& r, const CollectivePlan& plan);

/// Ranks that did not complete (failed, timed out, or never reported).
std::vector<int> incomplete_ranks(const ReplayResult& r);

/// "ranks 8-15 on gpu-node08" / "rank 3 on gpu-node07 GPU 1": who did not complete.
std::string describe_ranks(const ReplayResult& r, const std::vector<int>& ranks);

/// The line a user sees for a failure on a rank:
/// "host gpu-node07 rank 3 GPU 1: ncclCommInitRankConfig failed: unhandled system error".
std::string rank_failure(const std::string& host, int rank, int gpu, const std::string& call,
                         const std::string& message);

}  // namespace ncclpm::plan
