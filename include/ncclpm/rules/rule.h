// include/ncclpm/rules/rule.h
//
// A Rule is one known failure signature, written as data in rules/*.toml:
//
//   [[rule]]
//   id = "cuda-oom"                     # kebab-case, stable forever
//   title = "A rank ran out of GPU memory"
//   category = "rank_crash_oom"         # one of the categories in shared/DESIGN.md
//   severity = "critical"               # critical | error | warning | info
//   confidence = 0.9                    # 0..1
//   root_cause = true                   # a cause (true) or a symptom / cascade (false)
//   patterns = ['CUDA out of memory']   # RE2, matched on every stored line of the job but
//                                       #   NCCL's channel and transport lines (tables
//                                       #   nccl_channel_lines, nccl_network_lines) and its
//                                       #   communicator lines (kind nccl_comm)
//   kinds = ["traceback"]               # optional: only events of these kinds ("unparsed": plain lines)
//   scope = "culprit_tail"              # optional: only the last lines of a culprit rank
//   requires = ["collective_timeout"]   # optional: categories or rule ids that must fire too
//                                       #   ("a|b": either)
//   absent = ["nccl-watchdog-timeout"]  # optional: rule ids whose firing makes this one redundant
//   also = ['packing=False']            # optional: each must match somewhere in the job
//   unless = ['DistBackendError']       # optional: a line matching any of these is no hit
//   named_ranks = 'rank (\d+) and rank (\d+)'  # optional: the ranks a hit's message names
//                                       #   are culprits too (each capture group a rank,
//                                       #   or a comma-separated list of ranks)
//   named_ranks_role = "waited_for"     # optional: the ranks named are the ones the printing
//                                       #   rank waited for, the culprits in its place
//                                       #   (default "culprits_too")
//   version = { pattern = 'trl==(\d+\.\d+\.\d+)', min = "0.15.0" }   # optional
//   builtin = "never-issued"            # optional: fired by a cross-rank analysis instead
//   advice = """..."""                  # concrete; {placeholders} are filled from the job
//   [rule.samples]
//   match = ['torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB']
//   no_match = ['max_split_size_mb']
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ncclpm/vocab/categories.h"

namespace ncclpm::rules {

using vocab::categories;  // the finding categories live in the shared vocabulary
using vocab::is_category;

enum class Scope { kAny, kCulpritTail };

struct VersionGate {
  std::string pattern;  ///< RE2 with one capture group: the version
  std::string min;      ///< inclusive; empty: no lower bound
  std::string below;    ///< exclusive; empty: no upper bound
};

struct Rule {
  std::string id, title, category, severity, advice, builtin;
  double confidence = 0.5;
  bool root_cause = false;
  std::vector<std::string> patterns;
  std::vector<std::string> kinds;
  Scope scope = Scope::kAny;
  std::vector<std::string> requires_fired;
  std::vector<std::string> absent_fired;
  std::vector<std::string> also;
  std::vector<std::string> unless;
  std::string named_ranks;  ///< RE2; its capture groups are ranks the message names
  /// The named ranks are the ones the printing rank waited for ("retrieving
  /// ncclUniqueId from [0]"): they are the culprits, the printer only waited.
  bool named_ranks_waited_for = false;
  std::optional<VersionGate> version;
  std::vector<std::string> samples_match, samples_no_match;
  std::string file;  ///< where it was defined
  int line = 0;
};

/// A line by which a framework's main process says what the whole job is
/// doing, written as data in rules/*.toml beside the rules:
///
///   [[marker]]
///   phase = "evaluation"      # one of kPhases
///   edge = "begin"            # begin: the phase starts; end: it is over (training goes on)
///   patterns = ['\*{5} Running (?:Evaluation|Prediction) \*{5}']
///   samples = ['[INFO|trainer.py:3955] 2025-02-11 03:12:09,554 >> ***** Running Evaluation *****']
///
/// Diagnose lays the markers of the main process out in time: the job's
/// phase when a collective began to hang, and the report's phase bands.
struct PhaseMarker {
  std::string phase, edge;
  std::vector<std::string> patterns, samples;
  std::string file;  ///< where it was defined
  int line = 0;
};

/// The job phases a marker may name, in the order a run goes through them.
inline constexpr const char* kPhases[] = {"training", "evaluation", "generation", "checkpoint save",
                                          "data preparation", "after training"};

/// Compares dotted versions numerically: "0.15.1" < "0.16.0" < "2.21.5".
int compare_versions(const std::string& a, const std::string& b);

}  // namespace ncclpm::rules
