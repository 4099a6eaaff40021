// bench/gen/torch_lines.h
//
// Lines the Python side of the job writes (shared/log-formats.md sections B
// and C), in their PyTorch 2.4 shapes: the c10 logger prefix with the global
// rank and a monotonic nanosecond field, the watchdog timeout and async NCCL
// error sequences with their C++ backtraces, Python tracebacks behind the
// `[rankN]: ` excepthook prefix, the torchrun agent's own lines and its
// ChildFailedError summary; plus the HF Trainer logger and tqdm bars.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gen/job.h"
#include "gen/text.h"

namespace ncclpm::bench::torch {

/// The collective a PyTorch message talks about (WorkNCCL).
struct Work {
  uint64_t seq;
  const char* op_type;
  uint64_t numel_in, numel_out;
  int64_t timeout_ms;
};
Work work_of(const Job& job, const CollSpec& c, uint64_t seq);

/// "[rank5]:[E612 09:14:02.183009389 ProcessGroupNCCL.cpp:607] "
void c10_prefix(std::string& s, char sev, Time t, Rng& rng, std::string_view file_line, int grank);

/// The 2.4 sequence a rank's watchdog writes to stderr when `w` times out:
/// "Watchdog caught collective operation timeout", the PG status lines, the
/// terminate/what() block with backtraces, then faulthandler's dump.
void watchdog_timeout_block(std::string& s, const Job& job, const RankInfo& r, const Work& w,
                            Time t, int64_t ran_ms, Rng& rng);

/// The 2.4 sequence for an asynchronous NCCL error (`nccl_last_error` is the
/// NCCL WARN text that PyTorch repeats after "Last error:").
void async_error_block(std::string& s, const Job& job, const RankInfo& r, const Work& w, Time t,
                       const std::string& nccl_last_error, Rng& rng);

/// A CUDA out-of-memory traceback in a decoder layer's forward, every line
/// behind the `[rankN]: ` excepthook prefix.
void oom_traceback(std::string& s, const Job& job, const RankInfo& r, Rng& rng);

/// "[INFO|trainer.py:2134] 2025-06-12 09:16:02,000 >> " + msg + "\n"
void hf_line(std::string& s, Time t, std::string_view src, std::string_view msg);

/// One tqdm redraw: "\r 34%|███▍      | 501/1464 [19:48<37:57,  2.37s/it]" (no newline).
void tqdm_redraw(std::string& s, int n, int total, double elapsed_s, double rate_s);

// ---- the torchrun agent of one host -------------------------------------

/// The OMP_NUM_THREADS banner every torchrun prints at start.
void agent_banner(std::string& s, const Job& job, const HostInfo& h);

struct WorkerExit {
  int rank, local, pid, exitcode;
  Time time;
  std::string traceback;  ///< the summary's `traceback :` field
};

/// What the agent prints after its workers failed: SIGTERMs to the survivors,
/// `failed (exitcode: ...)`, its own traceback and the ChildFailedError block.
/// `failures` are in the order observed; the first one is the root cause.
void agent_failure(std::string& s, const Job& job, const HostInfo& h,
                   const std::vector<WorkerExit>& failures, const std::vector<int>& sigterm_pids,
                   Time t);

/// "Signal 6 (SIGABRT) received by PID 1235"
std::string signal_traceback(int sig, int pid);

}  // namespace ncclpm::bench::torch
