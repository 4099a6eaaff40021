// src/recognize/file_recognizer.cc
//
// The per-file engine: dispatches each framed line to the parsers, keeps the
// multi-line state, and accounts for every line.
#include "ncclpm/recognize/file_recognizer.h"

#include "blocks.h"
#include "match.h"

#include <algorithm>

#include "ncclpm/frame/timestamp.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::recognize {

using frame::Frame;
using frame::Producer;
using read::PhysicalLine;

namespace {

constexpr int64_t kContinuationWindow = 200;  // lines after an event that may still continue it
// The "last event" of a stream whose last line went to a line sink (a
// progress, channel or transport line): no event, and nothing attaches to it, as
// nothing attaches to the event it stands for.
constexpr int64_t kSunkLine = -2;

bool starts(std::string_view s, std::string_view p) { return s.starts_with(p); }


// Lines that continue the event above them: C++ backtraces, what() blocks,
// Flight Recorder stack frames, NCCL error detail, faulthandler dumps.
bool looks_like_continuation(std::string_view b) {
  std::string_view t = util::trim_left(b);
  return starts(t, "frame #") || starts(t, "Exception raised from ") || starts(t, "what():") ||
         (t.size() > 1 && t[0] == '#' && t[1] >= '0' && t[1] <= '9') ||
         starts(t, "<unknown function>") || starts(t, "Thread 0x") ||
         starts(t, "Current thread 0x") || (starts(t, "File \"") && b.size() > t.size()) ||
         starts(t, "Last error:") || starts(t, "Error: ") ||
         (starts(t, "nccl") && t.find("Error: ") != std::string_view::npos && t.find("Error: ") < 30);
}

bool is_nccl_setup_report(EventKind k) {
  return k == EventKind::kNcclVersion || k == EventKind::kNcclEnv || k == EventKind::kNcclNetwork ||
         k == EventKind::kNcclComm || k == EventKind::kNcclChannel;
}

// "host|pid": a process, the key of what its communicator lines taught.
std::string process_key(std::string_view host, int64_t pid) {
  return std::string(host) + '|' + std::to_string(pid);
}

}  // namespace

FileRecognizer::FileRecognizer(const discover::PathHints& hints) : hints_(hints) {}
FileRecognizer::~FileRecognizer() = default;

std::string FileRecognizer::stream_key(const Frame& f) const {
  if (f.host.empty() && f.pid < 0 && f.rank < 0 && f.local_rank < 0) return {};
  std::string key(f.host);
  key += '|';
  key += std::to_string(f.pid);
  key += '|';
  key += std::to_string(f.rank);
  key += '|';
  key += std::to_string(f.local_rank);
  return key;
}

Event FileRecognizer::make_event(EventKind kind, const PhysicalLine& line, const Frame& f) const {
  Event e;
  e.kind = kind;
  e.line_no = e.end_line = line.line_no;
  e.byte_offset = line.byte_offset;
  e.host = std::string(f.host);
  e.pid = f.pid;
  e.tid = f.tid;
  e.rank = f.rank >= 0 ? f.rank : hints_.rank.value_or(-1);
  e.local_rank = f.local_rank >= 0 ? f.local_rank : hints_.local_rank.value_or(-1);
  e.device = f.device;
  e.pg_rank = f.pg_rank;
  e.pg_id = std::string(f.pg_id);
  e.pg_name = std::string(f.pg_name);
  e.pg_desc = std::string(f.pg_desc);
  if (f.ts.valid()) {
    e.ts_us = f.ts.to_us();
    e.ts_has_year = f.ts.has_year();
  }
  e.severity = f.severity;
  e.text = std::string(util::clip(f.body, kMaxEventTextBytes));
  return e;
}

int64_t FileRecognizer::push(Event e, Stream& stream) {
  rows_.events.push_back(std::move(e));
  int64_t index = drained_events_ + static_cast<int64_t>(rows_.events.size()) - 1;
  stream.last_event = index;
  file_last_event_ = index;
  return index;
}

