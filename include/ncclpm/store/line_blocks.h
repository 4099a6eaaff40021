// include/ncclpm/store/line_blocks.h
//
// Most of a real job's lines are those no parser typed (framework warnings,
// prints), the training loop's own progress lines (tqdm bars, Trainer dicts,
// Megatron iterations) and NCCL's start-up lines of channels (rings, trees,
// one line per channel and peer of every communicator) and transports, which
// are typed but say little each. One SQLite row per line made the database
// larger than the logs, so all of them are stored compactly:
//
//   - the parsing threads encode each file's lines, in order, into blocks of
//     at most kLineBlockRows lines; a block's line numbers, byte offsets,
//     printed times and texts are one zstd-compressed BLOB row of
//     `line_blocks`;
//   - what a line's attribution is made of (host, pid, rank, local rank,
//     producer, severity, whether its time has a year) is shared by many lines
//     of a block (a process's, a console stream's), so it is stored once per
//     group of a block's lines that share it, as an ordinary row of
//     `line_groups`; each line names its group. Ingest's rank, host, year and
//     clock inference then updates a few groups instead of millions of lines;
//   - the virtual tables `unparsed_lines`, `training_progress`,
//     `nccl_channel_lines` and `nccl_network_lines` join the two back into
//     one row per line of their kind.
//
// Block body (version 3), all integers LEB128 varints, before compression:
//   version=3, rows, the number of columns (7 or 1), the byte size of each,
//   then the columns. With 7, each holds one value per row, in row order, of
//   the seven below; with 1 (a block of rows), it holds each row's seven
//   values one after another. Progress lines are stored in columns, where
//   like values side by side compress better than rows of mixed ones; the
//   other kinds in rows, whose lines repeat whole (the same channel line of
//   eight ranks), which zstd finds as one match in a row but not across
//   seven columns. The values:
//   1. the row's group's number in the block (from 0);
//   2. the line number as a zigzag difference from the row before's;
//   3. the byte offset as a zigzag difference from where the row before's
//      text ended (its offset plus its stored text's length: the difference
//      is then mostly the length of the line's prefix and newline);
//      differences are computed wrapping, so any value comes back;
//   4. the time as (zigzag difference from the last timed row) << 1 | 1, or
//      0 when the line has no time (times within +-2^60 us (36,000 years)
//      of 1970, which every printed date is, keep the shift exact);
//   5. the text's length; 6. the text's bytes;
//   7. 0 for a line of no progress; 2 for a progress line whose text, read
//      again by parse_training_progress, gives back exactly its fields (the
//      encoder checks: a line cut short or mended may not), which are then
//      not stored (they were a third of a progress block: the digits of its
//      own text again); or 1 and the fields: source, label and unit (each
//      length, bytes), step + 1 and total + 1 (0 when not said), and
//      seconds per step, epoch and loss each as a decimal: 0 for -1 (not
//      said), 1 and the IEEE double (8 bytes, little-endian) for what no
//      decimal says (infinities, NaN), else 2 + (zigzag(exponent) << 1 |
//      sign) and the digits, the shortest decimal that reads back as the
//      same double.
//   On the bench's app-heavy 4,096-rank job, columns, offsets from the text's
//   end and fields from the text took the blocks from 70.0 to 45.4 MB (in
//   rows: 49.9 MB); on its NCCL INFO file the channel lines in rows from 36.0
//   to 34.4 MB (in columns: 39.6 MB).
//   Versions 1 and 2 (still read) had no column sizes and put each row's
//   values one after another in the same order, an offset as the difference
//   from the row before's offset, and no 2 in column 7; version 1 stored the
//   three numbers as IEEE doubles.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ncclpm/recognize/events.h"
#include "ncclpm/recognize/file_recognizer.h"

