// fuzz/targets.cc
#include "targets.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "ingest/file_parser.h"
#include "ncclpm/discover/discover.h"
#include "ncclpm/frame/framer.h"
#include "ncclpm/read/pickle.h"
#include "ncclpm/rules/rule_set.h"

namespace ncclpm::fuzz {
namespace {

namespace fs = std::filesystem;

// One scratch directory per process, in memory where the system has one:
// the targets go through real files because that is what ingest reads.
const fs::path& scratch() {
  static const fs::path dir = [] {
    fs::path base = fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
    std::string templ = (base / "ncclpm-fuzz-XXXXXX").string();
    if (::mkdtemp(templ.data()) == nullptr) std::abort();
    return fs::path(templ);
  }();
  return dir;
}

fs::path write(const std::string& name, std::string_view bytes) {
  fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p;
}

// Discovers and parses one file as ingest would, dropping the rows.
void parse_as(const std::string& name, std::string_view bytes) {
  auto found = discover::discover({write(name, bytes)});
  if (!found) return;
  for (const discover::DiscoveredFile& file : found->files)
    ingest::parse_file(file, 0, 1, nullptr, [](ingest::Batch&&) {});
}

}  // namespace

void text_log(std::string_view bytes) { parse_as("rank3.log", bytes); }

void elastic_error(std::string_view bytes) { parse_as("error.json", bytes); }

// The Flight Recorder JSON reader itself. Through discovery, a mutated
// document that is no longer JSON goes the text path (kept as lines, so
// nothing is lost), which text_log fuzzes: that took 59% of this target's
// time in a profile, its JSON reader 0.2%, at about 150 runs a second.
void flight_recorder(std::string_view bytes) {
  discover::DiscoveredFile file;
  file.rel_path = "nccl_trace_rank_0.json";
  file.kind = discover::FileKind::kFlightRecorder;
  ingest::Batch batch;
  (void)ingest::parse_flight_recorder(file, std::string(bytes), batch);
}

void flight_recorder_pickle(std::string_view bytes) {
  (void)read::pickle_to_json(bytes);
  parse_as("nccl_trace_rank_0", bytes);
}

void rules_file(std::string_view bytes) {
  fs::path dir = scratch() / "rules";
  fs::create_directories(dir);
  write("rules/fuzzed.toml", bytes);
  (void)rules::RuleSet::load({dir});
}

void framer_lines(std::string_view bytes) {
  std::vector<std::string_view> lines;
  size_t at = 0;
  while (at <= bytes.size() && lines.size() < 4096) {
    size_t end = bytes.find('\n', at);
    if (end == std::string_view::npos) end = bytes.size();
    lines.push_back(bytes.substr(at, end - at));
    at = end + 1;
  }
  frame::Framer framer;
  framer.learn_launcher(std::vector<std::string_view>(lines.begin(), lines.begin() + std::min<size_t>(lines.size(), 64)));
  for (std::string_view line : lines) (void)framer.frame(line);
}

const std::vector<Target>& targets() {
  static const std::vector<Target> all = {{"text_log", text_log},
                                          {"elastic_error", elastic_error},
                                          {"flight_recorder", flight_recorder},
                                          {"flight_recorder_pickle", flight_recorder_pickle},
                                          {"rules_file", rules_file},
                                          {"framer_lines", framer_lines}};
  return all;
}

}  // namespace ncclpm::fuzz
