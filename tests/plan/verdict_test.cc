// tests/plan/verdict_test.cc
#include "ncclpm/plan/verdict.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

VerdictInput completed(const std::string& category, double time_us, double busbw) {
  VerdictInput in;
  in.has_finding = true;
  in.finding_id = 1;
  in.category = category;
  in.outcome = Outcome::kCompleted;
  in.time_us = time_us;
  in.busbw_gbps = busbw;
  in.size_bytes = 466747392;
  in.job_timeout_ms = 1800000;
  in.deadline_ms = 120000;
  return in;
}

VerdictInput hung(const std::string& category, const std::string& rule = {}) {
  VerdictInput in = completed(category, 0, 0);
  in.rule = rule;
  in.outcome = Outcome::kTimedOut;
  in.stage = "timed";
  in.incomplete = "ranks 8-15 on gpu-node08";
  return in;
}

TEST(ReplayVerdict, QuickReplaySupportsAMissingRank) {
  Verdict v = judge(completed("save_phase_stall", 41000, 180));
  EXPECT_EQ(v.text,
            "completes in 41 ms at 180 GB/s busbw, 44,000x under the 1800 s timeout: "
            "the fabric is fine; the timeout was a rank that never arrived");
  EXPECT_EQ(v.confirms, true);
  EXPECT_EQ(judge(completed("desync", 41000, 180)).confirms, true);
}

TEST(ReplayVerdict, HangRefutesAMissingRank) {
  Verdict v = judge(hung("save_phase_stall"));
  EXPECT_EQ(v.text,
            "does not complete within the 120 s deadline (stuck in timed): ranks 8-15 on "
            "gpu-node08 did not "
            "complete: the collective fails with every rank present: suspect the fabric or NCCL "
            "before a missing rank");
  EXPECT_EQ(v.confirms, false);
}

TEST(ReplayVerdict, FabricFindingsAreConfirmedByHangsFailuresAndLowBusbw) {
  EXPECT_EQ(judge(hung("network_ib")).confirms, true);
  EXPECT_EQ(judge(hung("collective_timeout", "all-ranks-stuck-in-collective")).confirms, true);
  VerdictInput failed = completed("network_socket", 0, 0);
  failed.outcome = Outcome::kFailed;
  failed.stage = "init";
  failed.failure =
      "host gpu-node07 rank 3 GPU 1: ncclCommInitRankConfig failed: unhandled system error";
  Verdict f = judge(failed);
  EXPECT_EQ(f.confirms, true);
  EXPECT_EQ(f.text,
            "fails at init: host gpu-node07 rank 3 GPU 1: ncclCommInitRankConfig failed: unhandled "
            "system error: "
            "the fabric fails by itself, as the finding says");
  Verdict slow = judge(completed("network_ib", 900000, 0.9));
  EXPECT_EQ(slow.confirms, true);
  EXPECT_EQ(slow.text,
            "completes in 900 ms at 0.90 GB/s busbw, 2,000x under the 1800 s timeout (below 5 "
            "GB/s): the fabric "
            "fails by itself, as the finding says");
}

TEST(ReplayVerdict, HealthyReplayRefutesAFabricFinding) {
  Verdict v = judge(completed("network_ib", 41000, 180));
  EXPECT_EQ(v.confirms, false);
  EXPECT_NE(v.text.find("did not reproduce"), std::string::npos);
}

TEST(ReplayVerdict, SmallCollectivesAreNotJudgedSlow) {
  VerdictInput in = completed("network_ib", 30, 0.01);
  in.size_bytes = 4096;
  EXPECT_EQ(judge(in).confirms, false);  // healthy: latency, not bandwidth
}

