// tests/rules/rule_fixtures_test.cc
//
// Every line-signature rule fires end to end on a log made of its own positive
// sample, and stays silent on a log made of its negative sample: ingest, then
// diagnose, as a user would. (Rules scoped to a culprit's last lines, or that
// need other findings, are covered by the incident fixtures in tests/e2e.)
#include <gtest/gtest.h>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::rules {
namespace {

const RuleSet& shipped() {
  static RuleSet* set = [] {
    auto s = RuleSet::load({RuleSet::default_dir()});
    EXPECT_TRUE(s);
    return new RuleSet(std::move(s).value());
  }();
  return *set;
}

// The rules that fire on a line by itself.
std::vector<std::string> standalone_rule_ids() {
  std::vector<std::string> ids;
  for (const Rule& r : shipped().rules())
    if (!r.patterns.empty() && r.scope == Scope::kAny && r.requires_fired.empty() && r.also.empty() && !r.version)
      ids.push_back(r.id);
  return ids;
}

// Ingests `content` as a job's only log file and returns the ids of the rules that fired.
std::vector<std::string> fired_rules(const std::string& content) {
  testing::TempDir t;
  testing::write_file(t / "logs/rank0.log", content + "\n");
  ingest::Options o;
  o.paths = {t / "logs"};
  o.db_path = t / "x.db";
  auto r = ingest::run(o);
  EXPECT_TRUE(r) << (r ? "" : r.error().to_string());
  auto db = store::open_for_update(o.db_path);
  EXPECT_TRUE(db);
  auto job = diagnose::resolve_job(*db, "", nullptr);
  auto d = diagnose::run(*db, *job, shipped());
  EXPECT_TRUE(d);
  std::vector<std::string> ids;
  for (const auto& f : d->findings) ids.push_back(f.rule);
  return ids;
}

class RuleFixtures : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleFixtures, FiresOnItsPositiveSampleAndNotOnItsNegative) {
  const Rule* rule = shipped().find(GetParam());
  ASSERT_NE(rule, nullptr);
  auto fired = fired_rules(rule->samples_match.front());
  EXPECT_NE(std::find(fired.begin(), fired.end(), rule->id), fired.end())
      << rule->id << " did not fire on: " << rule->samples_match.front();
  if (rule->samples_no_match.empty()) return;
  fired = fired_rules(rule->samples_no_match.front());
  EXPECT_EQ(std::find(fired.begin(), fired.end(), rule->id), fired.end())
      << rule->id << " fired on: " << rule->samples_no_match.front();
}

INSTANTIATE_TEST_SUITE_P(Shipped, RuleFixtures, ::testing::ValuesIn(standalone_rule_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (c == '-') c = '_';
                           return n;
                         });

}  // namespace
}  // namespace ncclpm::rules
