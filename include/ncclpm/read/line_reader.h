// include/ncclpm/read/line_reader.h
//
// A LineReader yields the physical lines of one log file, whatever its
// compression: plain files are memory-mapped (lines are views into the map,
// no copy), .gz and .zst files are streamed through a bounded buffer.
//
// Lines are split on '\n' only; a trailing '\r' (CRLF) is removed. A missing
// final newline still yields the last line. Carriage returns inside a line
// (progress bars) are left for the framer, which knows what they mean.
//
// A line longer than kMaxLineBytes is yielded clipped, with `oversized` set,
// so that a 50 MB line of garbage costs bounded memory and is still counted.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

#include "ncclpm/util/result.h"

namespace ncclpm::read {

enum class Compression { kNone, kGzip, kZstd };

/// Guesses the compression from the file's first bytes (magic numbers), not its name.
Compression sniff_compression(std::string_view first_bytes);
const char* compression_name(Compression c);

/// The whole (decompressed) content of a file, byte for byte: for a binary
/// document (a pickled dump). More than `max_bytes` is an error naming the file.
Result<std::string> read_whole(const std::filesystem::path& path, Compression compression, size_t max_bytes);

inline constexpr size_t kMaxLineBytes = 4u << 20;  // 4 MiB

struct PhysicalLine {
  std::string_view text;   ///< without the '\n' and a trailing '\r'; valid until next()
  int64_t line_no = 0;     ///< 1-based
  int64_t byte_offset = 0; ///< offset of the line's first byte in the (decompressed) stream
  int64_t full_bytes = 0;  ///< length before clipping
  bool oversized = false;  ///< clipped to kMaxLineBytes
};

class ByteSource;

class LineReader {
 public:
  static Result<std::unique_ptr<LineReader>> open(const std::filesystem::path& path,
                                                  Compression compression);
  ~LineReader();

  /// Fills `out` with the next line; false at the end or on a stream error.
  bool next(PhysicalLine& out);

  /// Set when reading stopped early (a truncated gzip, an I/O error). The
  /// lines yielded before it are good and are kept.
  const std::optional<Error>& stream_error() const { return stream_error_; }
  /// Decompressed bytes consumed so far.
  int64_t bytes_read() const { return consumed_; }

 private:
  explicit LineReader(std::unique_ptr<ByteSource> source);
  bool refill();

  std::unique_ptr<ByteSource> source_;
  std::string_view window_;     // unread bytes: a view into the map or into buffer_
  std::string buffer_;          // streamed sources only
  std::string long_line_;       // assembly of a line that spans refills
  bool source_done_ = false;
  int64_t line_no_ = 0;
  int64_t consumed_ = 0;
  int64_t released_ = 0;        // a map's bytes before this left memory
  std::optional<Error> stream_error_;
};

}  // namespace ncclpm::read
