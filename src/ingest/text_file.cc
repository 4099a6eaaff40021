// src/ingest/text_file.cc
//
// Text logs (and JSON lines): read, frame, recognize, line by line, in order.
#include <simdjson.h>

#include "file_parser.h"
#include "line_mender.h"
#include "ncclpm/frame/framer.h"
#include "ncclpm/read/line_reader.h"

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

  // Wrapped and glued lines are mended before the recognizer sees them.
  LineMender mender(framer, [&](const read::PhysicalLine& l, const frame::Frame& f, int rows) {
    recognizer.feed(l, f, rows);
  });
  if (!json_lines) mender.set_terminal_wrap(learn_terminal_wrap(views, framer));
  auto feed = [&](const read::PhysicalLine& l) {
    if (json_lines && parse_json_record(l.text, json_parser, record)) {
      mender.finish();  // what it holds came first
      frame::Frame f = framer.frame(record.message);
      if (f.rank < 0 && record.rank >= 0) f.rank = static_cast<int>(record.rank);
      if (f.host.empty() && !record.host.empty()) f.host = record.host;
      recognizer.feed(l, f);
      return;
    }
    mender.add(l);
  };
  // COLL lines are encoded here, on the parsing thread, as they are read:
  // the writer then stores a few blobs instead of a row per line.
  store::CollectiveEncoder collectives;
  recognizer.set_collective_sink([&](const recognize::CollectiveLine& c) { collectives.add(c); });
  // So are the lines no parser typed, the progress lines and NCCL's channel
  // and transport lines, into compressed blocks, with the progress streams
  // tallied.
  store::LineSink lines;
  recognizer.set_progress_sink(
      [&](const recognize::UnparsedLine& u, const recognize::TrainingProgress& p) { lines.add_progress(u, p); });
  recognizer.set_setup_line_sink(
      [&](recognize::EventKind kind, const recognize::UnparsedLine& u) { lines.add_setup_line(kind, u); });
  auto drain = [&](bool final) {
    recognizer.drain(batch.rows, final);
    lines.add(batch.rows);
  };
  auto pending = [&] {
    return batch.rows.size() + static_cast<size_t>(collectives.pending_rows() + lines.pending_rows());
  };
  auto flush = [&](bool final) {
    drain(final);
    batch.events = static_cast<int64_t>(batch.rows.events.size());
    batch.collectives = collectives.take();
    batch.lines = lines.take_lines();
    if (final) {
      batch.progress_streams = lines.take_streams();
      return;  // the caller emits the final batch with the outcome
    }
    Batch part;
    part.file_index = batch.file_index;
    part.file_id = batch.file_id;
    part.events = batch.events;
    part.rows = std::move(batch.rows);
    part.collectives = std::move(batch.collectives);
    part.lines = std::move(batch.lines);
    batch.rows = recognize::Rows{};
    batch.collectives = store::EncodedCollectives{};
    batch.lines = store::EncodedLines{};
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
  mender.finish();
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
