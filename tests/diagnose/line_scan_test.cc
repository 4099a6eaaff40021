// tests/diagnose/line_scan_test.cc
//
// The one pass over a job's stored lines keeps what each reader of every
// line needs: the first line that sets each NCCL_ variable, and NCCL's
// possible errors (its warnings and error traces, and the unparsed lines with
// NCCL's words and a failure's), while the chatter and the training loop's
// lines pass through.
#include <gtest/gtest.h>

#include <algorithm>

#include "diagnose/line_scan.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::diagnose {
namespace {

using testing::TempDir;

LineScan scan_files(const std::map<std::string, std::string>& files) {
  TempDir t;
  auto db = store::open_for_reading(testing::ingest_files(t, files));
  EXPECT_TRUE(db) << db.error().to_string();
  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  EXPECT_TRUE(rules);
  auto scan = scan_lines(*db, 1, *rules);
  EXPECT_TRUE(scan) << scan.error().to_string();
  return scan ? std::move(scan).value() : LineScan{};
}

bool kept(const LineScan& s, std::string_view words, std::string_view kind) {
  return std::any_of(s.nccl_error_lines.begin(), s.nccl_error_lines.end(), [&](const ScannedLine& l) {
    return l.at.text.find(words) != std::string::npos && l.kind == kind;
  });
}

TEST(LineScan, KeepsTheFirstLineThatSetsEachNcclVariable) {
  LineScan s = scan_files({
      {"b.log", "export NCCL_IB_HCA=mlx5 NCCL_TIMEOUT=3600\n"},
      {"a.log", "step 1\nstep 2\nNCCL_TIMEOUT=7200 python train.py\nMY_NCCL_X=1 nccl_lower=2\n"},
  });
  ASSERT_EQ(s.nccl_assignments.size(), 2u);
  EXPECT_EQ(s.nccl_assignments.at("NCCL_TIMEOUT").file, "a.log");
  EXPECT_EQ(s.nccl_assignments.at("NCCL_TIMEOUT").line, 3);
  EXPECT_EQ(s.nccl_assignments.at("NCCL_IB_HCA").file, "b.log");
}

TEST(LineScan, KeepsNcclsPossibleErrorsAndNotItsChatter) {
  LineScan s = scan_files({{"node1.log",
                            "node1:11:12 [0] NCCL INFO Channel 00/02 :    0   1\n"
                            "node1:11:12 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
                            "node1:11:12 [0] NCCL INFO NET/IB: mlx5_0: Port recovery failed after 3 attempts\n"
                            "node1:11:12 [0] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion with error 12\n"
                            "node1:11:12 [0] NCCL INFO transport/net.cc:1137 -> 6\n"
                            "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so'\n"
                            "step 10 loss 2.3 failed to improve\n"}});
  EXPECT_TRUE(kept(s, "Port recovery failed", "unparsed"));
  EXPECT_TRUE(kept(s, "Got completion with error 12", "nccl_warn"));
  EXPECT_TRUE(kept(s, "net.cc:1137 -> 6", "nccl_error_trace"));
  EXPECT_TRUE(kept(s, "libibverbs: Warning", "unparsed"));
  for (std::string_view chatter : {"Channel 00/02", "Using [0]mlx5_0", "step 10 loss"})
    EXPECT_FALSE(std::any_of(s.nccl_error_lines.begin(), s.nccl_error_lines.end(),
                             [&](const ScannedLine& l) { return l.at.text.find(chatter) != std::string::npos; }))
        << chatter;
}

}  // namespace
}  // namespace ncclpm::diagnose