Event* FileRecognizer::event_at(int64_t index) {
  int64_t local = index - drained_events_;
  if (index < 0 || local < 0 || local >= static_cast<int64_t>(rows_.events.size())) return nullptr;
  return &rows_.events[static_cast<size_t>(local)];
}

bool FileRecognizer::attach(int64_t index, const PhysicalLine& line, std::string_view text) {
  Event* e = event_at(index);
  if (e == nullptr || e->end_line < line.line_no - kContinuationWindow) return false;
  // NCCL's setup reports (version, a setting, the network, a communicator, a
  // channel) and the training loop's progress lines (a bar, a Trainer dict,
  // an iteration line) are one line each: what follows one is not its
  // continuation (a C++ exception's trace after a bar is the next failure).
  if (is_nccl_setup_report(e->kind) || e->kind == EventKind::kTrainingProgress) return false;
  if (e->text.size() + text.size() + 1 <= kMaxEventTextBytes) {
    e->text += '\n';
    e->text += text;
  }
  e->end_line = line.line_no;
  return true;
}

// The stream's last event may take no continuation (a progress bar) or be
// gone: then the file's last event, usually the failure record just above.
bool FileRecognizer::attach_to_last(const Stream& s, const PhysicalLine& line,
                                    std::string_view text) {
  return attach(s.last_event, line, text) ||
         (s.last_event != file_last_event_ && attach(file_last_event_, line, text));
}

void FileRecognizer::feed(const PhysicalLine& line, const Frame& f, int physical_lines) {
  counts_.read += physical_lines;
  counts_.bytes += line.full_bytes + physical_lines;
  if (line.oversized) ++counts_.oversized;
  if (util::is_blank(f.body)) {
    ++counts_.blank;
    // "[rank0]:[E... ProcessGroupNCCL.cpp:1176] [PG 0 Rank 0] " heads a message
    // that starts on the next, unprefixed line (the desync report): keep its writer.
    if (f.producer == Producer::kC10 || f.producer == Producer::kGlog) {
      header_ = make_event(EventKind::kDesyncReport, line, f);
      header_line_ = line.line_no;
    }
    return;
  }
  // The high-volume case first: a COLL line needs no per-process state.
  if (f.producer == Producer::kNccl && !summary_ && f.nccl_level == "INFO" && add_collective(line, f)) {
    ++counts_.recognized;
    return;
  }
  Stream& s = streams_[stream_key(f)];
  bool has_identity = !(f.host.empty() && f.pid < 0 && f.rank < 0 && f.local_rank < 0);
  Stream* block_owner = s.block ? &s : (!has_identity ? last_block_stream_ : nullptr);

  bool ok = false;
  if (summary_ && continue_summary(line, f, s)) {
    ok = true;
  } else if (block_owner != nullptr && block_owner->block && continue_traceback(line, f, *block_owner)) {
    ok = true;
  } else if (recognize_rank_timers(line, f, s)) {
    ok = true;
  } else if (f.producer == Producer::kNccl || starts(util::trim_left(f.body), "NCCL version ")) {
    ok = recognize_nccl(line, f, s);
  } else {
    ok = recognize_pytorch(line, f, s) || recognize_launcher(line, f, s) || recognize_progress(line, f, s) ||
         (f.producer == Producer::kUnknown && continue_event(line, f, s));
  }
  if (ok) {
    counts_.recognized += physical_lines;
    if (physical_lines > 1) {
      if (Event* e = event_at(file_last_event_); e != nullptr && e->line_no == line.line_no)
        e->end_line = line.line_no + physical_lines - 1;
    }
  } else {
    counts_.unparsed += physical_lines - 1;
    keep_unparsed(line, f);
  }
}

bool FileRecognizer::add_collective(const PhysicalLine& line, const Frame& f) {
  CollectiveLine c;
  if (!parse_nccl_coll(f.body, c)) return false;
  c.line_no = line.line_no;
  c.host = f.host;
  c.pid = f.pid;
  c.rank = f.rank >= 0 ? f.rank : hints_.rank.value_or(-1);
  if (!comm_ranks_.empty()) {
    const CommLookup& known = lookup_comm(c.host, c.pid, c.comm);
    c.comm_rank = known.comm_rank;
    if (c.rank < 0) c.rank = known.world_rank;
  }
  c.device = f.device;
  c.ts_us = f.ts.valid() ? f.ts.to_us() : 0;
  if (collective_sink_) collective_sink_(c);
  else rows_.collectives.push_back(c.as<std::string>());
  return true;
}

