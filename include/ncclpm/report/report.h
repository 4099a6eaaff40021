// include/ncclpm/report/report.h
//
// Renders a Diagnosis for people and machines: text for a terminal (top
// finding first, readable in ten seconds), JSON (the contract of
// shared/DESIGN.md), Markdown for a postmortem document.
#pragma once

#include <string>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/util/json_writer.h"

namespace ncclpm::report {

struct RenderOptions {
  std::string db_path;  ///< quoted in the replay commands
  bool verbose = false; ///< text: every finding in full, not only the root causes
};

std::string render_text(const diagnose::Diagnosis& d, const RenderOptions& o);
std::string render_json(const diagnose::Diagnosis& d, const RenderOptions& o);
std::string render_markdown(const diagnose::Diagnosis& d, const RenderOptions& o);

/// One finding as a JSON object (also stored in findings.json).
void write_finding_json(util::JsonWriter& w, const diagnose::Finding& f, const RenderOptions& o);
/// The command that replays a finding.
std::string replay_command(const diagnose::Finding& f, const RenderOptions& o);

/// "2024-07-09 17:05:38" from ts_us; empty for 0.
std::string format_time(int64_t ts_us);
/// The same for a reader: "07-09 17:05:38" when the logs gave no year (the
/// stored placeholder year is not shown as if it were one).
std::string format_time(int64_t ts_us, bool year_known);

/// "When the collective began to hang (10:31:00), the job was in evaluation:
/// rank 0 printed '***** Running Evaluation *****' at 10:29:12
/// (console.log:812)."; empty when no phase held then.
std::string phase_at_hang_words(const diagnose::Diagnosis& d);

}  // namespace ncclpm::report
