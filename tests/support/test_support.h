// tests/support/test_support.h
//
// Helpers shared by tests: temporary directories, writing files, running the
// real ncclpm binary and reading what it printed.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "ncclpm/diagnose/diagnose.h"

namespace ncclpm::testing {

/// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

void write_file(const std::filesystem::path& path, const std::string& content);
std::string read_file(const std::filesystem::path& path);
/// The integer a query of the incident database at `db` returns (a count,
/// a sum); -1, with a test failure, when the database or query fails.
/// (support/query.cc: in the gtest binary only.)
int64_t query_int(const std::filesystem::path& db, const std::string& sql);
/// gzip-compresses `content` into `path` (zlib, a real .gz stream).
void write_gzip(const std::filesystem::path& path, const std::string& content);

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

/// Runs the ncclpm binary with `args` (no shell), waits, returns what it printed.
RunResult run_ncclpm(const std::vector<std::string>& args);
/// Starts the ncclpm binary with `args`, its stdout and stderr going to the
/// files named, and returns its pid without waiting (to signal it).
int start_ncclpm(const std::vector<std::string>& args, const std::filesystem::path& out = "/dev/null",
                 const std::filesystem::path& err = "/dev/null");

/// A rank's watchdog timeout of an ALLREDUCE (1024 elements, 600 s, ran for
/// 600102 ms) in `seq`, as PyTorch 2.x prints it at `clock`, with its newline.
std::string watchdog_line(int rank, int seq, const std::string& clock = "17:05:38.162814866");

/// Rank 1's watchdog timeout in seq 7 (watchdog_line(1, 7)): the smallest
/// log that diagnoses to something.
extern const std::string kWatchdogLine;

/// Ingests the files (name -> text) as one job and diagnoses it; a step that
/// fails throws std::runtime_error saying which (a test failure under gtest).
diagnose::Diagnosis diagnose_files(const std::map<std::string, std::string>& files);

/// Writes the files (name -> text) under `dir`/logs and ingests them as one
/// job into `dir`/j.db, whose path it returns; a failed ingest throws.
std::filesystem::path ingest_files(const TempDir& dir, const std::map<std::string, std::string>& files);

/// Path of a file under the source tree (fixtures/...).
std::filesystem::path source_path(const std::string& rel);

}  // namespace ncclpm::testing
