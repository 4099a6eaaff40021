// src/plan/replay_result.cc
#include "ncclpm/plan/replay_result.h"

#include <algorithm>
#include <map>

#include "ncclpm/util/text.h"

namespace ncclpm::plan {

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kCompleted:
      return "completed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kTimedOut:
      return "timed_out";
    case Outcome::kInterrupted:
      return "interrupted";
  }
  return "failed";
}

ExitCode exit_code_for(Outcome o) {
  switch (o) {
    case Outcome::kCompleted:
      return ExitCode::kOk;
    case Outcome::kFailed:
      return ExitCode::kError;
    case Outcome::kTimedOut:
      return ExitCode::kTimedOut;
    case Outcome::kInterrupted:
      return ExitCode::kInterrupted;
  }
  return ExitCode::kError;
}

void summarize(ReplayResult& r, const CollectivePlan& plan) {
  double sum = 0;
  int n = 0;
  r.time_us_min = 0;
  r.time_us_max = 0;
  r.wrong = -1;
  for (const RankResult& k : r.ranks) {
    if (k.wrong >= 0) r.wrong = std::max<int64_t>(r.wrong, 0) + k.wrong;
    if (!k.reported || k.outcome != Outcome::kCompleted || k.time_us <= 0) continue;
    sum += k.time_us;
    r.time_us_min = n == 0 ? k.time_us : std::min(r.time_us_min, k.time_us);
    r.time_us_max = std::max(r.time_us_max, k.time_us);
    ++n;
  }
  r.time_us = n > 0 ? sum / n : 0;
  if (r.time_us > 0) {
    // bytes per microsecond are 1e6 bytes per second: / 1e3 gives GB/s.
    r.algbw_gbps = static_cast<double>(plan.nccl_tests_size_bytes()) / r.time_us / 1e3;
    r.busbw_gbps = r.algbw_gbps * bus_factor(plan.op, plan.nranks);
  } else {
    r.algbw_gbps = r.busbw_gbps = 0;
  }
}

std::vector<int> incomplete_ranks(const ReplayResult& r) {
  std::vector<int> out;
  for (const RankResult& k : r.ranks)
    if (!k.reported || k.outcome != Outcome::kCompleted) out.push_back(k.rank);
  return out;
}

std::string describe_ranks(const ReplayResult& r, const std::vector<int>& ranks) {
  if (ranks.empty()) return {};
  std::map<int, const RankResult*> by_rank;
  for (const RankResult& k : r.ranks) by_rank[k.rank] = &k;
  auto host_of = [&](int rank) -> std::string {
    auto it = by_rank.find(rank);
    return it == by_rank.end() ? std::string() : it->second->host;
  };
  if (ranks.size() == 1) {
    std::string out = "rank " + std::to_string(ranks[0]);
    auto it = by_rank.find(ranks[0]);
    if (it == by_rank.end() || it->second->host.empty()) return out + " (host unknown)";
    out += " on " + it->second->host;
    if (it->second->gpu.device >= 0) out += " GPU " + std::to_string(it->second->gpu.device);
    return out;
  }
  // Grouped by host in rank order: "ranks 0-7 on hgx-017, ranks 8-15 (host unknown)".
  std::vector<std::string> hosts;
  std::map<std::string, std::vector<int>> groups;
  for (int rank : ranks) {
    std::string h = host_of(rank);
    if (!groups.count(h)) hosts.push_back(h);
    groups[h].push_back(rank);
  }
  constexpr size_t kMaxGroups = 8;
  std::string out;
  for (size_t i = 0; i < hosts.size() && i < kMaxGroups; ++i) {
    const std::vector<int>& g = groups[hosts[i]];
    out += (i > 0 ? ", " : "") + std::string(g.size() == 1 ? "rank " : "ranks ") + util::rank_ranges(g) +
           (hosts[i].empty() ? " (host unknown)" : " on " + hosts[i]);
  }
  if (hosts.size() > kMaxGroups)
    out += " and ranks on " + std::to_string(hosts.size() - kMaxGroups) + " more hosts";
  return out;
}

std::string rank_failure(const std::string& host, int rank, int gpu, const std::string& call,
                         const std::string& message) {
  std::string who =
      "host " + (host.empty() ? std::string("?") : host) + " rank " + std::to_string(rank);
  if (gpu >= 0) who += " GPU " + std::to_string(gpu);
  return who + ": " + (call.empty() ? message : call + " failed: " + message);
}

}  // namespace ncclpm::plan
