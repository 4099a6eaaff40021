// src/diagnose/silent_hang.h
//
// A job that hung without a word: no error, no timeout (the user killed it,
// or it is still hanging), so nothing but where the logs stop. When a file's
// last line is one a stall rule names as what a stalled rank last printed
// (an evaluation or generation bar that never finished, a save begun), the
// job most likely hung there; a low-confidence finding says so. A job the
// user interrupted (Ctrl-C) is read up to the interrupt: users stop jobs that
// hang.
#pragma once

#include <optional>
#include <vector>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::diagnose {

/// The finding for logs that end inside a phase a stall rule names, or none.
/// Called only when nothing else explains the job. `interrupts`: where the
/// user stopped it (job-interrupted-by-user's evidence), in any file.
Result<std::optional<Finding>> logs_end_in_stall_phase(store::Connection& db, int64_t job_id,
                                                       const rules::RuleSet& rules,
                                                       const std::vector<Evidence>& interrupts);

}  // namespace ncclpm::diagnose
