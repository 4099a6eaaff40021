// src/diagnose/line_scan.h
//
// One pass over every stored line of a job (the events but the bulk kinds no
// rule names, and the unparsed lines) for everything diagnose looks for in
// every line: what each rule's patterns match, whether each rule's gates
// ('also' and version patterns) show anywhere, which NCCL_ variables the
// lines set, and the lines that may be NCCL's errors (for the catalogue's
// findings, lead.h). On a job of thousands of ranks one such pass costs as
// much as the rest of diagnose, so there is one for all four.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "job_facts.h"
#include "ncclpm/rules/rule_set.h"

namespace ncclpm::diagnose {

struct RuleHits {
  std::vector<Located> lines;  ///< the first hits (capped), in time or file order
  int64_t count = 0;
  std::set<int> ranks;
  std::string version;         ///< the version a version gate captured
  /// The ranks the hits' messages say their printers waited for (a rule's
  /// named_ranks_role "waited_for"): the culprits, where any are named.
  std::set<int> waited_for;
  /// Culprit-tail hits found in the lines before a timeout or failure, not in
  /// a culprit's own tail: the lines' ranks are the culprits, not the alignment's.
  bool before_failure = false;

  void add(const Located& l) {
    ++count;
    if (l.rank >= 0) ranks.insert(l.rank);
    lines.push_back(l);
  }
};

/// What a rule's gates saw in the whole job.
struct GatesSeen {
  std::vector<bool> also;  ///< by index into the rule's `also`
  std::string version;     ///< what its version pattern captured; empty: none seen
};

/// A stored line as the scan read it: its whole text (a multi-line event's
/// every line), and its kind: the event's, or for an unparsed line
/// "logged_error" when its producer logged it at level E or F, else "unparsed".
struct ScannedLine {
  Located at;
  std::string kind;
};

struct LineScan {
  /// By index into rules.rules(): the lines each rule's patterns matched
  /// (kinds and 'unless' applied). Rules scoped to a culprit's tail are
  /// matched on the tails, not here.
  std::map<size_t, RuleHits> hits;
  std::vector<GatesSeen> gates;  ///< by index into rules.rules()
  /// Every NCCL_ variable a line sets (`NCCL_X=value`, NCCL's own settings
  /// lines aside), with the first line that sets it in file and line order.
  std::map<std::string, Located> nccl_assignments;
  /// NCCL's warnings and error traces, the errors PyTorch raised from NCCL,
  /// and the unparsed lines with NCCL's words and a failure's, in scan order.
  std::vector<ScannedLine> nccl_error_lines;
};

Result<LineScan> scan_lines(store::Connection& db, int64_t job_id, const rules::RuleSet& rules);

}  // namespace ncclpm::diagnose
