// include/ncclpm/plan/replay_settings.h
//
// `ncclpm replay`'s command line, checked and turned into what the engine
// runs: a CollectivePlan (from a stored finding, from --op/--count/--dtype, or
// the finding's plan with some fields overridden), the environment to apply,
// iterations and the deadline. Pure: no CUDA, no NCCL, so every rule here is
// unit-tested on machines without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ncclpm/plan/collective_plan.h"
#include "ncclpm/plan/finding_ref.h"
#include "ncclpm/util/result.h"

namespace ncclpm::plan {

/// The flags as given, before any checking. Unset numbers are -1 (or 0 for ids).
struct ReplayOptions {
  int64_t finding_id = 0;  ///< --finding
  std::string op;          ///< --op
  int64_t count = -1;      ///< --count: elements per rank (NCCL's count, PyTorch's NumelIn)
  int64_t bytes = -1;      ///< --bytes: nccl-tests' size, the whole collective
  std::string dtype;       ///< --dtype
  std::string redop;       ///< --redop
  int root = -1;           ///< --root
  int gpus = 0;            ///< --gpus per process; 0: all visible (one process) or 1 (launcher)
  int iters = 20;          ///< --iters
  int warmup = 5;          ///< --warmup
  double timeout_s = 120;  ///< --timeout
  bool check = false;      ///< --check
  std::vector<std::string> env;  ///< --env KEY=VALUE, in order
  bool env_from_logs = false;    ///< --env-from-logs
  bool dry_run = false;          ///< --dry-run
  double min_busbw_gbps = 5;     ///< --min-busbw: below it a large collective counts as slow
};

/// A checked replay, ready to print (dry run) or run.
struct ReplaySettings {
  CollectivePlan plan;       ///< env holds what replay sets; nranks 0 until known
  int64_t bytes = -1;        ///< --bytes, turned into a count once nranks is known
  std::string count_source;  ///< "NumelIn", "--count", "--bytes"
  int job_nranks = 0;        ///< ranks of the job's collective; 0: not known
  int gpus_per_process = 0;  ///< 0: decided when the GPUs are seen
  int iters = 20, warmup = 5;
  int64_t timeout_ms = 120000;  ///< the replay's own deadline, not the job's
  bool check = false;
  double min_busbw_gbps = 5;
  std::map<std::string, std::string> env_from_logs;  ///< applied, from the job's logs
  std::map<std::string, std::string> env_from_user;  ///< applied, from --env (wins)
  std::vector<std::string> env_not_applied;          ///< "NCCL_COMM_ID (replay bootstraps itself)"
};

/// Checks the options against each other and against the finding (null when
/// there is none) and builds the plan. Explicit --op/--count/--bytes/--dtype/
/// --redop/--root override the finding's plan: its dtype is often assumed.
Result<ReplaySettings> resolve_settings(const ReplayOptions& o, const FindingRef* finding);

/// Fixes the number of ranks once it is known (GPUs seen, launcher read):
/// turns --bytes into a per-rank count and checks the root.
Status set_nranks(ReplaySettings& s, int nranks);

/// A size as nccl-tests' -b takes it: "1048576", "64K", "512M", "1G", "2T"
/// (powers of 1024; a trailing "B" or "iB" allowed).
Result<int64_t> parse_byte_size(std::string_view text);

/// "NCCL_ALGO=Ring" -> {"NCCL_ALGO", "Ring"}.
Result<std::pair<std::string, std::string>> parse_env_assignment(std::string_view kv);

/// Why a variable seen in the job's logs is not applied; empty: apply it.
/// NCCL_COMM_ID would override replay's bootstrap; NCCL_DEBUG_FILE would
/// write files where the job did.
std::string env_not_applicable(std::string_view name);

}  // namespace ncclpm::plan
