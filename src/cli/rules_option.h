// src/cli/rules_option.h
//
// `--rules DIR` (repeatable) for the commands that apply rules: the shipped
// rules plus the user's, loaded strictly; every problem is printed.
#pragma once

#include <optional>

#include "ncclpm/rules/rule_set.h"
#include "options.h"

namespace ncclpm::cli {

void add_rules_option(po::options_description& desc);
/// Loads the rule set; on failure prints each problem and returns nullopt.
std::optional<rules::RuleSet> load_rules(const po::variables_map& vm);

}  // namespace ncclpm::cli