// A process's COLL lines name the same few communicators over and over: the
// answer for the last one is kept.
const FileRecognizer::CommLookup& FileRecognizer::lookup_comm(std::string_view host, int64_t pid,
                                                              std::string_view comm) {
  CommLookup& last = last_comm_lookup_;
  if (last.valid && last.pid == pid && last.host == host && last.comm == comm) return last;
  last = CommLookup{true, std::string(host), pid, std::string(comm)};
  std::string process = process_key(host, pid);
  if (auto it = comm_ranks_.find(process + '|' + last.comm); it != comm_ranks_.end()) last.comm_rank = it->second.rank;
  if (auto it = process_ranks_.find(process); it != process_ranks_.end()) last.world_rank = it->second.rank;
  return last;
}

bool FileRecognizer::recognize_nccl(const PhysicalLine& line, const Frame& f, Stream& s) {
  std::string_view b = f.body;
  if (f.nccl_level == "INFO" && add_collective(line, f)) return true;
  auto emit = [&](EventKind kind, Detail d) {
    Event e = make_event(kind, line, f);
    e.detail = std::move(d);
    push(std::move(e), s);
    return true;
  };
  if (auto v = parse_nccl_version(b)) return emit(EventKind::kNcclVersion, *v);
  if (f.nccl_level == "WARN") {
    auto w = parse_nccl_warn(b);
    return emit(EventKind::kNcclWarn, w ? Detail(*w) : Detail());
  }
  if (auto env = parse_nccl_env(b)) return emit(EventKind::kNcclEnv, *env);
  if (auto c = parse_nccl_comm(b)) {
    learn_comm(f, *c);
    return emit(EventKind::kNcclComm, *c);
  }
  if (auto t = parse_nccl_error_trace(b)) return emit(EventKind::kNcclErrorTrace, *t);
  auto setup_line = [&](EventKind kind) {
    if (!setup_line_sink_) return emit(kind, {});
    setup_line_sink_(kind, stored_line(line, f));
    s.last_event = file_last_event_ = kSunkLine;
    return true;
  };
  if (is_nccl_network_line(b)) return setup_line(EventKind::kNcclNetwork);
  if (is_nccl_channel_line(b)) return setup_line(EventKind::kNcclChannel);
  return false;
}

void FileRecognizer::learn_comm(const Frame& f, const CommInfo& c) {
  if (c.rank < 0 || c.nranks < 0 || c.comm.empty()) return;
  std::string process = process_key(f.host, f.pid);
  comm_ranks_[process + '|' + c.comm] = CommRank{c.rank, c.nranks};
  last_comm_lookup_.valid = false;
  CommRank& world = process_ranks_[process];
  if (c.nranks > world.nranks) world = CommRank{c.rank, c.nranks};
}

