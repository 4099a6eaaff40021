// src/ingest/line_mender.cc
#include "line_mender.h"

#include <algorithm>
#include <cctype>

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/literal.h"

namespace ncclpm::ingest {
namespace {

constexpr size_t kMinWrapWidth = 60;  // no terminal is narrower than this
// A line a terminal cut is joined up to this size: a file of full-width rows
// that all seem to go on must not grow one line without bound.
constexpr size_t kMaxJoinedBytes = 64 * 1024;

bool ends_in_padding(std::string_view row) { return row.ends_with("  "); }

// Whether `row` can be the rest of a line a terminal cut: no prefix of its
// own, and not the capital or bracket a fresh message begins with (a cut
// lands anywhere; a line that happens to fill the window is rarer, and its
// successor is then kept apart when it looks like a start).
bool continues(std::string_view row, frame::Framer& framer) {
  if (row.empty()) return false;
  auto c = static_cast<unsigned char>(row.front());
  if (std::isupper(c) != 0 || c == '[' || c == '(' || c == '{') return false;
  return !framer.frame(row).had_prefix;
}

// The address of a link, without its scheme and one trailing slash; empty
// when it is no web address.
std::string_view link_address(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (!url.starts_with(scheme)) continue;
    url.remove_prefix(scheme.size());
    if (url.ends_with('/')) url.remove_suffix(1);
    return url;
  }
  return {};
}

}  // namespace

bool without_autolinks(std::string_view text, std::string& out) {
  size_t copied = 0;  // text before this is in `out` already
  bool any = false;
  for (size_t at = util::find(text, "](http"); at != std::string_view::npos; at = util::find(text, "](http", at + 1)) {
    size_t open = text.rfind('[', at);
    size_t close = text.find(')', at);
    if (open == std::string_view::npos || open < copied || close == std::string_view::npos) continue;
    std::string_view shown = text.substr(open + 1, at - open - 1);
    std::string_view url = text.substr(at + 2, close - at - 2);
    if (shown.empty() || (url != shown && link_address(url) != shown)) continue;
    if (!any) out.clear();
    any = true;
    out.append(text.substr(copied, open - copied)).append(shown);
    copied = close + 1;
  }
  if (any) out.append(text.substr(copied));
  return any;
}

