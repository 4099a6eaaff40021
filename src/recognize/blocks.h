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
  int message_lines = 0;
};

struct FileRecognizer::Summary {
  ProcessExit entry;
  bool have_entry = false;
  bool root_section = false;
  bool done_root = false;
  int64_t first_line = 0;
};

}  // namespace ncclpm::recognize
