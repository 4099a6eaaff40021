// src/cli/diagnose_job.cc
#include "diagnose_job.h"

#include "cli.h"
#include "ncclpm/util/text.h"

namespace ncclpm::cli {

std::variant<diagnose::Diagnosis, int> diagnose_job(store::Connection& db, const std::string& job_name,
                                                   const rules::RuleSet& rules) {
  constexpr int kError = static_cast<int>(ExitCode::kError);
  std::string job;
  auto job_id = diagnose::resolve_job(db, job_name, &job);
  if (!job_id) {
    print_error(job_id.error());
    return kError;
  }
  // Say first what the evidence lacks; with nothing to read there is nothing to conclude.
  auto gaps = diagnose::evidence_gaps(db, *job_id);
  if (!gaps) {
    print_error(gaps.error());
    return kError;
  }
  if (gaps->lines_read == 0) {
    print_error(Error::plain("nothing to diagnose in job " + util::quoted(job) + ": no readable line " + gaps->words(),
                             "check the files named above, or ingest the directory the logs were written to"));
    return static_cast<int>(ExitCode::kNothingToRead);
  }
  if (gaps->incomplete())
    print_warning(Error::plain("the evidence is incomplete: " + gaps->words() + "; the findings rest on the rest"));
  auto d = diagnose::run(db, *job_id, rules);
  if (!d) {
    print_error(d.error());
    return kError;
  }
  d->job = job;
  return std::move(*d);
}

}  // namespace ncclpm::cli