namespace ncclpm::store {

inline constexpr int64_t kLineBlockRows = 8192;
/// The columns of a block's body (version 3, see above).
inline constexpr size_t kLineBlockColumns = 7;
/// A block is closed once its texts reach this many bytes, whatever its rows.
inline constexpr size_t kLineBlockTextBytes = 1 << 20;
/// So every block but a file's last of a kind holds at least this many lines
/// (a line's text is at most kMaxEventTextBytes): what bounds a search for
/// the last lines before a point to a few blocks.
inline constexpr int64_t kMinLineBlockRows =
    static_cast<int64_t>(kLineBlockTextBytes / recognize::kMaxEventTextBytes);

/// What a stored line is; a group holds lines of one kind.
enum class LineKind { kUnparsed, kProgress, kNcclChannel, kNcclNetwork };
inline constexpr LineKind kLineKinds[] = {LineKind::kUnparsed, LineKind::kProgress, LineKind::kNcclChannel,
                                          LineKind::kNcclNetwork};
/// "unparsed", "training_progress", "nccl_channel", "nccl_network":
/// line_groups.kind and the virtual tables' argument.
const char* line_kind_name(LineKind kind);

/// The lines of a block that share their kind and attribution.
struct LineGroup {
  LineKind kind = LineKind::kUnparsed;
  int64_t rows = 0;
  int64_t first_line = 0, last_line = 0;
  std::string host, producer;
  int64_t pid = -1;
  int rank = -1, local_rank = -1;
  char severity = 0;
  int ts_has_year = -1;  ///< of the group's timed lines; -1: none has a time
  int64_t min_ts_us = 0, max_ts_us = 0;  ///< earliest and latest time printed (0: none)
};

struct LineBlock {
  int64_t seq = 0;  ///< the file's blocks numbered from 0, in order
  int64_t first_line = 0, last_line = 0, rows = 0;
  std::string data;  ///< compressed body
  std::vector<LineGroup> groups;
};

/// What a parsing thread hands the writer: finished blocks with their groups.
struct EncodedLines {
  std::vector<LineBlock> blocks;
  bool empty() const { return blocks.empty(); }
};

/// Where a line went: its block (by number in the file), group and row in the block.
struct LineRef {
  int64_t block_seq = -1, group = -1, row = -1;
  bool valid() const { return block_seq >= 0; }
};

/// How a block lays out its lines' values (see the format above).
enum class BlockLayout { kRows, kColumns };

/// Encodes the stored lines of one file, in line order.
class LineEncoder {
 public:
  /// `next_block`: where the file's blocks are numbered (LineBlock::seq), when
  /// several encoders share the numbers; null: this one's own.
  explicit LineEncoder(int64_t* next_block = nullptr, BlockLayout layout = BlockLayout::kRows)
      : next_block_(next_block != nullptr ? next_block : &own_next_), layout_(layout) {}
  LineEncoder(const LineEncoder&) = delete;
  LineEncoder& operator=(const LineEncoder&) = delete;
  /// A line of `kind`; a progress line comes with its fields.
  LineRef add(const recognize::UnparsedLine& line, LineKind kind,
              const recognize::TrainingProgress* progress = nullptr);
  /// The blocks finished so far, the open one included.
  EncodedLines take();
  int64_t pending_rows() const { return pending_rows_; }

 private:
  void close_block();
  /// Where the values of column `c` go: their column, or the one of rows.
  std::string& column(size_t c) { return columns_[layout_ == BlockLayout::kColumns ? c : 0]; }
  static bool fits(const LineGroup& g, const recognize::UnparsedLine& line, LineKind kind);
  size_t group_of(const recognize::UnparsedLine& line, LineKind kind);

