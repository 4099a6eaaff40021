// src/store/clock_offsets.cc
//
// Puts every host's lines on one clock: estimates each host's offset from the
// moments all ranks share (include/ncclpm/store/clock_offsets.h), stores the
// offsets in `clock_offsets`, and shifts the times of skewed hosts in place.
// A later ingest into the same job first shifts them back, so the estimate
// always rests on the times as printed.
#include "ncclpm/store/clock_offsets.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include "host_names.h"
#include "ncclpm/store/ingest_writer.h"
#include "ncclpm/util/stats.h"

namespace ncclpm::store {
namespace {

std::string basis_of(const std::set<std::string>& kinds) {
  std::string s;
  for (const std::string& k : kinds) s += (s.empty() ? "" : " and ") + k;
  return s;
}

// "watchdog pg 0 seq 7" -> "watchdog timeouts"; "init 0x..." -> "communicator inits".
std::string kind_of(const std::string& moment) {
  return moment.starts_with("init ") ? "communicator inits" : "watchdog timeouts";
}

}  // namespace

std::vector<ClockOffset> estimate_clock_offsets(const std::vector<ClockSample>& samples,
                                                const std::string& preferred) {
  // moment -> host -> that host's readings; then the median reading each.
  std::map<std::string, std::map<std::string, std::vector<int64_t>>> readings;
  std::map<std::string, int> per_host;
  for (const ClockSample& s : samples) {
    readings[s.moment][s.host].push_back(s.at_us);
    ++per_host[s.host];
  }
  if (per_host.size() < 2) return {};
  std::map<std::string, std::map<std::string, int64_t>> at;  // moment -> host -> median
  for (auto& [moment, hosts] : readings)
    for (auto& [host, values] : hosts) at[moment][host] = util::median(values);

  std::string reference = preferred;
  if (per_host.count(reference) == 0) {
    reference = per_host.begin()->first;
    for (const auto& [host, n] : per_host)
      if (n > per_host[reference]) reference = host;
  }
  // Breadth first from the reference: a host that shares no moment with it
  // may share one with a host already placed.
  std::map<std::string, int64_t> offset = {{reference, 0}};
  std::vector<ClockOffset> out;
  std::deque<std::string> queue = {reference};
  while (!queue.empty()) {
    std::string from = queue.front();
    queue.pop_front();
    for (const auto& [host, n] : per_host) {
      if (offset.count(host) != 0) continue;
      std::vector<int64_t> diffs;
      std::set<std::string> kinds;
      for (const auto& [moment, hosts] : at) {
        auto a = hosts.find(from), b = hosts.find(host);
        if (a == hosts.end() || b == hosts.end()) continue;
        diffs.push_back(b->second - a->second);
        kinds.insert(kind_of(moment));
      }
      if (diffs.empty()) continue;
      ClockOffset o;
      o.host = host;
      o.reference = reference;
      o.offset_us = offset[from] + util::median(diffs);
      o.moments = static_cast<int>(diffs.size());
      o.basis = basis_of(kinds);
      o.corrected = o.offset_us >= kSkewThresholdUs || o.offset_us <= -kSkewThresholdUs;
      offset[host] = o.offset_us;
      out.push_back(std::move(o));
      queue.push_back(host);
    }
  }
  return out;
}

namespace {

// The ranks that waited in one collective entered it together: the watchdog's
// fire time minus how long the collective ran is that moment on each host
// (the configured timeout where PyTorch does not say how long it ran). A
// communicator's init completes together on all its ranks.
std::string samples_sql() {
  return "SELECT " + short_host_sql("e.host") + R"SQL(, 'watchdog pg ' || coalesce(e.pg_id, e.pg_desc, '0') || ' seq ' || w.seq,
       e.ts_us - 1000 * coalesce(w.ran_for_ms, w.timeout_ms)
  FROM events e JOIN work_records w USING (event_id)
  WHERE e.job_id = ?1 AND w.context = 'watchdog_timeout' AND e.host IS NOT NULL AND e.ts_us IS NOT NULL
    AND w.seq IS NOT NULL AND coalesce(w.ran_for_ms, w.timeout_ms) IS NOT NULL
UNION ALL
SELECT )SQL" + short_host_sql("e.host") + R"SQL(, 'init ' || c.comm_id, e.ts_us
  FROM communicators c JOIN events e USING (event_id)
  WHERE e.job_id = ?1 AND c.event = 'init_complete' AND c.comm_id IS NOT NULL AND e.host IS NOT NULL
    AND e.ts_us IS NOT NULL
)SQL";
}

// Shifts the times of the corrected hosts by `sign` x their offset: -1 puts
// them on the reference clock, +1 puts them back as printed. One pass per
// table, the offset looked up by key. The stored lines' groups keep the shift,
// which their lines' times take when read.
Status shift_times(Connection& db, int64_t job_id, int sign, int64_t before_file) {
  struct Shifted {
    const char* table;
    const char* time;   // what is shifted
    const char* timed;  // NULL when no line has a time
  };
  for (Shifted t : {Shifted{"events", "ts_us", "ts_us"}, Shifted{"line_groups", "ts_shift_us", "min_ts_us"}}) {
    std::string clock = short_host_sql(std::string(t.table) + ".host");
    std::string sql = std::string("UPDATE ") + t.table + " SET " + t.time + " = " + t.time +
        " + ?3 * (SELECT offset_us FROM clock_offsets o WHERE o.job_id = ?1 AND o.host = " + clock + ")"
        " WHERE job_id = ?1 AND file_id < ?2 AND " + t.timed + " IS NOT NULL AND " + clock + " IN (SELECT host FROM clock_offsets WHERE job_id = ?1 AND corrected = 1)";
    auto stmt = db.prepare(sql);
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->run({job_id, before_file, static_cast<int64_t>(sign)}); !s) return s;
  }
  return Ok{};
}

}  // namespace

