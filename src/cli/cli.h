// src/cli/cli.h
//
// The command line: one file per subcommand, all listed in one table in
// main.cc. Only this folder writes to stdout and stderr.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "ncclpm/util/error.h"

namespace ncclpm::cli {

using Args = std::vector<std::string>;  // the arguments after the subcommand name

/// Set by SIGINT/SIGTERM; long-running commands poll it and stop cleanly.
extern std::atomic<bool> g_interrupted;

int cmd_ingest(const Args& args);
int cmd_query(const Args& args);
int cmd_grep(const Args& args);
int cmd_schema(const Args& args);
int cmd_diagnose(const Args& args);
int cmd_report(const Args& args);
int cmd_rules(const Args& args);
int cmd_history(const Args& args);
int cmd_replay(const Args& args);

/// "ncclpm: error: where: message" and the hint, on stderr.
void print_error(const Error& e);
void print_warning(const Error& e);
/// Exit code for a usage error, after printing it with a pointer to --help.
int usage_error(const std::string& command, const std::string& message);

/// The default database: $NCCLPM_DB, else ./incidents.db.
std::string default_db_path();

}  // namespace ncclpm::cli