  EncodedLines done_;
  int64_t own_next_ = 0;
  int64_t* next_block_;
  BlockLayout layout_;
  int64_t pending_rows_ = 0;
  LineBlock block_;  // the open block
  std::unordered_map<uint64_t, std::vector<size_t>> groups_by_key_;  // its groups by a hash of attribution
  size_t last_group_ = 0;
  std::string columns_[kLineBlockColumns];  // the open block's body, a column each (see above)
  size_t text_bytes_ = 0;
  int64_t previous_line_ = 0, expected_offset_ = 0, previous_ts_ = 0;
};

/// A progress line's fields, as its parser read them (strings point into the reader's buffer).
struct BlockProgress {
  std::string_view source, label, unit;
  int64_t step = -1, total = -1;
  double seconds_per_step = -1, epoch = -1, loss = -1;
};

/// One decoded line of a block (the text points into the reader's buffer).
struct BlockLine {
  int64_t group = 0;  ///< its group's number in the block
  int64_t line_no = 0, byte_offset = 0, ts_us = 0;  ///< ts_us 0: no time
  std::string_view text;
  bool has_progress = false;
  /// The block stores no fields for this progress line: its text gives them
  /// back (`progress_of` reads them); `progress` is then empty.
  bool progress_in_text = false;
  BlockProgress progress;
};

/// A progress line's fields: those its block stores, or those its text gives
/// when the block says so (read into `storage`, which the views then point
/// into). A line that is no progress line, or whose text no longer reads as
/// one (a block written by another version of the parser), gives empty fields.
BlockProgress progress_of(const BlockLine& line, recognize::TrainingProgress& storage);

/// A stored line's time: the printed one with a year-less time given the
/// job's year (`ts_year` 0: as printed), then moved by its host's clock shift.
int64_t stored_time(int64_t printed_us, int64_t ts_year, int64_t shift_us);

/// One stream of progress lines of a file (a bar's label, a Trainer's dicts,
/// Megatron's iterations, per process): what diagnose needs of millions of
/// lines, tallied while they are encoded (table progress_streams).
struct ProgressStream {
  std::string host, source, label;
  int64_t pid = -1;
  int rank = -1, local_rank = -1;
  int64_t timed_lines = 0;  ///< lines with a step time that count steps ("it" or no unit)
  LineRef sample;           ///< a line of the stream: its group's rank, once inferred, is the stream's
  /// The last tqdm bar that counts steps and says n/total (`last_bar` invalid: none).
  LineRef last_bar;
  int64_t last_bar_line = 0, last_bar_ts_us = 0;
  std::string last_bar_text;
  int64_t last_bar_step = -1, last_bar_total = -1;
  double last_bar_seconds_per_step = -1;
};

/// Takes the progress, channel and network events and the unparsed lines out
/// of `rows` and encodes them, in line order, tallying the progress streams.
class LineSink {
 public:
  void add(recognize::Rows& rows);
  /// One progress line, as FileRecognizer's line sink hands it over.
  void add_progress(const recognize::UnparsedLine& line, const recognize::TrainingProgress& p) {
    tally(line, p, progress_.add(line, LineKind::kProgress, &p));
  }
  /// One of NCCL's channel (kNcclChannel) or transport (kNcclNetwork) lines,
  /// as FileRecognizer's setup-line sink hands it over.
  void add_setup_line(recognize::EventKind kind, const recognize::UnparsedLine& line);
  EncodedLines take_lines();
  int64_t pending_rows() const {
    return unparsed_.pending_rows() + progress_.pending_rows() + channel_.pending_rows() + network_.pending_rows();
  }
  /// The file's streams; call once, at its end.
  std::vector<ProgressStream> take_streams();

 private:
  void tally(const recognize::UnparsedLine& line, const recognize::TrainingProgress& p, LineRef ref);
  // Each kind in blocks of its own: a scan of the few unparsed lines of an
  // app-heavy job decodes none of its millions of progress lines.
  int64_t next_block_ = 0;
  LineEncoder unparsed_{&next_block_}, progress_{&next_block_, BlockLayout::kColumns}, channel_{&next_block_},
      network_{&next_block_};
  std::vector<ProgressStream> streams_;
  size_t last_stream_ = 0;  // a file's progress lines mostly come from one stream in a row
};

/// Decodes one block's body, row by row. A damaged block sets error() and stops.
class LineBlockReader {
 public:
  explicit LineBlockReader(std::string_view compressed);
  /// The next row; false past the end or on damage.
  bool next(BlockLine& out);
  int64_t rows() const { return rows_; }
  const std::string& error() const { return error_; }

 private:
  // A column being read. A block of rows (all of versions 1 and 2) has one,
  // which every column reads from: its rows hold the values in column order.
  struct Cursor {
    std::string_view data;
    size_t at = 0;
  };
  bool open_columns(size_t at);
  static bool read_text(Cursor& c, std::string_view& out);
  static bool read_double(Cursor& c, double& out);
  static bool read_decimal(Cursor& c, double& out);
  bool read_progress(Cursor& c, BlockProgress& p) const;
  std::string body_;
  Cursor cursors_[kLineBlockColumns];
  Cursor* column_[kLineBlockColumns] = {};
  int64_t rows_ = 0, read_ = 0, previous_ts_ = 0, expected_offset_ = 0;
  int version_ = 0;
  BlockLine last_;
  std::string error_;
};

/// Registers on `db` the module behind the virtual tables `unparsed_lines`,
/// `training_progress`, `nccl_channel_lines` and `nccl_network_lines`, and the SQL function
/// `ncclpm_stored_time(printed_us, ts_year, shift_us)` (stored_time; NULL
/// for NULL) that puts a group's times on the job's clock.
int register_line_table(sqlite3* db);

}  // namespace ncclpm::store
