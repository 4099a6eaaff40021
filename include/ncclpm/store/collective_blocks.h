// include/ncclpm/store/collective_blocks.h
//
// NCCL's COLL lines are the high-volume stream: one line per collective per
// rank, millions in a big job. One SQLite row each would make the single
// database writer the bottleneck of ingest, so they are stored compactly:
//
//   - the parsing threads encode the calls of a file into blocks of at most
//     kBlockRows rows; a block is one BLOB row of `collective_blocks`;
//   - the virtual table `collective_calls` decodes the blocks back into one
//     row per call (and the view `collectives` names dtypes and sizes), so
//     every collective stays queryable with plain SQL through ncclpm.
//
// Block format (version 1), all integers LEB128 varints:
//
//   version=1, rows, dictionary size, then per string: length, bytes;
//   then per row: a mask of the fields that differ from the row before (the
//   first row differs from all-zero fields and the empty string), then for each
//   set bit in field order its value: integers as the zigzag-encoded
//   difference from the row before, strings as their dictionary index.
//
// Consecutive COLL lines of one process differ in a few fields (line, time,
// opCount, count, op), so a row takes about ten bytes instead of a line's 200.
#pragma once

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ncclpm/recognize/events.h"
#include "ncclpm/util/result.h"

namespace ncclpm::store {

inline constexpr int64_t kBlockRows = 16384;
/// Fields of a row (their order: collective_codec.cc).
inline constexpr int kRowFields = 15;

/// One encoded block and what the virtual table needs to skip it unread.
struct CollectiveBlock {
  int64_t first_line = 0, last_line = 0, rows = 0;
  int rank_min = -1, rank_max = -1;  ///< over the rows that have a rank; -1: none has
  std::string data;
};

/// Per (rank, nranks, op, datatype): how many calls and the highest opCount.
/// Ingest keeps it so that diagnose never reads millions of collective rows.
struct CollectiveSummaryKey {
  int rank = -1, nranks = -1;
  std::string op;
  int datatype = -1;
  bool operator<(const CollectiveSummaryKey& o) const {
    return std::tie(rank, nranks, op, datatype) < std::tie(o.rank, o.nranks, o.op, o.datatype);
  }
};
struct CollectiveSummaryValue {
  int64_t calls = 0;
  uint64_t max_op_count = 0;
  void add(const CollectiveSummaryValue& o) {
    calls += o.calls;
    max_op_count = std::max(max_op_count, o.max_op_count);
  }
};
using CollectiveSummary = std::map<CollectiveSummaryKey, CollectiveSummaryValue>;
void merge_summary(CollectiveSummary& into, const CollectiveSummary& from);

/// What a parsing thread hands the writer: finished blocks and their summary.
struct EncodedCollectives {
  std::vector<CollectiveBlock> blocks;
  CollectiveSummary summary;
  int64_t rows = 0;
  bool empty() const { return blocks.empty(); }
};

/// Encodes the COLL calls of one file, in line order.
class CollectiveEncoder {
 public:
  void add(const recognize::CollectiveLine& call);
  void add(const recognize::CollectiveCall& call) { add(call.as<std::string_view>()); }
  /// The blocks finished so far, the open one included, and their summary.
  EncodedCollectives take();
  int64_t pending_rows() const { return pending_rows_; }

 private:
  void close_block();
  uint32_t dictionary_index(std::string_view s);
  void count_in_summary(const recognize::CollectiveLine& call, uint32_t op_index);

  EncodedCollectives done_;
  int64_t pending_rows_ = 0;  // rows in done_ and the open block
  // The open block.
  CollectiveBlock block_;
  std::string body_;
  std::vector<std::string> dictionary_;
  std::unordered_map<std::string, uint32_t> dictionary_index_;
  uint64_t previous_[kRowFields] = {};             // the row before, as encoded (strings: their index)
  std::string previous_text_[3];           // host, op, comm of the row before
  // Summary of the open block by op's dictionary index: strings are looked up
  // once per block, not once per row.
  struct OpenSummaryKey {
    int rank, nranks, datatype;
    uint32_t op;
    bool operator==(const OpenSummaryKey&) const = default;
  };
  struct OpenSummaryHash {
    size_t operator()(const OpenSummaryKey& k) const;
  };
  std::unordered_map<OpenSummaryKey, CollectiveSummaryValue, OpenSummaryHash> open_summary_;
  // The last entry used per op: FSDP alternates AllGather and ReduceScatter
  // line by line, so one entry for all would miss every time.
  struct SummaryCacheEntry {
    OpenSummaryKey key{};
    CollectiveSummaryValue* value = nullptr;
  };
  SummaryCacheEntry summary_cache_[8];
};

/// A decoded row; the strings point into the block's data.
struct CollectiveRow {
  int64_t line_no = 0, ts_us = 0, pid = -1, count = 0;
  uint64_t op_count = 0;
  int64_t rank = -1, comm_rank = -1, device = -1, datatype = -1, redop = -1, root = -1, nranks = -1;
  std::string_view host, op, comm;
};

/// Reads the rows of one block in order. A damaged block is an error, never
/// a wrong row.
class CollectiveBlockReader {
 public:
  explicit CollectiveBlockReader(std::string_view data);
  /// False at the end of the block or on damage (then `error()` says what).
  bool next(CollectiveRow& row);
  const std::string& error() const { return error_; }
  int64_t rows() const { return rows_; }

 private:
  bool varint(uint64_t& v);
  bool fail(std::string why);
  std::string_view data_;
  size_t at_ = 0;
  int64_t rows_ = 0, read_ = 0;
  std::vector<std::string_view> dictionary_;
  uint64_t values_[kRowFields] = {};
  std::string error_;
};

/// Makes the virtual table module `ncclpm_collectives` (behind the table
/// `collective_calls`) known to a connection. Every connection ncclpm opens
/// calls it; the sqlite3 shell does not know the module, so it reads
/// `collective_blocks` but not `collective_calls`.
int register_collective_table(sqlite3* db);

}  // namespace ncclpm::store
