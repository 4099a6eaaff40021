// include/ncclpm/store/ingest_writer.h
//
// The single writer of an ingest. Everything one ingest writes is one
// transaction, so the database is either as it was or complete:
//   - a new database is built under a temporary name beside the target and
//     renamed into place by commit(); an interrupted run leaves no database;
//   - an existing database is changed inside BEGIN IMMEDIATE ... COMMIT, and
//     SQLite's journal undoes a run that was killed.
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ncclpm/discover/discover.h"
#include "ncclpm/recognize/file_recognizer.h"
#include "ncclpm/store/collective_blocks.h"
#include "ncclpm/store/line_blocks.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::store {

struct FileOutcome {
  recognize::LineCounts counts;
  std::string status = "ok";  ///< ok, partial (stream error: kept what was readable), skipped, error
  std::string problem;        ///< the error or skip reason, for the user
  std::string launcher;       ///< slurm_label, pdsh, or empty
};

class IngestWriter {
 public:
  static Result<std::unique_ptr<IngestWriter>> begin(const std::filesystem::path& db_path,
                                                     const std::string& job_name,
                                                     const std::string& paths_text);
  ~IngestWriter();

  int64_t job_id() const { return job_id_; }
  bool creating_new_database() const { return !temp_path_.empty(); }
  /// Fingerprints of the files this job already holds: ingesting them again adds nothing.
  const std::unordered_set<std::string>& known_fingerprints() const { return known_; }

  /// The file this job already holds under `rel_path`, if any: a file whose
  /// fingerprint is new but whose path is not has changed (grown) since.
  std::optional<int64_t> file_at(const std::string& rel_path) const;
  /// Removes everything a file stored (its events and their typed rows, its
  /// unparsed lines, COLL blocks, Flight Recorder rows and its `files` row),
  /// inside this ingest's transaction: its new content replaces it.
  Status forget_file(int64_t file_id);

  Result<int64_t> add_file(const discover::DiscoveredFile& f);
  Status write_rows(int64_t file_id, recognize::Rows& rows);
  /// Stores blocks the parsing thread encoded, and counts them in the summary.
  Status write_collectives(int64_t file_id, const EncodedCollectives& collectives);
  /// Stores blocks of lines the parsing thread encoded, with their groups.
  Status write_lines(int64_t file_id, const EncodedLines& lines);
  /// Stores a file's progress streams; call after its lines are written.
  Status write_progress_streams(int64_t file_id, const std::vector<ProgressStream>& streams);
  Status write_flight_recorder(int64_t file_id, const std::vector<recognize::FlightRecorderEntry>& entries,
                               const std::vector<recognize::FlightRecorderPgStatus>& status);
  Status finish_file(int64_t file_id, const FileOutcome& outcome);

  struct Totals {
    int64_t files_new = 0, files_already = 0, lines = 0, bytes = 0;
    double seconds = 0;
  };
  /// Infers missing years and ranks, builds indexes, commits, and moves a new
  /// database into place.
  Status commit(const Totals& totals);
  /// Undoes everything this ingest wrote (Ctrl-C, or an error).
  void abort();

 private:
  IngestWriter() = default;
  Status prepare_statements();
  Status post_process();
  Status infer_file_ranks();
  /// Runs `script` a statement at a time, ?1 bound to the job and ?2 to this ingest's first file.
  Status run_script(std::string_view script);
  Status correct_clocks();  // clock_offsets.cc
  Status write_event(int64_t file_id, const recognize::Event& e);

  Connection db_;
  std::filesystem::path final_path_, temp_path_;
  int64_t job_id_ = 0, ingest_id_ = 0, first_new_file_id_ = 0;
  bool open_transaction_ = false;
  std::unordered_set<std::string> known_;
  std::unordered_map<std::string, int64_t> known_paths_;  // rel_path -> file_id
  bool rebuild_summary_ = false;  // a replaced file had COLL blocks
  Status rebuild_collective_summary();
  struct Statements;
  std::unique_ptr<Statements> st_;
  // Kept while writing so that diagnose never scans millions of collective rows.
  CollectiveSummary collective_summary_;
  Status write_collective_summary();
  // Per file being written, the id of the first group of each of its line
  // blocks (by the block's number in the file): how a progress stream's
  // references to groups become group ids.
  std::unordered_map<int64_t, std::vector<int64_t>> first_group_of_block_;
};

}  // namespace ncclpm::store