bool FileRecognizer::recognize_pytorch(const PhysicalLine& line, const Frame& f, Stream& s) {
  std::string_view b = f.body;
  std::string_view t = util::trim_left(b);
  auto emit = [&](EventKind kind, Detail d) {
    Event e = make_event(kind, line, f);
    if (e.rank < 0 && e.pg_rank < 0) e.pg_rank = rank_awaiting_unique_id(b);
    e.detail = std::move(d);
    push(std::move(e), s);
    return true;
  };
  if (!s.block && f.producer == Producer::kUnknown && headless_traceback(line, f, s)) return true;
  // A traceback may start right after a progress bar that had no newline
  // ("...examples/s]Traceback (most recent call last):"): the bar stays in the
  // block's text, where it tells what the rank was doing.
  constexpr std::string_view kTraceback = "Traceback (most recent call last):";
  bool after_bar = t.ends_with(kTraceback) && t.size() > kTraceback.size() &&
                   (t.find("it/s]") != std::string_view::npos || t.find("s/it]") != std::string_view::npos ||
                    t.find("%|") != std::string_view::npos);
  if (starts(t, kTraceback) || after_bar || opens_rich_traceback(t)) {
    if (s.block) close_traceback(s);
    s.block = std::make_unique<Block>();
    s.block->event = make_event(EventKind::kTraceback, line, f);
    s.block->after_bar = after_bar;
    if (spawned_process_ >= 0 && s.block->event.rank < 0 && s.block->event.local_rank < 0)
      s.block->event.local_rank = spawned_process_;
    spawned_process_ = -1;
    last_block_stream_ = &s;
    return true;
  }
  if (t.find("WorkNCCL(") != std::string_view::npos) {
    if (auto w = parse_work_record(b)) return emit(EventKind::kWorkRecord, *w);
    if (auto w = parse_cut_watchdog_timeout(b)) return emit(EventKind::kWorkRecord, *w);
  } else if (t.find("Watchdog c") != std::string_view::npos) {
    bool from_process_group_nccl = f.src_file == "ProcessGroupNCCL.cpp" && f.pg_rank >= 0;
    if (auto w = parse_cut_watchdog_timeout(b, from_process_group_nccl)) return emit(EventKind::kWorkRecord, *w);
  }
  if (auto st = parse_pg_status(b)) return emit(EventKind::kPgStatus, *st);
  // The NCCL a serving framework's own wrapper loaded: a version report like
  // NCCL's banner, and the last line a process prints when its communicator
  // then never forms.
  if (auto v = parse_framework_nccl_version(t)) return emit(EventKind::kNcclVersion, *v);
  if (auto d = parse_desync_line(t); d && d->kind == "timeout_at") {
    Event e = make_event(EventKind::kDesyncReport, line, f);
    if (!f.had_prefix && header_line_ == line.line_no - 1) {
      e.host = header_.host;
      e.pid = header_.pid;
      e.tid = header_.tid;
      e.rank = header_.rank;
      e.local_rank = header_.local_rank;
      e.pg_rank = header_.pg_rank;
      e.pg_id = header_.pg_id;
      e.pg_name = header_.pg_name;
      e.pg_desc = header_.pg_desc;
      e.ts_us = header_.ts_us;
      e.ts_has_year = header_.ts_has_year;
      e.severity = header_.severity;
    }
    if (e.rank < 0 && d->reporter_rank >= 0 && f.pg_rank < 0) e.pg_rank = d->reporter_rank;
    e.detail = *d;
    last_desync_ = push(std::move(e), s);
    return true;
  }
  if (auto m = parse_collective_mismatch(b)) return emit(EventKind::kCollectiveMismatch, *m);
  if (auto kind = classify_pytorch_message(t)) {
    // An "Exception raised from" right after an event belongs to it.
    if (*kind == EventKind::kCppException && starts(t, "Exception raised from ") &&
        attach_to_last(s, line, b))
      return true;
    if (*kind == EventKind::kNcclErrorSurfaced && t == b && starts(t, "ncc") &&
        attach(file_last_event_, line, b))
      return true;
    // Its NCCL version is recorded like a banner's (the only one old logs show).
    if (*kind == EventKind::kNcclErrorSurfaced)
      if (auto v = parse_embedded_nccl_version(t)) return emit(*kind, *v);
    return emit(*kind, {});
  }
  return false;
}

bool FileRecognizer::recognize_progress(const PhysicalLine& line, const Frame& f, Stream& s) {
  auto p = parse_training_progress(f.body);
  if (!p) return false;
  if (!progress_sink_) {
    Event e = make_event(EventKind::kTrainingProgress, line, f);
    e.detail = std::move(*p);
    push(std::move(e), s);
    return true;
  }
  progress_sink_(stored_line(line, f), *p);
  s.last_event = file_last_event_ = kSunkLine;
  return true;
}

