// src/ingest/file_parser.cc
#include "file_parser.h"

#include "ncclpm/read/line_reader.h"

namespace ncclpm::ingest {

size_t Batch::approx_bytes() const {
  size_t bytes = rows.events.size() * sizeof(recognize::Event) + rows.unparsed.size() * sizeof(recognize::UnparsedLine) +
                 rows.collectives.size() * sizeof(recognize::CollectiveCall) +
                 fr_entries.size() * sizeof(recognize::FlightRecorderEntry);
  for (const auto& e : rows.events) bytes += e.text.capacity() + e.host.capacity();
  for (const auto& u : rows.unparsed) bytes += u.text.capacity() + u.host.capacity();
  for (const auto& b : collectives.blocks) bytes += b.data.capacity();
  for (const auto& b : lines.blocks) bytes += b.data.capacity() + b.groups.size() * sizeof(store::LineGroup);
  return bytes;
}
namespace {

constexpr int64_t kMaxJsonBytes = 256ll << 20;

// The whole (decompressed) content of a JSON document.
Result<std::string> read_all(const discover::DiscoveredFile& file) {
  auto reader = read::LineReader::open(file.path, file.compression);
  if (!reader) return reader.take_error();
  std::string out;
  read::PhysicalLine line;
  while ((*reader)->next(line)) {
    out.append(line.text);
    out.push_back('\n');
    if (static_cast<int64_t>(out.size()) > kMaxJsonBytes)
      return Error::at(file.path.string(), "JSON document larger than 256 MiB");
  }
  if ((*reader)->stream_error()) return *(*reader)->stream_error();
  return out;
}

}  // namespace

void parse_file(const discover::DiscoveredFile& file, size_t file_index, int64_t file_id,
                const std::atomic<bool>* cancel, const EmitBatch& emit) {
  Batch batch;
  batch.file_index = file_index;
  batch.file_id = file_id;
  batch.final = true;
  using discover::FileKind;
  switch (file.kind) {
    case FileKind::kBinary:
      batch.outcome.status = "skipped";
      batch.outcome.problem = file.skip_reason;
      break;
    case FileKind::kUnreadable:
      batch.outcome.status = "error";
      batch.outcome.problem = file.skip_reason;
      break;
    case FileKind::kEmpty:
      break;
    case FileKind::kElasticError:
    case FileKind::kFlightRecorder: {
      auto content = read_all(file);
      bool parsed = content && (file.kind == FileKind::kElasticError
                                    ? parse_elastic_error(file, *content, batch)
                                    : parse_flight_recorder(file, *content, batch));
      if (!parsed) {
        // Keep every line as text so nothing is lost, and say why.
        batch = Batch{};
        batch.file_index = file_index;
        batch.file_id = file_id;
        batch.final = true;
        parse_text_file(file, batch, cancel, emit);
        if (batch.outcome.problem.empty())
          batch.outcome.problem = content ? std::string("not valid ") + discover::file_kind_name(file.kind) +
                                                ": kept as text lines"
                                          : content.error().message;
        if (batch.outcome.status == "ok") batch.outcome.status = "partial";
      }
      break;
    }
    case FileKind::kFlightRecorderPickle:
      parse_pickled_flight_recorder(file, batch);
      break;
    case FileKind::kTextLog:
    case FileKind::kJsonLines:
      parse_text_file(file, batch, cancel, emit);
      break;
  }
  batch.events = static_cast<int64_t>(batch.rows.events.size());
  emit(std::move(batch));
}

}  // namespace ncclpm::ingest
