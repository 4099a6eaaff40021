// src/diagnose/lead.h
//
// What diagnose says when no signature rule explains a job, and what it says
// of a job whose communicators never formed.
//
// The lead: the earliest error-level line across ranks (an NCCL WARN, a
// Python exception, a CUDA error, a launcher error), named with the category
// the message catalogues give it (rules/catalog/), its rank and host as the
// culprit, the error lines that followed it as its cascade, and a low
// confidence. "No root cause found" is then said only of logs without a
// single error line.
//
// The start-up stage: when a process reported an NCCL or store error before
// its communicator printed Init COMPLETE (and no collective ever timed out),
// the job did not get past initialisation; an `init_failure` finding says so
// and how far each rank got, beside the specific cause.
#pragma once

#include <optional>

#include "job_facts.h"
#include "line_scan.h"
#include "ncclpm/diagnose/finding.h"
#include "ncclpm/vocab/catalog.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::diagnose {

/// An error-level line with the category and role its words give it.
struct ErrorLine {
  Located at;
  std::string kind;       ///< event kind, or "unparsed"
  std::string category;
  std::string severity;
  std::string role;       ///< cause, consequence, either
  std::string named_by;   ///< "nccl catalogue (src/transport/net_ib.cc)", "exception", "words"
  std::string catalog;    ///< the catalogue that named it (nccl, nccl-net-ofi, pytorch, launchers), or empty
  bool printed_by_nccl = false;  ///< that catalogue's messages come through NCCL's logger
  std::string source;     ///< the producer's source file that prints it, as the catalogue says
  bool detail_names_startup = false;  ///< a detail line under it (NCCL's "Last error:") names a start-up step
};

/// Every error-level line of the job, earliest first (time, then file and
/// line): what the lead and the start-up stage read.
Result<std::vector<ErrorLine>> error_lines(store::Connection& db, const JobFacts& facts, const vocab::Catalog& catalog);

/// The error-level lines among those the line scan kept as NCCL's possible
/// errors, earliest first: what the catalogue's NCCL findings read.
std::vector<ErrorLine> nccl_error_lines(const std::vector<ScannedLine>& scanned, const vocab::Catalog& catalog);

struct Lead {
  Finding finding;
  /// A catalogue names its line as a failure in itself (not a report of
  /// another): it says more than any symptom.
  bool catalogued_cause = false;
  /// A catalogue names its line as the report of another failure (a peer
  /// that closed its socket): what that failure was is for others to say.
  bool catalogued_consequence = false;
};

/// The lead finding from those lines; nullopt when there is none.
std::optional<Lead> earliest_error_lead(const std::vector<ErrorLine>& errors, const JobFacts& facts);

/// One finding per category of the NCCL WARNs the NCCL catalogue calls a
/// cause (or `either`, at a lower confidence; never a consequence), for the
/// categories no finding in `existing` already names: NCCL's own words about
/// what failed are more specific than the exception PyTorch raised from them.
std::vector<Finding> catalogued_nccl_warnings(const std::vector<ErrorLine>& errors, const JobFacts& facts,
                                              const std::vector<Finding>& existing);

/// The init_failure finding, when some process failed before its
/// communicator formed; nullopt otherwise.
Result<std::optional<Finding>> startup_failure(store::Connection& db, const JobFacts& facts,
                                               const std::vector<ErrorLine>& errors);

/// What the catalogues add to the rules' findings: catalogued NCCL warnings;
/// when no cause was found, the lead (or, when PyTorch reported a hang and no
/// catalogue names a cause, that hang as the cause); the start-up stage.
Status add_catalogue_findings(store::Connection& db, const JobFacts& facts, const vocab::Catalog& catalog,
                              const std::vector<ScannedLine>& nccl_lines, std::vector<Finding>& findings);

}  // namespace ncclpm::diagnose
