// tests/rules/rule_set_test.cc
//
// The shipped rules load and test themselves; every way a rule file can be
// wrong (fixtures/bad_rules/) is rejected with its exact message.
#include "ncclpm/rules/rule_set.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace ncclpm::rules {
namespace {

const std::string kBad = std::string(NCCLPM_SOURCE_DIR) + "/fixtures/bad_rules/";

std::vector<std::string> load_errors(const std::string& file) {
  auto set = RuleSet::load({kBad + file});
  std::vector<std::string> out;
  if (set) return out;
  for (const Error& e : set.error()) {
    std::string s = e.to_string();
    if (s.rfind(kBad, 0) == 0) s = s.substr(kBad.size());  // paths relative to the fixture dir
    out.push_back(s);
  }
  return out;
}

TEST(RuleSet, ShippedRulesLoadAndAgreeWithTheirSamples) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set) << set.error().front().to_string();
  EXPECT_GE(set->rules().size(), 20u);
  for (const Rule& r : set->rules()) {
    EXPECT_FALSE(r.advice.empty()) << r.id;
    EXPECT_TRUE(is_category(r.category)) << r.id;
  }
}

TEST(RuleSet, MatchesManyPatternsInOnePass) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  std::vector<int> hits;
  std::string oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB";
  set->match(oom, hits);
  std::vector<std::string> ids;
  for (int h : hits) ids.push_back(set->rules()[static_cast<size_t>(h)].id);
  // The generic exception rule matches too, but its `unless` leaves OOMs to the OOM rule.
  EXPECT_EQ(ids, (std::vector<std::string>{"python-exception", "cuda-out-of-memory"}));
  const Rule* generic = set->find("python-exception");
  EXPECT_TRUE(set->rule_excludes(static_cast<size_t>(generic - set->rules().data()), oom));
  set->match("an ordinary training line: step 10 loss 1.23", hits);
  EXPECT_TRUE(hits.empty());
}

TEST(RuleSet, UnlessPatternsExcludeLines) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  const Rule* ib = set->find("ib-completion-error");
  ASSERT_NE(ib, nullptr);
  size_t index = static_cast<size_t>(ib - set->rules().data());
  std::string flush = "NET/IB: Got completion from peer 10.0.0.8<1> with status=IBV_WC_WR_FLUSH_ERR(5) opcode=IBV_WC_SEND(0)";
  EXPECT_TRUE(set->rule_matches(index, flush));
  EXPECT_TRUE(set->rule_excludes(index, flush));
}

// A message that names the ranks involved makes them culprits, whoever printed it.
TEST(RuleSet, NamedRanksAreTheRanksAMessageNames) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  const Rule* dup = set->find("duplicate-gpu");
  ASSERT_NE(dup, nullptr);
  size_t index = static_cast<size_t>(dup - set->rules().data());
  EXPECT_EQ(set->named_ranks(index, "init.cc:904 NCCL WARN Duplicate GPU detected : rank 15 and rank 7 both on CUDA device e4000"),
            (std::vector<int>{15, 7}));
  EXPECT_TRUE(set->named_ranks(index, "Multiple Ranks are using the same GPU").empty());
  const Rule* ib = set->find("ib-completion-error");
  ASSERT_NE(ib, nullptr);
  EXPECT_TRUE(set->named_ranks(static_cast<size_t>(ib - set->rules().data()), "rank 1 and rank 2 both on").empty())
      << "a rule without named_ranks names none";
  const Rule* fr = set->find("flight-recorder-analysis-report");
  ASSERT_NE(fr, nullptr);
  EXPECT_EQ(set->named_ranks(static_cast<size_t>(fr - set->rules().data()),
                             "error msg: Culprit rank 22; Error type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: "
                             "'[[1025]]' does not match found input sizes: '[[262144]]', Culprit rank 110; Error "
                             "type: SIZE_OR_SYNTAX_MISMATCH, Expected input sizes: '[[1025]]' does not match"),
            (std::vector<int>{22, 110}))
      << "every clause that names a rank";
}

struct BadRule {
  const char* file;
  const char* message;
  friend void PrintTo(const BadRule& b, std::ostream* os) { *os << b.file; }
};

class BadRules : public ::testing::TestWithParam<BadRule> {};

