// src/plan/verdict.cc
#include "ncclpm/plan/verdict.h"

#include <cmath>
#include <cstdio>

#include "ncclpm/util/text.h"

namespace ncclpm::plan {
namespace {

enum class Health { kHealthy, kSlow, kWrongData, kHung, kFailed, kInterrupted };

Health health_of(const VerdictInput& in) {
  switch (in.outcome) {
    case Outcome::kTimedOut:
      return Health::kHung;
    case Outcome::kFailed:
      return Health::kFailed;
    case Outcome::kInterrupted:
      return Health::kInterrupted;
    case Outcome::kCompleted:
      break;
  }
  if (in.wrong > 0) return Health::kWrongData;
  // One rank moves no data between GPUs (NCCL's busbw factor is 0): its speed says nothing of the fabric.
  if (in.ranks != 1 && in.size_bytes >= in.min_judged_bytes && in.busbw_gbps < in.min_busbw_gbps)
    return Health::kSlow;
  return Health::kHealthy;
}

// "completes in 41 ms at 180 GB/s busbw, 44,000x under the 1800 s timeout"
std::string measured(const VerdictInput& in) {
  std::string s = "completes in " + format_duration_us(in.time_us) +
                  (in.ranks == 1 ? std::string(" on one rank (no data crosses a link: busbw not judged)")
                                 : " at " + format_gbps(in.busbw_gbps) + " busbw");
  if (in.job_timeout_ms > 0 && in.time_us > 0) {
    double ratio = static_cast<double>(in.job_timeout_ms) * 1000.0 / in.time_us;
    char t[32];
    std::snprintf(t, sizeof t, "%g", static_cast<double>(in.job_timeout_ms) / 1000.0);
    s += ", " + format_ratio(ratio) + "x under the " + t + " s timeout";
  }
  return s;
}

std::string what_happened(const VerdictInput& in, Health h) {
  switch (h) {
    case Health::kHealthy:
      return measured(in);
    case Health::kSlow: {
      char t[32];
      std::snprintf(t, sizeof t, "%g", in.min_busbw_gbps);
      return measured(in) + " (below " + t + " GB/s)";
    }
    case Health::kWrongData:
      return measured(in) + " but returns " + util::with_commas(in.wrong) + " wrong element(s)";
    case Health::kHung: {
      std::string s = "does not complete within the " +
                      format_duration_us(static_cast<double>(in.deadline_ms) * 1e3) + " deadline";
      if (!in.stage.empty()) s += " (stuck in " + in.stage + ")";
      if (!in.incomplete.empty()) s += ": " + in.incomplete + " did not complete";
      return s;
    }
    case Health::kFailed:
      return "fails" + (in.stage.empty() ? std::string() : " at " + in.stage) +
             (in.failure.empty() ? std::string() : ": " + in.failure);
    case Health::kInterrupted:
      return "was interrupted";
  }
  return {};
}

// What the replay means for each kind of claim, and whether it confirms it.
Verdict meaning(Claim claim, Health h, const VerdictInput& in) {
  bool bad = h != Health::kHealthy;  // anything but a clean, fast run
  bool at_init = in.stage == "init";
  switch (claim) {
    case Claim::kMissingRank:
      if (h == Health::kHealthy)
        return {"the fabric is fine; the timeout was a rank that never arrived", true};
      if (h == Health::kSlow)
        return {
            "the fabric is slow but nowhere near the timeout; the timeout was a rank that never "
            "arrived",
            true};
      if (h == Health::kWrongData)
        return {"the fabric or a GPU corrupts data; suspect it as well as the missing rank", false};
      return {
          "the collective fails with every rank present: suspect the fabric or NCCL before a "
          "missing rank",
          false};
    case Claim::kFabric:
      if (bad) return {"the fabric fails by itself, as the finding says", true};
      return {
          "the fabric is healthy now: the fault did not reproduce (transient, repaired, or on "
          "other hosts)",
          false};
    case Claim::kSetup:
      if (h == Health::kFailed || (h == Health::kHung && at_init))
        return {at_init ? "communicator setup fails here too, as the finding says"
                        : "NCCL fails here too",
                true};
      return {
          "communicators initialise cleanly with these settings: the setup failure did not "
          "reproduce",
          false};
    case Claim::kSymptom:
      if (h == Health::kHung)
        return {"the collective hangs with every rank present: the timeout reproduces", true};
      if (h == Health::kHealthy)
        return {"the fabric is fine; the timeout was a rank that never arrived", std::nullopt};
      if (h == Health::kSlow)
        return {
            "the fabric is slow but nowhere near the timeout; look for a rank that never arrived",
            std::nullopt};
      return {"the replay fails by itself: suspect the fabric or NCCL", std::nullopt};
    case Claim::kGpu:
      if (h == Health::kWrongData || h == Health::kFailed)
        return {"the GPU fault reproduces", true};
      return {"the GPUs here run it cleanly; the fault may be intermittent or on another node",
              std::nullopt};
    case Claim::kOther:
      break;
  }
  if (bad) return {"the replay does not run cleanly: look at the fabric as well", std::nullopt};
  return {"the collective runs cleanly here; this neither confirms nor refutes the finding",
          std::nullopt};
}

}  // namespace

Claim claim_of(const std::string& category, const std::string& rule) {
  if (rule == "all-ranks-stuck-in-collective") return Claim::kFabric;
  if (category == "network_ib" || category == "network_socket") return Claim::kFabric;
  if (category == "save_phase_stall" || category == "desync" || category == "eval_generate_stall" ||
      category == "packing_deadlock" || category == "data_imbalance" || category == "rank_crash" ||
      category == "rank_crash_oom")
    return Claim::kMissingRank;
  if (category == "init_failure" || category == "nccl_setup_error") return Claim::kSetup;
  if (category == "collective_timeout") return Claim::kSymptom;
  if (category == "cuda_error" || category == "gpu_hardware") return Claim::kGpu;
  return Claim::kOther;
}

Verdict judge(const VerdictInput& in) {
  Health h = health_of(in);
  std::string happened = what_happened(in, h);
  if (h == Health::kInterrupted) return {"replay " + happened + ": no verdict", std::nullopt};
  if (!in.has_finding) return {happened, std::nullopt};
  Claim claim = claim_of(in.category, in.rule);
  // A clean run on one rank crossed no link: it tells nothing of the fabric
  // a timeout, a missing rank or a network finding is about.
  bool about_links = claim == Claim::kMissingRank || claim == Claim::kFabric || claim == Claim::kSymptom;
  if (in.ranks == 1 && h == Health::kHealthy && about_links)
    return {happened + ": one rank crosses no link, so this says nothing of the fabric; replay it on as many GPUs "
                       "as the job had (--gpus N, and across hosts through the launcher)",
            std::nullopt};
  Verdict m = meaning(claim, h, in);
  return {happened + ": " + m.text, m.confirms};
}

std::string format_duration_us(double us) {
  char buf[32];
  if (us < 1000)
    std::snprintf(buf, sizeof buf, "%.0f us", us);
  else if (us < 10e3)
    std::snprintf(buf, sizeof buf, "%.1f ms", us / 1e3);
  else if (us < 1e6)
    std::snprintf(buf, sizeof buf, "%.0f ms", us / 1e3);
  else if (us < 10e6)
    std::snprintf(buf, sizeof buf, "%.1f s", us / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0f s", us / 1e6);
  return buf;
}

std::string format_gbps(double gbps) {
  char buf[32];
  if (gbps >= 10)
    std::snprintf(buf, sizeof buf, "%.0f GB/s", gbps);
  else if (gbps >= 1)
    std::snprintf(buf, sizeof buf, "%.1f GB/s", gbps);
  else
    std::snprintf(buf, sizeof buf, "%.2f GB/s", gbps);
  return buf;
}

std::string format_ratio(double ratio) {
  if (ratio < 10) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.1f", ratio);
    return buf;
  }
  int digits = static_cast<int>(std::floor(std::log10(ratio))) + 1;
  double unit = std::pow(10.0, digits - 2);
  return util::with_commas(static_cast<int64_t>(std::llround(ratio / unit) * unit));
}

}  // namespace ncclpm::plan