// One rank moves no data between GPUs: NCCL's busbw factor is 0, so a
// one-GPU replay (seen on an H100, 2026-11-27: "0.00 GB/s busbw (below 5
// GB/s)") says nothing of the fabric's speed.
TEST(ReplayVerdict, OneRankIsNotJudgedSlowAndSaysNothingOfTheFabric) {
  for (const char* category : {"network_ib", "save_phase_stall", "collective_timeout"}) {
    VerdictInput in = completed(category, 92, 0);
    in.ranks = 1;
    Verdict v = judge(in);
    EXPECT_EQ(v.confirms, std::nullopt) << v.text;  // neither slow nor a fabric found fine
    EXPECT_NE(v.text.find("completes in 92 us on one rank (no data crosses a link: busbw not judged)"),
              std::string::npos)
        << v.text;
    EXPECT_NE(v.text.find("one rank crosses no link, so this says nothing of the fabric"), std::string::npos)
        << v.text;
  }
  VerdictInput two = completed("network_ib", 92, 0);
  two.ranks = 2;
  EXPECT_EQ(judge(two).confirms, true) << "two ranks at 0 GB/s are slow";
  VerdictInput hung_alone = hung("network_ib");
  hung_alone.ranks = 1;
  EXPECT_EQ(judge(hung_alone).confirms, true) << "a hang on one GPU still reproduces a fault";
}

TEST(ReplayVerdict, PlainTimeoutIsASymptom) {
  Verdict quick = judge(completed("collective_timeout", 41000, 180));
  EXPECT_FALSE(quick.confirms.has_value());
  EXPECT_NE(quick.text.find("the timeout was a rank that never arrived"), std::string::npos);
  EXPECT_EQ(judge(hung("collective_timeout")).confirms, true);
}

TEST(ReplayVerdict, SetupAndGpuFindings) {
  VerdictInput init = hung("init_failure");
  init.stage = "init";
  EXPECT_EQ(judge(init).confirms, true);
  EXPECT_EQ(judge(completed("init_failure", 41000, 180)).confirms, false);
  VerdictInput wrong = completed("gpu_hardware", 41000, 180);
  wrong.wrong = 12;
  Verdict w = judge(wrong);
  EXPECT_EQ(w.confirms, true);
  EXPECT_NE(w.text.find("returns 12 wrong element(s)"), std::string::npos);
  EXPECT_FALSE(judge(completed("gpu_hardware", 41000, 180)).confirms.has_value());
  EXPECT_FALSE(judge(completed("version_mismatch", 41000, 180)).confirms.has_value());
}

TEST(ReplayVerdict, InterruptedAndExplicitReplaysDecideNothing) {
  VerdictInput in = completed("save_phase_stall", 0, 0);
  in.outcome = Outcome::kInterrupted;
  EXPECT_EQ(judge(in).text, "replay was interrupted: no verdict");
  EXPECT_FALSE(judge(in).confirms.has_value());
  VerdictInput bare = completed("", 2412.5, 169.3);
  bare.has_finding = false;
  bare.job_timeout_ms = -1;
  Verdict b = judge(bare);
  EXPECT_EQ(b.text, "completes in 2.4 ms at 169 GB/s busbw");
  EXPECT_FALSE(b.confirms.has_value());
}

TEST(ReplayVerdict, ClaimsByCategoryAndRule) {
  EXPECT_EQ(claim_of("collective_timeout", "all-ranks-stuck-in-collective"), Claim::kFabric);
  EXPECT_EQ(claim_of("collective_timeout", "nccl-watchdog-timeout"), Claim::kSymptom);
  EXPECT_EQ(claim_of("eval_generate_stall", ""), Claim::kMissingRank);
  EXPECT_EQ(claim_of("nccl_setup_error", ""), Claim::kSetup);
  EXPECT_EQ(claim_of("cuda_error", ""), Claim::kGpu);
  EXPECT_EQ(claim_of("launcher_sigterm", ""), Claim::kOther);
}

TEST(ReplayVerdict, NumbersReadByPeople) {
  EXPECT_EQ(format_ratio(43902.4), "44,000");
  EXPECT_EQ(format_ratio(1999), "2,000");
  EXPECT_EQ(format_ratio(87), "87");
  EXPECT_EQ(format_ratio(3.14), "3.1");
  EXPECT_EQ(format_duration_us(950), "950 us");
  EXPECT_EQ(format_duration_us(2412.5), "2.4 ms");
  EXPECT_EQ(format_duration_us(41000), "41 ms");
  EXPECT_EQ(format_duration_us(2.4e6), "2.4 s");
  EXPECT_EQ(format_duration_us(120e6), "120 s");
  EXPECT_EQ(format_gbps(180.4), "180 GB/s");
  EXPECT_EQ(format_gbps(4.72), "4.7 GB/s");
  EXPECT_EQ(format_gbps(0.354), "0.35 GB/s");
}

}  // namespace
}  // namespace ncclpm::plan
