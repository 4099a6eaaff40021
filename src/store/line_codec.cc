// src/store/line_codec.cc
//
// The block format of include/ncclpm/store/line_blocks.h: groups of shared
// attribution beside a zstd-compressed body of line numbers, offsets, times
// and texts.
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <chrono>
#include <cmath>
#include <iterator>
#include <memory>

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/store/line_blocks.h"
#include "ncclpm/util/text.h"
#include "varint.h"

namespace ncclpm::store {
namespace {

// Version 1 stored a progress line's numbers as IEEE doubles; version 2 as
// decimals (put_decimal); version 3 lays a block out in rows or in columns,
// stores an offset against the end of the text before and a progress line's
// fields only where its text does not give them (line_blocks.h). All are read.
constexpr uint8_t kFormatVersion = 3;
// From it on a block says its columns, stores offsets against the end of the
// text before and may leave a progress line's fields to its text.
constexpr uint8_t kFirstVersionWithColumns = 3;

// The columns of a block's body, in the order a row of version 1 or 2 held
// its values (line_blocks.h).
enum Column : size_t { kGroup, kLine, kOffset, kTime, kLength, kText, kDetail };
static_assert(kDetail + 1 == kLineBlockColumns);

// What a row's detail column says of its progress fields. A progress line's
// numbers are digits of its own text: stored again they were a third of an
// app-heavy job's blocks, so a line whose text gives back exactly its fields
// (almost every one; not one cut short or mended) stores only that.
enum Detail : uint64_t { kNoProgress = 0, kProgressFields = 1, kProgressInText = 2 };

// Where the next line would start were it the next in the file with no
// prefix: what a line's offset is stored against from version 3 on, so the
// difference is its prefix and newline, a few values a block repeats (the
// difference from the line before varied with every line's length). Wraps
// as the differences do (varint.h).
int64_t offset_after(int64_t offset, size_t text_length) {
  return static_cast<int64_t>(static_cast<uint64_t>(offset) + text_length);
}

bool same_number(double a, double b) { return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b); }

// Whether reading `text` again gives `p`, field for field, bit for bit.
bool said_by_text(std::string_view text, const recognize::TrainingProgress& p) {
  auto again = recognize::parse_training_progress(text);
  return again && again->source == p.source && again->label == p.label && again->unit == p.unit &&
         again->step == p.step && again->total == p.total && same_number(again->seconds_per_step, p.seconds_per_step) &&
         same_number(again->epoch, p.epoch) && same_number(again->loss, p.loss);
}

// Level 3 is zstd's default: most of the gain of higher levels, at a speed
// that keeps the parsing threads, not compression, the cost of ingest.
constexpr int kCompressionLevel = 3;
// A damaged block could claim any size: no block of ours decompresses to more.
constexpr unsigned long long kMaxBodyBytes = 64ull << 20;

// A text as SQLite TEXT holds it (see util::to_sqlite_text): `mended` holds
// it when it needs mending.
std::string_view as_sqlite_text(std::string_view s, std::string& mended) {
  if (util::is_sqlite_text(s)) return s;
  mended = util::to_sqlite_text(s);
  return mended;
}

// A text's length to `lengths`, its bytes to `bytes` (the same string for a
// progress line's fields).
void put_text(std::string& lengths, std::string& bytes, std::string_view s) {
  put_varint(lengths, s.size());
  bytes += s;
}

void put_double(std::string& out, double v) {
  auto bits = std::bit_cast<uint64_t>(v);
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(bits >> (8 * i)));
}

// 10^0 to 10^22: every one exact as a double.
constexpr double kPowersOf10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                  1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
constexpr double kTwoTo53 = 9007199254740992.0;  // integers below it are exact

// The common case without formatting: a value that digits / 10^e gives back
// for a small e. Division of two exact doubles rounds as from_chars does, so
// the decimal reads back as `v`.
bool as_small_decimal(double v, uint64_t& digits, int64_t& exponent) {
  for (int e = 0; e < 16; ++e) {
    double m = std::nearbyint(v * kPowersOf10[e]);
    if (!(std::fabs(m) < kTwoTo53)) return false;
    if (m / kPowersOf10[e] == v) {
      digits = static_cast<uint64_t>(std::fabs(m));
      exponent = -e;
      return true;
    }
  }
  return false;
}

