// src/diagnose/alignment.h
//
// Cross-rank alignment of collectives: the watchdog names the ranks that
// waited, not the one that made them wait. Aligning each rank's last enqueued
// and completed seq (status lines, Flight Recorder) and its NCCL COLL calls
// separates the culprits (never issued seq N) from the victims (waited on it).
#pragma once

#include <map>
#include <set>
#include <string>

#include "job_facts.h"

namespace ncclpm::diagnose {

struct Alignment {
  bool has_timeouts = false;
  std::string pg;
  int64_t seq = -1;
  std::string op_type;
  int64_t numel_in = -1, numel_out = -1, timeout_ms = -1;
  int64_t first_timeout_ts = 0;
  /// When the collective began to hang: the earliest watchdog firing minus how
  /// long that collective had run (`ran for N milliseconds`); 0 when unknown.
  int64_t hang_start_ts = 0;
  std::set<int> victims;    ///< ranks whose watchdog timed out on seq
  std::set<int> culprits;   ///< ranks that never issued seq (or fell behind)
  std::string culprit_basis;  ///< how: op_mismatch, other_seq, status, flight_recorder, coll, silent
  /// Ranks of the group that timed out at another seq near it, and that seq:
  /// the culprits (basis "other_seq") when they are fewer than the victims.
  std::map<int, int64_t> other_seq;
  bool all_stuck = false;   ///< every rank enqueued seq and none completed it
  std::map<int, int64_t> last_enqueued, last_completed;
  std::vector<Located> evidence;  ///< the lines the alignment rests on
};

Alignment align_collectives(const JobFacts& facts);

}  // namespace ncclpm::diagnose
