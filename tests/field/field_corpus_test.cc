// tests/field/field_corpus_test.cc
//
// Every incident of the field corpus (fixtures/field/), ingested and
// diagnosed as a user would. Fails when an incident whose root category is
// diagnosed right today (fixtures/field/scoreboard.tsv, rewritten by
// `scripts/field-score.sh --write-scoreboard`) regresses, and when a log that
// shows an error line ends in "No root cause found".
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "ncclpm/rules/rule_set.h"
#include "support/field_corpus.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

std::vector<testing::FieldIncident> corpus() {
  std::vector<std::string> problems;
  auto all = testing::load_field_corpus(testing::source_path("fixtures/field"), problems);
  for (const std::string& p : problems) ADD_FAILURE() << p;
  return all;
}

// slug -> whether its root category was diagnosed right when the scoreboard was written
std::map<std::string, bool> scoreboard_top1() {
  std::map<std::string, bool> out;
  std::ifstream in(testing::source_path("fixtures/field/scoreboard.tsv"));
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::istringstream cols(line);
    std::string slug, split, root, top, top1;
    std::getline(cols, slug, '\t');
    std::getline(cols, split, '\t');
    std::getline(cols, root, '\t');
    std::getline(cols, top, '\t');
    std::getline(cols, top1, '\t');
    out[slug] = top1 == "yes";
  }
  return out;
}

class FieldCorpus : public ::testing::TestWithParam<testing::FieldIncident> {};

TEST_P(FieldCorpus, RootCategoryHoldsAndErrorsLeadSomewhere) {
  const testing::FieldIncident& incident = GetParam();
  testing::FieldOutcome o = testing::diagnose_incident(incident, rules::RuleSet::default_dir());
  ASSERT_TRUE(o.ran) << o.error;
  static const std::map<std::string, bool> kBoard = scoreboard_top1();
  auto was = kBoard.find(incident.slug);
  if (was != kBoard.end() && was->second) {
    EXPECT_EQ(o.top_category, incident.root) << incident.slug << " was diagnosed " << incident.root
                                             << " by the scoreboard's build: a regression";
  }
  if (o.shows_error_line) {
    EXPECT_FALSE(o.top_category.empty()) << incident.slug << " shows an error line but diagnose found no root cause";
  }
}

INSTANTIATE_TEST_SUITE_P(Field, FieldCorpus, ::testing::ValuesIn(corpus()),
                         [](const ::testing::TestParamInfo<testing::FieldIncident>& info) {
                           std::string n = info.param.slug;
                           for (char& c : n)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(FieldCorpus, ItsScoreboardNamesEveryIncidentAndNoOther) {
  auto all = corpus();
  ASSERT_GE(all.size(), 150u);
  std::set<std::string> slugs;
  for (const auto& i : all) slugs.insert(i.slug);
  auto board = scoreboard_top1();
  EXPECT_EQ(board.size(), slugs.size()) << "rewrite it: scripts/field-score.sh --write-scoreboard";
  for (const auto& [slug, top1] : board) EXPECT_TRUE(slugs.count(slug)) << slug << " is gone";
}

}  // namespace
}  // namespace ncclpm