// A progress line's numbers were read from decimals of a few digits (a loss
// of 1.920999, 2.48 s/it), whose IEEE bits look random to zstd: a third of a
// progress block's compressed size. Stored as the shortest decimal that reads
// back as the same double: a head, then the digits as a varint.
//   head 0: -1, the "not said" of every field; head 1: the 8 bytes of the
//   double follow (see below); else head = 2 + (zigzag(exponent) << 1 |
//   sign), value = digits * 10^exponent.
void put_decimal(std::string& out, double v) {
  if (v == -1.0) {
    put_varint(out, 0);
    return;
  }
  uint64_t small = 0;
  int64_t small_exponent = 0;
  if (as_small_decimal(v, small, small_exponent)) {
    put_varint(out, 2 + (zigzag(static_cast<uint64_t>(small_exponent)) << 1 | (std::signbit(v) ? 1 : 0)));
    put_varint(out, small);
    return;
  }
  // Anything else (an exponent beyond 10^-15, 16 significant digits, not
  // finite) is rare in a log's numbers: its 8 bytes say it exactly.
  put_varint(out, 1);
  put_double(out, v);
}

// Days since 1970-01-01 of a civil date (H. Hinnant's algorithm): a date
// past its month's end rolls into the next month, as SQLite's does.
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// `ts_us` with its year replaced.
int64_t with_year(int64_t ts_us, int64_t year) {
  using namespace std::chrono;
  constexpr int64_t kDayUs = 86400LL * 1000000;
  int64_t days = ts_us >= 0 ? ts_us / kDayUs : (ts_us - kDayUs + 1) / kDayUs;
  year_month_day ymd{sys_days{std::chrono::days{days}}};
  int64_t in_day = ts_us - days * kDayUs;
  return days_from_civil(year, static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day())) * kDayUs +
         in_day;
}

}  // namespace

const char* line_kind_name(LineKind kind) {
  switch (kind) {
    case LineKind::kProgress: return "training_progress";
    case LineKind::kNcclChannel: return "nccl_channel";
    case LineKind::kNcclNetwork: return "nccl_network";
    case LineKind::kUnparsed: break;
  }
  return "unparsed";
}

int64_t stored_time(int64_t printed_us, int64_t ts_year, int64_t shift_us) {
  if (printed_us == 0) return 0;
  return (ts_year > 0 ? with_year(printed_us, ts_year) : printed_us) + shift_us;
}

// A line without a time joins a group whatever the group's times say.
bool LineEncoder::fits(const LineGroup& g, const recognize::UnparsedLine& u, LineKind kind) {
  bool same_year = u.ts_us == 0 || g.ts_has_year < 0 || g.ts_has_year == int{u.ts_has_year};
  return g.kind == kind && same_year && g.pid == u.pid && g.rank == u.rank && g.local_rank == u.local_rank &&
         g.severity == u.severity && g.host == u.host && g.producer == u.producer;
}

size_t LineEncoder::group_of(const recognize::UnparsedLine& u, LineKind kind) {
  // Consecutive lines are mostly of one group; a console interleaves a few.
  if (last_group_ < block_.groups.size() && fits(block_.groups[last_group_], u, kind)) return last_group_;
  // Groups whose attribution hashes alike are told apart by fits().
  auto mix = [](uint64_t h, uint64_t v) { return (h ^ v) * 0x100000001b3ULL + (h >> 29); };
  uint64_t key = mix(std::hash<std::string>{}(u.host), std::hash<std::string>{}(u.producer));
  for (int64_t v : {u.pid, int64_t{u.rank}, int64_t{u.local_rank}, int64_t{u.severity}, static_cast<int64_t>(kind)})
    key = mix(key, static_cast<uint64_t>(v));
  std::vector<size_t>& candidates = groups_by_key_[key];
  for (size_t g : candidates)
    if (fits(block_.groups[g], u, kind)) return last_group_ = g;
  LineGroup g;
  g.kind = kind;
  g.first_line = u.line_no;
  g.host = u.host;
  g.producer = u.producer;
  g.pid = u.pid;
  g.rank = u.rank;
  g.local_rank = u.local_rank;
  g.severity = u.severity;
  block_.groups.push_back(std::move(g));
  candidates.push_back(block_.groups.size() - 1);
  return last_group_ = block_.groups.size() - 1;
}

