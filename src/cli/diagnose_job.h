// src/cli/diagnose_job.h
//
// The steps `diagnose` and `report` share: resolve the job, say first what the
// evidence lacks, then diagnose it. Problems are printed here.
#pragma once

#include <string>
#include <variant>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::cli {

/// The diagnosis of job `job_name` (the last ingested when empty), with its
/// name set; or the exit code to stop with, after the problem was printed
/// (kNothingToRead when the job's files hold no readable line).
std::variant<diagnose::Diagnosis, int> diagnose_job(store::Connection& db, const std::string& job_name,
                                                   const rules::RuleSet& rules);

}  // namespace ncclpm::cli
