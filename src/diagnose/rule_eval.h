// src/diagnose/rule_eval.h
//
// Applies the rule base to a job: every stored line (events and unparsed
// lines) goes once through the RuleSet's combined matcher; rules scoped to a
// culprit's last lines are tried on those tails only; built-in rules fire from
// the cross-rank analysis. A rule fires when its conditions all hold
// (kinds, also, version, requires).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "alignment.h"
#include "job_facts.h"
#include "ncclpm/rules/rule_set.h"

namespace ncclpm::diagnose {

struct RuleHits {
  std::vector<Located> lines;  ///< the first hits (capped), in time or file order
  int64_t count = 0;
  std::set<int> ranks;
  std::string version;         ///< the version a version gate captured
  /// Culprit-tail hits found in the lines before a timeout or failure, not in
  /// a culprit's own tail: the lines' ranks are the culprits, not the alignment's.
  bool before_failure = false;
};

/// Whether a builtin rule's hits name its culprits itself (a short or slow
/// rank), rather than the alignment's missing ranks.
bool builtin_names_culprits(const std::string& name);

/// Hits of every rule that fired, by index into rules.rules().
Result<std::map<size_t, RuleHits>> evaluate_rules(store::Connection& db, const JobFacts& facts,
                                                  const Alignment& alignment,
                                                  const rules::RuleSet& rules);

}  // namespace ncclpm::diagnose