LineRef LineEncoder::add(const recognize::UnparsedLine& u, LineKind kind,
                         const recognize::TrainingProgress* progress) {
  // A block is numbered when it opens: references to its lines need the number.
  if (block_.rows == 0 && block_.groups.empty()) block_.seq = (*next_block_)++;
  size_t index = group_of(u, kind);
  // Lines arrive in file order but for a block the recognizer gave up on,
  // released late: a group's and a block's bounds are their least and greatest.
  LineGroup& group = block_.groups[index];
  ++group.rows;
  group.first_line = std::min(group.first_line, u.line_no);
  group.last_line = std::max(group.last_line, u.line_no);
  if (u.ts_us != 0) {
    group.ts_has_year = u.ts_has_year ? 1 : 0;
    group.min_ts_us = group.min_ts_us == 0 ? u.ts_us : std::min(group.min_ts_us, u.ts_us);
    group.max_ts_us = group.max_ts_us == 0 ? u.ts_us : std::max(group.max_ts_us, u.ts_us);
  }
  put_varint(column(kGroup), index);
  block_.first_line = block_.rows == 0 ? u.line_no : std::min(block_.first_line, u.line_no);
  block_.last_line = std::max(block_.last_line, u.line_no);
  ++block_.rows;
  ++pending_rows_;
  std::string mended;
  std::string_view text = as_sqlite_text(u.text, mended);
  put_varint(column(kLine), zigzag_difference(u.line_no, previous_line_));
  put_varint(column(kOffset), zigzag_difference(u.byte_offset, expected_offset_));
  previous_line_ = u.line_no;
  expected_offset_ = offset_after(u.byte_offset, text.size());
  if (u.ts_us != 0) {
    put_varint(column(kTime), zigzag_difference(u.ts_us, previous_ts_) << 1 | 1);
    previous_ts_ = u.ts_us;
  } else {
    put_varint(column(kTime), 0);
  }
  put_text(column(kLength), column(kText), text);
  text_bytes_ += text.size();
  std::string& detail = column(kDetail);
  if (progress == nullptr) {
    put_varint(detail, kNoProgress);
  } else if (said_by_text(text, *progress)) {
    put_varint(detail, kProgressInText);
  } else {
    put_varint(detail, kProgressFields);
    for (std::string_view field : {progress->source, progress->label, progress->unit}) {
      std::string mended_field;
      put_text(detail, detail, as_sqlite_text(field, mended_field));
    }
    put_varint(detail, to_count(progress->step));
    put_varint(detail, to_count(progress->total));
    put_decimal(detail, progress->seconds_per_step);
    put_decimal(detail, progress->epoch);
    put_decimal(detail, progress->loss);
  }
  LineRef ref{block_.seq, static_cast<int64_t>(index), block_.rows - 1};
  if (block_.rows >= kLineBlockRows || text_bytes_ >= kLineBlockTextBytes) close_block();
  return ref;
}