// A typed line handed to a line sink: an event's attribution and text.
UnparsedLine FileRecognizer::stored_line(const PhysicalLine& line, const Frame& f) const {
  UnparsedLine u = make_line(line, f, kMaxEventTextBytes);
  u.rank = rank_or_default_pg(u.rank, f.pg_rank, f.pg_id, f.pg_desc);
  return u;
}

// Megatron's timer report is one multi-line message of one rank: its header,
// then the timers' lines, which say nothing on their own.
bool FileRecognizer::recognize_rank_timers(const PhysicalLine& line, const Frame& f, Stream& s) {
  if (s.timer_report >= 0) {
    Event* report = event_at(s.timer_report);
    if (report != nullptr && parse_rank_timer_line(f.body, s.timer, std::get<RankTimers>(report->detail)) &&
        attach(s.timer_report, line, f.body))
      return true;
    s.timer_report = -1;
  }
  auto option = parse_rank_timers_header(f.body);
  if (!option) return false;
  Event e = make_event(EventKind::kRankTimers, line, f);
  e.detail = RankTimers{*option, {}};
  s.timer_report = push(std::move(e), s);
  s.timer.clear();
  return true;
}

bool FileRecognizer::recognize_launcher(const PhysicalLine& line, const Frame& f, Stream& s) {
  std::string_view b = f.body;
  if (auto x = parse_process_exit(b)) {
    Event e = make_event(EventKind::kProcessExit, line, f);
    // slurmstepd's stop names its time ("... CANCELLED AT 2025-06-12T09:55:09
    // ***") on a line that has none of its own: it orders the stop against
    // the failures before it.
    constexpr std::string_view kCancelledAt = "CANCELLED AT ";
    frame::Timestamp stopped;
    if (x->source == "slurmstepd" && !f.ts.valid() && x->message.starts_with(kCancelledAt) &&
        frame::parse_date_time(std::string_view(x->message).substr(kCancelledAt.size()), stopped) > 0) {
      e.ts_us = stopped.to_us();
      e.ts_has_year = stopped.has_year();
    }
    if (x->rank >= 0 && (x->source == "srun" || x->source == "mpirun")) e.rank = x->rank;
    if (!x->host.empty()) e.host = x->host;
    if (x->local_rank >= 0 && e.local_rank < 0 && x->source != "deepspeed") e.local_rank = x->local_rank;
    e.detail = *x;
    push(std::move(e), s);
    return true;
  }
  if (auto sig = parse_signal_sent(b)) {
    Event e = make_event(EventKind::kSignalSent, line, f);
    e.detail = *sig;
    push(std::move(e), s);
    return true;
  }
  std::string_view t = util::trim(b);
  if (t.ends_with("ChildFailedError:") || t == "Failures:") {
    summary_ = std::make_unique<Summary>();
    summary_->first_line = line.line_no;
    // The header opens the block but is kept as its own line: a paste cut
    // right after it still shows that torchrun reported a failure.
    return false;
  }
  if (opens_summary_midway(t)) {
    // A paste cut inside the block: its own fields say what it is. The
    // section header, like the block's, stays a line of its own.
    summary_ = std::make_unique<Summary>();
    summary_->first_line = line.line_no;
    if (t.starts_with("Root Cause")) {
      summary_->root_section = true;
      return false;
    }
    summary_->have_entry = true;
    summary_->entry.source = "elastic_summary";
    return continue_summary(line, f, s);
  }
  return false;
}

// torchrun's failure summary (elastic/multiprocessing/errors) lays out each
// failure as "  rank      : 3 (local_rank: 3)", "  exitcode  : -11 (pid: 42)",
// "  time      : 2024-01-02_03:04:05" under "Root Cause (first observed
// failure):". Those shapes are its own, so a paste that begins inside the
// block is still read as one; "host" and "error_file" alone are too plain.
bool FileRecognizer::opens_summary_midway(std::string_view t) {
  if (t == "Root Cause (first observed failure):") return true;
  // The expression is anchored: a line that starts otherwise need not run it.
  if (!t.starts_with("rank") && !t.starts_with("exitcode") && !t.starts_with("time")) return false;
  static const RE2 field(R"(^(?:rank\s*: -?\d+ \(local_rank: -?\d+\)|exitcode\s*: -?\d+ \(pid: \d+\)|)"
                         R"(time\s*: \d{4}-\d\d-\d\d_\d\d:\d\d:\d\d)$)");
  return RE2::FullMatch(sp(t), field);
}

