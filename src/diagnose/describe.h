// src/diagnose/describe.h
//
// Words for findings: the one-line summary of what happened and the advice
// with this job's own values filled in ({seq}, {ifname}, ...).
#pragma once

#include <string>
#include <vector>

#include "alignment.h"
#include "job_facts.h"
#include "ncclpm/diagnose/finding.h"
#include "ncclpm/rules/rule.h"
#include "rule_eval.h"

namespace ncclpm::diagnose {

std::string summarize(const rules::Rule& rule, const Finding& f, const RuleHits& hits,
                      const JobFacts& facts, const Alignment& a);

/// Replaces {placeholders} in a rule's advice. Unknown values read "(not in the logs)".
std::string fill_advice(const std::string& advice, const Finding& f, const RuleHits& hits,
                        const JobFacts& facts, const Alignment& a);

}  // namespace ncclpm::diagnose