void LineEncoder::close_block() {
  if (block_.rows == 0) return;
  std::string header;
  put_varint(header, kFormatVersion);
  put_varint(header, static_cast<uint64_t>(block_.rows));
  const size_t used = layout_ == BlockLayout::kColumns ? kLineBlockColumns : 1;
  put_varint(header, used);
  size_t total = 0;
  for (size_t c = 0; c < used; ++c) {
    put_varint(header, columns_[c].size());
    total += columns_[c].size();
  }
  total += header.size();
  // One context and one output buffer per thread, reused: making them per
  // block costs more than compressing a small file's block. The header and
  // the columns go in as pieces of one frame, so they are not copied.
  thread_local std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> context(ZSTD_createCCtx(), ZSTD_freeCCtx);
  thread_local std::string compressed;
  compressed.resize(std::max(compressed.size(), ZSTD_compressBound(total)));
  ZSTD_CCtx* c = context.get();
  ZSTD_CCtx_reset(c, ZSTD_reset_session_only);
  ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, kCompressionLevel);
  ZSTD_CCtx_setPledgedSrcSize(c, total);  // the frame states its size: the reader needs it
  ZSTD_outBuffer out{compressed.data(), compressed.size(), 0};
  auto compress = [&](std::string_view piece, ZSTD_EndDirective how) {
    ZSTD_inBuffer in{piece.data(), piece.size(), 0};
    size_t left = 0;
    do {
      left = ZSTD_compressStream2(c, &out, &in, how);
      // With a large enough buffer compression fails only for memory, and
      // an output buffer of ZSTD_compressBound takes the whole frame.
      if (ZSTD_isError(left) || (left != 0 && out.pos == out.size)) throw std::bad_alloc();
    } while (how == ZSTD_e_end ? left != 0 : in.pos < in.size);
  };
  compress(header, ZSTD_e_continue);
  for (size_t c = 0; c < used; ++c) compress(columns_[c], ZSTD_e_continue);
  compress({}, ZSTD_e_end);
  block_.data.assign(compressed.data(), out.pos);
  done_.blocks.push_back(std::move(block_));
  block_ = LineBlock{};
  groups_by_key_.clear();
  last_group_ = 0;
  for (std::string& values : columns_) values.clear();
  text_bytes_ = 0;
  previous_line_ = expected_offset_ = previous_ts_ = 0;
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
  size_t at = 0;
  if (!read_varint(body_, at, version) || version < 1 || version > kFormatVersion || !read_varint(body_, at, rows) ||
      rows > static_cast<uint64_t>(kLineBlockRows)) {
    error_ = "unknown block version or row count";
    return;
  }
  rows_ = static_cast<int64_t>(rows);
  version_ = static_cast<int>(version);
  if (!open_columns(at)) error_ = "the column sizes do not add up to the block";
}

bool LineBlockReader::open_columns(size_t at) {
  std::string_view body(body_);
  // Versions 1 and 2: one column of rows, the rest of the body.
  uint64_t count = 1;
  uint64_t sizes[kLineBlockColumns] = {body.size() - at};
  if (version_ >= kFirstVersionWithColumns) {
    if (!read_varint(body, at, count) || (count != 1 && count != kLineBlockColumns)) return false;
    for (size_t c = 0; c < count; ++c)
      if (!read_varint(body, at, sizes[c])) return false;
  }
  for (size_t c = 0; c < count; ++c) {
    if (sizes[c] > body.size() - at) return false;
    cursors_[c] = Cursor{body.substr(at, sizes[c]), 0};
    at += sizes[c];
  }
  // A block of rows reads every value from its one column, in row order.
  for (size_t c = 0; c < kLineBlockColumns; ++c) column_[c] = &cursors_[count == 1 ? 0 : c];
  return at == body.size();
}

bool LineBlockReader::next(BlockLine& out) {
  if (!error_.empty() || read_ >= rows_) return false;
  uint64_t group = 0, line = 0, offset = 0, ts = 0, detail = 0;
  Cursor& text = *column_[kText];
  auto value = [this](Column c, uint64_t& v) { return read_varint(column_[c]->data, column_[c]->at, v); };
  if (!value(kGroup, group) || !value(kLine, line) || !value(kOffset, offset) || !value(kTime, ts)) {
    error_ = "row " + std::to_string(read_) + " is cut short";
    return false;
  }
  last_.group = static_cast<int64_t>(group);
  last_.line_no = add_difference(last_.line_no, line);
  // Version 3 stores the offset against the end of the row before's text,
  // versions 1 and 2 against its offset.
  last_.byte_offset = add_difference(version_ < kFirstVersionWithColumns ? last_.byte_offset : expected_offset_, offset);
  // A row without a time leaves the last time as the base of the next one's.
  if (ts & 1) previous_ts_ = add_difference(previous_ts_, ts >> 1);
  last_.ts_us = (ts & 1) ? previous_ts_ : 0;
  uint64_t length = 0;
  if (!value(kLength, length) || length > text.data.size() - text.at) {
    error_ = "row " + std::to_string(read_) + " is cut short";
    return false;
  }
  last_.text = text.data.substr(text.at, length);
  text.at += length;
  expected_offset_ = offset_after(last_.byte_offset, length);
  Cursor& fields = *column_[kDetail];
  uint64_t most = version_ < kFirstVersionWithColumns ? kProgressFields : kProgressInText;
  if (!value(kDetail, detail) || detail > most ||
      (detail == kProgressFields && !read_progress(fields, last_.progress))) {
    error_ = "row " + std::to_string(read_) + " is cut short";
    return false;
  }
  last_.has_progress = detail != kNoProgress;
  last_.progress_in_text = detail == kProgressInText;
  if (detail != kProgressFields) last_.progress = BlockProgress{};
  ++read_;
  out = last_;
  return true;
}

