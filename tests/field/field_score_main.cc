// tests/field/field_score_main.cc
//
// field_score: diagnoses every incident of the field corpus and prints how
// often the engine names the expected categories, the root category first,
// and the known culprits; per category, for the dev and holdout splits, and
// overall (last line). Run through scripts/field-score.sh.
//
//   field_score [--verbose] [--write-scoreboard] [--rules DIR] [--only SLUG] [--corpus DIR]
//
// --corpus scores another copy of the corpus (a new batch kept apart while
// rules change, or the corpus as it was at an older commit).
#include <algorithm>
#include <cstring>
#include <iostream>

#include "ncclpm/rules/rule_set.h"
#include "support/field_corpus.h"
#include "support/test_support.h"

int main(int argc, char** argv) {
  using namespace ncclpm;
  bool verbose = false, write = false;
  std::string rules_dir = rules::RuleSet::default_dir().string(), only;
  std::string corpus = testing::source_path("fixtures/field").string();
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--verbose") {
      verbose = true;
    } else if (a == "--write-scoreboard") {
      write = true;
    } else if (a == "--rules" && i + 1 < argc) {
      rules_dir = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else if (a == "--corpus" && i + 1 < argc) {
      corpus = argv[++i];
    } else {
      std::cerr << "usage: field_score [--verbose] [--write-scoreboard] [--rules DIR] [--only SLUG] [--corpus DIR]\n";
      return 2;
    }
  }
  if (write && (!only.empty() || rules_dir != rules::RuleSet::default_dir().string() ||
                corpus != testing::source_path("fixtures/field").string())) {
    std::cerr << "field_score: --write-scoreboard records the shipped rules on every incident: not with --only, --rules or --corpus\n";
    return 2;
  }
  std::vector<std::string> problems;
  auto incidents = testing::load_field_corpus(corpus, problems);
  for (const std::string& p : problems) std::cerr << "field_score: error: " << p << "\n";
  if (!only.empty()) std::erase_if(incidents, [&](const auto& i) { return i.slug != only; });
  std::vector<testing::FieldOutcome> outcomes;
  for (const auto& incident : incidents) {
    outcomes.push_back(testing::diagnose_incident(incident, rules_dir));
    const auto& o = outcomes.back();
    if (!o.ran) {
      std::cerr << "field_score: error: " << incident.slug << ": " << o.error << "\n";
      problems.push_back(incident.slug + ": " + o.error);
    }
    if (verbose && (!o.top1 || o.expected_found < o.expected_total)) {
      std::cout << (o.top1 ? "partial " : "miss ") << incident.slug << " [" << incident.split << "]: root "
                << incident.root << ", top " << (o.top_category.empty() ? "none" : o.top_category) << ", not found:";
      for (const auto& c : incident.expected)
        if (std::find(o.found.begin(), o.found.end(), c) == o.found.end()) std::cout << " " << c;
      std::cout << "\n";
    }
  }
  if (write && problems.empty())
    testing::write_file(testing::source_path("fixtures/field/scoreboard.tsv"), testing::scoreboard(incidents, outcomes));
  if (verbose) std::cout << testing::scoreboard(incidents, outcomes) << "\n";
  std::cout << testing::score_table(incidents, outcomes);
  return problems.empty() ? 0 : 1;
}
