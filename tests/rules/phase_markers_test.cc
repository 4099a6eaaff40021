// tests/rules/phase_markers_test.cc
//
// The stall rules against the frameworks' own phase messages: every row of
// fixtures/phase-markers/markers.tsv (format strings read from Transformers,
// Accelerate, DeepSpeed, Lightning, Megatron-LM, Composer, torchtune, TRL,
// OpenRLHF, NeMo, YOLOv5 and ultralytics, each with a rendered example) that
// names a rule must be recognized by that rule, so a rule holds for the whole
// family of messages it claims, not for the one incident it was written for.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
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
std::string unescape_newlines(const std::string& example) {
  std::string text;
  for (size_t at = 0; at < example.size(); ++at) {
    if (example.compare(at, 2, "\\n") == 0) {
      text += '\n';
      ++at;
    } else {
      text += example[at];
    }
  }
  return text;
}

bool recognized(const RuleSet& set, size_t rule, const std::string& example) {
  std::string text = unescape_newlines(example);
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

// The job phase (rules/phases/markers.toml) each row's phase stands for.
std::pair<std::string, std::string> job_phase_of(const std::string& row_phase) {
  static const std::map<std::string, std::pair<std::string, std::string>> kPhase = {
      {"train_begin", {"training", "begin"}},        {"train_step", {"training", "begin"}},
      {"eval_begin", {"evaluation", "begin"}},       {"eval_end", {"evaluation", "end"}},
      {"generate", {"generation", "begin"}},         {"save_begin", {"checkpoint save", "begin"}},
      {"save_end", {"checkpoint save", "end"}},      {"data_prep", {"data preparation", "begin"}},
      {"train_end", {"after training", "begin"}}};
  auto it = kPhase.find(row_phase);
  return it == kPhase.end() ? std::pair<std::string, std::string>{} : it->second;
}

// Every row is recognized as its phase: the last physical line of the example
// that some marker takes decides (Composer's "[Eval batch=90/90] Eval on eval
// data:" begins the lines that end its evaluation). Detail lines under a
// header, which the header marks, are the only rows left out, by name.
TEST(PhaseMarkers, EveryRowIsRecognizedAsItsJobPhase) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  ASSERT_FALSE(set->markers().empty());
  size_t checked = 0;
  for (const Marker& m : read_markers()) {
    if (m.note.find("a detail line under") != std::string::npos) continue;
    auto [phase, edge] = job_phase_of(m.phase);
    ASSERT_FALSE(phase.empty()) << "markers.tsv:" << m.line << ": unknown phase " << m.phase;
    const PhaseMarker* last = nullptr;
    std::string text = unescape_newlines(m.example);
    for (std::string_view line : util::split(text, '\n'))
      if (const PhaseMarker* p = set->match_marker(line)) last = p;
    if (last == nullptr) {
      ADD_FAILURE() << "markers.tsv:" << m.line << " (" << m.framework << " " << m.phase
                    << "): no marker recognizes: " << m.example;
      continue;
    }
    EXPECT_EQ(last->phase + " " + last->edge, phase + " " + edge)
        << "markers.tsv:" << m.line << " (" << m.framework << "): " << m.example;
    ++checked;
  }
  EXPECT_GE(checked, 100u);
}

TEST(PhaseMarkers, ACommonLineIsNoMarker) {
  auto set = RuleSet::load({RuleSet::default_dir()});
  ASSERT_TRUE(set);
  for (const char* line : {"[rank3]:[E909 09:55:29.123] Watchdog caught collective operation timeout",
                           "NCCL INFO Channel 00/02 :    0   1   2   3", "Traceback (most recent call last):",
                           "pretraining ... done", "evaluation of the loss function is enabled"})
    EXPECT_EQ(set->match_marker(line), nullptr) << line;
}

}  // namespace
}  // namespace ncclpm::rules
