// src/rules/rule.cc
#include "ncclpm/rules/rule.h"

#include <algorithm>

#include "ncclpm/util/text.h"

namespace ncclpm::rules {

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

int compare_versions(const std::string& a, const std::string& b) {
  auto pa = util::split(a, '.');
  auto pb = util::split(b, '.');
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    int64_t x = i < pa.size() ? util::parse_int(pa[i]).value_or(0) : 0;
    int64_t y = i < pb.size() ? util::parse_int(pb[i]).value_or(0) : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

}  // namespace ncclpm::rules
