// src/recognize/blocks.h
//
// The state of multi-line blocks inside a FileRecognizer (private).
#pragma once

#include "ncclpm/recognize/file_recognizer.h"

namespace ncclpm::recognize {

inline constexpr size_t kMaxExceptionMessage = 2048;

struct FileRecognizer::Block {
  Event event;
  Traceback tb;
  bool after_exception = false;
  bool last_error_next = false;  // the previous line was "Last error:": NCCL's text follows
  int message_lines = 0;
  bool after_bar = false;        // began glued to a progress bar, perhaps another process's
};

struct FileRecognizer::Summary {
  ProcessExit entry;
  bool have_entry = false;
  bool root_section = false;
  bool done_root = false;
  bool in_callstack = false;   // after "traceback : Traceback (most recent call last):"
  bool after_frames = false;   // the previous callstack line was a frame (indented 4)
  int64_t last_event = -1;     // the entry emitted last, whose message the callstack completes
  int64_t first_line = 0;
};

/// The text a torchrun summary entry is stored as.
std::string describe_summary_entry(const ProcessExit& x);

/// Makes `e` the event of a torchrun summary entry: its process, its text, its detail.
void fill_summary_entry_event(Event& e, const ProcessExit& x);

/// A line that opens a traceback drawn by the `rich` library: its top border,
/// or its bottom one when the paste was cut inside the box.
bool opens_rich_traceback(std::string_view trimmed);

}  // namespace ncclpm::recognize
