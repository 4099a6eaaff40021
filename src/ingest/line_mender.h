// src/ingest/line_mender.h
//
// Pastes break lines, and a recognizer sees only one line at a time, so the
// breaks are mended before it:
// - A terminal (tmux, screen, a notebook, a CI viewer) cuts every line longer
//   than its window into rows of exactly the window's width; tmux and screen
//   pad the last row with spaces to that width. A line that began mid-row
//   has a short first row that ends mid-word: `Watchdog caught colle` /
//   `ctive operation timeout: WorkNCCL(...)` is one line again.
// - A WorkNCCL record hard-wrapped mid-token at any width (`...SeqNum=9713,
//   OpT` / `ype=ALLREDUCE, ...`) is joined with its next line when that has no
//   prefix and the two make a whole record.
// - A chat client or tracker that took every "name.cc:101" for an address
//   (.cc is a country's domain) wrapped it in a Markdown link:
//   "transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN" is NCCL's
//   "transport/net_ib.cc:101 NCCL WARN" again.
// A mended line keeps the first row's number and counts every row it took.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ncclpm/frame/framer.h"
#include "ncclpm/read/line_reader.h"

namespace ncclpm::ingest {

/// How a terminal cut the lines of one file into rows.
struct TerminalWrap {
  size_t width = 0;     ///< display columns of a full row
  bool padded = false;  ///< rows that end a line are padded with spaces to `width`

  /// Whether `row` was cut at the window's edge: its line goes on in the next row.
  bool cut(std::string_view row) const;
};

/// The window width a file's first lines show, or none. A width is learned
/// only when at least two rows of the longest length are followed by a row
/// that reads as the rest of a line (no prefix, not a capital or a bracket),
/// and such rows outnumber the full-width rows followed by a fresh line:
/// fixed-format lines that happen to share the longest length do not count.
std::optional<TerminalWrap> learn_terminal_wrap(const std::vector<std::string_view>& sample, frame::Framer& framer);

/// Writes `text` into `out` with every autolink undone: a Markdown link whose
/// address (http or https, a trailing slash aside) is its own text,
/// "[10.1.3.201](http://10.1.3.201/)", becomes that text. A link with words of
/// its own stays. False, and `out` untouched, when `text` has none.
bool without_autolinks(std::string_view text, std::string& out);

/// Display columns of `text` (UTF-8: a progress bar's block is one column).
size_t display_columns(std::string_view text);

class LineMender {
 public:
  /// Receives each mended line, its frame, and how many physical rows it took.
  using Emit = std::function<void(const read::PhysicalLine&, const frame::Frame&, int rows)>;

  LineMender(frame::Framer& framer, Emit emit) : framer_(framer), emit_(std::move(emit)) {}

  void set_terminal_wrap(std::optional<TerminalWrap> wrap) { wrap_ = wrap; }
  void add(const read::PhysicalLine& row);
  /// Emits whatever is still held (call at the end of the file).
  void finish();

 private:
  struct Held {
    read::PhysicalLine line;
    std::string text;
    size_t last_row = 0;  // where the last row begins in `text`
    bool last_row_cut = false;  // the terminal cut it: it filled the row, as the file has it
    int rows = 0;
  };
  bool goes_on(const Held& h, std::string_view row);
  void hold(Held& h, const read::PhysicalLine& row, std::string_view text);
  void release_wrapped();
  void add_line(const read::PhysicalLine& line, int rows);
  void release_record();

  frame::Framer& framer_;
  Emit emit_;
  std::optional<TerminalWrap> wrap_;
  Held wrapped_;  // rows of a line the terminal cut, not yet ended
  Held record_;   // a WorkNCCL record cut mid-token, waiting for its next line
  std::string unlinked_;  // the current row without its autolinks
};

}  // namespace ncclpm::ingest
