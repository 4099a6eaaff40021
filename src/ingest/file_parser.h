// src/ingest/file_parser.h
//
// Turns one discovered file into rows, whatever its kind. Runs on a worker
// thread; hands rows to `emit` in batches so a huge file needs bounded memory.
#pragma once

#include <atomic>
#include <functional>

#include "ncclpm/discover/discover.h"
#include "ncclpm/recognize/file_recognizer.h"
#include "ncclpm/store/ingest_writer.h"

namespace ncclpm::ingest {

struct Batch {
  size_t file_index = 0;
  int64_t file_id = 0;
  recognize::Rows rows;                    ///< events and unparsed lines (COLL calls are encoded below)
  store::EncodedCollectives collectives;   ///< the COLL calls, encoded by the parsing thread
  store::EncodedLines lines;               ///< unparsed and progress lines of text files, encoded by it too
  std::vector<store::ProgressStream> progress_streams;  ///< the file's, on its final batch
  std::vector<recognize::FlightRecorderEntry> fr_entries;
  std::vector<recognize::FlightRecorderPgStatus> fr_status;
  bool final = false;
  store::FileOutcome outcome;  ///< set on the final batch
  int64_t events = 0;          ///< events in this batch (for the report)

  /// About how much memory the batch holds: what bounds the rows in flight
  /// between the parsing threads and the writer.
  size_t approx_bytes() const;
};

using EmitBatch = std::function<void(Batch&&)>;

/// Parses `file`; every batch it emits carries `file_index` and `file_id`.
void parse_file(const discover::DiscoveredFile& file, size_t file_index, int64_t file_id,
                const std::atomic<bool>* cancel, const EmitBatch& emit);

// Per kind, used by parse_file.
void parse_text_file(const discover::DiscoveredFile& file, Batch& batch,
                     const std::atomic<bool>* cancel, const EmitBatch& emit);
/// Returns false when the JSON does not parse (the caller then keeps the
/// file's lines as text, so nothing is lost).
bool parse_elastic_error(const discover::DiscoveredFile& file, const std::string& content, Batch& batch);
bool parse_flight_recorder(const discover::DiscoveredFile& file, const std::string& content, Batch& batch);
/// A pickled dump read as its JSON form; a damaged one is a file error saying
/// where (a binary file has no lines to keep).
void parse_pickled_flight_recorder(const discover::DiscoveredFile& file, Batch& batch);

}  // namespace ncclpm::ingest
