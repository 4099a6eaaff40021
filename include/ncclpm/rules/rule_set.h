// include/ncclpm/rules/rule_set.h
//
// A RuleSet is the compiled form of every rule file. Loading is strict: a rule
// whose own samples do not match is rejected, so a typo fails `ncclpm rules
// check` instead of silently never firing. All patterns of all rules are
// compiled into one RE2::Set, with their gates, and matched in one pass per line.
#pragma once

#include <filesystem>
#include <memory>
#include <string_view>
#include <vector>

#include "ncclpm/vocab/catalog.h"
#include "ncclpm/rules/rule.h"
#include "ncclpm/util/result.h"

namespace ncclpm::rules {

class RuleSet {
 public:
  /// Loads every *.toml under each directory, in name order, and the message
  /// catalogues in their catalog/ folders; collects every problem (file,
  /// line, reason) before failing, so the user sees them all.
  static Result<RuleSet, std::vector<Error>> load(const std::vector<std::filesystem::path>& dirs);
  /// The shipped rules: $NCCLPM_RULES, else the rules/ directory compiled in.
  static std::filesystem::path default_dir();

  RuleSet(RuleSet&&) noexcept;
  RuleSet& operator=(RuleSet&&) noexcept;
  ~RuleSet();

  const std::vector<Rule>& rules() const { return rules_; }
  const Rule* find(std::string_view id) const;
  /// Every catalogued warning and error message (rules/catalog/*.tsv).
  const vocab::Catalog& catalog() const { return catalog_; }
  /// A gate of a rule that a line matched: its `also` pattern number `also`,
  /// or its version pattern (also == kVersionGate).
  struct GateHit {
    size_t rule;
    size_t also;
  };
  static constexpr size_t kVersionGate = static_cast<size_t>(-1);
  /// Indices of the rules with a pattern that matches `line` and, when asked
  /// for, the gates it matches: one pass over the line finds both.
  void match(std::string_view line, std::vector<int>& hits, std::vector<GateHit>* gates = nullptr) const;
  /// What rule `index`'s version pattern captures in `line`; empty if nothing.
  std::string version_in(size_t index, std::string_view line) const;
  /// True when some pattern of rule `index` matches `line`.
  bool rule_matches(size_t index, std::string_view line) const;
  /// True when one of rule `index`'s `unless` patterns matches `line`.
  bool rule_excludes(size_t index, std::string_view line) const;

  /// The ranks a line names by rule `index`'s named_ranks pattern (none without one).
  std::vector<int> named_ranks(size_t index, std::string_view line) const;

  /// The job-phase markers (rules/*.toml [[marker]] tables), in file order.
  const std::vector<PhaseMarker>& markers() const { return markers_; }
  /// The first marker (in file order) with a pattern that matches `line`, or null.
  const PhaseMarker* match_marker(std::string_view line) const;

 private:
  RuleSet();
  static void compile_markers(RuleSet& set, std::vector<Error>& problems);
  struct Compiled;
  std::vector<Rule> rules_;
  std::vector<PhaseMarker> markers_;
  std::unique_ptr<Compiled> compiled_;
  vocab::Catalog catalog_;
};

}  // namespace ncclpm::rules
