// src/read/byte_source.h
//
// Where a LineReader's bytes come from: a memory map, or a decompressor.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "ncclpm/read/line_reader.h"
#include "ncclpm/util/result.h"

namespace ncclpm::read {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  /// True when all bytes are available at once (a memory map).
  virtual bool is_mapped() const { return false; }
  virtual std::string_view mapped() const { return {}; }
  /// Streamed sources: appends up to `max` bytes to `out`. Returns the number
  /// appended; 0 means end of stream. An error ends the stream and is reported
  /// through error().
  virtual size_t read(std::string& out, size_t max) = 0;
  /// A memory map: the bytes before `offset` were read; their pages leave
  /// the process's memory (a view into them still reads right: the kernel
  /// maps the file's page again).
  virtual void release_before(size_t /*offset*/) {}
  virtual const std::optional<Error>& error() const = 0;
};

Result<std::unique_ptr<ByteSource>> open_mapped(const std::filesystem::path& path);
Result<std::unique_ptr<ByteSource>> open_gzip(const std::filesystem::path& path);
Result<std::unique_ptr<ByteSource>> open_zstd(const std::filesystem::path& path);

}  // namespace ncclpm::read
