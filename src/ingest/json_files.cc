// src/ingest/json_files.cc
//
// JSON documents a crashed job leaves: torchelastic's error.json (log-formats
// C.4) and Flight Recorder dumps in JSON (B.10). Both become typed rows.
#include <simdjson.h>

#include <cmath>

#include "file_parser.h"
#include "ncclpm/read/line_reader.h"
#include "ncclpm/read/pickle.h"
#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/util/text.h"

namespace ncclpm::ingest {
namespace {

using simdjson::dom::element;

std::string str(element e, const char* key) {
  std::string_view s;
  if (e[key].get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  return {};
}

int64_t num(element e, const char* key, int64_t fallback = -1) {
  element v;
  if (e[key].get(v) != simdjson::SUCCESS) return fallback;
  int64_t i = 0;
  if (v.get_int64().get(i) == simdjson::SUCCESS) return i;
  // A float, or an integer past int64 (read as a double): only what fits is a
  // number here; the conversion of anything else is undefined.
  constexpr double kTwoTo63 = 9223372036854775808.0;
  double d = 0;
  if (v.get_double().get(d) == simdjson::SUCCESS)
    return std::isfinite(d) && d >= -kTwoTo63 && d < kTwoTo63 ? static_cast<int64_t>(d) : fallback;
  std::string_view s;  // pg_status values are strings in JSON dumps
  if (v.get_string().get(s) == simdjson::SUCCESS) {
    if (auto p = util::parse_int(s)) return *p;
  }
  return fallback;
}

int64_t count_lines(const std::string& content) {
  if (content.empty()) return 0;
  int64_t n = static_cast<int64_t>(std::count(content.begin(), content.end(), '\n'));
  return content.back() == '\n' ? n : n + 1;
}

recognize::Event document_event(recognize::EventKind kind, const discover::DiscoveredFile& file,
                                int64_t lines) {
  recognize::Event e;
  e.kind = kind;
  e.line_no = 1;
  e.end_line = std::max<int64_t>(1, lines);
  e.rank = file.hints.rank.value_or(-1);
  e.local_rank = file.hints.local_rank.value_or(-1);
  return e;
}

// "[[4096, 1024]]" -> 4194304: elements summed over tensors. -1 (not known)
// where the sizes are no shapes: a negative dimension, or a count past int64
// (a damaged or hostile dump; found by fuzzing).
int64_t numel(element sizes) {
  simdjson::dom::array tensors;
  if (sizes.get_array().get(tensors) != simdjson::SUCCESS) return -1;
  int64_t total = 0;
  for (element t : tensors) {
    simdjson::dom::array dims;
    if (t.get_array().get(dims) != simdjson::SUCCESS) continue;
    int64_t n = 1;
    for (element d : dims) {
      int64_t v = 0;
      if (d.get_int64().get(v) != simdjson::SUCCESS) continue;
      if (v < 0 || __builtin_mul_overflow(n, v, &n)) return -1;
    }
    if (__builtin_add_overflow(total, n, &total)) return -1;
  }
  return total;
}

std::string to_json_text(element e) { return simdjson::minify(e); }

}  // namespace

bool parse_elastic_error(const discover::DiscoveredFile& file, const std::string& content, Batch& batch) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(content).get(doc) != simdjson::SUCCESS) return false;
  element message;
  if (doc["message"].get(message) != simdjson::SUCCESS) return false;
  recognize::ProcessExit exit;
  exit.source = "error_json";
  exit.rank = file.hints.rank.value_or(-1);
  exit.local_rank = file.hints.local_rank.value_or(-1);
  int64_t timestamp = -1;
  std::string_view plain;
  if (message.get_string().get(plain) == simdjson::SUCCESS) {  // newer "message as str" form
    exit.message = std::string(plain);
    timestamp = num(doc, "timestamp");
  } else {
    exit.message = str(message, "message");
    element extra;
    if (message["extraInfo"].get(extra) == simdjson::SUCCESS) timestamp = num(extra, "timestamp");
    int64_t code = num(message, "errorCode", INT64_MIN);
    if (code != INT64_MIN) exit.exit_code = code;
  }
  int64_t lines = count_lines(content);
  recognize::Event e = document_event(recognize::EventKind::kProcessExit, file, lines);
  e.severity = 'E';
  e.text = exit.message;
  if (timestamp > 0) {
    e.ts_us = timestamp * 1000000;
    e.ts_has_year = true;
  }
  // "<ExcType>: <str(e)>" is also the exception the worker died of.
  recognize::Traceback tb;
  size_t colon = exit.message.find(": ");
  tb.exc_type = exit.message.substr(0, colon);
  if (colon != std::string::npos) tb.exc_message = exit.message.substr(colon + 2);
  recognize::Event t = e;
  t.kind = recognize::EventKind::kTraceback;
  t.detail = tb;
  e.detail = exit;
  batch.rows.events.push_back(std::move(e));
  if (!tb.exc_type.empty() && tb.exc_type.find(' ') == std::string::npos)
    batch.rows.events.push_back(std::move(t));
  batch.outcome.counts.read = lines;
  batch.outcome.counts.recognized = lines;
  batch.outcome.counts.bytes = static_cast<int64_t>(content.size());
  return true;
}

