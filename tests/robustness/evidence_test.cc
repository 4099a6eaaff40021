// tests/robustness/evidence_test.cc
//
// diagnose says first when the evidence is incomplete, and has nothing to
// conclude (exit 4) when the job's files hold no readable line.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

const std::string& kWatchdog = testing::kWatchdogLine;

// A gzip file cut after its header: it decodes to nothing.
void write_header_only_gzip(const TempDir& t, const std::string& name) {
  testing::write_gzip(t / "whole.gz", kWatchdog);
  write_file(t / name, read_file(t / "whole.gz").substr(0, 10));
}

TEST(Evidence, NothingReadableIsNoConclusionButExitFour) {
  TempDir t;
  write_header_only_gzip(t, "logs/rank0.log.gz");
  write_file(t / "logs/rank1.log", "");
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()}).exit_code, 0);
  auto r = run_ncclpm({"diagnose", "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 4);
  EXPECT_NE(r.err.find("nothing to diagnose in job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("': no readable line of 2 files, 1 unreadable, 1 empty"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("rank0.log.gz: gzip stream decodes to nothing"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("No root cause found"), std::string::npos) << "no conclusion from no evidence";
}

TEST(Evidence, IncompleteEvidenceIsSaidBeforeTheFindings) {
  TempDir t;
  write_header_only_gzip(t, "logs/rank0.log.gz");
  write_file(t / "logs/rank1.log", kWatchdog);
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()}).exit_code, 0);
  auto r = run_ncclpm({"diagnose", "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("the evidence is incomplete: of 2 files, 1 unreadable"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("collective_timeout"), std::string::npos) << r.out;

  TempDir whole;
  write_file(whole / "logs/rank1.log", kWatchdog);
  ASSERT_EQ(run_ncclpm({"ingest", (whole / "logs").string(), "--db", (whole / "x.db").string()}).exit_code, 0);
  auto clean = run_ncclpm({"diagnose", "--db", (whole / "x.db").string()});
  EXPECT_EQ(clean.err.find("incomplete"), std::string::npos) << clean.err;
}

}  // namespace
}  // namespace ncclpm
