// src/cli/options.cc
#include "options.h"

#include <iostream>

namespace ncclpm::cli {

std::optional<int> parse_options(const CommandHelp& help, const po::options_description& visible,
                                 const po::options_description& hidden,
                                 const po::positional_options_description& positional,
                                 const Args& args, po::variables_map& vm) {
  po::options_description all;
  all.add(visible).add(hidden);
  all.add_options()("help,h", "show this help");
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    if (vm.count("help") != 0) {
      std::cout << "usage: " << help.synopsis << "\n\n" << help.about << "\n\n" << visible
                << "\nExamples:\n" << help.examples << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(help.command, e.what());
  }
  return std::nullopt;
}

}  // namespace ncclpm::cli
