// tests/plan/replay_result_test.cc
#include "ncclpm/plan/replay_result.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

ReplayResult sixteen_ranks_two_hosts() {
  ReplayResult r;
  for (int k = 0; k < 16; ++k) {
    RankResult x;
    x.rank = k;
    x.host = k < 8 ? "gpu-node07" : "gpu-node08";
    x.gpu.device = k % 8;
    x.reported = true;
    x.outcome = Outcome::kCompleted;
    x.time_us = 100;
    r.ranks.push_back(x);
  }
  return r;
}

TEST(ReplayResultText, NamesRanksWithTheirHosts) {
  ReplayResult r = sixteen_ranks_two_hosts();
  EXPECT_EQ(describe_ranks(r, {11}), "rank 11 on gpu-node08 GPU 3");
  EXPECT_EQ(describe_ranks(r, {6, 7, 8, 9}), "ranks 6-7 on gpu-node07, ranks 8-9 on gpu-node08");
  r.ranks[12].host.clear();
  EXPECT_EQ(describe_ranks(r, {11, 12}), "rank 11 on gpu-node08, rank 12 (host unknown)");
  EXPECT_EQ(describe_ranks(r, {12}), "rank 12 (host unknown)");
}

TEST(ReplayResultText, ErrorsNameHostRankGpuAndCall) {
  EXPECT_EQ(rank_failure("gpu-node07", 3, 1, "ncclCommInitRankConfig", "unhandled system error"),
            "host gpu-node07 rank 3 GPU 1: ncclCommInitRankConfig failed: unhandled system error");
  EXPECT_EQ(rank_failure("gpu-node07", 0, -1, "", "no CUDA device visible"),
            "host gpu-node07 rank 0: no CUDA device visible");
}

TEST(ReplayResultText, IncompleteRanksAreTheSilentAndTheFailed) {
  ReplayResult r = sixteen_ranks_two_hosts();
  EXPECT_TRUE(incomplete_ranks(r).empty());
  r.ranks[3].outcome = Outcome::kTimedOut;
  for (int k = 8; k < 16; ++k) r.ranks[k].reported = false;
  std::vector<int> want{3, 8, 9, 10, 11, 12, 13, 14, 15};
  EXPECT_EQ(incomplete_ranks(r), want);
  summarize(r, CollectivePlan{});
  EXPECT_DOUBLE_EQ(r.time_us, 100);  // over the ranks that completed
}

TEST(ReplayResultText, ExitCodesTellRanFailedAndTimedOutApart) {
  EXPECT_EQ(exit_code_for(Outcome::kCompleted), ExitCode::kOk);
  EXPECT_EQ(exit_code_for(Outcome::kFailed), ExitCode::kError);
  EXPECT_EQ(exit_code_for(Outcome::kTimedOut), ExitCode::kTimedOut);
  EXPECT_EQ(exit_code_for(Outcome::kInterrupted), ExitCode::kInterrupted);
  EXPECT_STREQ(outcome_name(Outcome::kTimedOut), "timed_out");
}

}  // namespace
}  // namespace ncclpm::plan
