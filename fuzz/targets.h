// fuzz/targets.h
//
// What the fuzzers feed: each target takes any bytes and must neither crash,
// leak, hang nor hit undefined behaviour. The libFuzzer entry points
// (fuzz/entry.cc, built by scripts/fuzz.sh) and the regression test
// (tests/fuzz/regressions_test.cc, run by the ordinary suite over the inputs
// under tests/fuzz-inputs/) call the same functions.
#pragma once

#include <string_view>
#include <vector>

namespace ncclpm::fuzz {

/// A log file as a job leaves it, perhaps gzip or zstd compressed: discovery
/// (classification, compression sniffing), decompression, framing with every
/// launcher and collector prefix, every recognizer and the multi-line joiner.
void text_log(std::string_view bytes);
/// A torchelastic error.json.
void elastic_error(std::string_view bytes);
/// A Flight Recorder dump in its JSON form.
void flight_recorder(std::string_view bytes);
/// A Flight Recorder dump as PyTorch writes it by default: a pickle, through
/// the pickle machine and then discovery and parsing as a dump file.
void flight_recorder_pickle(std::string_view bytes);
/// A rules/*.toml file: the TOML reader, the rule checks, the patterns.
void rules_file(std::string_view bytes);
/// Lines straight into the framer, the first ones also teaching it the
/// launcher format: no file I/O, so the most executions per second.
void framer_lines(std::string_view bytes);

struct Target {
  const char* name;
  void (*run)(std::string_view);
};
const std::vector<Target>& targets();

}  // namespace ncclpm::fuzz
