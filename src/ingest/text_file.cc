// src/ingest/text_file.cc
//
// Text logs (and JSON lines): read, frame, recognize, line by line, in order.
#include <simdjson.h>

#include "file_parser.h"
#include "ncclpm/frame/framer.h"
#include "ncclpm/read/line_reader.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::ingest {
namespace {

constexpr size_t kSampleLines = 200;      // lines looked at to learn the launcher format
constexpr size_t kBatchRows = 1 << 14;    // rows handed to the writer at a time (a few MB)
constexpr int64_t kCancelCheckLines = 4096;

// A JSON log record: its message is framed like a text line (it may carry
// prefixes of its own); rank and host fields fill in what the prefixes lack.
struct JsonRecord {
  std::string message, host;
  int64_t rank = -1;
};

bool parse_json_record(std::string_view line, simdjson::ondemand::parser& parser, JsonRecord& out) {
  simdjson::padded_string padded(line);
  simdjson::ondemand::document doc;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS) return false;
  simdjson::ondemand::object obj;
  if (doc.get_object().get(obj) != simdjson::SUCCESS) return false;
  out = JsonRecord{};
  bool have_message = false;
  for (auto field : obj) {
    std::string_view key;
    if (field.unescaped_key().get(key) != simdjson::SUCCESS) return false;
    simdjson::ondemand::value v = field.value();
    if (key == "message" || key == "msg" || key == "log" || key == "text") {
      std::string_view s;
      if (v.get_string().get(s) == simdjson::SUCCESS) {
        out.message = std::string(s);
        while (!out.message.empty() && out.message.back() == '\n') out.message.pop_back();
        have_message = true;
      }
    } else if (key == "rank") {
      int64_t r = -1;
      if (v.get_int64().get(r) == simdjson::SUCCESS) out.rank = r;
    } else if (key == "host" || key == "hostname") {
      std::string_view s;
      if (v.get_string().get(s) == simdjson::SUCCESS) out.host = std::string(s);
    }
  }
  return have_message;
}

}  // namespace