Status IngestWriter::correct_clocks() {
  // The lines of earlier ingests go back to their printed times first.
  if (Status s = shift_times(db_, job_id_, +1, first_new_file_id_); !s) return s;

  std::vector<ClockSample> samples;
  auto read = db_.prepare(samples_sql());
  if (!read) return read.take_error();
  if (Status s = read->bind_all({job_id_}); !s) return s;
  std::optional<Error> error;
  while (read->step(&error)) samples.push_back({read->column_text(0), read->column_text(1), read->column_int(2)});
  if (error) return std::move(*error);

  // Rank 0's host: the one most of its events and progress lines name.
  auto rank0 = db_.prepare("SELECT clock FROM (SELECT " + short_host_sql("host") + " AS clock, 1 AS n FROM events"
                           " WHERE job_id = ?1 AND rank = 0 AND host IS NOT NULL"
                           " UNION ALL SELECT " + short_host_sql("host") + ", rows FROM line_groups"
                           " WHERE job_id = ?1 AND kind = 'training_progress' AND rank = 0 AND host IS NOT NULL)"
                           " GROUP BY clock ORDER BY sum(n) DESC, clock LIMIT 1");
  if (!rank0) return rank0.take_error();
  if (Status s = rank0->bind_all({job_id_}); !s) return s;
  std::string reference = rank0->step(&error) ? rank0->column_text(0) : std::string();
  if (error) return std::move(*error);

  if (Status s = db_.exec("DELETE FROM clock_offsets WHERE job_id = " + std::to_string(job_id_)); !s) return s;
  auto insert = db_.prepare(
      "INSERT INTO clock_offsets (job_id, host, reference_host, offset_us, moments, basis, corrected)"
      " VALUES (?, ?, ?, ?, ?, ?, ?)");
  if (!insert) return insert.take_error();
  for (const ClockOffset& o : estimate_clock_offsets(samples, reference)) {
    if (Status s = insert->run({job_id_, o.host, o.reference, o.offset_us, static_cast<int64_t>(o.moments), o.basis,
                                static_cast<int64_t>(o.corrected ? 1 : 0)});
        !s)
      return s;
  }
  return shift_times(db_, job_id_, -1, INT64_MAX);
}

}  // namespace ncclpm::store
