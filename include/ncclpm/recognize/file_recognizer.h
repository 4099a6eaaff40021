// include/ncclpm/recognize/file_recognizer.h
//
// A FileRecognizer turns the framed lines of one file into typed events,
// NCCL COLL rows and kept unparsed lines, and accounts for every line:
//
//   lines_read == lines_blank + lines_recognized + lines_unparsed
//
// Multi-line messages (Python tracebacks, C++ backtraces, `Last error:`
// blocks, desync reports, torchrun's failure summary) become one event: the
// lines that continue an event are attached to it, to the event of the same
// process when the line says who wrote it, otherwise to the file's latest one.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ncclpm/discover/discover.h"
#include "ncclpm/frame/framer.h"
#include "ncclpm/read/line_reader.h"
#include "ncclpm/recognize/events.h"

namespace ncclpm::recognize {

struct LineCounts {
  int64_t read = 0, blank = 0, recognized = 0, unparsed = 0, oversized = 0;
  int64_t bytes = 0;
};

/// Rows produced from a file so far; moved to the store in batches.
struct Rows {
  std::vector<Event> events;
  std::vector<CollectiveCall> collectives;
  std::vector<UnparsedLine> unparsed;
  size_t size() const { return events.size() + collectives.size() + unparsed.size(); }
};

class FileRecognizer {
 public:
  explicit FileRecognizer(const discover::PathHints& hints);
  ~FileRecognizer();

  /// `physical_lines` > 1 when the framer rejoined a line that a terminal or
  /// collector hard-wrapped (`line` then spans that many physical lines).
  void feed(const read::PhysicalLine& line, const frame::Frame& f, int physical_lines = 1);
  /// Closes open multi-line blocks; call once at the end of the file.
  void finish();
  /// Moves out the rows produced so far. With `final` false (mid-file) the
  /// latest events stay, since a later line may still continue them.
  void drain(Rows& out, bool final);
  const LineCounts& counts() const { return counts_; }
  /// Hands COLL lines to `sink` as they are read instead of keeping them in
  /// Rows::collectives: millions of lines, none copied.
  using CollectiveSink = std::function<void(const CollectiveLine&)>;
  void set_collective_sink(CollectiveSink sink) { collective_sink_ = std::move(sink); }
  /// Hands progress lines (bars, Trainer dicts, iteration lines) to `sink` as
  /// lines instead of keeping them as events: most of an app-heavy console.
  using ProgressSink = std::function<void(const UnparsedLine&, const TrainingProgress&)>;
  void set_progress_sink(ProgressSink sink) { progress_sink_ = std::move(sink); }
  /// Hands NCCL's channel lines (rings, trees, channel connections: kind
  /// kNcclChannel) and transport lines (kNcclNetwork) to `sink` as lines
  /// instead of keeping them as events: most of NCCL's INFO output.
  using SetupLineSink = std::function<void(EventKind, const UnparsedLine&)>;
  void set_setup_line_sink(SetupLineSink sink) { setup_line_sink_ = std::move(sink); }

 private:
  struct Block;
  struct Stream {
    int64_t last_event = -1;  // absolute index of the stream's latest event
    std::unique_ptr<Block> block;  // an open Python traceback
    int64_t timer_report = -1;     // an open Megatron timer report (its event)
    std::string timer;             // the timer its next rank lines are of
    Traceback headless;            // frames seen outside any traceback, just above
    int64_t headless_last_line = -1;  // the last of them (or of their source lines)
  };

  std::string stream_key(const frame::Frame& f) const;
  Event make_event(EventKind kind, const read::PhysicalLine& line, const frame::Frame& f) const;
  UnparsedLine make_line(const read::PhysicalLine& line, const frame::Frame& f, size_t max_text) const;
  UnparsedLine stored_line(const read::PhysicalLine& line, const frame::Frame& f) const;
  int64_t push(Event e, Stream& stream);
  Event* event_at(int64_t index);
  bool attach(int64_t index, const read::PhysicalLine& line, std::string_view text);
  bool attach_to_last(const Stream& s, const read::PhysicalLine& line, std::string_view text);

  bool add_collective(const read::PhysicalLine& line, const frame::Frame& f);
  bool recognize_nccl(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool recognize_pytorch(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool recognize_launcher(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool recognize_rank_timers(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool recognize_progress(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool continue_traceback(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  bool headless_traceback(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  void take_exception_line(const std::string& type, const std::string& message, Block& block);
  void open_summary_after(const std::string& exception_type, const read::PhysicalLine& line, Stream& s);
  bool continue_summary(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  static bool opens_summary_midway(std::string_view trimmed_body);
  bool continue_event(const read::PhysicalLine& line, const frame::Frame& f, Stream& s);
  void close_traceback(Stream& s);
  void keep_unparsed(const read::PhysicalLine& line, const frame::Frame& f);

  // NCCL's own view of ranks, from communicator init lines: a COLL line names
  // its comm pointer, and a process's rank in its largest comm is its global rank.
  struct CommRank {
    int rank = -1, nranks = -1;
  };
  std::unordered_map<std::string, CommRank> comm_ranks_;     // host|pid|comm
  std::unordered_map<std::string, CommRank> process_ranks_;  // host|pid
  void learn_comm(const frame::Frame& f, const CommInfo& c);
  struct CommLookup {
    bool valid = false;
    std::string host;
    int64_t pid = -1;
    std::string comm;
    int comm_rank = -1, world_rank = -1;
  };
  const CommLookup& lookup_comm(std::string_view host, int64_t pid, std::string_view comm);
  CommLookup last_comm_lookup_;
  CollectiveSink collective_sink_;
  ProgressSink progress_sink_;
  SetupLineSink setup_line_sink_;

  discover::PathHints hints_;
  LineCounts counts_;
  Rows rows_;
  int64_t drained_events_ = 0;  // events already moved out by drain()
  std::unordered_map<std::string, Stream> streams_;
  int64_t file_last_event_ = -1;
  int64_t last_desync_ = -1;
  Stream* last_block_stream_ = nullptr;  // whose traceback unprefixed lines continue
  struct Summary;
  std::unique_ptr<Summary> summary_;     // torchrun ChildFailedError block in progress
  bool expect_last_error_ = false;       // the line after "Last error:" is NCCL's text
  int spawned_process_ = -1;             // "-- Process N terminated with the following error:": the next traceback is N's
  Event header_;                         // a prefixed line without text: its message starts below
  int64_t header_line_ = -1;
};

}  // namespace ncclpm::recognize
