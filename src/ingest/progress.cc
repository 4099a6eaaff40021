// src/ingest/progress.cc
#include <cstdio>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/util/text.h"

namespace ncclpm::ingest {
namespace {

constexpr double kEtaAfterSeconds = 3;  // before that the rate says little

std::string duration_words(double s) {
  if (s < 60) return std::to_string(static_cast<int>(s + 0.5)) + " s";
  if (s < 3600) return std::to_string(static_cast<int>(s / 60 + 0.5)) + " min";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

}  // namespace

std::string progress_text(const Progress& p, double elapsed_s) {
  char head[160];
  std::snprintf(head, sizeof head, "ingesting: %lld/%lld files, %.1f/%.1f MB, ", static_cast<long long>(p.files_done),
                static_cast<long long>(p.files_total), static_cast<double>(p.bytes_done) / 1e6,
                static_cast<double>(p.bytes_total) / 1e6);
  std::string text = head + util::with_commas(p.lines) + " lines";
  if (!p.finished() && elapsed_s >= kEtaAfterSeconds && p.bytes_done > 0 && p.bytes_total > p.bytes_done) {
    double left = elapsed_s * static_cast<double>(p.bytes_total - p.bytes_done) / static_cast<double>(p.bytes_done);
    text += ", about " + duration_words(left) + " left";
  }
  return text;
}

bool ProgressThrottle::due(const Progress& p, double elapsed_s) {
  if (!p.finished() && last_s_ >= 0 && elapsed_s - last_s_ < interval_s_) return false;
  last_s_ = elapsed_s;
  return true;
}

}  // namespace ncclpm::ingest
