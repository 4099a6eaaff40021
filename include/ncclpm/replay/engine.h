// include/ncclpm/replay/engine.h
//
// The replay engine: runs a CollectivePlan with NCCL on live GPUs and
// measures it as nccl-tests does (warm-up iterations, then CUDA events around
// the timed iterations; time per iteration, algbw, busbw). Built only with
// CUDA and NCCL (library ncclpm_replay).
//
// It never hangs. Communicators are non-blocking (ncclConfig_t.blocking = 0);
// every wait polls ncclCommGetAsyncError and cudaEventQuery against one
// deadline (and Ctrl-C), and at the deadline every communicator is aborted
// with ncclCommAbort. Failures come back inside the ReplayResult (outcome,
// stage, the failing call and the rank, host and GPU it failed on), not as
// errors: a replay that fails is a result the verdict reads.
//
// One process drives one or more GPUs, one rank each (local rank i is global
// rank first_rank + i). With several processes they meet through NCCL's own
// bootstrap: the caller sets NCCL_COMM_ID to the same host:port in every
// process before calling run(). Their results travel to every rank in one
// allgather of fixed-size RankWire blocks on the replay's communicator; a
// rank whose block never arrives is reported as not having completed.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "ncclpm/plan/collective_plan.h"
#include "ncclpm/plan/launch_env.h"
#include "ncclpm/plan/replay_result.h"
#include "ncclpm/util/result.h"

namespace ncclpm::replay {

/// The GPUs this process can see. Fails with "no CUDA device visible" when
/// there is none or no driver (the CUDA runtime loads libcuda only now).
Result<std::vector<plan::GpuInfo>> visible_gpus();

/// The NCCL library's version ("2.28.9"), as loaded, not as compiled against.
std::string nccl_version();

struct EngineConfig {
  plan::CollectivePlan plan;  ///< nranks = processes x GPUs per process
  int warmup = 5, iters = 20;
  bool check = false;
  int64_t timeout_ms = 120000;          ///< for init and the collective
  int64_t exchange_timeout_ms = 15000;  ///< at least this long for the final result exchange
  plan::LaunchInfo launch;
  std::vector<plan::GpuInfo> gpus;  ///< the GPUs this process drives, one rank each
  std::string host;                 ///< this host's name, for the report
  const std::atomic<bool>* interrupted = nullptr;
  std::function<void(const std::string&)> progress;  ///< optional: one line per stage
};

/// Runs the replay; every rank of the communicator appears in the result.
plan::ReplayResult run(const EngineConfig& config);

}  // namespace ncclpm::replay
