// src/report/text_report.cc
//
// The terminal report: the verdict first, then each root cause with its
// culprits, collective, evidence and advice; symptoms in one line each.
#include <algorithm>
#include <sstream>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/report/report.h"
#include "ncclpm/util/text.h"

namespace ncclpm::report {
namespace {

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

void write_collective(std::ostream& out, const diagnose::CollectiveRef& c, bool years_known) {
  out << "  collective: " << (c.op_type.empty() ? "?" : c.op_type);
  if (c.seq >= 0) out << " seq " << c.seq;
  if (!c.pg.empty()) out << " (pg " << c.pg << ")";
  if (c.numel_in >= 0) out << ", NumelIn " << util::with_commas(c.numel_in);
  if (c.numel_out >= 0) out << ", NumelOut " << util::with_commas(c.numel_out);
  out << ", dtype " << (c.dtype.empty() ? "unknown" : c.dtype);
  if (c.timeout_ms >= 0) out << ", timeout " << c.timeout_ms / 1000 << " s";
  if (c.hang_start_us != 0) out << ", hanging since " << format_time(c.hang_start_us, years_known);
  out << "\n";
}

void write_finding(std::ostream& out, const diagnose::Finding& f, int index, const RenderOptions& o,
                   bool years_known) {
  out << "[" << index << "] " << (f.root_cause ? "ROOT CAUSE" : "symptom") << "  " << f.category << "  ("
      << f.rule << ", " << f.severity << ", confidence " << static_cast<int>(f.confidence * 100 + 0.5)
      << "%)\n";
  out << "  " << f.summary << "\n";
  if (!f.culprit_ranks.empty()) {
    out << "  culprit: " << (f.culprit_ranks.size() == 1 ? "rank " : "ranks ") << util::rank_ranges(f.culprit_ranks);
    if (!f.culprit_hosts.empty()) out << " on " << join(f.culprit_hosts);
    out << "\n";
  }
  if (f.collective) write_collective(out, *f.collective, years_known);
  if (!f.evidence.empty()) out << "  evidence:\n";
  for (const auto& e : f.evidence) {
    out << "    " << e.file << ":" << e.line;
    if (e.rank >= 0) out << " [rank " << e.rank << "]";
    out << "  " << util::clip(e.text, 200) << "\n";
  }
  out << "  advice:\n" << indent(f.advice, "    ") << "\n";
  if (f.replay) out << "  test it: " << replay_command(f, o) << "\n";
  out << "\n";
}

// Ranks grouped by what they were doing when the job hung, in the order the
// groups first appear (the culprits come first in d.ranks' own order).
void write_rank_phases(std::ostringstream& out, const diagnose::Diagnosis& d) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (const auto& r : d.ranks) {
    if (r.phase.empty()) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == r.phase; });
    if (it == groups.end()) groups.push_back({r.phase, {r.rank}});
    else it->second.push_back(r.rank);
  }
  if (groups.empty()) return;
  int64_t since = 0;
  for (const auto& f : d.findings)
    if (f.collective && f.collective->hang_start_us != 0) {
      since = f.collective->hang_start_us;
      break;
    }
  out << "Ranks when the job hung" << (since != 0 ? " (" + format_time(since, d.years_known) + ")" : std::string())
      << ":\n";
  constexpr size_t kMaxGroups = 8;
  for (size_t i = 0; i < groups.size() && i < kMaxGroups; ++i)
    out << "  rank " << util::rank_ranges(groups[i].second) << ": " << groups[i].first << "\n";
  if (groups.size() > kMaxGroups) out << "  (" << groups.size() - kMaxGroups << " more; --format json lists every rank)\n";
  out << "\n";
}

}  // namespace

std::string render_text(const diagnose::Diagnosis& d, const RenderOptions& o) {
  std::ostringstream out;
  out << "ncclpm diagnosis of job " << d.job;
  if (d.world_size > 0) out << " (" << d.world_size << " ranks)";
  out << "\n\n";
  for (const auto& c : d.clock_skews) out << c.words() << "\n";
  if (!d.clock_skews.empty()) out << "\n";
  if (d.findings.empty() || !d.has_root_cause()) {
    out << "No root cause found: no known failure signature and no rank fell behind the others.\n";
    if (d.findings.empty()) return out.str();
    out << "\n";
  }
  int index = 1;
  for (const auto& f : d.findings) {
    if (!f.root_cause && !o.verbose) continue;
    write_finding(out, f, index++, o, d.years_known);
  }
  if (std::string phase = phase_at_hang_words(d); !phase.empty()) out << phase << "\n\n";
  write_rank_phases(out, d);
  if (!o.verbose) {
    bool header = false;
    for (const auto& f : d.findings) {
      if (f.root_cause) continue;
      if (!header) out << "Symptoms and cascades (diagnose --verbose shows them in full):\n";
      header = true;
      out << "  - " << f.category << " (" << f.rule << "): " << util::clip(f.summary, 220) << "\n";
    }
  }
  return out.str();
}

}  // namespace ncclpm::report
