// src/vocab/categories.cc
#include "ncclpm/vocab/categories.h"

#include <algorithm>

namespace ncclpm::vocab {

const std::vector<std::string>& categories() {
  static const std::vector<std::string> kCategories = {
      "collective_timeout", "desync",          "save_phase_stall", "eval_generate_stall",
      "packing_deadlock",   "data_imbalance",  "rank_crash_oom",   "rank_crash",
      "network_ib",         "network_socket",  "cuda_error",       "gpu_hardware",
      "nccl_setup_error",   "version_mismatch", "duplicate_gpu",   "init_failure",
      "watchdog_stuck",     "launcher_sigterm", "straggler"};
  return kCategories;
}

bool is_category(const std::string& name) {
  const auto& c = categories();
  return std::find(c.begin(), c.end(), name) != c.end();
}

}  // namespace ncclpm::vocab
