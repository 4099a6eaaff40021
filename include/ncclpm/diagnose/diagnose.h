// include/ncclpm/diagnose/diagnose.h
//
// `ncclpm diagnose`: applies the rule base and the cross-rank analysis to one
// job of the incident database and returns findings, root causes first.
#pragma once

#include <string>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/rules/rule_set.h"
#include "ncclpm/store/sqlite.h"
#include "ncclpm/util/result.h"

namespace ncclpm::diagnose {

/// The job to diagnose: `name` when given, else the most recently ingested.
Result<int64_t> resolve_job(store::Connection& db, const std::string& name, std::string* resolved_name);

Result<Diagnosis> run(store::Connection& db, int64_t job_id, const rules::RuleSet& rules);

/// Replaces the job's stored findings by `d`'s and sets their finding_id.
Status store_findings(store::Connection& db, Diagnosis& d);

}  // namespace ncclpm::diagnose
