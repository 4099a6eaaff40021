// src/cli/cmd_rules.cc
//
// `ncclpm rules list|check [--rules DIR]`
#include <cstdio>
#include <iostream>

#include "rules_option.h"

namespace ncclpm::cli {

int cmd_rules(const Args& args) {
  static const CommandHelp help{
      "rules", "ncclpm rules list|check [--rules DIR]... [--no-default-rules]",
      "Lists the failure-signature rules, or checks rule files: every rule must load,\n"
      "compile, and agree with its own sample lines. Every problem is reported with\n"
      "file and line before the command fails.",
      "  ncclpm rules list\n"
      "  ncclpm rules check --rules ./my-rules --no-default-rules\n"};
  po::options_description visible("Options");
  add_rules_option(visible);
  po::options_description hidden;
  hidden.add_options()("action", po::value<std::string>()->default_value("list"), "list or check");
  po::positional_options_description pos;
  pos.add("action", 1);
  po::variables_map vm;
  if (auto rc = parse_options(help, visible, hidden, pos, args, vm)) return *rc;
  std::string action = vm["action"].as<std::string>();
  if (action != "list" && action != "check")
    return usage_error("rules", "the action is list or check, not '" + action + "'");
  auto set = load_rules(vm);
  if (!set) return static_cast<int>(ExitCode::kError);
  if (action == "check") {
    size_t samples = 0;
    for (const auto& r : set->rules()) samples += r.samples_match.size() + r.samples_no_match.size();
    std::printf("%zu rules OK (%zu sample lines checked)\n", set->rules().size(), samples);
    return 0;
  }
  std::printf("%-32s %-20s %-9s %-5s %s\n", "id", "category", "severity", "root", "title");
  for (const auto& r : set->rules())
    std::printf("%-32s %-20s %-9s %-5s %s\n", r.id.c_str(), r.category.c_str(), r.severity.c_str(),
                r.root_cause ? "yes" : "no", r.title.c_str());
  return 0;
}

}  // namespace ncclpm::cli
