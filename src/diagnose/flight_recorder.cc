// src/diagnose/flight_recorder.cc
#include "flight_recorder.h"

#include <algorithm>
#include <map>

namespace ncclpm::diagnose {
namespace {

struct RankStatus {
  int rank = -1;
  int64_t last_enqueued = -1;
  std::string file;
};

Located dump_line(const RankStatus& r, const std::string& pg) {
  Located l;
  l.file = r.file;
  l.line = 1;
  l.rank = r.rank;
  l.text = "Flight Recorder dump of rank " + std::to_string(r.rank) + ": last collective enqueued in process group " +
           pg + " is seq " + std::to_string(r.last_enqueued);
  return l;
}

}  // namespace

// Every rank enqueues a group's collectives in the same order, so the first
// seq not all dumps reach is the first collective not all ranks joined: the
// ranks whose last enqueued seq is below it are the ones fr_trace names.
Result<std::optional<FrMissingRanks>> find_fr_missing_ranks(store::Connection& db, int64_t job_id) {
  auto stmt = db.prepare(
      "SELECT s.pg_id, s.rank, max(s.last_enqueued), min(f.rel_path) FROM flight_recorder_pg_status s"
      " JOIN files f USING (file_id) WHERE s.job_id = ?1 AND s.rank IS NOT NULL AND s.last_enqueued IS NOT NULL"
      " GROUP BY s.pg_id, s.rank ORDER BY s.pg_id, s.rank");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  std::map<std::string, std::vector<RankStatus>> groups;
  std::optional<Error> error;
  while (stmt->step(&error))
    groups[stmt->column_text(0)].push_back(
        {static_cast<int>(stmt->column_int(1)), stmt->column_int(2), stmt->column_text(3)});
  if (error) return std::move(*error);

  // The group most ranks dumped (the world's, usually) with a gap.
  const std::vector<RankStatus>* pick = nullptr;
  std::string pg;
  for (const auto& [id, ranks] : groups) {
    if (ranks.size() < 2 || (pick != nullptr && ranks.size() <= pick->size())) continue;
    auto [lo, hi] = std::minmax_element(ranks.begin(), ranks.end(), [](const RankStatus& a, const RankStatus& b) {
      return a.last_enqueued < b.last_enqueued;
    });
    if (lo->last_enqueued == hi->last_enqueued) continue;
    pick = &ranks;
    pg = id;
  }
  if (pick == nullptr) return std::optional<FrMissingRanks>();

  FrMissingRanks v;
  v.pg_id = pg;
  int64_t lowest = std::min_element(pick->begin(), pick->end(), [](const RankStatus& a, const RankStatus& b) {
                     return a.last_enqueued < b.last_enqueued;
                   })->last_enqueued;
  v.seq = lowest + 1;
  const RankStatus* joined = nullptr;
  for (const RankStatus& r : *pick) {
    if (r.last_enqueued < v.seq) {
      v.missing.push_back(r.rank);
      if (v.lines.size() < 3) v.lines.push_back(dump_line(r, pg));
    } else {
      v.joined.push_back(r.rank);
      if (joined == nullptr) joined = &r;
    }
  }
  if (joined != nullptr) v.lines.push_back(dump_line(*joined, pg));

  auto op = db.prepare(
      "SELECT profiling_name FROM flight_recorder_entries WHERE job_id = ?1 AND pg_id = ?2"
      " AND collective_seq_id = ?3 AND is_p2p = 0 AND profiling_name IS NOT NULL LIMIT 1");
  if (!op) return op.take_error();
  if (Status s = op->bind_all({job_id, pg, v.seq}); !s) return s.take_error();
  if (op->step(&error)) v.op = op->column_text(0);
  if (error) return std::move(*error);
  return std::optional<FrMissingRanks>(std::move(v));
}

}  // namespace ncclpm::diagnose
