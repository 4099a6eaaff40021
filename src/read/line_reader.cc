// src/read/line_reader.cc
#include "ncclpm/read/line_reader.h"

#include <cstring>

#include "byte_source.h"

namespace ncclpm::read {

namespace {
constexpr size_t kChunkBytes = 1u << 20;
// A memory-mapped file's pages are dropped in steps of this many bytes read,
// keeping the last kKeepReadBytes (the lines still being parsed) resident.
constexpr int64_t kReleaseEveryBytes = 32 << 20;
constexpr int64_t kKeepReadBytes = 8 << 20;
}

Compression sniff_compression(std::string_view b) {
  if (b.size() >= 2 && static_cast<unsigned char>(b[0]) == 0x1f &&
      static_cast<unsigned char>(b[1]) == 0x8b)
    return Compression::kGzip;
  if (b.size() >= 4 && static_cast<unsigned char>(b[0]) == 0x28 &&
      static_cast<unsigned char>(b[1]) == 0xb5 && static_cast<unsigned char>(b[2]) == 0x2f &&
      static_cast<unsigned char>(b[3]) == 0xfd)
    return Compression::kZstd;
  return Compression::kNone;
}

const char* compression_name(Compression c) {
  switch (c) {
    case Compression::kGzip: return "gzip";
    case Compression::kZstd: return "zstd";
    case Compression::kNone: break;
  }
  return "none";
}

namespace {

Result<std::unique_ptr<ByteSource>> open_source(const std::filesystem::path& path, Compression compression) {
  return compression == Compression::kGzip   ? open_gzip(path)
         : compression == Compression::kZstd ? open_zstd(path)
                                             : open_mapped(path);
}

}  // namespace

Result<std::string> read_whole(const std::filesystem::path& path, Compression compression, size_t max_bytes) {
  auto source = open_source(path, compression);
  if (!source) return source.take_error();
  ByteSource& s = **source;
  auto too_big = [&] {
    return Error::at(path.string(), "larger than " + std::to_string(max_bytes >> 20) + " MiB: not read whole");
  };
  if (s.is_mapped()) {
    if (s.mapped().size() > max_bytes) return too_big();
    return std::string(s.mapped());
  }
  std::string out;
  while (s.read(out, 1 << 20) > 0)
    if (out.size() > max_bytes) return too_big();
  if (s.error()) return *s.error();
  return out;
}

Result<std::unique_ptr<LineReader>> LineReader::open(const std::filesystem::path& path,
                                                     Compression compression) {
  Result<std::unique_ptr<ByteSource>> source = open_source(path, compression);
  if (!source) return source.take_error();
  return std::unique_ptr<LineReader>(new LineReader(std::move(source).value()));
}

LineReader::LineReader(std::unique_ptr<ByteSource> source) : source_(std::move(source)) {
  if (source_->is_mapped()) {
    window_ = source_->mapped();
    source_done_ = true;
  }
}

LineReader::~LineReader() = default;

// Streamed sources: keep the unread tail, append a new chunk.
bool LineReader::refill() {
  if (source_done_) return false;
  std::string next;
  next.reserve(window_.size() + kChunkBytes);
  next.assign(window_);
  size_t n = source_->read(next, kChunkBytes);
  if (n == 0) {
    source_done_ = true;
    if (source_->error()) stream_error_ = source_->error();
  }
  buffer_.swap(next);
  window_ = buffer_;
  return n > 0;
}

bool LineReader::next(PhysicalLine& out) {
  long_line_.clear();
  int64_t full = 0;
  int64_t start_offset = consumed_;
  while (true) {
    // memchr must not see the null pointer of an empty view, even for 0 bytes.
    const char* nl =
        window_.empty() ? nullptr : static_cast<const char*>(std::memchr(window_.data(), '\n', window_.size()));
    if (nl == nullptr && !source_done_) {
      // No newline in the window: a line longer than the buffer is assembled
      // in long_line_ (clipped), the rest of the window refilled.
      if (window_.size() >= kChunkBytes) {
        size_t room = kMaxLineBytes > long_line_.size() ? kMaxLineBytes - long_line_.size() : 0;
        long_line_.append(window_.substr(0, std::min(room, window_.size())));
        full += static_cast<int64_t>(window_.size());
        consumed_ += static_cast<int64_t>(window_.size());
        window_ = {};
      }
      refill();
      continue;
    }
    size_t len = nl != nullptr ? static_cast<size_t>(nl - window_.data()) : window_.size();
    if (nl == nullptr && len == 0 && long_line_.empty() && full == 0) return false;  // clean end
    std::string_view piece = window_.substr(0, len);
    size_t advance = nl != nullptr ? len + 1 : len;
    window_.remove_prefix(advance);
    consumed_ += static_cast<int64_t>(advance);
    if (consumed_ - released_ >= kReleaseEveryBytes && consumed_ > kKeepReadBytes) {
      released_ = consumed_ - kKeepReadBytes;
      source_->release_before(static_cast<size_t>(released_));
    }
    full += static_cast<int64_t>(len);
    std::string_view text;
    if (long_line_.empty() && full == static_cast<int64_t>(len)) {
      text = piece;  // the common case: a view, no copy
    } else {
      size_t room = kMaxLineBytes > long_line_.size() ? kMaxLineBytes - long_line_.size() : 0;
      long_line_.append(piece.substr(0, std::min(room, piece.size())));
      text = long_line_;
    }
    if (!text.empty() && text.back() == '\r' && static_cast<int64_t>(text.size()) == full) {
      text.remove_suffix(1);
      --full;
    }
    out.oversized = static_cast<int64_t>(text.size()) > static_cast<int64_t>(kMaxLineBytes) ||
                    full > static_cast<int64_t>(kMaxLineBytes);
    if (text.size() > kMaxLineBytes) text = text.substr(0, kMaxLineBytes);
    out.text = text;
    out.full_bytes = full;
    out.line_no = ++line_no_;
    out.byte_offset = start_offset;
    return true;
  }
}

}  // namespace ncclpm::read
