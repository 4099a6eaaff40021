// src/recognize/multiline.cc
//
// The two block messages whose lines make sense only together: a Python
// traceback, and torchrun's ChildFailedError summary (log-formats C.3).
#include <re2/re2.h>

#include "match.h"

#include "blocks.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {

using frame::Frame;
using frame::Producer;
using read::PhysicalLine;

namespace {

bool is_chain_line(std::string_view b) {
  return b.starts_with("During handling of the above exception") ||
         b.starts_with("The above exception was the direct cause");
}

// "torch.OutOfMemoryError: CUDA out of memory..." or a bare "KeyboardInterrupt".
bool parse_exception_line(std::string_view b, std::string* type, std::string* message) {
  static const RE2 re(R"(^([A-Za-z_][\w.]*)(?::(?: (.*))?)?$)");
  std::string t, m;
  if (!RE2::FullMatch(sp(b), re, &t, &m)) return false;
  *type = t;
  *message = m;
  return true;
}

// Lines after the exception line that still belong to its message.
bool looks_like_message_detail(std::string_view t) {
  return t.starts_with("ncc") || t.starts_with("Last error") || t.starts_with("CUDA kernel errors") ||
         t.starts_with("For debugging") || t.starts_with("Compile with") ||
         t.starts_with("Exception raised from") || t.starts_with("frame #") ||
         t.find("Error: ") != std::string_view::npos;
}

// The box the `rich` library draws a traceback in (Accelerate's and
// Transformers' CLIs install it):
//   ╭──── Traceback (most recent call last) ────╮
//   │ /opt/conda/bin/accelerate:8 in <module>   │
//   │ ❱ 8 │   sys.exit(main())                  │
//   ╰───────────────────────────────────────────╯
//   RuntimeError: CUDA error: ...
bool is_rich_box_line(std::string_view t) {
  return t.starts_with("\u2502") || t.starts_with("\u2570\u2500") || t.starts_with("\u256d\u2500");
}

// The frame a line names (file, line, function by `re`'s three groups), if it names one.
void note_frame(const RE2& re, std::string_view line, Traceback& tb) {
  std::string file, func;
  int lineno = 0;
  if (!RE2::PartialMatch(sp(line), re, &file, &lineno, &func)) return;
  tb.last_file = file;
  tb.last_line = lineno;
  tb.last_func = func;
  ++tb.frames;
}

void note_python_frame(std::string_view trimmed, Traceback& tb) {
  static const RE2 python_frame_re(R"re(^File "([^"]*)", line (\d+)(?:, in (\S+))?)re");
  note_frame(python_frame_re, trimmed, tb);
}

}  // namespace

// Its top border, or its bottom one when a paste was cut inside the box: the
// exception line follows the bottom border.
bool opens_rich_traceback(std::string_view t) {
  return (t.starts_with("\u256d\u2500") && t.find("Traceback (most recent call last)") != std::string_view::npos) ||
         t.starts_with("\u2570\u2500");
}

// Frames outside any traceback: a paste that begins (or was cut) below a
// traceback's header. They stay lines of their own, for a stack printed
// without an exception is no failure; the exception line right under them
// (under their source lines) opens the traceback as if the header were there.
// Returns whether `line` was that exception line.
bool FileRecognizer::headless_traceback(const PhysicalLine& line, const Frame& f, Stream& s) {
  std::string_view b = f.body;
  std::string_view t = util::trim_left(b);
  bool follows = s.headless_last_line >= 0 && line.line_no == s.headless_last_line + 1;
  if (b.size() > t.size() && is_python_frame(b)) {  // indented, as CPython prints frames
    if (!follows) s.headless = Traceback{};
    note_python_frame(t, s.headless);
    s.headless_last_line = line.line_no;
    return false;
  }
  if (!follows) return false;
  s.headless_last_line = -1;
  if (b.size() > t.size()) {  // a frame's source line, or Python 3.11's carets under it
    s.headless_last_line = line.line_no;
    return false;
  }
  std::string type, message;
  if (!parse_exception_line(t, &type, &message)) return false;
  s.block = std::make_unique<Block>();
  s.block->event = make_event(EventKind::kTraceback, line, f);
  s.block->tb = s.headless;
  take_exception_line(type, message, *s.block);
  last_block_stream_ = &s;
  open_summary_after(type, line, s);
  return true;
}

// torchrun's own traceback ends in the failure summary block.
void FileRecognizer::open_summary_after(const std::string& exception_type, const PhysicalLine& line, Stream& s) {
  if (!exception_type.ends_with("ChildFailedError")) return;
  close_traceback(s);
  summary_ = std::make_unique<Summary>();
  summary_->first_line = line.line_no;
}

// The exception line of a traceback: its type and message, and whose process
// raised it where the message says.
void FileRecognizer::take_exception_line(const std::string& type, const std::string& message, Block& block) {
  block.tb.exc_type = type;
  block.tb.exc_message = std::string(util::clip(message, kMaxExceptionMessage));
  // The message may say whose process raised it; then a progress bar the
  // block began glued to may be another process's, and the block would give
  // it the wrong rank: a shared console gets no rank from the message.
  if (block.event.rank < 0 && block.event.pg_rank < 0 && !block.after_bar)
    block.event.pg_rank = rank_awaiting_unique_id(message);
  if (block.event.rank < 0 && block.event.local_rank < 0 && !block.after_bar)
    block.event.local_rank = spawned_process_index(message);
  block.after_exception = true;
  block.message_lines = 0;
}

bool FileRecognizer::continue_traceback(const PhysicalLine& line, const Frame& f, Stream& s) {
  Block& block = *s.block;
  std::string_view b = f.body;
  std::string_view t = util::trim_left(b);
  auto append = [&] {
    if (block.event.text.size() + b.size() < kMaxEventTextBytes) {
      block.event.text += '\n';
      block.event.text += b;
    }
    block.event.end_line = line.line_no;
    return true;
  };
  if (f.producer != Producer::kUnknown) {
    close_traceback(s);
    return false;
  }
  if (t.starts_with("Traceback (most recent call last):") || is_chain_line(t)) {
    block.after_exception = false;
    return append();
  }
  if (!block.after_exception) {
    // A frame's line: Python's indented `File "x.py", line 12, in f` (or the
    // source line under it), or rich's "│ /path/to/x.py:12 in f │".
    static const RE2 rich_frame_re("^\u2502 (\\S+):(\\d+) in (\\S+)");
    if (is_rich_box_line(t)) {
      note_frame(rich_frame_re, t, block.tb);
      return append();
    }
    if (b.size() > t.size()) {
      note_python_frame(t, block.tb);
      return append();
    }
    std::string type, message;
    if (!parse_exception_line(t, &type, &message)) {
      close_traceback(s);
      return false;
    }
    take_exception_line(type, message, block);
    append();
    open_summary_after(type, line, s);
    return true;
  }
  // torch.multiprocessing.spawn's exception goes on with the failed worker's
  // own traceback, under a line that names the worker: that traceback, the
  // next block, is the worker's. The parent's exception reports that worker's
  // death and is told of it too, as torchrun's summary is of the rank it names.
  if (int index = spawned_process_index(t); index >= 0 && t.starts_with("-- Process")) {
    append();
    if (block.event.rank < 0 && block.event.local_rank < 0) block.event.local_rank = index;
    close_traceback(s);
    spawned_process_ = index;
    return true;
  }
  // After the exception line: its message may go on over more lines.
  if (block.message_lines < 16 && (block.last_error_next || looks_like_message_detail(t))) {
    block.last_error_next = util::trim(t) == "Last error:";
    ++block.message_lines;
    if (block.tb.exc_message.size() + t.size() + 1 < kMaxExceptionMessage) {
      block.tb.exc_message += '\n';
      block.tb.exc_message += t;
    }
    return append();
  }
  close_traceback(s);
  return false;
}

void FileRecognizer::close_traceback(Stream& s) {
  if (!s.block) return;
  Event e = std::move(s.block->event);
  e.detail = s.block->tb;
  s.block.reset();
  if (last_block_stream_ == &s) last_block_stream_ = nullptr;
  // TORCH_DISTRIBUTED_DEBUG=DETAIL raises its mismatch report as the
  // exception: keep it as a typed event too, so alignment can use it.
  std::vector<Event> mismatches;
  for (std::string_view line : util::split(e.text, '\n')) {
    auto m = parse_collective_mismatch(line);
    if (!m) continue;
    Event me = e;
    me.kind = EventKind::kCollectiveMismatch;
    me.text = std::string(util::trim(line));
    if (me.pg_rank < 0) me.pg_rank = m->rank_a;
    me.detail = *m;
    mismatches.push_back(std::move(me));
  }
  push(std::move(e), s);
  for (Event& me : mismatches) push(std::move(me), s);
}

// In the entry's own words ("exitcode: -11 (pid: 42)"), so the catalogue
// knows the line that stands for the entry.
std::string describe_summary_entry(const ProcessExit& x) {
  std::string code = x.exit_code == INT64_MIN ? std::string("?") : std::to_string(x.exit_code);
  return "torchrun failure: rank " + std::to_string(x.rank) + " (local_rank: " + std::to_string(x.local_rank) +
         ") exitcode: " + code + " (pid: " + std::to_string(x.pid) + ") " + x.message;
}

void fill_summary_entry_event(Event& e, const ProcessExit& x) {
  e.rank = x.rank;
  e.local_rank = x.local_rank;
  e.pid = x.pid;
  e.host = x.host;
  e.severity = 'E';
  e.text = describe_summary_entry(x);
  e.detail = x;
}

bool FileRecognizer::continue_summary(const PhysicalLine& line, const Frame& f, Stream& s) {
  Summary& sum = *summary_;
  std::string_view t = util::trim(f.body);
  auto emit_entry = [&] {
    if (!sum.have_entry) return;
    Event e = make_event(EventKind::kProcessExit, line, f);
    e.line_no = sum.first_line;
    e.end_line = line.line_no;
    fill_summary_entry_event(e, sum.entry);
    sum.last_event = push(std::move(e), s);
    sum.have_entry = false;
    sum.entry = ProcessExit{};
  };
  auto field = [&](std::string_view label) -> std::optional<std::string_view> {
    if (!t.starts_with(label)) return std::nullopt;
    std::string_view rest = util::trim_left(t.substr(label.size()));
    if (!rest.starts_with(":")) return std::nullopt;
    return util::trim(rest.substr(1));
  };
  if (!t.empty() && (t.find_first_not_of('=') == std::string_view::npos ||
                     t.find_first_not_of('-') == std::string_view::npos)) {
    if (t[0] == '=' && sum.done_root) summary_.reset();  // the closing border
    return true;
  }
  if (t == "Failures:" || t.ends_with(" FAILED") || t == "<NO_OTHER_FAILURES>") return true;
  if (t.starts_with("Root Cause")) {
    sum.root_section = true;
    return true;
  }
  static const RE2 index_re(R"(^\[\d+\]:$)");
  if (RE2::FullMatch(sp(t), index_re)) {
    emit_entry();
    sum.have_entry = true;
    sum.in_callstack = false;
    sum.first_line = line.line_no;
    sum.entry.source = "elastic_summary";
    sum.entry.root_cause_block = sum.root_section;
    if (sum.root_section) sum.done_root = true;
    return true;
  }
  if (auto v = field("time")) {
    sum.entry.time = std::string(*v);
    return true;
  }
  if (auto v = field("host")) {
    sum.entry.host = std::string(*v);
    return true;
  }
  if (auto v = field("rank")) {
    static const RE2 re(R"((-?\d+) \(local_rank: (-?\d+)\))");
    RE2::PartialMatch(sp(*v), re, &sum.entry.rank, &sum.entry.local_rank);
    return true;
  }
  if (auto v = field("exitcode")) {
    static const RE2 re(R"((-?\d+) \(pid: (\d+)\))");
    int64_t code = 0, pid = 0;
    if (RE2::PartialMatch(sp(*v), re, &code, &pid)) {
      sum.entry.exit_code = code;
      sum.entry.pid = pid;
    }
    return true;
  }
  if (field("error_file")) return true;
  if (auto v = field("traceback")) {
    sum.entry.message = std::string(*v);
    static const RE2 sig(R"(Signal \d+ \((SIG\w+)\))");
    std::string name;
    if (RE2::PartialMatch(sp(*v), sig, &name)) sum.entry.signal = name;
    sum.in_callstack = v->starts_with("Traceback (most recent call last)");
    sum.after_frames = false;
    emit_entry();
    return true;
  }
  // A py_callstack traceback inside an entry is indented by two more spaces:
  // frames by four, the exception line that ends it by two.
  if (sum.in_callstack && f.body.starts_with("  ")) {
    bool frame = f.body.starts_with("    ");
    std::string type, message;
    if (!frame && sum.after_frames && parse_exception_line(t, &type, &message)) {
      Event* e = event_at(sum.last_event);
      if (e != nullptr && std::holds_alternative<ProcessExit>(e->detail)) {
        auto& x = std::get<ProcessExit>(e->detail);
        x.message = std::string(util::clip(t, kMaxExceptionMessage));
        e->text = describe_summary_entry(x);
        e->end_line = line.line_no;
      }
    }
    sum.after_frames = frame;
    return true;
  }
  if (f.body.starts_with("    ")) return true;
  emit_entry();
  summary_.reset();
  return false;
}

}  // namespace ncclpm::recognize
