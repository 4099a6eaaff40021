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

/// What the job's files did not give: files skipped (binary), unreadable,
/// partly readable or empty, and how many lines were read in all.
struct EvidenceGaps {
  int64_t files = 0, lines_read = 0;
  int64_t skipped = 0, unreadable = 0, partial = 0, empty = 0;
  std::vector<std::string> examples;  ///< "cut.log.gz: gzip stream decodes to nothing", a few
  bool incomplete() const { return skipped + unreadable + partial + empty > 0; }
  /// "2 of 10 files unreadable, 1 partly readable (cut.log.gz: ...)"
  std::string words() const;
};
Result<EvidenceGaps> evidence_gaps(store::Connection& db, int64_t job_id);

/// Replaces the job's stored findings by `d`'s and sets their finding_id.
Status store_findings(store::Connection& db, Diagnosis& d);
/// Stores the findings unless the database cannot be written (a read-only
/// file or filesystem: an archived incident); false then, and `d` keeps no ids.
Result<bool> store_findings_if_writable(store::Connection& db, Diagnosis& d);

}  // namespace ncclpm::diagnose
