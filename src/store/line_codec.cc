// src/store/line_codec.cc
//
// The block format of include/ncclpm/store/line_blocks.h: runs of shared
// attribution beside a zstd-compressed body of line numbers, offsets, times
// and texts.
#include <zstd.h>

#include <algorithm>
#include <memory>

#include "ncclpm/store/line_blocks.h"
#include "ncclpm/util/text.h"
#include "varint.h"

namespace ncclpm::store {
namespace {

constexpr uint8_t kFormatVersion = 1;
// Level 3 is zstd's default: most of the gain of higher levels, at a speed
// that keeps the parsing threads, not compression, the cost of ingest.
constexpr int kCompressionLevel = 3;
// A damaged block could claim any size: no block of ours decompresses to more.
constexpr unsigned long long kMaxBodyBytes = 64ull << 20;

// SQLite TEXT must be valid UTF-8, and NUL bytes cut C strings short: logs
// have both. Invalid bytes and NULs become U+FFFD.
std::string clean_text(std::string_view s) {
  std::string out = util::to_valid_utf8(s);
  for (size_t at; (at = out.find('\0')) != std::string::npos;) out.replace(at, 1, "\xEF\xBF\xBD");
  return out;
}

}  // namespace

bool LineEncoder::continues_run(const recognize::UnparsedLine& u) const {
  if (block_.runs.empty()) return false;
  const LineRun& r = block_.runs.back();
  // A line without a time joins a run whatever the run's times say.
  bool same_year = u.ts_us == 0 || r.ts_has_year < 0 || r.ts_has_year == int{u.ts_has_year};
  return same_year && r.pid == u.pid && r.rank == u.rank && r.local_rank == u.local_rank &&
         r.severity == u.severity && r.host == u.host && r.producer == u.producer;
}

void LineEncoder::add(const recognize::UnparsedLine& u) {
  if (!continues_run(u)) {
    LineRun run;
    run.first_row = block_.rows;
    run.first_line = u.line_no;
    run.host = u.host;
    run.producer = u.producer;
    run.pid = u.pid;
    run.rank = u.rank;
    run.local_rank = u.local_rank;
    run.severity = u.severity;
    block_.runs.push_back(std::move(run));
  }
  // Lines arrive in file order but for a block the recognizer gave up on,
  // released late: a run's and a block's bounds are their least and greatest.
  LineRun& run = block_.runs.back();
  ++run.rows;
  run.first_line = std::min(run.first_line, u.line_no);
  run.last_line = std::max(run.last_line, u.line_no);
  if (u.ts_us != 0) {
    run.ts_has_year = u.ts_has_year ? 1 : 0;
    run.min_ts_us = run.min_ts_us == 0 ? u.ts_us : std::min(run.min_ts_us, u.ts_us);
  }
  block_.first_line = block_.rows == 0 ? u.line_no : std::min(block_.first_line, u.line_no);
  block_.last_line = std::max(block_.last_line, u.line_no);
  ++block_.rows;
  ++pending_rows_;
  put_varint(body_, zigzag(static_cast<uint64_t>(u.line_no - previous_line_)));
  put_varint(body_, zigzag(static_cast<uint64_t>(u.byte_offset - previous_offset_)));
  previous_line_ = u.line_no;
  previous_offset_ = u.byte_offset;
  if (u.ts_us != 0) {
    put_varint(body_, zigzag(static_cast<uint64_t>(u.ts_us - previous_ts_)) << 1 | 1);
    previous_ts_ = u.ts_us;
  } else {
    put_varint(body_, 0);
  }
  std::string text = clean_text(u.text);
  put_varint(body_, text.size());
  body_ += text;
  text_bytes_ += text.size();
  if (block_.rows >= kLineBlockRows || text_bytes_ >= kLineBlockTextBytes) close_block();
}

void LineEncoder::close_block() {
  if (block_.rows == 0) return;
  std::string body;
  put_varint(body, kFormatVersion);
  put_varint(body, static_cast<uint64_t>(block_.rows));
  body += body_;
  block_.data.resize(ZSTD_compressBound(body.size()));
  // One context per thread, reused: making one per block costs more than
  // compressing a small file's block.
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  size_t n = ZSTD_compressCCtx(context.get(), block_.data.data(), block_.data.size(), body.data(), body.size(),
                               kCompressionLevel);
  // Compressing into a buffer of ZSTD_compressBound cannot fail but for memory.
  if (ZSTD_isError(n)) throw std::bad_alloc();
  block_.data.resize(n);
  done_.blocks.push_back(std::move(block_));
  block_ = LineBlock{};
  body_.clear();
  text_bytes_ = 0;
  previous_line_ = previous_offset_ = previous_ts_ = 0;
}

EncodedLines LineEncoder::take() {
  close_block();
  EncodedLines out = std::move(done_);
  done_ = EncodedLines{};
  pending_rows_ = 0;
  return out;
}

LineBlockReader::LineBlockReader(std::string_view compressed) {
  unsigned long long size = ZSTD_getFrameContentSize(compressed.data(), compressed.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN || size > kMaxBodyBytes) {
    error_ = "not a compressed line block";
    return;
  }
  body_.resize(size);
  thread_local std::unique_ptr<ZSTD_DCtx, size_t (*)(ZSTD_DCtx*)> context(ZSTD_createDCtx(), ZSTD_freeDCtx);
  size_t n = ZSTD_decompressDCtx(context.get(), body_.data(), body_.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(n) || n != size) {
    error_ = std::string("does not decompress: ") + (ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
    return;
  }
  uint64_t version = 0, rows = 0;
  if (!read_varint(body_, at_, version) || version != kFormatVersion || !read_varint(body_, at_, rows) ||
      rows > static_cast<uint64_t>(kLineBlockRows)) {
    error_ = "unknown block version or row count";
    return;
  }
  rows_ = static_cast<int64_t>(rows);
  first_row_at_ = at_;
}

void LineBlockReader::rewind() {
  at_ = first_row_at_;
  read_ = 0;
  previous_ts_ = 0;
  last_ = BlockLine{};
}

bool LineBlockReader::next(BlockLine& out) {
  if (!error_.empty() || read_ >= rows_) return false;
  uint64_t line = 0, offset = 0, ts = 0, length = 0;
  if (!read_varint(body_, at_, line) || !read_varint(body_, at_, offset) || !read_varint(body_, at_, ts) ||
      !read_varint(body_, at_, length) || length > body_.size() - at_) {
    error_ = "row " + std::to_string(read_) + " is cut short";
    return false;
  }
  last_.line_no += static_cast<int64_t>(unzigzag(line));
  last_.byte_offset += static_cast<int64_t>(unzigzag(offset));
  // A row without a time leaves the last time as the base of the next one's.
  if (ts & 1) previous_ts_ += static_cast<int64_t>(unzigzag(ts >> 1));
  last_.ts_us = (ts & 1) ? previous_ts_ : 0;
  last_.text = std::string_view(body_).substr(at_, length);
  at_ += length;
  ++read_;
  out = last_;
  return true;
}

bool LineBlockReader::seek(int64_t position, BlockLine& out) {
  if (position < 0) return false;
  // The runs of a block are read in order, so going back is rare: the rows
  // are read again from the first.
  if (position < read_ - 1) rewind();
  if (read_ > 0 && position == read_ - 1) {
    out = last_;
    return true;
  }
  while (read_ <= position)
    if (!next(out)) return false;
  return true;
}

}  // namespace ncclpm::store
