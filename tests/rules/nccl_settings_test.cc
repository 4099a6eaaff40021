// tests/rules/nccl_settings_test.cc
//
// Advice must be true: every NCCL_* setting ncclpm recommends is one the
// current NCCL reads; and settings a job sets that its NCCL ignores are found.
#include "ncclpm/rules/nccl_settings.h"

#include <gtest/gtest.h>
#include <re2/re2.h>

#include "ncclpm/rules/rule_set.h"
#include "support/test_support.h"

namespace ncclpm::rules {
namespace {

std::vector<std::string> nccl_names_in(const std::string& text) {
  std::vector<std::string> out;
  re2::StringPiece in(text);
  std::string name;
  static const RE2 re(R"((?:^|[^A-Z0-9_])(NCCL_[A-Z0-9_]*[A-Z0-9]))");  // not TORCH_NCCL_*
  while (RE2::FindAndConsume(&in, re, &name)) out.push_back(name);
  return out;
}

TEST(NcclSettings, KnowsWhichReleasesReadASetting) {
  auto s = NcclSettings::load();
  ASSERT_TRUE(s) << s.error().to_string();
  EXPECT_GT(s->size(), 200u);
  EXPECT_TRUE(s->read_by_current("NCCL_IB_TIMEOUT"));
  EXPECT_TRUE(s->read_by("NCCL_DEBUG_TIMESTAMP_LEVELS", "2.26.2"));
  EXPECT_FALSE(s->read_by("NCCL_DEBUG_TIMESTAMP_LEVELS", "2.21.5"));  // added in 2.26
  EXPECT_FALSE(s->span("NCCL_TIMEOUT"));                               // never read by NCCL
  EXPECT_EQ(s->likely_meant("NCCL_MAX_RINGS"), "NCCL_MAX_NRINGS");
  EXPECT_TRUE(s->read_by_current("NCCL_P2P_LEVEL"));  // built at run time, still read
}

TEST(NcclSettings, EveryRuleAdvisesOnlySettingsNcclReads) {
  auto s = NcclSettings::load();
  ASSERT_TRUE(s);
  auto rules = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(rules);
  int checked = 0;
  for (const Rule& r : rules->rules()) {
    for (const std::string& name : nccl_names_in(r.advice)) {
      ++checked;
      EXPECT_TRUE(s->read_by_current(name)) << r.id << " advises " << name << ", which NCCL does not read";
    }
  }
  EXPECT_GT(checked, 10);
  std::string markdown = testing::read_file(testing::source_path("src/report/markdown_report.cc"));
  for (const std::string& name : nccl_names_in(markdown)) EXPECT_TRUE(s->read_by_current(name)) << name;
}

TEST(NcclSettings, DiagnoseFlagsSettingsTheJobsNcclIgnores) {
  testing::TempDir t;
  testing::write_file(t / "logs/job.log",
                      "export NCCL_TIMEOUT=3600 NCCL_IB_TIMEOUT=22 NCCL_MAX_RINGS=4 NCCL_DEBUG_TIMESTAMP_LEVELS=ALL\n"
                      "node1:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n");
  std::string db = (t / "x.db").string();
  ASSERT_EQ(testing::run_ncclpm({"ingest", (t / "logs").string(), "--db", db}).exit_code, 0);
  auto r = testing::run_ncclpm({"diagnose", "--db", db, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"rule\": \"nccl-settings-ignored\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("no NCCL release reads NCCL_TIMEOUT"), std::string::npos);
  EXPECT_NE(r.out.find("did you mean NCCL_MAX_NRINGS?"), std::string::npos);
  EXPECT_NE(r.out.find("NCCL 2.21.5 does not read NCCL_DEBUG_TIMESTAMP_LEVELS (read by 2.26.2 to current)"),
            std::string::npos);
  EXPECT_EQ(r.out.find("reads NCCL_IB_TIMEOUT"), std::string::npos);  // a real setting is not flagged
  // Settings NCCL ignores are a symptom, never the cause; what the log does
  // show is NCCL loaded and no communicator formed (said with low confidence).
  EXPECT_NE(r.out.find("\"root_cause_found\": true"), std::string::npos);
  EXPECT_LT(r.out.find("\"rule\": \"startup-never-completed\""), r.out.find("\"rule\": \"nccl-settings-ignored\""));
}

}  // namespace
}  // namespace ncclpm::rules
