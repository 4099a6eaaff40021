// src/rules/rule_loader.h
//
// Reads rule files (TOML) into Rule values, checking every field. Private to
// the rules stage; RuleSet::load is the public way in.
#pragma once

#include <filesystem>
#include <vector>

#include "ncclpm/rules/rule.h"
#include "ncclpm/util/error.h"

namespace ncclpm::rules {

/// Appends the rules and phase markers of `file` to `rules` and `markers`,
/// and every problem found to `problems`.
void load_rule_file(const std::filesystem::path& file, std::vector<Rule>& rules, std::vector<PhaseMarker>& markers,
                    std::vector<Error>& problems);

}  // namespace ncclpm::rules
