// tests/rules/phase_markers_test.cc
//
// The stall rules against the frameworks' own phase messages: every row of
// fixtures/phase-markers/markers.tsv (format strings read from Transformers,
// Accelerate, DeepSpeed, Lightning, Megatron-LM, Composer, torchtune, TRL,
// OpenRLHF and NeMo, each with a rendered example) that names a rule must be
// recognized by that rule, so a rule holds for the whole family of messages
// it claims, not for the one incident it was written for.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "ncclpm/rules/rule_set.h"
#include "ncclpm/util/text.h"

namespace ncclpm::rules {
namespace {

struct Marker {
  int line = 0;
  std::string phase, framework, example, rule, note;
};

std::vector<Marker> read_markers() {
  std::ifstream in(std::string(NCCLPM_SOURCE_DIR) + "/fixtures/phase-markers/markers.tsv");
  std::vector<Marker> out;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (n == 1) {
      EXPECT_EQ(line, "phase\tframework\tformat\tlevel\tsource\texample\trule\tnote");
      continue;
    }
    auto cols = util::split(line, '\t');
    if (cols.size() != 8) {
      ADD_FAILURE() << "markers.tsv:" << n << ": " << cols.size() << " columns, not 8";
      continue;
    }
    out.push_back({n, std::string(cols[0]), std::string(cols[1]), std::string(cols[5]), std::string(cols[6]),
                   std::string(cols[7])});
  }
  return out;
}

size_t rule_index(const RuleSet& set, const std::string& id) {
  for (size_t i = 0; i < set.rules().size(); ++i)
    if (set.rules()[i].id == id) return i;
  return set.rules().size();
}

// A literal "\n" in the table stands for the newline some messages start with.
bool recognized(const RuleSet& set, size_t rule, const std::string& example) {
  std::string text;
  for (size_t at = 0; at < example.size(); ++at) {
    if (example.compare(at, 2, "\\n") == 0) {
      text += '\n';
      ++at;
    } else {
      text += example[at];
    }
  }
  bool hit = false;
  for (std::string_view line : util::split(text, '\n')) hit = hit || set.rule_matches(rule, line);
  return hit && !set.rule_excludes(rule, text);
}

TEST(PhaseMarkers, EveryMarkerARuleClaimsIsRecognizedByIt) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  auto markers = read_markers();
  ASSERT_GE(markers.size(), 100u);
  // The phases a stall rule stands for: each row of these names its rule, or says why not.
  const std::set<std::string> claimed = {"save_begin", "eval_begin", "generate", "train_end", "data_prep"};
  size_t checked = 0;
  for (const Marker& m : markers) {
    if (m.rule == "-") {
      if (claimed.count(m.phase) != 0) {
        EXPECT_FALSE(m.note.empty()) << "markers.tsv:" << m.line << ": a " << m.phase << " row without a rule says why";
      }
      continue;
    }
    size_t index = rule_index(*set, m.rule);
    ASSERT_LT(index, set->rules().size()) << "markers.tsv:" << m.line << ": no rule " << m.rule;
    EXPECT_TRUE(recognized(*set, index, m.example))
        << "markers.tsv:" << m.line << " (" << m.framework << " " << m.phase << "): " << m.rule
        << " does not recognize: " << m.example;
    ++checked;
  }
  EXPECT_GE(checked, 50u);
}

}  // namespace
}  // namespace ncclpm::rules
