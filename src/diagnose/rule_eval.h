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
#include "line_scan.h"
#include "ncclpm/rules/rule_set.h"

namespace ncclpm::diagnose {

/// Whether a builtin rule's hits name its culprits itself (a short or slow
/// rank), rather than the alignment's missing ranks.
bool builtin_names_culprits(const std::string& name);

/// Hits of every rule that fired, by index into rules.rules(), from the
/// job's line scan and the passes that follow it.
Result<std::map<size_t, RuleHits>> evaluate_rules(store::Connection& db, const JobFacts& facts,
                                                  const Alignment& alignment,
                                                  const rules::RuleSet& rules, LineScan scan);

}  // namespace ncclpm::diagnose
