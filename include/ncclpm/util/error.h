// include/ncclpm/util/error.h
//
// Every error a user sees has one shape: where (file and line, when known),
// what (lowercase, the user's value in quotes) and, when known, a hint about
// what to do next. The CLI renders it as
//   ncclpm: error: logs/rank3.log:12: cannot read: permission denied
//     hint: ...
#pragma once

#include <cstdint>
#include <string>

namespace ncclpm {

struct Error {
  std::string where;    ///< "path" or "path:line"; empty when not about a file
  std::string message;  ///< lowercase sentence without a trailing period
  std::string hint;     ///< optional advice on what to do next

  static Error at(std::string path, std::string message, std::string hint = {}) {
    return Error{std::move(path), std::move(message), std::move(hint)};
  }
  static Error at_line(const std::string& path, int64_t line, std::string message,
                       std::string hint = {}) {
    return Error{path + ":" + std::to_string(line), std::move(message), std::move(hint)};
  }
  static Error plain(std::string message, std::string hint = {}) {
    return Error{{}, std::move(message), std::move(hint)};
  }

  /// "where: message" (no hint); what tests compare against.
  std::string to_string() const { return where.empty() ? message : where + ": " + message; }
};

/// Exit codes of every subcommand, from one place.
enum class ExitCode : int {
  kOk = 0,           ///< did its job
  kError = 1,        ///< an error stopped it
  kUsage = 2,        ///< the command line was wrong
  kTimedOut = 3,     ///< replay's collective, or query's --timeout, ran past its deadline
  kNothingToRead = 4,  ///< diagnose: the job's files hold no readable line
  kInterrupted = 130 ///< Ctrl-C or SIGTERM
};

}  // namespace ncclpm