bool parse_flight_recorder(const discover::DiscoveredFile& file, const std::string& content, Batch& batch) {
  simdjson::dom::parser parser;
  element doc;
  if (parser.parse(content).get(doc) != simdjson::SUCCESS) return false;
  simdjson::dom::array entries;
  if (doc["entries"].get_array().get(entries) != simdjson::SUCCESS) return false;
  int rank = file.hints.rank.value_or(static_cast<int>(num(doc, "rank")));
  simdjson::dom::object pg_config;
  bool have_config = doc["pg_config"].get_object().get(pg_config) == simdjson::SUCCESS;
  for (element entry : entries) {
    recognize::FlightRecorderEntry r;
    r.rank = rank;
    r.pg_id = std::to_string(num(entry, "pg_id"));
    element pg;
    if (entry["process_group"].get(pg) == simdjson::SUCCESS) {
      simdjson::dom::array names;
      if (pg.get_array().get(names) == simdjson::SUCCESS) {
        std::string_view name, desc;
        if (names.at(0).get_string().get(name) == simdjson::SUCCESS) r.pg_name = std::string(name);
        if (names.at(1).get_string().get(desc) == simdjson::SUCCESS) r.pg_desc = std::string(desc);
      }
    }
    r.record_id = num(entry, "record_id");
    r.collective_seq_id = num(entry, "collective_seq_id", num(entry, "seq_id"));
    r.p2p_seq_id = num(entry, "p2p_seq_id");
    r.op_id = num(entry, "op_id");
    r.profiling_name = str(entry, "profiling_name");
    r.op = vocab::canonical_op(r.profiling_name);
    bool b = false;
    if (entry["is_p2p"].get_bool().get(b) == simdjson::SUCCESS) r.is_p2p = b;
    if (entry["retired"].get_bool().get(b) == simdjson::SUCCESS) r.retired = b;
    r.state = str(entry, "state");
    element v;
    if (entry["input_sizes"].get(v) == simdjson::SUCCESS) {
      r.input_sizes = to_json_text(v);
      r.numel_in = numel(v);
    }
    if (entry["output_sizes"].get(v) == simdjson::SUCCESS) {
      r.output_sizes = to_json_text(v);
      r.numel_out = numel(v);
    }
    if (entry["input_dtypes"].get(v) == simdjson::SUCCESS) {
      r.input_dtypes = to_json_text(v);
      std::string_view first;
      if (v.at(0).get_string().get(first) == simdjson::SUCCESS) {
        if (auto t = vocab::datatype_from_torch(first)) r.datatype = *t;
      }
    }
    if (entry["output_dtypes"].get(v) == simdjson::SUCCESS) r.output_dtypes = to_json_text(v);
    r.timeout_ms = num(entry, "timeout_ms");
    r.time_created_ns = num(entry, "time_created_ns");
    double d = -1;
    if (entry["duration_ms"].get_double().get(d) == simdjson::SUCCESS) r.duration_ms = d;
    if (have_config) {
      element cfg;
      if (pg_config[r.pg_name].get(cfg) == simdjson::SUCCESS && r.pg_desc.empty())
        r.pg_desc = str(cfg, "desc");
    }
    batch.fr_entries.push_back(std::move(r));
  }
  simdjson::dom::object status;
  if (doc["pg_status"].get_object().get(status) == simdjson::SUCCESS) {
    for (auto [key, value] : status) {
      recognize::FlightRecorderPgStatus s;
      s.rank = rank;
      s.pg_id = std::string(key);
      s.last_enqueued = num(value, "last_enqueued_collective");
      s.last_started = num(value, "last_started_collective");
      s.last_completed = num(value, "last_completed_collective");
      batch.fr_status.push_back(std::move(s));
    }
  }
  int64_t lines = count_lines(content);
  recognize::Event e = document_event(recognize::EventKind::kFlightRecorder, file, lines);
  e.rank = rank;
  e.text = "Flight Recorder dump version " + str(doc, "version") + ": " +
           std::to_string(batch.fr_entries.size()) + " entries";
  batch.rows.events.push_back(std::move(e));
  batch.outcome.counts.read = lines;
  batch.outcome.counts.recognized = lines;
  batch.outcome.counts.bytes = static_cast<int64_t>(content.size());
  return true;
}

void parse_pickled_flight_recorder(const discover::DiscoveredFile& file, Batch& batch) {
  constexpr size_t kMaxPickleBytes = 256u << 20;
  auto fail = [&](const Error& e) {
    batch.outcome.status = "error";
    batch.outcome.problem = "Flight Recorder pickle not read: " + e.message;
  };
  auto bytes = read::read_whole(file.path, file.compression, kMaxPickleBytes);
  if (!bytes) return fail(bytes.error());
  auto json = read::pickle_to_json(*bytes);
  if (!json) return fail(json.error());
  if (!parse_flight_recorder(file, *json, batch)) return fail(Error::plain("the pickle holds no dump ('entries' missing)"));
  // A pickle has no lines: it counts as one, read whole.
  batch.outcome.counts.read = 1;
  batch.outcome.counts.recognized = 1;
  batch.outcome.counts.bytes = static_cast<int64_t>(bytes->size());
  batch.rows.events.back().end_line = 1;
}

}  // namespace ncclpm::ingest