bool LineBlockReader::read_text(Cursor& c, std::string_view& out) {
  uint64_t length = 0;
  if (!read_varint(c.data, c.at, length) || length > c.data.size() - c.at) return false;
  out = c.data.substr(c.at, length);
  c.at += length;
  return true;
}

bool LineBlockReader::read_double(Cursor& c, double& out) {
  if (c.data.size() - c.at < 8) return false;
  uint64_t bits = 0;
  for (int i = 0; i < 8; ++i) bits |= uint64_t{static_cast<uint8_t>(c.data[c.at + i])} << (8 * i);
  c.at += 8;
  out = std::bit_cast<double>(bits);
  return true;
}

bool LineBlockReader::read_decimal(Cursor& c, double& out) {
  uint64_t head = 0, digits = 0;
  if (!read_varint(c.data, c.at, head)) return false;
  if (head == 0) {
    out = -1;
    return true;
  }
  if (head == 1) return read_double(c, out);
  if (!read_varint(c.data, c.at, digits)) return false;
  bool negative = (head - 2) & 1;
  auto exponent = static_cast<int64_t>(unzigzag((head - 2) >> 1));
  // What as_small_decimal wrote: the same division gives the same double.
  if (exponent <= 0 && exponent >= -22 && static_cast<double>(digits) < kTwoTo53) {
    out = static_cast<double>(digits) / kPowersOf10[-exponent];
    if (negative) out = -out;
    return true;
  }
  // The decimal as text, read as from_chars reads it: the double written.
  char text[48];
  char* end = text;
  if (negative) *end++ = '-';
  end = std::to_chars(end, std::end(text), digits).ptr;
  if (end == std::end(text)) return false;  // cannot happen: 21 characters at most so far
  *end++ = 'e';
  end = std::to_chars(end, std::end(text), exponent).ptr;
  auto [stop, ec] = std::from_chars(text, end, out);
  return ec == std::errc() && stop == end;
}

bool LineBlockReader::read_progress(Cursor& c, BlockProgress& p) const {
  uint64_t step = 0, total = 0;
  if (!read_text(c, p.source) || !read_text(c, p.label) || !read_text(c, p.unit) || !read_varint(c.data, c.at, step) ||
      !read_varint(c.data, c.at, total))
    return false;
  p.step = from_count(step);
  p.total = from_count(total);
  auto number = [&](double& v) { return version_ == 1 ? read_double(c, v) : read_decimal(c, v); };
  return number(p.seconds_per_step) && number(p.epoch) && number(p.loss);
}

BlockProgress progress_of(const BlockLine& line, recognize::TrainingProgress& storage) {
  if (!line.progress_in_text) return line.progress;
  auto p = recognize::parse_training_progress(line.text);
  if (!p) return BlockProgress{};
  storage = std::move(*p);
  return BlockProgress{storage.source, storage.label, storage.unit, storage.step, storage.total,
                       storage.seconds_per_step, storage.epoch, storage.loss};
}

