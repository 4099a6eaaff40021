// tests/support/field_corpus.h
//
// The field corpus (fixtures/field/): real crashed jobs that users posted in
// public bug reports, each with what its thread established. This runs
// ingest and diagnose on each incident as a user would and scores the result:
// recall of the expected categories, the first finding's category against the
// root, and its culprits against the known ones. Shared by the regression test
// (tests/field/field_corpus_test.cc) and scripts/field-score.sh.
#pragma once

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace ncclpm::testing {

struct FieldIncident {
  std::string slug;
  std::filesystem::path dir;
  std::string root;                   ///< category of the root cause
  std::vector<std::string> expected;  ///< categories a right diagnosis names (root included)
  std::set<int> culprit_ranks;        ///< empty: not known
  std::set<std::string> culprit_hosts;
  std::string label_confidence;
  /// "holdout" for about a third of the incidents, chosen by a hash of the
  /// slug: rules are written looking only at the others ("dev"), so the
  /// holdout figures say how the engine does on logs nobody tuned it for.
  std::string split;
};

/// Loads every fixtures/field/<slug>/incident.toml; problems name the file.
std::vector<FieldIncident> load_field_corpus(const std::filesystem::path& root, std::vector<std::string>& problems);

struct FieldOutcome {
  std::string slug;
  bool ran = false;               ///< ingest and diagnose succeeded
  std::string error;              ///< why not
  std::string top_category;       ///< first finding's category; "" when no root cause
  std::vector<std::string> found; ///< categories of all findings
  bool top1 = false;
  int expected_found = 0, expected_total = 0;
  bool culprit_known = false, culprit_ok = false;
  std::vector<int> top_ranks;
  std::vector<std::string> top_hosts;
  bool shows_error_line = false;  ///< the reference check below found one
};

FieldOutcome diagnose_incident(const FieldIncident& incident, const std::filesystem::path& rules_dir);

/// A deliberately plain check, independent of the engine's parsers: does any
/// log line hold an error-level word (NCCL WARN, a Python exception, a CUDA
/// error, a launcher error)? Used to hold diagnose to "No root cause found
/// only when no line shows an error".
bool logs_show_error_line(const std::filesystem::path& logs_dir);

/// Per-category and overall figures, as scripts/field-score.sh prints them.
std::string score_table(const std::vector<FieldIncident>& incidents, const std::vector<FieldOutcome>& outcomes);

/// One line per incident: slug, split, root, top category, top1, recall, culprit.
std::string scoreboard(const std::vector<FieldIncident>& incidents, const std::vector<FieldOutcome>& outcomes);

}  // namespace ncclpm::testing