bool FileRecognizer::continue_event(const PhysicalLine& line, const Frame& f, Stream& s) {
  std::string_view b = f.body;
  std::string_view t = util::trim_left(b);
  if (expect_last_error_) {
    expect_last_error_ = false;
    if (attach_to_last(s, line, b)) return true;
  }
  if (auto d = parse_desync_line(t)) {
    if (Event* e = event_at(last_desync_); e != nullptr && attach(last_desync_, line, b)) {
      auto& report = std::get<DesyncReport>(e->detail);
      if (report.lagging_ranks.empty()) {
        report.lagging_ranks = d->lagging_ranks;
        report.kind = d->kind;
      }
      return true;
    }
  }
  if (starts(b, "\t") && last_desync_ >= 0 && attach(last_desync_, line, b)) return true;
  if (looks_like_continuation(b)) {
    if (starts(t, "Last error:") && util::trim(t) == "Last error:") expect_last_error_ = true;
    return attach_to_last(s, line, b);
  }
  return false;
}

UnparsedLine FileRecognizer::make_line(const PhysicalLine& line, const Frame& f, size_t max_text) const {
  UnparsedLine u;
  u.line_no = line.line_no;
  u.byte_offset = line.byte_offset;
  if (f.ts.valid()) {
    u.ts_us = f.ts.to_us();
    u.ts_has_year = f.ts.has_year();
  }
  u.host = std::string(f.host);
  u.rank = f.rank >= 0 ? f.rank : hints_.rank.value_or(-1);
  u.local_rank = f.local_rank >= 0 ? f.local_rank : hints_.local_rank.value_or(-1);
  u.pid = f.pid;
  u.severity = f.severity;
  u.text = std::string(util::clip(f.body, max_text));
  return u;
}

void FileRecognizer::keep_unparsed(const PhysicalLine& line, const Frame& f) {
  ++counts_.unparsed;
  UnparsedLine u = make_line(line, f, kMaxUnparsedBytes);
  if (u.host.empty()) {
    if (auto d = parse_declared_host(f.body)) {
      u.host = d->host;
      if (u.pid < 0) u.pid = d->pid;
      if (u.rank < 0) u.rank = d->rank;
    }
  }
  u.producer = frame::producer_name(f.producer);
  rows_.unparsed.push_back(std::move(u));
}

void FileRecognizer::finish() {
  for (auto& [key, stream] : streams_)
    if (stream.block) close_traceback(stream);
  if (summary_ && summary_->have_entry) {
    Stream& s = streams_[std::string()];
    Event e;
    e.kind = EventKind::kProcessExit;
    e.line_no = e.end_line = summary_->first_line;
    fill_summary_entry_event(e, summary_->entry);
    push(std::move(e), s);
  }
  summary_.reset();
}

void FileRecognizer::drain(Rows& out, bool final) {
  // Events stay while a later line may still attach to them; after finish()
  // (or far behind the current line) they are final.
  auto move_all = [](auto& from, auto& to) {
    if (to.empty()) {
      to.swap(from);
    } else {
      to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
      from.clear();
    }
  };
  move_all(rows_.collectives, out.collectives);
  move_all(rows_.unparsed, out.unparsed);
  constexpr size_t kKeepOpen = 512;
  size_t keep = final ? 0 : std::min(kKeepOpen, rows_.events.size());
  if (rows_.events.size() > keep) {
    size_t n = rows_.events.size() - keep;
    out.events.insert(out.events.end(), std::make_move_iterator(rows_.events.begin()),
                      std::make_move_iterator(rows_.events.begin() + static_cast<long>(n)));
    rows_.events.erase(rows_.events.begin(), rows_.events.begin() + static_cast<long>(n));
    drained_events_ += static_cast<int64_t>(n);
  }
}

}  // namespace ncclpm::recognize