size_t display_columns(std::string_view text) {
  // Every byte but a UTF-8 continuation byte starts a character.
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

bool TerminalWrap::cut(std::string_view row) const {
  if (display_columns(row) != width) return false;
  // A padded row that ends a line ends in its padding; a cut row ends in text.
  return !padded || !ends_in_padding(row);
}

std::optional<TerminalWrap> learn_terminal_wrap(const std::vector<std::string_view>& sample, frame::Framer& framer) {
  size_t width = 0;
  for (std::string_view row : sample) width = std::max(width, display_columns(row));
  if (width < kMinWrapWidth) return std::nullopt;
  TerminalWrap wrap{width, false};
  int padded_rows = 0;
  for (std::string_view row : sample)
    if (display_columns(row) == width && ends_in_padding(row)) ++padded_rows;
  wrap.padded = padded_rows >= 3;
  int went_on = 0, ended = 0;
  for (size_t i = 0; i + 1 < sample.size(); ++i) {
    if (!wrap.cut(sample[i])) continue;
    ++(continues(framer.unwrap_paste(sample[i + 1]), framer) ? went_on : ended);
  }
  if (went_on < 2 || went_on <= ended) return std::nullopt;
  return wrap;
}

void LineMender::hold(Held& h, const read::PhysicalLine& row, std::string_view text) {
  h.last_row = h.text.size();
  h.last_row_cut = wrap_ && wrap_->cut(row.text);
  if (h.rows == 0) {
    h.line = row;
    h.text.assign(text);
  } else {
    h.text.append(text);
    h.line.full_bytes += row.full_bytes;  // the recognizer counts each row's newline
    h.line.oversized = h.line.oversized || row.oversized;
  }
  ++h.rows;
}

void LineMender::add(const read::PhysicalLine& physical) {
  read::PhysicalLine row = physical;
  if (without_autolinks(physical.text, unlinked_)) row.text = unlinked_;  // its byte count stays the file's
  if (!wrap_) {
    add_line(row, 1);
    return;
  }
  // A terminal paste: each line waits for the next row, which may be its rest.
  // A paste quoted after the terminal cut it has the quote on every row: the
  // rest of a line is the row's text after it.
  std::string_view rest = framer_.unwrap_paste(row.text);
  if (wrapped_.rows > 0 && wrapped_.text.size() + rest.size() <= kMaxJoinedBytes &&
      goes_on(wrapped_, rest)) {
    hold(wrapped_, row, rest);
    return;
  }
  release_wrapped();
  hold(wrapped_, row, row.text);
}

bool LineMender::goes_on(const Held& h, std::string_view row) {
  if (!continues(row, framer_)) return false;
  if (h.last_row_cut) return true;
  std::string_view last_row = std::string_view(h.text).substr(h.last_row);
  // The first row of a line that began mid-row (after a prompt or a bar that
  // kept the cursor) is short, but it still ends mid-word where the next row
  // begins with the rest of the word.
  auto last = static_cast<unsigned char>(last_row.empty() ? ' ' : last_row.back());
  return std::isalpha(last) != 0 && std::islower(static_cast<unsigned char>(row.front())) != 0;
}

void LineMender::release_wrapped() {
  if (wrapped_.rows == 0) return;
  read::PhysicalLine line = wrapped_.line;
  std::string text = std::move(wrapped_.text);
  int rows = wrapped_.rows;
  wrapped_ = Held{};
  line.text = text;
  add_line(line, rows);
}

void LineMender::add_line(const read::PhysicalLine& line, int rows) {
  if (record_.rows > 0) {
    if (!framer_.frame(line.text).had_prefix) {
      std::string joined = record_.text + std::string(line.text);
      frame::Frame f = framer_.frame(joined);
      if (recognize::parse_work_record(f.body)) {
        read::PhysicalLine both = record_.line;
        both.text = joined;
        both.full_bytes = static_cast<int64_t>(joined.size());
        int both_rows = record_.rows + rows;
        record_ = Held{};
        emit_(both, f, both_rows);
        return;
      }
    }
    release_record();
  }
  frame::Frame f = framer_.frame(line.text);
  read::PhysicalLine rest = line;
  if (f.glued_at > 0) {
    // Another stream's progress bar ends where this log line begins: two
    // log lines that lost the newline between them. The bar is a line of
    // its own rank; both keep the physical line's number and count as read.
    read::PhysicalLine bar = line;
    bar.text = line.text.substr(0, f.glued_at);
    bar.full_bytes = static_cast<int64_t>(bar.text.size()) - 1;  // its missing newline is counted
    bar.oversized = false;
    rest.text = line.text.substr(f.glued_at);
    rest.byte_offset += static_cast<int64_t>(f.glued_at);
    rest.full_bytes -= bar.full_bytes + 1;
    emit_(bar, framer_.frame(bar.text), 1);
    f = framer_.frame(rest.text);
  }
  // WorkNCCL records come from PyTorch, never from NCCL's own (high-volume) lines.
  if (f.producer != frame::Producer::kNccl && f.body.find("WorkNCCL(") != std::string_view::npos &&
      !recognize::parse_work_record(f.body)) {
    record_.line = rest;
    record_.text.assign(rest.text);
    record_.rows = rows;
    return;
  }
  emit_(rest, f, rows);
}

void LineMender::release_record() {
  if (record_.rows == 0) return;
  Held h = std::move(record_);
  record_ = Held{};
  h.line.text = h.text;
  emit_(h.line, framer_.frame(h.line.text), h.rows);
}

void LineMender::finish() {
  release_wrapped();
  release_record();
}

}  // namespace ncclpm::ingest
