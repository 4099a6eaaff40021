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

namespace ncclpm::diagnose {
namespace {

// One rank's entry for one collective of a group.
struct FrCall {
  int rank = -1;
  std::string name, input_sizes, output_sizes, input_dtypes, output_dtypes, file;
  int64_t entries = 0;  // more than one: a coalesced group, which fr_trace matches apart
};

std::string kind_of(const std::string& profiling_name) {
  std::string k = profiling_name.substr(profiling_name.find(':') + 1);
  return k.substr(0, k.find(' '));
}

// fr_trace's checks in its order (type, input sizes, output sizes, dtypes),
// with its exemptions: all_to_all and scatter inputs, all_to_all and gather
// outputs may differ by rank. Empty when `b` matches `a`.
std::string first_difference(const FrCall& a, const FrCall& b) {
  std::string kind = kind_of(a.name);
  if (kind != kind_of(b.name)) return "collective type";
  if (kind != "all_to_all" && kind != "scatter" && a.input_sizes != b.input_sizes) return "input sizes";
  if (kind != "all_to_all" && kind != "gather" && a.output_sizes != b.output_sizes) return "output sizes";
  if (a.input_dtypes != b.input_dtypes || a.output_dtypes != b.output_dtypes) return "dtypes";
  return "";
}

std::string value_of(const FrCall& c, const std::string& what) {
  if (what == "collective type") return c.name;
  if (what == "input sizes") return c.input_sizes;
  if (what == "output sizes") return c.output_sizes;
  return c.input_dtypes + " -> " + c.output_dtypes;
}

Located call_line(const FrCall& c, const std::string& pg, int64_t seq) {
  Located l;
  l.file = c.file;
  l.line = 1;
  l.rank = c.rank;
  l.text = "Flight Recorder dump of rank " + std::to_string(c.rank) + ": collective " + std::to_string(seq) +
           " of process group " + pg + " is " + c.name + ", input sizes " + c.input_sizes + ", output sizes " +
           c.output_sizes + ", dtypes " + c.input_dtypes + " -> " + c.output_dtypes;
  return l;
}

std::optional<FrMismatch> compare_calls(const std::string& pg, int64_t seq, const std::vector<FrCall>& calls) {
  if (calls.size() < 2) return std::nullopt;
  for (const FrCall& c : calls)
    if (c.entries > 1 || c.name.find("coalesced") != std::string::npos) return std::nullopt;
  const FrCall& ref = calls.front();
  FrMismatch m;
  for (size_t i = 1; i < calls.size(); ++i) {
    std::string what = first_difference(ref, calls[i]);
    if (what.empty()) continue;
    if (m.culprits.empty()) {
      m.what = what;
      m.expected = value_of(ref, what);
      m.found = value_of(calls[i], what);
    }
    m.culprits.push_back(calls[i].rank);
    if (m.lines.size() < 3) m.lines.push_back(call_line(calls[i], pg, seq));
  }
  if (m.culprits.empty()) return std::nullopt;
  m.pg_id = pg;
  m.seq = seq;
  m.reference_rank = ref.rank;
  m.op = ref.name;
  m.lines.push_back(call_line(ref, pg, seq));
  return m;
}

}  // namespace

// Ranks are compared with the lowest rank that dumped, as fr_trace compares
// every rank with the first dump it loaded; collectives in seq order, so the
// first disagreement is the one reported.
Result<std::optional<FrMismatch>> find_fr_mismatch(store::Connection& db, int64_t job_id) {
  auto stmt = db.prepare(
      "SELECT e.pg_id, e.collective_seq_id, e.rank, e.profiling_name, coalesce(e.input_sizes, ''),"
      " coalesce(e.output_sizes, ''), coalesce(e.input_dtypes, ''), coalesce(e.output_dtypes, ''),"
      " min(f.rel_path), count(*) FROM flight_recorder_entries e JOIN files f USING (file_id)"
      " WHERE e.job_id = ?1 AND e.is_p2p = 0 AND e.rank IS NOT NULL AND e.collective_seq_id IS NOT NULL"
      " AND e.profiling_name IS NOT NULL"
      " GROUP BY e.pg_id, e.collective_seq_id, e.rank ORDER BY e.collective_seq_id, e.pg_id, e.rank");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  std::string pg;
  int64_t seq = -1;
  std::vector<FrCall> calls;
  std::optional<Error> error;
  while (stmt->step(&error)) {
    std::string row_pg = stmt->column_text(0);
    int64_t row_seq = stmt->column_int(1);
    if (row_pg != pg || row_seq != seq) {
      if (auto m = compare_calls(pg, seq, calls)) return std::optional<FrMismatch>(std::move(*m));
      calls.clear();
      pg = row_pg;
      seq = row_seq;
    }
    calls.push_back({static_cast<int>(stmt->column_int(2)), stmt->column_text(3), stmt->column_text(4),
                     stmt->column_text(5), stmt->column_text(6), stmt->column_text(7), stmt->column_text(8),
                     stmt->column_int(9)});
  }
  if (error) return std::move(*error);
  return compare_calls(pg, seq, calls);
}

}  // namespace ncclpm::diagnose
