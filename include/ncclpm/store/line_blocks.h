// include/ncclpm/store/line_blocks.h
//
// The lines no parser typed are most of a real job's logs (the training loop's
// own output, framework warnings, NCCL's start-up chatter). One SQLite row per
// line made the database larger than the logs, so they are stored compactly:
//
//   - the parsing threads encode each file's lines, in order, into blocks of
//     at most kLineBlockRows lines; a block's line numbers, byte offsets,
//     printed times and texts are one zstd-compressed BLOB row of
//     `line_blocks`;
//   - what a line's attribution is made of (host, pid, rank, local rank,
//     producer, severity, whether its time has a year) is the same for long
//     runs of consecutive lines, so it is stored once per run, as an ordinary
//     row of `line_runs`. Ingest's rank, host, year and clock inference then
//     updates a few runs instead of millions of lines;
//   - the virtual table `unparsed_lines` joins the two back into one row per
//     line, with the columns the one-row-per-line table had.
//
// Block body (version 1), all integers LEB128 varints, before compression:
//   version=1, rows, then per row: line number and byte offset as zigzag
//   differences from the row before; the time as (zigzag difference from the
//   last timed row) << 1 | 1, or 0 when the line has no time; the text's
//   length, then its bytes.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ncclpm/recognize/events.h"

namespace ncclpm::store {

inline constexpr int64_t kLineBlockRows = 8192;
/// A block is closed once its texts reach this many bytes, whatever its rows.
inline constexpr size_t kLineBlockTextBytes = 1 << 20;

/// Consecutive lines of a block that share their attribution.
struct LineRun {
  int64_t first_row = 0, rows = 0;  ///< positions in the block
  int64_t first_line = 0, last_line = 0;
  std::string host, producer;
  int64_t pid = -1;
  int rank = -1, local_rank = -1;
  char severity = 0;
  int ts_has_year = -1;  ///< of the run's timed lines; -1: none has a time
  int64_t min_ts_us = 0;  ///< earliest time printed (0: none)
};

struct LineBlock {
  int64_t first_line = 0, last_line = 0, rows = 0;
  std::string data;  ///< compressed body
  std::vector<LineRun> runs;
};

/// What a parsing thread hands the writer: finished blocks with their runs.
struct EncodedLines {
  std::vector<LineBlock> blocks;
  bool empty() const { return blocks.empty(); }
};

/// Encodes the unparsed lines of one file, in line order.
class LineEncoder {
 public:
  void add(const recognize::UnparsedLine& line);
  /// The blocks finished so far, the open one included.
  EncodedLines take();
  int64_t pending_rows() const { return pending_rows_; }

 private:
  void close_block();
  bool continues_run(const recognize::UnparsedLine& line) const;

  EncodedLines done_;
  int64_t pending_rows_ = 0;
  LineBlock block_;  // the open block
  std::string body_;
  size_t text_bytes_ = 0;
  int64_t previous_line_ = 0, previous_offset_ = 0, previous_ts_ = 0;
};

/// One decoded line of a block (the text points into the reader's buffer).
struct BlockLine {
  int64_t line_no = 0, byte_offset = 0, ts_us = 0;  ///< ts_us 0: no time
  std::string_view text;
};

/// Decodes one block's body. A damaged block sets error() and stops.
class LineBlockReader {
 public:
  explicit LineBlockReader(std::string_view compressed);
  /// The row at `position` (0-based), reading forward; false past the end or on damage.
  bool seek(int64_t position, BlockLine& out);
  int64_t rows() const { return rows_; }
  const std::string& error() const { return error_; }

 private:
  bool next(BlockLine& out);
  void rewind();
  std::string body_;
  size_t at_ = 0, first_row_at_ = 0;
  int64_t rows_ = 0, read_ = 0, previous_ts_ = 0;
  BlockLine last_;
  std::string error_;
};

/// Registers the module behind the virtual table `unparsed_lines` on `db`.
int register_line_table(sqlite3* db);

}  // namespace ncclpm::store