void parse_text_file(const discover::DiscoveredFile& file, Batch& batch,
                     const std::atomic<bool>* cancel, const EmitBatch& emit) {
  auto reader = read::LineReader::open(file.path, file.compression);
  if (!reader) {
    batch.outcome.status = "error";
    batch.outcome.problem = reader.error().message;
    return;
  }
  // Learn the launcher format from the first lines, then frame them.
  std::vector<std::string> sample_text;
  std::vector<read::PhysicalLine> sample;
  read::PhysicalLine line;
  while (sample.size() < kSampleLines && (*reader)->next(line)) {
    sample_text.emplace_back(line.text);
    sample.push_back(line);
  }
  std::vector<std::string_view> views(sample_text.begin(), sample_text.end());
  frame::Framer framer;
  framer.learn_launcher(views);
  batch.outcome.launcher = framer.launcher() == frame::LauncherFormat::kSlurmLabel ? "slurm_label"
                           : framer.launcher() == frame::LauncherFormat::kPdsh     ? "pdsh"
                                                                                  : "";
  recognize::FileRecognizer recognizer(file.hints);
  bool json_lines = file.kind == discover::FileKind::kJsonLines;
  simdjson::ondemand::parser json_parser;
  JsonRecord record;

  // A WorkNCCL record hard-wrapped mid-token ("...SeqNum=9713, OpT" / "ype=...")
  // is held back one line and rejoined when the next line has no prefix.
  std::optional<read::PhysicalLine> held;
  std::string held_text;
  auto feed_one = [&](const read::PhysicalLine& l) {
    if (json_lines && parse_json_record(l.text, json_parser, record)) {
      frame::Frame f = framer.frame(record.message);
      if (f.rank < 0 && record.rank >= 0) f.rank = static_cast<int>(record.rank);
      if (f.host.empty() && !record.host.empty()) f.host = record.host;
      recognizer.feed(l, f);
      return;
    }
    frame::Frame f = framer.frame(l.text);
    read::PhysicalLine rest = l;
    if (f.glued_at > 0) {
      // Another stream's progress bar ends where this log line begins: two
      // log lines that lost the newline between them. The bar is a line of
      // its own rank; both keep the physical line's number and count as read.
      read::PhysicalLine bar = l;
      bar.text = l.text.substr(0, f.glued_at);
      bar.full_bytes = static_cast<int64_t>(bar.text.size()) - 1;  // its missing newline is counted
      bar.oversized = false;
      rest.text = l.text.substr(f.glued_at);
      rest.byte_offset += static_cast<int64_t>(f.glued_at);
      rest.full_bytes -= bar.full_bytes + 1;
      recognizer.feed(bar, framer.frame(bar.text));
      f = framer.frame(rest.text);
    }
    // WorkNCCL records come from PyTorch, never from NCCL's own (high-volume) lines.
    if (f.producer != frame::Producer::kNccl && f.body.find("WorkNCCL(") != std::string_view::npos &&
        !recognize::parse_work_record(f.body)) {
      held = rest;
      held_text.assign(rest.text);
      held->text = held_text;
      return;
    }
    recognizer.feed(rest, f);
  };
  auto feed = [&](const read::PhysicalLine& l) {
    if (held) {
      read::PhysicalLine first = *held;
      held.reset();
      bool continues = !framer.frame(l.text).had_prefix;
      if (continues) {
        std::string joined = held_text + std::string(l.text);
        frame::Frame f = framer.frame(joined);
        if (recognize::parse_work_record(f.body)) {
          read::PhysicalLine both = first;
          both.text = joined;
          both.full_bytes = static_cast<int64_t>(joined.size());
          recognizer.feed(both, f, 2);
          return;
        }
      }
      recognizer.feed(first, framer.frame(first.text));
    }
    feed_one(l);
  };
  // COLL lines are encoded here, on the parsing thread, as they are read:
  // the writer then stores a few blobs instead of a row per line.
  store::CollectiveEncoder collectives;
  recognizer.set_collective_sink([&](const recognize::CollectiveLine& c) { collectives.add(c); });
  auto drain = [&](bool final) { recognizer.drain(batch.rows, final); };
  auto pending = [&] { return batch.rows.size() + static_cast<size_t>(collectives.pending_rows()); };
  auto flush = [&](bool final) {
    drain(final);
    batch.events = static_cast<int64_t>(batch.rows.events.size());
    batch.collectives = collectives.take();
    if (final) return;  // the caller emits the final batch with the outcome
    Batch part;
    part.file_index = batch.file_index;
    part.file_id = batch.file_id;
    part.events = batch.events;
    part.rows = std::move(batch.rows);
    part.collectives = std::move(batch.collectives);
    batch.rows = recognize::Rows{};
    batch.collectives = store::EncodedCollectives{};
    emit(std::move(part));
  };

  for (size_t i = 0; i < sample.size(); ++i) {
    sample[i].text = sample_text[i];
    feed(sample[i]);
  }
  int64_t since_check = 0;
  while ((*reader)->next(line)) {
    feed(line);
    if (++since_check < kCancelCheckLines) continue;
    since_check = 0;
    if (cancel != nullptr && cancel->load()) break;
    drain(false);
    if (pending() >= kBatchRows) flush(false);
  }
  if (held) {
    read::PhysicalLine last = *held;
    held.reset();
    recognizer.feed(last, framer.frame(last.text));
  }
  recognizer.finish();
  flush(true);
  batch.outcome.counts = recognizer.counts();
  if ((*reader)->stream_error()) {
    batch.outcome.status = "partial";
    batch.outcome.problem = (*reader)->stream_error()->message;
  }
  if (batch.outcome.counts.oversized > 0 && batch.outcome.problem.empty()) {
    batch.outcome.problem = std::to_string(batch.outcome.counts.oversized) +
                            " line(s) longer than 4 MiB: only their first 4 MiB were examined";
  }
}

}  // namespace ncclpm::ingest
