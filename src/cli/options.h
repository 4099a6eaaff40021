// src/cli/options.h
//
// Shared option parsing for subcommands (Boost.Program_options), so every
// command answers --help and reports bad flags the same way.
#pragma once

#include <boost/program_options.hpp>
#include <optional>
#include <string>

#include "cli.h"

namespace ncclpm::cli {

namespace po = boost::program_options;

struct CommandHelp {
  const char* command;    ///< "ingest"
  const char* synopsis;   ///< "ncclpm ingest PATH... [options]"
  const char* about;      ///< one paragraph
  const char* examples;   ///< lines of examples
};

/// Parses `args`; returns an exit code when the command should stop here
/// (--help printed, or a usage error), nullopt to go on.
std::optional<int> parse_options(const CommandHelp& help, const po::options_description& visible,
                                 const po::options_description& hidden,
                                 const po::positional_options_description& positional,
                                 const Args& args, po::variables_map& vm);

}  // namespace ncclpm::cli