namespace {

// A progress, channel or network event as a stored line: its attribution, with the
// rank its default process group's prefix gives.
recognize::UnparsedLine as_line(const recognize::Event& e) {
  recognize::UnparsedLine u;
  u.line_no = e.line_no;
  u.byte_offset = e.byte_offset;
  u.ts_us = e.ts_us;
  u.ts_has_year = e.ts_has_year;
  u.host = e.host;
  u.pid = e.pid;
  u.rank = recognize::rank_or_default_pg(e.rank, e.pg_rank, e.pg_id, e.pg_desc);
  u.local_rank = e.local_rank;
  u.severity = e.severity;
  u.text = e.text;
  return u;
}

bool is_setup_line(recognize::EventKind kind) {
  return kind == recognize::EventKind::kNcclChannel || kind == recognize::EventKind::kNcclNetwork;
}

bool is_stored_line(const recognize::Event& e) {
  return e.kind == recognize::EventKind::kTrainingProgress || is_setup_line(e.kind);
}

}  // namespace

void LineSink::add_setup_line(recognize::EventKind kind, const recognize::UnparsedLine& line) {
  switch (kind) {
    case recognize::EventKind::kNcclChannel: channel_.add(line, LineKind::kNcclChannel); break;
    case recognize::EventKind::kNcclNetwork: network_.add(line, LineKind::kNcclNetwork); break;
    default: unparsed_.add(line, LineKind::kUnparsed);  // no setup line's kind: kept as a plain line, not lost
  }
}

void LineSink::add(recognize::Rows& rows) {
  for (const recognize::Event& e : rows.events) {
    if (is_setup_line(e.kind)) add_setup_line(e.kind, as_line(e));
    if (e.kind == recognize::EventKind::kTrainingProgress)
      add_progress(as_line(e), std::get<recognize::TrainingProgress>(e.detail));
  }
  std::erase_if(rows.events, is_stored_line);
  for (const recognize::UnparsedLine& u : rows.unparsed) unparsed_.add(u, LineKind::kUnparsed);
  rows.unparsed.clear();
}

EncodedLines LineSink::take_lines() {
  EncodedLines out = unparsed_.take();
  for (LineEncoder* kind : {&progress_, &channel_, &network_})
    for (LineBlock& b : kind->take().blocks) out.blocks.push_back(std::move(b));
  return out;
}

// The tests diagnose's queries made of the rows (a unit not said counts
// steps; a step time, step or total not said is -1).
void LineSink::tally(const recognize::UnparsedLine& u, const recognize::TrainingProgress& p, LineRef ref) {
  auto same = [&](const ProgressStream& s) {
    return s.pid == u.pid && s.rank == u.rank && s.local_rank == u.local_rank && s.host == u.host &&
           s.source == p.source && s.label == p.label;
  };
  if (last_stream_ >= streams_.size() || !same(streams_[last_stream_])) {
    auto it = std::find_if(streams_.begin(), streams_.end(), same);
    if (it == streams_.end()) {
      ProgressStream s;
      s.host = u.host;
      s.pid = u.pid;
      s.rank = u.rank;
      s.local_rank = u.local_rank;
      s.source = p.source;
      s.label = p.label;
      it = streams_.insert(streams_.end(), std::move(s));
    }
    last_stream_ = static_cast<size_t>(it - streams_.begin());
  }
  ProgressStream& s = streams_[last_stream_];
  bool counts_steps = p.unit.empty() || p.unit == "it";
  if (counts_steps && p.seconds_per_step > 0) ++s.timed_lines;
  if (counts_steps && p.source == "tqdm" && p.step >= 0 && p.total > 0) {
    s.last_bar = ref;
    s.last_bar_line = u.line_no;
    s.last_bar_ts_us = u.ts_us;
    s.last_bar_text = u.text;  // cleaned when stored
    s.last_bar_step = p.step;
    s.last_bar_total = p.total;
    s.last_bar_seconds_per_step = p.seconds_per_step;
  }
  s.sample = ref;
}

std::vector<ProgressStream> LineSink::take_streams() {
  std::vector<ProgressStream> out = std::move(streams_);
  streams_.clear();
  last_stream_ = 0;
  return out;
}

}  // namespace ncclpm::store
