// src/diagnose/job_phases.cc
#include "job_phases.h"

#include <algorithm>
#include <tuple>

#include "progress.h"

namespace ncclpm::diagnose {

std::vector<JobPhase> lay_out_phases(const std::vector<MarkerLine>& markers) {
  std::vector<JobPhase> out;
  // A phase that began less than a second ago lasted no time: it says nothing
  // (a save that ends and goes on in another framework's words at once).
  constexpr int64_t kNoTime = 1000000;
  auto open = [&](const std::string& phase, const Evidence& at) {
    if (!out.empty() && out.back().to_us == 0 && at.ts_us - out.back().from_us < kNoTime) out.pop_back();
    if (!out.empty() && out.back().phase == phase && at.ts_us - out.back().to_us < kNoTime) {
      out.back().to_us = 0;  // the phase before it goes on
      return;
    }
    if (!out.empty() && out.back().to_us == 0) out.back().to_us = at.ts_us;
    out.push_back(JobPhase{phase, at.ts_us, 0, at});
  };
  for (const MarkerLine& m : markers) {
    bool is_open = !out.empty() && out.back().to_us == 0 && out.back().phase == m.marker->phase;
    if (m.marker->edge == "begin") {
      if (!is_open) open(m.marker->phase, m.at);
    } else if (is_open) {
      open("training", m.at);
    }
  }
  return out;
}

Result<std::vector<JobPhase>> load_job_phases(store::Connection& db, int64_t job_id, const rules::RuleSet& rules) {
  if (rules.markers().empty()) return std::vector<JobPhase>{};
  // The main process's timed lines that no parser typed, and its progress
  // lines (a Trainer dict, a Megatron iteration), which parsers do type.
  // Progress lines are most of a big job's lines, nearly all of other
  // ranks: only the files that hold a stream of the main process's (as
  // ingest tallied them) are read for them.
  std::vector<MarkerLine> markers;
  Status s = db.each_row(
      "SELECT f.rel_path, u.line_no, coalesce(u.rank, -1), coalesce(u.host, ''), u.ts_us, u.text"
      " FROM unparsed_lines u JOIN files f USING (file_id)"
      " WHERE u.job_id = ?1 AND u.ts_us IS NOT NULL AND u.rank = 0"
      // Two tests the table answers from its runs, where coalesce() would read every line.
      " UNION ALL SELECT f.rel_path, u.line_no, -1, coalesce(u.host, ''), u.ts_us, u.text"
      " FROM unparsed_lines u JOIN files f USING (file_id)"
      " WHERE u.job_id = ?1 AND u.ts_us IS NOT NULL AND u.rank IS NULL"
      " UNION ALL SELECT f.rel_path, p.line_no, coalesce(p.rank, -1), coalesce(p.host, ''), p.ts_us, p.text"
      " FROM training_progress p JOIN files f USING (file_id)"
      " WHERE p.file_id IN (SELECT file_id FROM progress_streams WHERE job_id = ?1 AND coalesce(rank, 0) = 0)"
      " AND p.job_id = ?1 AND p.ts_us IS NOT NULL AND coalesce(p.rank, 0) = 0",
      {job_id}, [&](const store::Statement& row) {
        std::string text = row.column_text(5);
        const rules::PhaseMarker* m = rules.match_marker(text);
        if (m == nullptr) return;
        markers.push_back(MarkerLine{m, Evidence{row.column_text(0), row.column_int(1), std::move(text),
                                                 static_cast<int>(row.column_int(2)), row.column_text(3),
                                                 row.column_int(4)}});
      });
  if (!s) return s.take_error();
  std::stable_sort(markers.begin(), markers.end(), [](const MarkerLine& a, const MarkerLine& b) {
    return std::tie(a.at.ts_us, a.at.file, a.at.line) < std::tie(b.at.ts_us, b.at.file, b.at.line);
  });
  return lay_out_phases(markers);
}

std::optional<JobPhase> phase_at(const std::vector<JobPhase>& phases, int64_t ts_us) {
  if (ts_us == 0) return std::nullopt;
  // The phases follow one another without gaps: the last one begun by then
  // held then.
  const JobPhase* held = nullptr;
  for (const JobPhase& p : phases)
    if (p.from_us <= ts_us + kMarkerLag) held = &p;
  if (held == nullptr) return std::nullopt;
  return *held;
}

}  // namespace ncclpm::diagnose