TEST_P(BadRules, AreRejectedWithTheirExactMessage) {
  std::vector<std::string> errors = load_errors(GetParam().file);
  ASSERT_FALSE(errors.empty()) << GetParam().file << " loaded without error";
  EXPECT_NE(std::find(errors.begin(), errors.end(), GetParam().message), errors.end())
      << "got: " << errors.front();
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, BadRules,
    ::testing::Values(
        BadRule{"invalid-toml.toml", "invalid-toml.toml:3: invalid TOML: Error while parsing string: unescaped control characters other than TAB (U+0009) are explicitly prohibited"},
        BadRule{"missing-category.toml", "missing-category.toml:1: rule 'no-category' has no 'category'"},
        BadRule{"unknown-category.toml",
                "unknown-category.toml:4: rule 'odd-category': category 'network_flakiness' is not a finding category"},
        BadRule{"bad-regex.toml",
                "bad-regex.toml:1: pattern of rule 'bad-regex' does not compile: missing ): Watchdog caught (collective"},
        BadRule{"lookbehind.toml",
                "lookbehind.toml:1: pattern of rule 'lookbehind' does not compile: invalid perl operator: (?<"},
        BadRule{"sample-does-not-match.toml",
                "sample-does-not-match.toml:1: rule 'sample-miss': sample does not match: 'torch.OutOfMemoryError: CUDA OOM'"},
        BadRule{"no-match-sample-matches.toml",
                "no-match-sample-matches.toml:1: rule 'too-broad': no_match sample matches: 'Connection established'"},
        BadRule{"unknown-key.toml", "unknown-key.toml:5: rule 'typo': unknown key 'paterns'"},
        BadRule{"not-kebab-case.toml", "not-kebab-case.toml:2: rule 'Not_Kebab': id must be kebab-case (a-z, 0-9, -)"},
        BadRule{"no-samples.toml", "no-samples.toml:1: rule 'untested' has patterns but no samples.match"},
        BadRule{"bad-confidence.toml", "bad-confidence.toml:5: rule 'overconfident': confidence must be between 0 and 1"},
        BadRule{"no-advice.toml", "no-advice.toml:1: rule 'silent' has no 'advice'"},
        BadRule{"unknown-builtin.toml",
                "unknown-builtin.toml:5: rule 'magic': builtin 'read-minds' is not a cross-rank analysis"},
        BadRule{"absent-names-no-rule.toml",
                "absent-names-no-rule.toml:1: rule 'echo-of-a-timeout': absent names no rule: 'nccl-watchdog-timout'"},
        BadRule{"named-ranks-no-group.toml",
                "named-ranks-no-group.toml:1: rule 'ranks-not-captured': named_ranks has no capture group"},
        BadRule{"named-ranks-bad-role.toml",
                "named-ranks-bad-role.toml:7: rule 'ranks-in-no-role': named_ranks_role must be \"culprits_too\" or "
                "\"waited_for\""},
        BadRule{"named-ranks-finds-none.toml",
                "named-ranks-finds-none.toml:1: rule 'ranks-never-found': named_ranks finds no rank in any sample"},
        BadRule{"marker-unknown-phase.toml", "marker-unknown-phase.toml:2: marker: phase 'warm-up' is not a job phase"},
        BadRule{"marker-no-samples.toml", "marker-no-samples.toml:1: marker of 'evaluation' has no 'samples'"},
        BadRule{"marker-sample-taken-earlier.toml",
                "marker-sample-taken-earlier.toml:7: marker of 'after training': sample 'Saving final epoch "
                "checkpoint.' is not recognized as this marker"}),
    [](const ::testing::TestParamInfo<BadRule>& info) {
      std::string name = info.param.file;
      name = name.substr(0, name.find('.'));
      std::replace(name.begin(), name.end(), '-', '_');
      return name;
    });

TEST(RuleSet, DuplicateIdNamesBothPlaces) {
  std::vector<std::string> errors = load_errors("duplicate-id.toml");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "duplicate-id.toml:10: rule id 'twice' is already defined at " + kBad + "duplicate-id.toml:1");
}

TEST(RuleSet, ReportsEveryProblemBeforeFailing) {
  auto set = RuleSet::load({kBad});
  ASSERT_FALSE(set);
  EXPECT_GE(set.error().size(), 12u);  // one or more per bad file, all at once
}

TEST(RuleVersions, CompareNumerically) {
  EXPECT_LT(compare_versions("0.15.1", "0.16.0"), 0);
  EXPECT_GT(compare_versions("2.21.5", "2.9.9"), 0);
  EXPECT_EQ(compare_versions("0.14.0", "0.14"), 0);
}

}  // namespace
}  // namespace ncclpm::rules
