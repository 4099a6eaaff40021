// src/store/collective_codec.cc
//
// The block format of include/ncclpm/store/collective_blocks.h: a row is a
// mask of changed fields and their varint-encoded differences.
#include <algorithm>
#include <iterator>

#include "ncclpm/store/collective_blocks.h"
#include "ncclpm/util/text.h"
#include "varint.h"

namespace ncclpm::store {
namespace {

constexpr uint8_t kFormatVersion = 1;

// Field order in the mask: the fields that change on most lines get the low
// bits, so a typical mask fits in one byte.
enum Field : int {
  kLine, kTime, kOpCount, kCount, kOp, kDatatype, kRedop, kRoot, kComm, kNranks,
  kCommRank, kRank, kPid, kDevice, kHost, kFields
};
static_assert(kFields == kRowFields);
constexpr bool is_string_field(int f) { return f == kOp || f == kComm || f == kHost; }
constexpr int string_slot(int f) { return f == kHost ? 0 : f == kOp ? 1 : 2; }

// The integer fields of a call, unsigned so differences wrap instead of overflowing.
void integer_fields(const recognize::CollectiveLine& c, uint64_t* v) {
  auto u = [](int64_t x) { return static_cast<uint64_t>(x); };
  v[kLine] = u(c.line_no);
  v[kTime] = u(c.ts_us);
  v[kOpCount] = c.op_count;
  v[kCount] = u(c.count);
  v[kDatatype] = u(c.datatype);
  v[kRedop] = u(c.redop);
  v[kRoot] = u(c.root);
  v[kNranks] = u(c.nranks);
  v[kCommRank] = u(c.comm_rank);
  v[kRank] = u(c.rank);
  v[kPid] = u(c.pid);
  v[kDevice] = u(c.device);
}

}  // namespace

void merge_summary(CollectiveSummary& into, const CollectiveSummary& from) {
  for (const auto& [key, value] : from) into[key].add(value);
}

size_t CollectiveEncoder::OpenSummaryHash::operator()(const OpenSummaryKey& k) const {
  uint64_t h = static_cast<uint32_t>(k.rank);
  h = h * 1000003 ^ static_cast<uint32_t>(k.nranks);
  h = h * 1000003 ^ static_cast<uint32_t>(k.datatype);
  h = h * 1000003 ^ k.op;
  return static_cast<size_t>(h);
}

uint32_t CollectiveEncoder::dictionary_index(std::string_view s) {
  // A block's strings are a host, a few ops and comms: a scan beats hashing.
  constexpr size_t kScan = 16;
  for (size_t i = 0; i < std::min(kScan, dictionary_.size()); ++i)
    if (dictionary_[i] == s) return static_cast<uint32_t>(i);
  auto [it, added] = dictionary_index_.try_emplace(std::string(s), static_cast<uint32_t>(dictionary_.size()));
  if (added) dictionary_.emplace_back(s);
  return it->second;
}

void CollectiveEncoder::count_in_summary(const recognize::CollectiveLine& c, uint32_t op_index) {
  OpenSummaryKey key{c.rank, c.nranks, c.datatype, op_index};
  SummaryCacheEntry& cached = summary_cache_[op_index % std::size(summary_cache_)];
  if (cached.value == nullptr || !(cached.key == key)) cached = {key, &open_summary_[key]};  // stable: node-based map
  CollectiveSummaryValue& v = *cached.value;
  ++v.calls;
  v.max_op_count = std::max(v.max_op_count, c.op_count);
}

void CollectiveEncoder::add(const recognize::CollectiveLine& c) {
  if (block_.rows == 0) {
    // Every block decodes on its own: it starts from zeros and a dictionary
    // whose entry 0 is the empty string.
    dictionary_.clear();
    dictionary_index_.clear();
    dictionary_index("");
    std::fill(std::begin(previous_), std::end(previous_), 0);
    for (std::string& t : previous_text_) t.clear();
    block_.first_line = c.line_no;
  }
  uint64_t v[kFields];
  integer_fields(c, v);
  const std::string_view texts[3] = {c.host, c.op, c.comm};
  for (int f : {kHost, kOp, kComm}) {
    int slot = string_slot(f);
    if (texts[slot] == previous_text_[slot]) {
      v[f] = previous_[f];
    } else {
      // Host names come from the log: SQLite text must be valid UTF-8.
      v[f] = util::is_valid_utf8(texts[slot]) ? dictionary_index(texts[slot])
                                              : dictionary_index(util::to_valid_utf8(texts[slot]));
      previous_text_[slot].assign(texts[slot]);
    }
  }
  uint64_t mask = 0;
  for (int f = 0; f < kFields; ++f)
    if (v[f] != previous_[f]) mask |= uint64_t{1} << f;
  // The row is built on the stack and appended once.
  char row[10 * (kFields + 1)];
  size_t n = write_varint(row, mask);
  for (int f = 0; f < kFields; ++f) {
    if ((mask & (uint64_t{1} << f)) == 0) continue;
    n += write_varint(row + n, is_string_field(f) ? v[f] : zigzag(v[f] - previous_[f]));
    previous_[f] = v[f];
  }
  body_.append(row, n);
  count_in_summary(c, static_cast<uint32_t>(v[kOp]));
  block_.last_line = c.line_no;
  if (c.rank >= 0) {
    block_.rank_min = block_.rank_min < 0 ? c.rank : std::min(block_.rank_min, c.rank);
    block_.rank_max = std::max(block_.rank_max, c.rank);
  }
  ++block_.rows;
  ++pending_rows_;
  if (block_.rows == kBlockRows) close_block();
}

void CollectiveEncoder::close_block() {
  if (block_.rows == 0) return;
  std::string& data = block_.data;
  data.clear();
  data.push_back(static_cast<char>(kFormatVersion));
  put_varint(data, static_cast<uint64_t>(block_.rows));
  put_varint(data, dictionary_.size());
  for (const std::string& s : dictionary_) {
    put_varint(data, s.size());
    data += s;
  }
  data += body_;
  body_.clear();
  for (const auto& [k, v] : open_summary_)
    done_.summary[CollectiveSummaryKey{k.rank, k.nranks, dictionary_[k.op], k.datatype}].add(v);
  open_summary_.clear();
  for (SummaryCacheEntry& e : summary_cache_) e = SummaryCacheEntry{};
  done_.rows += block_.rows;
  done_.blocks.push_back(std::move(block_));
  block_ = CollectiveBlock{};
}

EncodedCollectives CollectiveEncoder::take() {
  close_block();
  EncodedCollectives out = std::move(done_);
  done_ = EncodedCollectives{};
  pending_rows_ = 0;
  return out;
}

CollectiveBlockReader::CollectiveBlockReader(std::string_view data) : data_(data) {
  if (data_.empty() || static_cast<uint8_t>(data_[0]) != kFormatVersion) {
    fail(data_.empty() ? "empty block" : "unknown block format " + std::to_string(static_cast<uint8_t>(data_[0])));
    return;
  }
  at_ = 1;
  uint64_t rows = 0, words = 0;
  if (!varint(rows) || !varint(words) || words == 0 || words > data_.size()) {
    fail("damaged block header");
    return;
  }
  for (uint64_t i = 0; i < words; ++i) {
    uint64_t len = 0;
    if (!varint(len) || len > data_.size() - at_) {
      fail("damaged dictionary");
      return;
    }
    dictionary_.push_back(data_.substr(at_, len));
    at_ += len;
  }
  rows_ = static_cast<int64_t>(rows);
}

bool CollectiveBlockReader::varint(uint64_t& v) { return read_varint(data_, at_, v); }

bool CollectiveBlockReader::fail(std::string why) {
  if (error_.empty()) error_ = std::move(why);
  rows_ = 0;
  return false;
}

bool CollectiveBlockReader::next(CollectiveRow& row) {
  if (read_ >= rows_) return false;
  uint64_t mask = 0;
  if (!varint(mask) || mask >> kFields != 0) return fail("damaged row " + std::to_string(read_ + 1));
  for (int f = 0; f < kFields; ++f) {
    if ((mask & (uint64_t{1} << f)) == 0) continue;
    uint64_t x = 0;
    if (!varint(x)) return fail("row " + std::to_string(read_ + 1) + " is cut short");
    if (is_string_field(f)) {
      if (x >= dictionary_.size()) return fail("row " + std::to_string(read_ + 1) + " names no string");
      values_[f] = x;
    } else {
      values_[f] += unzigzag(x);
    }
  }
  ++read_;
  auto s = [](uint64_t x) { return static_cast<int64_t>(x); };
  row.line_no = s(values_[kLine]);
  row.ts_us = s(values_[kTime]);
  row.op_count = values_[kOpCount];
  row.count = s(values_[kCount]);
  row.datatype = s(values_[kDatatype]);
  row.redop = s(values_[kRedop]);
  row.root = s(values_[kRoot]);
  row.nranks = s(values_[kNranks]);
  row.comm_rank = s(values_[kCommRank]);
  row.rank = s(values_[kRank]);
  row.pid = s(values_[kPid]);
  row.device = s(values_[kDevice]);
  row.host = dictionary_[values_[kHost]];
  row.op = dictionary_[values_[kOp]];
  row.comm = dictionary_[values_[kComm]];
  return true;
}

}  // namespace ncclpm::store
