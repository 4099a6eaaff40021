// include/ncclpm/discover/discover.h
//
// Discovery walks the paths the user gave, finds every file under them and
// decides, from its name and first bytes, what it is: a text log, a JSON
// document (torchelastic error.json, a Flight Recorder dump, JSON lines), a
// compressed copy of either, or something to skip (binary data) with a reason.
// It also reads what the path itself says about who wrote the file: torchrun's
// --log-dir layout `attempt_N/<local_rank>/stderr.log`, `rank3.log`,
// `nccl_trace_rank_5`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ncclpm/read/line_reader.h"
#include "ncclpm/util/result.h"

namespace ncclpm::discover {

enum class FileKind {
  kTextLog,         ///< lines of text from any launcher; framed line by line
  kElasticError,    ///< torchelastic error.json
  kFlightRecorder,  ///< PyTorch Flight Recorder dump in JSON
  kFlightRecorderPickle,  ///< the same, pickled (PyTorch's default on-disk form)
  kJsonLines,       ///< one JSON object per line (structured logging)
  kBinary,          ///< not text: skipped and reported
  kEmpty,           ///< zero bytes
  kUnreadable,      ///< could not be opened, read or decompressed: a row with its problem, nothing parsed
};
const char* file_kind_name(FileKind k);

/// What a file's path tells about its writer.
struct PathHints {
  std::optional<int> rank;        ///< global rank (rank3.log, nccl_trace_rank_3)
  std::optional<int> local_rank;  ///< torchrun --log-dir: attempt_N/<local_rank>/...
  std::optional<int> attempt;     ///< torchrun restart count
  std::optional<std::string> stream;  ///< "stdout" or "stderr" when the name says so
};
PathHints hints_from_path(const std::filesystem::path& rel_path);

struct DiscoveredFile {
  std::filesystem::path path;      ///< as opened
  std::string rel_path;            ///< relative to the root it was found under
  int64_t size_bytes = 0;
  int64_t mtime_ns = 0;
  read::Compression compression = read::Compression::kNone;
  FileKind kind = FileKind::kTextLog;
  std::string skip_reason;         ///< why it is not parsed: set for kBinary and kUnreadable
  std::string fingerprint;         ///< hash of relative path, size, first and last 64 KiB
  PathHints hints;
};

struct Discovery {
  std::vector<DiscoveredFile> files;  ///< unreadable files too (kUnreadable), so that each has a row
  std::vector<Error> problems;        ///< what could not be read or was not followed; the rest go on
};

/// Walks every path (file or directory). A path that does not exist is an
/// error; an unreadable file inside a directory is a problem that is reported
/// while the others are still ingested.
Result<Discovery> discover(const std::vector<std::filesystem::path>& paths);

/// Classifies one file from its first decompressed bytes.
FileKind classify(const std::string& rel_path, std::string_view head, std::string* skip_reason);

}  // namespace ncclpm::discover
