// src/diagnose/job_phases.h
//
// What the whole job was doing, and when: the phase markers of its main
// process (rules/phases/markers.toml) laid out in time. Frameworks print these
// lines on global rank 0 only, so a marker counts when its line is rank 0's
// or names no rank, and only when it carries a time.
#pragma once

#include <optional>
#include <vector>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::diagnose {

/// A marker line the main process printed, with the marker that took it.
struct MarkerLine {
  const rules::PhaseMarker* marker = nullptr;
  Evidence at;
};

/// The phases the markers (in time order) describe: a begin marker opens its
/// phase unless that phase is already open; an end marker closes its open
/// phase, and training goes on from there; an end marker of a phase that is
/// not open says nothing. A phase that would last less than a second (another
/// marker at once) is dropped, and the phase before it goes on.
std::vector<JobPhase> lay_out_phases(const std::vector<MarkerLine>& markers);

/// The job's phases from its stored lines.
Result<std::vector<JobPhase>> load_job_phases(store::Connection& db, int64_t job_id, const rules::RuleSet& rules);

/// How much later than the moment the others entered a collective the main
/// process may print the marker of what kept it away: the others enter as it
/// begins its save (Trainer's non-saving ranks go straight on), and markers
/// carry seconds.
inline constexpr int64_t kMarkerLag = 5 * 1000000;

/// The phase that held at `ts_us` (or began up to kMarkerLag after it), if any.
std::optional<JobPhase> phase_at(const std::vector<JobPhase>& phases, int64_t ts_us);

}  // namespace ncclpm::diagnose
