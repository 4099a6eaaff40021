// src/cli/rules_option.cc
#include "rules_option.h"

#include <iostream>

namespace ncclpm::cli {

void add_rules_option(po::options_description& desc) {
  desc.add_options()("rules", po::value<std::vector<std::string>>(),
                     "extra rule directory (repeatable), added to the shipped rules")(
      "no-default-rules", "use only the --rules directories");
}

std::optional<rules::RuleSet> load_rules(const po::variables_map& vm) {
  std::vector<std::filesystem::path> dirs;
  if (vm.count("no-default-rules") == 0) dirs.push_back(rules::RuleSet::default_dir());
  if (vm.count("rules") != 0)
    for (const auto& d : vm["rules"].as<std::vector<std::string>>()) dirs.emplace_back(d);
  auto set = rules::RuleSet::load(dirs);
  if (set) return std::move(set).value();
  for (const Error& e : set.error()) print_error(e);
  std::cerr << "ncclpm: " << set.error().size() << " problem(s) in the rules\n";
  return std::nullopt;
}

}  // namespace ncclpm::cli
