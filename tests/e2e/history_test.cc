// tests/e2e/history_test.cc
//
// `ncclpm history` across jobs: a host that was the culprit twice is listed
// with both jobs; jobs not yet diagnosed are diagnosed on the way.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace ncclpm {
namespace {

TEST(History, RecurringCulpritHostAcrossJobs) {
  testing::TempDir t;
  std::string db = (t / "team.db").string();
  std::string oom = testing::source_path("fixtures/incidents/oom-cascade-slurm/logs").string();
  std::string save = testing::source_path("fixtures/incidents/save-phase-stall-torchrun-logdir/logs").string();
  ASSERT_EQ(testing::run_ncclpm({"ingest", oom, "--db", db, "--job", "monday"}).exit_code, 0);
  ASSERT_EQ(testing::run_ncclpm({"ingest", oom, "--db", db, "--job", "friday"}).exit_code, 0);
  ASSERT_EQ(testing::run_ncclpm({"ingest", save, "--db", db, "--job", "saturday"}).exit_code, 0);
  auto r = testing::run_ncclpm({"history", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("3 jobs in"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(3 diagnosed now)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  node-b                               2  monday,friday"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  hgx-017                              1  saturday"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  cuda-out-of-memory                   2  monday,friday"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace ncclpm
