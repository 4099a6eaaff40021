// src/cli/main.cc
//
// `ncclpm <command> [options]`: dispatches to the subcommand table.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string_view>

#include "cli.h"

namespace ncclpm::cli {

std::atomic<bool> g_interrupted{false};

namespace {

struct Command {
  const char* name;
  const char* summary;
  int (*run)(const Args&);
};

constexpr Command kCommands[] = {
    {"ingest", "read a job's log directory into the incident database", cmd_ingest},
    {"diagnose", "find the rank, collective and cause that broke the job", cmd_diagnose},
    {"report", "the diagnosis as a self-contained HTML page with a per-rank timeline", cmd_report},
    {"query", "run read-only SQL on the incident database", cmd_query},
    {"grep", "search a job's stored lines; each hit with its rank, host and time", cmd_grep},
    {"schema", "print the incident database's schema", cmd_schema},
    {"rules", "list or check the failure-signature rules", cmd_rules},
    {"history", "recurring culprit hosts, ranks and signatures across jobs", cmd_history},
    {"replay", "run a finding's collective with NCCL on live GPUs; confirm or refute it", cmd_replay},
};

void print_help() {
  std::cout << "ncclpm " NCCLPM_VERSION " - postmortems of crashed multi-GPU training jobs\n\n"
               "usage: ncclpm <command> [options]\n\ncommands:\n";
  for (const Command& c : kCommands) std::printf("  %-10s %s\n", c.name, c.summary);
  std::cout << "\nRun `ncclpm <command> --help` for a command's options.\n"
               "\nA postmortem in three steps:\n"
               "  ncclpm ingest /path/to/job/logs     # -> incidents.db\n"
               "  ncclpm diagnose                     # culprit ranks, evidence, advice\n"
               "  ncclpm query \"SELECT rank, seq, op_type FROM watchdog_timeouts\"\n";
}

void on_signal(int) {
  // A second Ctrl-C stops at once.
  if (g_interrupted.exchange(true)) std::_Exit(130);
}

}  // namespace

void print_error(const Error& e) {
  std::cerr << "ncclpm: error: " << e.to_string() << "\n";
  if (!e.hint.empty()) std::cerr << "  hint: " << e.hint << "\n";
}

void print_warning(const Error& e) {
  std::cerr << "ncclpm: warning: " << e.to_string() << "\n";
  if (!e.hint.empty()) std::cerr << "  hint: " << e.hint << "\n";
}

int usage_error(const std::string& command, const std::string& message) {
  std::cerr << "ncclpm " << command << ": " << message << "\n"
            << "  run `ncclpm " << command << " --help` for usage\n";
  return static_cast<int>(ExitCode::kUsage);
}

std::string default_db_path() {
  const char* env = std::getenv("NCCLPM_DB");
  return env != nullptr && *env != '\0' ? env : "incidents.db";
}

}  // namespace ncclpm::cli

int main(int argc, char** argv) {
  using namespace ncclpm::cli;
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  if (argc < 2) {
    print_help();
    return static_cast<int>(ncclpm::ExitCode::kUsage);
  }
  std::string_view name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    print_help();
    return 0;
  }
  if (name == "--version") {
    std::cout << "ncclpm " NCCLPM_VERSION "\n";
    return 0;
  }
  Args args(argv + 2, argv + argc);
  for (const Command& c : kCommands) {
    if (name == c.name) return c.run(args);
  }
  std::cerr << "ncclpm: unknown command '" << name << "'\n  run `ncclpm --help` for the list\n";
  return static_cast<int>(ncclpm::ExitCode::kUsage);
}
