// src/report/markdown_report.cc
//
// A postmortem document: summary, timeline, culprits, evidence, advice and
// next steps with the exact replay command.
#include <sstream>

#include "ncclpm/vocab/nccl_enums.h"
#include "ncclpm/report/report.h"
#include "ncclpm/util/text.h"

namespace ncclpm::report {
namespace {

std::string md_escape_cell(std::string s) {
  for (char& c : s)
    if (c == '|' || c == '\n') c = ' ';
  return s;
}

}  // namespace

std::string render_markdown(const diagnose::Diagnosis& d, const RenderOptions& o) {
  std::ostringstream out;
  out << "# Postmortem: " << d.job << "\n\n";
  out << "## Summary\n\n";
  const diagnose::Finding* top = nullptr;
  for (const auto& f : d.findings)
    if (f.root_cause) {
      top = &f;
      break;
    }
  if (top == nullptr) {
    out << "No root cause was found in the logs: no known failure signature fired and no rank fell "
           "behind the others.\n\n";
  } else {
    out << "**" << top->title << "** (`" << top->category << "`, rule `" << top->rule << "`, confidence "
        << static_cast<int>(top->confidence * 100 + 0.5) << "%).\n\n" << top->summary << "\n\n";
  }
  for (const auto& c : d.clock_skews) out << c.words() << "\n\n";
  if (std::string phase = phase_at_hang_words(d); !phase.empty()) out << phase << "\n\n";
  if (!d.timeline.empty()) {
    out << "## Timeline\n\n| time | rank | where | what |\n|---|---|---|---|\n";
    for (const auto& e : d.timeline)
      out << "| " << (e.ts_us ? format_time(e.ts_us, d.years_known) : "-") << " | " << (e.rank >= 0 ? std::to_string(e.rank) : "-")
          << " | `" << e.file << ":" << e.line << "` | " << md_escape_cell(std::string(util::clip(e.text, 160))) << " |\n";
    out << "\n";
  }
  if (!d.ranks.empty()) {
    out << "## Ranks\n\n| rank | host | role | last enqueued | last completed |\n|---|---|---|---|---|\n";
    for (const auto& r : d.ranks)
      out << "| " << r.rank << " | " << (r.host.empty() ? "-" : r.host) << " | " << r.role << " | "
          << (r.last_enqueued >= 0 ? std::to_string(r.last_enqueued) : "-") << " | "
          << (r.last_completed >= 0 ? std::to_string(r.last_completed) : "-") << " |\n";
    out << "\n";
  }
  out << "## Findings\n\n";
  int index = 1;
  for (const auto& f : d.findings) {
    out << "### " << index++ << ". " << f.title << (f.root_cause ? " (root cause)" : " (symptom)") << "\n\n";
    out << "- category: `" << f.category << "`, rule `" << f.rule << "`, severity " << f.severity
        << ", confidence " << static_cast<int>(f.confidence * 100 + 0.5) << "%\n";
    if (!f.culprit_ranks.empty()) {
      out << "- culprit ranks: ";
      for (size_t i = 0; i < f.culprit_ranks.size(); ++i) out << (i ? ", " : "") << f.culprit_ranks[i];
      out << "\n";
    }
    if (!f.culprit_hosts.empty()) {
      out << "- culprit hosts: ";
      for (size_t i = 0; i < f.culprit_hosts.size(); ++i) out << (i ? ", " : "") << f.culprit_hosts[i];
      out << "\n";
    }
    if (f.collective) {
      const auto& c = *f.collective;
      out << "- collective: `" << c.op_type << "` seq " << c.seq << ", NumelIn " << c.numel_in << ", NumelOut "
          << c.numel_out << ", dtype " << (c.dtype.empty() ? "unknown" : c.dtype) << ", timeout "
          << c.timeout_ms << " ms" << (c.hang_start_us ? ", hanging since " + format_time(c.hang_start_us, d.years_known) : "") << "\n";
    }
    out << "\n" << f.summary << "\n\nEvidence:\n\n```\n";
    for (const auto& e : f.evidence) out << e.file << ":" << e.line << ": " << util::clip(e.text, 300) << "\n";
    out << "```\n\nAdvice:\n\n" << f.advice << "\n\n";
  }
  out << "## Next steps\n\n";
  bool any = false;
  for (const auto& f : d.findings) {
    if (!f.replay) continue;
    any = true;
    out << "- Test the fabric with the same collective: `" << replay_command(f, o) << "` (or `"
        << f.replay->nccl_tests_command() << "`).\n";
    break;
  }
  out << "- Next run: `NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL` and `TORCH_NCCL_TRACE_BUFFER_SIZE=2000 "
         "TORCH_NCCL_DUMP_ON_TIMEOUT=1` (Flight Recorder) so the next postmortem has per-collective detail.\n";
  if (!any) out << "- No collective to replay was identified.\n";
  return out.str();
}

}  // namespace ncclpm::report
