// tests/diagnose/duplicate_gpu_test.cc
//
// Two ranks of one communicator on one GPU, read from NCCL's Init lines when
// its own "Duplicate GPU detected" warning is not in the logs.
#include <gtest/gtest.h>

#include <algorithm>

#include "ncclpm/diagnose/diagnose.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::diagnose_files;

const diagnose::Finding* find_rule(const diagnose::Diagnosis& d, const std::string& rule) {
  auto it = std::find_if(d.findings.begin(), d.findings.end(), [&](const auto& f) { return f.rule == rule; });
  return it == d.findings.end() ? nullptr : &*it;
}

// NCCL 2.19+'s Init line ("START" or "COMPLETE") of a rank of one commId.
std::string init_line(const std::string& host, int pid, int rank, const std::string& bus, const std::string& stage) {
  return host + ":" + std::to_string(pid) + ":" + std::to_string(pid) + " [0] NCCL INFO ncclCommInitRank comm 0x7a1" +
         std::to_string(pid) + " rank " + std::to_string(rank) + " nranks 2 cudaDev 0 nvmlDev 0 busId " + bus +
         " commId 0xaa9becea043c4e6c - Init " + stage + "\n";
}
std::string init_start(const std::string& host, int pid, int rank, const std::string& bus) {
  return init_line(host, pid, rank, bus, "START");
}
std::string init_complete(const std::string& host, int pid, int rank, const std::string& bus) {
  return init_line(host, pid, rank, bus, "COMPLETE");
}

TEST(DuplicateGpu, TwoRanksStartingOnOneBusIdOfOneHostLeadWithoutNcclsWarning) {
  auto d = diagnose_files({{"worker.log", init_start("prefill-0", 42, 0, "100000") +
                                              init_start("prefill-0", 43, 1, "100000") +
                                              "RuntimeError: NCCL error ncclCommunicator.cpp:90 'invalid usage'\n"}});
  ASSERT_TRUE(d.has_root_cause());
  const diagnose::Finding& top = d.findings.front();
  EXPECT_EQ(top.rule, "duplicate-gpu-from-init-lines");
  EXPECT_EQ(top.category, "duplicate_gpu");
  EXPECT_EQ(top.culprit_hosts, std::vector<std::string>{"prefill-0"});
  ASSERT_EQ(top.evidence.size(), 2u);
  EXPECT_NE(top.summary.find("busId 100000"), std::string::npos) << top.summary;
}

TEST(DuplicateGpu, NcclsOwnWarningMakesTheReadingOfItsInitLinesRedundant) {
  auto d = diagnose_files(
      {{"worker.log", init_start("prefill-0", 42, 0, "100000") + init_start("prefill-0", 43, 1, "100000") +
                          "prefill-0:42:982 [0] init.cc:737 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 "
                          "both on CUDA device 100000\n"}});
  ASSERT_TRUE(d.has_root_cause());
  EXPECT_EQ(d.findings.front().rule, "duplicate-gpu");
  EXPECT_EQ(find_rule(d, "duplicate-gpu-from-init-lines"), nullptr);
}

// Ranks whose init finished were not on one GPU as NCCL sees it (hosts of
// one name with different boot ids); other GPUs, or the same bus id on two
// hosts, are no duplicate either.
TEST(DuplicateGpu, NoDuplicateWhenInitFinishedOrTheGpusOrHostsDiffer) {
  std::map<std::string, std::string> cases = {
      {"finished", init_start("node", 42, 0, "18000") + init_start("node", 43, 1, "18000") +
                       init_complete("node", 42, 0, "18000") + init_complete("node", 43, 1, "18000")},
      {"other GPUs", init_start("node", 42, 0, "18000") + init_start("node", 43, 1, "2a000")},
      {"other hosts", init_start("node-a", 42, 0, "18000") + init_start("node-b", 43, 1, "18000")},
  };
  for (const auto& [what, log] : cases) {
    auto d = diagnose_files({{"worker.log", log}});
    EXPECT_EQ(find_rule(d, "duplicate-gpu-from-init-lines"), nullptr) << what;
  }
}

}  // namespace
}  // namespace ncclpm
