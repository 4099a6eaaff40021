// src/diagnose/silent_hang.h
//
// A job that hung without a word: no error, no timeout (the user killed it,
// or it is still hanging), so nothing but where the logs stop. When a file's
// last line is one a stall rule names as what a stalled rank last printed
// (an evaluation or generation bar that never finished, a save begun), the
// job most likely hung there; a low-confidence finding says so.
#pragma once

#include <optional>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::diagnose {

/// The finding for logs that end inside a phase a stall rule names, or none.
/// Called only when nothing else explains the job.
Result<std::optional<Finding>> logs_end_in_stall_phase(store::Connection& db, int64_t job_id,
                                                       const rules::RuleSet& rules);

}  // namespace ncclpm::diagnose
