// src/diagnose/alignment.cc
#include "alignment.h"

#include <algorithm>
#include <cstdlib>

namespace ncclpm::diagnose {
namespace {

// The (pg, seq) most ranks timed out on; ties go to the highest seq.
std::pair<std::string, int64_t> dominant_timeout(const JobFacts& f) {
  std::map<std::pair<std::string, int64_t>, std::set<int>> ranks;
  for (const TimeoutRecord& t : f.timeouts) ranks[{t.pg, t.seq}].insert(t.rank());
  std::pair<std::string, int64_t> best{"", -1};
  size_t best_n = 0;
  for (const auto& [key, set] : ranks) {
    if (set.size() > best_n || (set.size() == best_n && key.second > best.second)) {
      best = key;
      best_n = set.size();
    }
  }
  return best;
}

// A rank whose own timeout at the same seq names another op (or size) ran a
// different collective there: it diverged from the others. (A line cut before
// its op names none: that is no other op.)
void culprits_from_mismatched_op(const JobFacts& f, Alignment& a) {
  for (const TimeoutRecord& t : f.timeouts) {
    int rank = t.rank();
    if (rank < 0 || t.seq != a.seq || t.pg != a.pg) continue;
    if ((!t.op_type.empty() && t.op_type != a.op_type) ||
        (t.numel_in >= 0 && a.numel_in >= 0 && t.numel_in != a.numel_in))
      a.culprits.insert(rank);
  }
  if (!a.culprits.empty()) a.culprit_basis = "op_mismatch";
}

// How far one rank's timed-out collective can be from the others' in one
// group. A collective completes on a rank only once its peers joined it, so
// ranks can be apart by the few operations NCCL lets complete early, not by
// hundreds: records further apart come from another communicator or another
// run pasted beside this one.
constexpr int64_t kMaxCollectivesApart = 64;

// Ranks of the same process group that timed out at another seq than the
// others were out of step with them: behind, still in a collective the
// others had completed, or ahead, in one the others never reached. They are
// the odd ones out only when they are fewer than the ranks at the common
// seq: one rank against one says nothing about which of the two strayed.
void culprits_from_other_seq(const JobFacts& f, Alignment& a) {
  if (!a.culprits.empty() || a.seq < 0) return;  // no seq to be apart from
  std::map<int, int64_t> apart;  // rank -> the seq it timed out at
  for (const TimeoutRecord& t : f.timeouts) {
    int rank = t.rank();
    bool near = t.seq >= 0 && t.seq != a.seq && std::abs(a.seq - t.seq) <= kMaxCollectivesApart;
    if (rank < 0 || t.pg != a.pg || !near || a.victims.count(rank) != 0) continue;
    auto [it, added] = apart.emplace(rank, t.seq);
    if (!added) it->second = std::min(it->second, t.seq);
  }
  if (apart.empty()) return;
  a.other_seq = apart;
  if (apart.size() >= a.victims.size()) return;  // out of step, no odd one out
  for (const auto& [rank, seq] : apart) a.culprits.insert(rank);
  a.culprit_basis = "other_seq";
}

// Each rank's last enqueued and completed seq, from its status lines.
void read_status(const JobFacts& f, Alignment& a) {
  // WorkNCCL lines of older releases carry no process-group prefix ("default"):
  // then status lines of any group count.
  for (const StatusRecord& s : f.statuses) {
    int rank = s.at.rank;
    bool same_pg = a.pg.empty() || a.pg == "default" || s.pg == a.pg || s.pg == "default";
    if (rank < 0 || !same_pg) continue;
    if (s.last_enqueued >= 0) a.last_enqueued[rank] = std::max(a.last_enqueued[rank], s.last_enqueued);
    if (s.last_completed >= 0) a.last_completed[rank] = std::max(a.last_completed[rank], s.last_completed);
  }
}

void culprits_from_status(Alignment& a) {
  if (!a.culprits.empty() || a.seq < 0) return;
  // A rank that itself timed out at that seq did enqueue it: a status line
  // below it belongs to another process group (WorkNCCL records of some eras
  // name none).
  for (const auto& [rank, enq] : a.last_enqueued)
    if (enq < a.seq && a.victims.count(rank) == 0) a.culprits.insert(rank);
  if (!a.culprits.empty()) a.culprit_basis = "status";
}

void culprits_from_flight_recorder(const JobFacts& f, Alignment& a) {
  if (!a.culprits.empty() || a.seq < 0) return;
  for (const auto& [rank, enq] : f.fr_last_enqueued)
    if (enq >= 0 && enq < a.seq && a.victims.count(rank) == 0) a.culprits.insert(rank);
  if (!a.culprits.empty()) a.culprit_basis = "flight_recorder";
}

// With NCCL_DEBUG_SUBSYS=COLL every call is logged: a rank that issued fewer
// calls on the world communicator than the others is behind them.
void culprits_from_coll(const JobFacts& f, Alignment& a) {
  if (!a.culprits.empty() || f.coll_stats.size() < 2) return;
  int64_t most = 0;
  for (const CollStats& c : f.coll_stats) most = std::max(most, c.calls);
  for (const CollStats& c : f.coll_stats)
    if (c.calls < most) a.culprits.insert(c.rank);
  if (!a.culprits.empty() && a.culprits.size() < f.coll_stats.size()) {
    a.culprit_basis = "coll";
  } else {
    a.culprits.clear();
  }
}

// Ranks that wrote logs but never reported the timeout everyone else hit
// were not waiting in that collective: they were somewhere else. (A rank
// whose own timeout report was cut short did report one.)
void culprits_from_silence(const JobFacts& f, Alignment& a) {
  if (!a.culprits.empty() || a.victims.empty()) return;
  // A rank that reported a timeout of its own at another seq (one too far
  // from the others' to be of the same run, or one of two sides as large as
  // each other) was not silent: it was waiting too, elsewhere.
  std::set<int> timed_out;
  for (const TimeoutRecord& t : f.timeouts) timed_out.insert(t.rank());
  std::set<int> silent;
  for (int r : f.ranks) {
    auto enq = a.last_enqueued.find(r);
    bool issued = enq != a.last_enqueued.end() && enq->second >= a.seq;  // its status says it got there
    bool spoke = timed_out.count(r) != 0 || f.cut_timeout_ranks.count(r) != 0;
    if (a.victims.count(r) == 0 && !issued && !spoke) silent.insert(r);
  }
  if (!silent.empty() && a.victims.size() >= silent.size() && a.victims.size() + silent.size() >= 2) {
    a.culprits = silent;
    a.culprit_basis = "silent";
  }
}

}  // namespace

Alignment align_collectives(const JobFacts& f) {
  Alignment a;
  if (!f.timeouts.empty()) {
    a.has_timeouts = true;
    auto [pg, seq] = dominant_timeout(f);
    a.pg = pg;
    a.seq = seq;
    // The op most ranks timed out in at that seq is the collective; a rank
    // showing another op there is a suspect (culprits_from_mismatched_op).
    std::map<std::string, int> ops;
    for (const TimeoutRecord& t : f.timeouts)
      if (t.pg == pg && t.seq == seq && !t.op_type.empty()) ++ops[t.op_type];
    std::string majority;
    for (const auto& [op, n] : ops)
      if (majority.empty() || n > ops[majority]) majority = op;
    for (const TimeoutRecord& t : f.timeouts) {
      if (t.pg != pg || t.seq != seq) continue;
      if (a.op_type.empty() && t.op_type == majority) {
        a.op_type = t.op_type;
        a.numel_in = t.numel_in;
        a.numel_out = t.numel_out;
        a.timeout_ms = t.timeout_ms;
      }
      a.victims.insert(t.rank());
      if (t.at.ts_us != 0 && (a.first_timeout_ts == 0 || t.at.ts_us < a.first_timeout_ts))
        a.first_timeout_ts = t.at.ts_us;
      if (int64_t began = t.at.ts_us - t.ran_for_ms * 1000; t.at.ts_us != 0 && t.ran_for_ms > 0 &&
                                                              (a.hang_start_ts == 0 || began < a.hang_start_ts))
        a.hang_start_ts = began;
      if (a.evidence.size() < 3) a.evidence.push_back(t.at);
    }
    a.victims.erase(-1);
  }
  read_status(f, a);
  if (a.has_timeouts) {
    culprits_from_mismatched_op(f, a);
    culprits_from_other_seq(f, a);
  }
  culprits_from_status(a);
  culprits_from_flight_recorder(f, a);
  if (a.has_timeouts) {
    culprits_from_coll(f, a);
    culprits_from_silence(f, a);
  }
  for (int c : a.culprits) a.victims.erase(c);
  if (a.has_timeouts && a.culprits.empty() && !a.last_enqueued.empty()) {
    bool stuck = std::all_of(a.last_enqueued.begin(), a.last_enqueued.end(),
                             [&](const auto& kv) { return kv.second >= a.seq; });
    bool none_done = std::all_of(a.last_completed.begin(), a.last_completed.end(),
                                 [&](const auto& kv) { return kv.second < a.seq; });
    // "All ranks arrived" needs every rank of the job to have said so: ranks
    // the logs never show (a paste of two ranks' lines out of four) may be
    // the very ones missing.
    bool all_reported = f.world_size <= 0 || a.last_enqueued.size() >= static_cast<size_t>(f.world_size);
    a.all_stuck = stuck && none_done && a.last_enqueued.size() >= 2 && all_reported;
  }
  for (const StatusRecord& s : f.statuses) {
    if (a.evidence.size() >= 6) break;
    if (a.culprits.count(s.at.rank) != 0) a.evidence.push_back(s.at);
  }
  return a;
}

}  // namespace ncclpm::diagnose
