// include/ncclpm/plan/verdict.h
//
// Does the replay confirm the finding? The answer depends on what the finding
// claims:
//   - a rank never arrived (save-phase stall, desync, eval/generate stall,
//     packing deadlock, data imbalance, a crashed rank): a replay that
//     completes quickly with every rank present rules the fabric out and
//     supports the finding; a replay that hangs or fails refutes it (the
//     fabric fails by itself);
//   - the fabric failed (network_ib, network_socket, and the all-ranks-stuck
//     rule): a hang, a failure, wrong data or a busbw below the threshold
//     confirms it; a healthy replay refutes it (the fault did not reproduce);
//   - setup failed (init_failure, nccl_setup_error): a failure at init
//     confirms, a clean init refutes;
//   - a plain collective timeout is a symptom: a hang reproduces it, a quick
//     replay says where to look (a missing rank) without deciding;
//   - GPU faults and the rest: confirmed by failures or wrong data, otherwise
//     undecided (faults can be intermittent or on another node).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ncclpm/plan/replay_result.h"

namespace ncclpm::plan {

/// What a finding claims, as far as a replay can test it.
enum class Claim { kMissingRank, kFabric, kSetup, kSymptom, kGpu, kOther };
Claim claim_of(const std::string& category, const std::string& rule);

struct VerdictInput {
  bool has_finding = false;
  int64_t finding_id = 0;
  std::string category, rule;
  Outcome outcome = Outcome::kCompleted;
  std::string stage;       ///< where it stopped (init, timed, ...)
  std::string failure;     ///< the first error, for failures
  std::string incomplete;  ///< "ranks 8-15 on gpu-node08" for hangs
  double time_us = 0;      ///< per iteration
  double busbw_gbps = 0;
  int ranks = 0;                                ///< in the replay's communicator; one rank crosses no link
  int64_t size_bytes = 0;                       ///< nccl-tests' size
  int64_t wrong = -1;                           ///< -1: not checked
  int64_t job_timeout_ms = -1;                  ///< the job's watchdog timeout
  int64_t deadline_ms = 0;                      ///< the replay's own deadline
  double min_busbw_gbps = 5;                    ///< below this a large collective is slow
  int64_t min_judged_bytes = int64_t{1} << 20;  ///< smaller sizes measure latency, not bandwidth
};

struct Verdict {
  std::string text;              ///< one line: what happened, then what it means
  std::optional<bool> confirms;  ///< true confirms, false refutes, nullopt undecided
};

Verdict judge(const VerdictInput& in);

/// "41 ms", "950 us", "2.4 s".
std::string format_duration_us(double us);
/// "180 GB/s", "4.7 GB/s", "0.35 GB/s".
std::string format_gbps(double gbps);
/// 43902 -> "44,000": two significant digits, grouped.
std::string format_ratio(double ratio);

}  // namespace ncclpm::plan
