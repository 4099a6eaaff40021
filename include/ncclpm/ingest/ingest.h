// include/ncclpm/ingest/ingest.h
//
// `ncclpm ingest`: discover the files, parse them in parallel (one file per
// worker, lines in order), write everything through one IngestWriter. Memory
// stays bounded: workers hand rows over in batches through a bounded queue.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "ncclpm/recognize/file_recognizer.h"
#include "ncclpm/util/result.h"

namespace ncclpm::ingest {

struct Progress {
  int64_t files_done = 0, files_total = 0;
  int64_t bytes_done = 0, bytes_total = 0;
  int64_t lines = 0;
  bool finished() const { return files_done >= files_total; }
};

/// The progress line: files, megabytes, lines, and once the ingest has run a
/// few seconds the time left at the rate so far ("about 40 s left").
std::string progress_text(const Progress& p, double elapsed_s);

/// Redraws a few times a second, not once per file (a job of 2,000 small files
/// would redraw 2,000 times); the last state is always drawn.
class ProgressThrottle {
 public:
  explicit ProgressThrottle(double interval_s = 0.2) : interval_s_(interval_s) {}
  /// Whether to draw `p` at `elapsed_s` seconds into the ingest.
  bool due(const Progress& p, double elapsed_s);

 private:
  double interval_s_;
  double last_s_ = -1;
};

struct Options {
  std::vector<std::filesystem::path> paths;
  std::filesystem::path db_path = "incidents.db";
  std::string job_name;  ///< default: the name of the first path
  int threads = 0;       ///< 0: one per core
  const std::atomic<bool>* cancel = nullptr;
  std::function<void(const Progress&)> on_progress;  ///< called from the writer thread
};

struct FileReport {
  std::string rel_path;
  std::string kind;
  std::string status;   ///< ok, partial, skipped, error, already
  std::string problem;
  recognize::LineCounts counts;
};

struct Report {
  std::string job;
  std::filesystem::path db_path;
  int64_t files_found = 0, files_new = 0, files_already = 0;
  int64_t files_replaced = 0;  ///< of files_new: known paths whose content changed
  int64_t files_skipped = 0, files_partial = 0, files_unreadable = 0;
  recognize::LineCounts totals;
  int64_t events = 0, collectives = 0;
  double seconds = 0;
  double discover_seconds = 0;         ///< of `seconds`: listing, sniffing and fingerprinting files
  double finalize_seconds = 0;         ///< of `seconds`: inference, indexes, commit
  std::vector<FileReport> files;       ///< the files ingested by this run
  std::vector<Error> warnings;         ///< unreadable entries, damaged streams, oversized lines
};

/// Runs an ingest. Returns an error (and leaves the database as it was) when
/// nothing usable was given, the database cannot be written, or `cancel` is set.
Result<Report> run(const Options& options);

/// The default job name for a set of paths: the first path's directory name.
std::string default_job_name(const std::vector<std::filesystem::path>& paths);

}  // namespace ncclpm::ingest
