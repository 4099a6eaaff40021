// bench/gen/sink.h
//
// A Sink is one output file of the corpus: text is gathered in a large buffer
// and written (or compressed with gzip or zstd, then written) a megabyte at a
// time. It counts what it was given (text bytes, physical lines) and what
// reached the disk.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace ncclpm::bench {

enum class Compress { kNone, kGzip, kZstd };
/// ".gz", ".zst" or "".
const char* compress_suffix(Compress c);

struct SinkCounts {
  uint64_t files = 0;
  uint64_t text_bytes = 0;  ///< uncompressed
  uint64_t disk_bytes = 0;
  uint64_t lines = 0;  ///< '\n'-terminated records, +1 for a final fragment
};

class Sink {
 public:
  /// Creates `path` (plus the compression suffix) and its parent folders.
  /// `level` < 0 picks the default (gzip 1, zstd 3). Throws std::runtime_error
  /// with "path: reason" when the file cannot be created.
  Sink(const std::filesystem::path& path, Compress c, int level);
  ~Sink();
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  void write(std::string_view text);
  /// Flushes, finishes the compressed stream, closes and adds to `totals`.
  void close(SinkCounts& totals);

 private:
  void flush_buffer(bool last);
  void write_raw(const char* data, size_t n);

  std::string path_;
  Compress compress_;
  int fd_ = -1;
  std::string buf_;
  std::string zbuf_;
  struct Codec;
  std::unique_ptr<Codec> codec_;
  uint64_t text_bytes_ = 0, disk_bytes_ = 0, newlines_ = 0;
  char last_ = '\n';
};

}  // namespace ncclpm::bench
