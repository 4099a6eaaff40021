// src/report/timeline.cc
//
// Reads, per rank (and per host for lines without a rank), the span of its
// lines and the moments that matter, then lays the lanes out: by rank up to
// kMaxRankLanes ranks, by host above that with the odd ranks drawn apart.
#include "ncclpm/report/timeline.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "ncclpm/util/text.h"

namespace ncclpm::report {
namespace {

// Where a line came from: a rank (its host may be named on only some of its
// lines), else a host, else nothing.
struct Key {
  int rank = -1;
  std::string host;  // only for rank -1
  bool operator<(const Key& o) const { return std::tie(rank, host) < std::tie(o.rank, o.host); }
};

Key key_of(int rank, const std::string& host) { return rank >= 0 ? Key{rank, ""} : Key{-1, host}; }

struct Source {
  std::map<std::string, int64_t> lines_by_host;  // which host its lines name, how often
  int64_t first_us = 0, last_us = 0, lines = 0;
  int64_t errors = 0;  // error lines, all of them; only the first is a mark
  int64_t init_started_us = 0, init_completed_us = 0;  // its world communicator's Init START / COMPLETE
  std::vector<Mark> marks;
  std::string host() const {
    std::string best;
    int64_t most = -1;
    for (const auto& [h, n] : lines_by_host)
      if (!h.empty() && n > most) best = h, most = n;
    return best;
  }
};

void widen(int64_t& first, int64_t& last, int64_t from, int64_t to) {
  if (from > 0 && (first == 0 || from < first)) first = from;
  if (to > 0 && to > last) last = to;
}

bool mark_earlier(const Mark& a, const Mark& b) {
  if ((a.ts_us == 0) != (b.ts_us == 0)) return a.ts_us != 0;
  return a.ts_us < b.ts_us;
}

// Each source's span and line count; `years_known` ends false when a timed
// line had no year (c10's `E0918 19:29:24`: the year is a guess).
Status read_spans(store::Connection& db, int64_t job_id, std::map<Key, Source>& sources, bool& years_known) {
  auto stmt = db.prepare(
      "SELECT coalesce(rank, -1), coalesce(host, ''), min(nullif(ts_us, 0)), max(last_us), sum(lines),"
      " min(CASE WHEN ts_us > 0 THEN coalesce(ts_has_year, 0) END) FROM ("
      " SELECT rank, host, ts_us, ts_us AS last_us, 1 AS lines, ts_has_year FROM events WHERE job_id = ?1"
      // The stored lines' groups know their lines' span: none is decoded.
      " UNION ALL SELECT rank, host, ncclpm_stored_time(min_ts_us, ts_year, ts_shift_us),"
      "  ncclpm_stored_time(max_ts_us, ts_year, ts_shift_us), rows, ts_has_year FROM line_groups WHERE job_id = ?1)"
      " GROUP BY 1, 2");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    int rank = static_cast<int>(stmt->column_int(0));
    std::string host = stmt->column_text(1);
    Source& s = sources[key_of(rank, host)];
    s.lines_by_host[host] += stmt->column_int(4);
    s.lines += stmt->column_int(4);
    widen(s.first_us, s.last_us, stmt->column_int(2), stmt->column_int(3));
    if (!stmt->column_is_null(5) && stmt->column_int(5) == 0) years_known = false;
  }
  if (err) return *err;
  return Ok{};
}

// The first error of each source, its first watchdog firing, and its exits
// and signals (a few: a launcher may report the same exit many times).
Status read_marks(store::Connection& db, int64_t job_id, std::map<Key, Source>& sources) {
  auto stmt = db.prepare(
      "SELECT coalesce(e.rank, -1), coalesce(e.host, ''), coalesce(e.ts_us, 0), e.kind, f.rel_path, e.line_no,"
      " CASE WHEN w.seq IS NOT NULL THEN 'Watchdog: ' || coalesce(w.op_type, '?') || ' seq ' || w.seq ||"
      "  coalesce(' ran for ' || w.ran_for_ms || ' ms', '') ELSE substr(e.text, 1, 400) END"
      " FROM events e JOIN files f USING (file_id)"
      " LEFT JOIN work_records w ON w.event_id = e.event_id AND w.context = 'watchdog_timeout'"
      " WHERE e.job_id = ?1 AND (e.kind IN ('nccl_warn', 'nccl_error_surfaced', 'traceback', 'cpp_exception',"
      " 'store_error', 'process_exit', 'signal_sent', 'watchdog_stuck') OR w.seq IS NOT NULL)"
      " ORDER BY e.ts_us IS NULL OR e.ts_us = 0, e.ts_us, e.event_id");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  std::map<Key, std::map<std::string, int>> taken;  // per source, marks of each kind so far
  while (stmt->step(&err)) {
    std::string kind = stmt->column_text(3);
    std::string mark = kind == "process_exit" ? "exit"
                       : kind == "signal_sent" ? "signal"
                       : kind == "work_record" || kind == "watchdog_stuck" ? "watchdog"
                                                                           : "error";
    Key key = key_of(static_cast<int>(stmt->column_int(0)), stmt->column_text(1));
    if (mark == "error") ++sources[key].errors;
    int& n = taken[key][mark];
    if (n >= (mark == "exit" || mark == "signal" ? 3 : 1)) continue;
    ++n;
    std::string text = stmt->column_text(6);
    text = std::string(util::clip(util::trim(text.substr(0, text.find('\n'))), 240));
    sources[key].marks.push_back(Mark{mark, stmt->column_int(2), text,
                                      stmt->column_text(4) + ":" + std::to_string(stmt->column_int(5))});
  }
  if (err) return *err;
  return Ok{};
}

// When each rank's communicator over the whole job started and completed its
// init (the first of each: later communicators form during training).
Status read_startup(store::Connection& db, int64_t job_id, std::map<Key, Source>& sources) {
  auto stmt = db.prepare(
      "SELECT e.rank, c.event, min(e.ts_us) FROM communicators c JOIN events e USING (event_id)"
      " WHERE e.job_id = ?1 AND e.rank >= 0 AND e.ts_us > 0 AND c.event IN ('init_start', 'init_complete')"
      " AND c.nranks = (SELECT max(c2.nranks) FROM communicators c2 JOIN events e2 USING (event_id)"
      "  WHERE e2.job_id = ?1) GROUP BY 1, 2");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    Source& s = sources[key_of(static_cast<int>(stmt->column_int(0)), "")];
    (stmt->column_text(1) == "init_start" ? s.init_started_us : s.init_completed_us) = stmt->column_int(2);
  }
  if (err) return *err;
  return Ok{};
}

// When each rank last completed a collective, where a Flight Recorder dump
// says: the entry's creation time plus its GPU duration (the logs' own lines
// never say when a collective completed). One pass: with max() SQLite takes
// the other columns from the row that has the maximum.
Status read_last_completed(store::Connection& db, int64_t job_id, std::map<Key, Source>& sources) {
  auto stmt = db.prepare(
      "SELECT e.rank, max(e.time_created_ns) / 1000 + CAST(coalesce(e.duration_ms, 0) * 1000 AS INTEGER),"
      " coalesce(e.profiling_name, e.op, '?'), e.collective_seq_id, coalesce(e.pg_id, ''), f.rel_path"
      " FROM flight_recorder_entries e JOIN files f USING (file_id)"
      " WHERE e.job_id = ?1 AND e.rank >= 0 AND e.state = 'completed' AND e.time_created_ns > 0"
      " GROUP BY e.rank");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    Source& s = sources[key_of(static_cast<int>(stmt->column_int(0)), "")];
    s.marks.push_back(Mark{"completed", stmt->column_int(1),
                           "last completed: " + stmt->column_text(2) + " seq " + std::to_string(stmt->column_int(3)) +
                               " in process group " + stmt->column_text(4) + " (Flight Recorder)",
                           stmt->column_text(5)});
  }
  if (err) return *err;
  return Ok{};
}

// How far each rank got: PyTorch's last status line, its Flight Recorder
// dump, and the seq its watchdog fired in.
Result<std::vector<RankProgress>> read_progress(store::Connection& db, int64_t job_id) {
  auto stmt = db.prepare(
      "SELECT rank, max(enq), max(comp), min(stuck) FROM ("
      " SELECT e.rank AS rank, p.last_enqueued AS enq, p.last_completed AS comp, NULL AS stuck"
      "  FROM pg_status p JOIN events e USING (event_id) WHERE e.job_id = ?1 AND e.rank >= 0"
      " UNION ALL SELECT rank, last_enqueued, last_completed, NULL FROM flight_recorder_pg_status"
      "  WHERE job_id = ?1 AND rank >= 0"
      " UNION ALL SELECT rank, NULL, NULL, seq FROM watchdog_timeouts WHERE job_id = ?1 AND rank >= 0)"
      " GROUP BY rank ORDER BY rank");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  std::vector<RankProgress> out;
  std::optional<Error> err;
  auto or_unknown = [&](int i) { return stmt->column_is_null(i) ? int64_t{-1} : stmt->column_int(i); };
  while (stmt->step(&err))
    out.push_back(RankProgress{static_cast<int>(stmt->column_int(0)), or_unknown(1), or_unknown(2), or_unknown(3)});
  if (err) return *err;
  return out;
}

Result<int64_t> read_hang_start(store::Connection& db, int64_t job_id) {
  return db.scalar_int(
      "SELECT coalesce(min(ts_us - ran_for_ms * 1000), 0) FROM watchdog_timeouts"
      " WHERE job_id = ?1 AND ts_us > 0 AND ran_for_ms > 0",
      {job_id});
}

Status read_versions_and_settings(store::Connection& db, int64_t job_id, std::map<std::string, HostRow>& hosts,
                                  std::map<std::string, std::string>& settings) {
  auto versions = db.prepare(
      "SELECT DISTINCT coalesce(e.host, ''), v.version FROM nccl_versions v JOIN events e USING (event_id)"
      " WHERE e.job_id = ?1 AND v.version IS NOT NULL ORDER BY 1, 2");
  if (!versions) return versions.take_error();
  if (Status s = versions->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  while (versions->step(&err)) {
    HostRow& h = hosts[versions->column_text(0)];
    h.host = versions->column_text(0);
    h.nccl_versions.push_back(versions->column_text(1));
  }
  if (err) return *err;
  auto env = db.prepare(
      "SELECT n.name, n.value FROM nccl_env n JOIN events e USING (event_id) WHERE e.job_id = ?1 ORDER BY e.event_id");
  if (!env) return env.take_error();
  if (Status s = env->bind_all({job_id}); !s) return s;
  while (env->step(&err)) settings[env->column_text(0)] = env->column_text(1);
  if (err) return *err;
  return Ok{};
}

// The culprit hosts that recur across the database's diagnosed jobs (their
// stored findings; this job's count once it is diagnosed and stored).
Status read_recurring_hosts(store::Connection& db, Timeline& t) {
  auto jobs = db.scalar_int("SELECT count(*) FROM jobs");
  if (!jobs) return jobs.take_error();
  t.jobs_in_database = *jobs;
  if (*jobs < 2) return Ok{};
  auto stmt = db.prepare(
      "SELECT h.value, count(DISTINCT f.job_id), group_concat(DISTINCT j.name)"
      " FROM findings f JOIN jobs j USING (job_id), json_each(f.culprit_hosts) h"
      " WHERE f.root_cause GROUP BY h.value HAVING count(DISTINCT f.job_id) > 1 ORDER BY 2 DESC, 1 LIMIT 20");
  if (!stmt) return stmt.take_error();
  std::optional<Error> err;
  while (stmt->step(&err))
    t.recurring_hosts.push_back(RecurringHost{stmt->column_text(0), stmt->column_int(1), stmt->column_text(2)});
  if (err) return *err;
  return Ok{};
}

Lane lane_of(const Key& key, const Source& s) {
  Lane lane;
  lane.host = key.rank >= 0 ? s.host() : key.host;
  if (key.rank >= 0) {
    lane.ranks = {key.rank};
    lane.label = "rank " + std::to_string(key.rank);
  } else {
    lane.label = key.host.empty() ? "no rank or host" : key.host + " (no rank)";
  }
  lane.first_us = s.first_us;
  lane.last_us = s.last_us;
  lane.lines = s.lines;
  lane.marks = s.marks;
  std::stable_sort(lane.marks.begin(), lane.marks.end(), mark_earlier);
  // Start-up: from the first line to Init COMPLETE, or to the last line when
  // the communicator started forming and never completed.
  if (s.first_us != 0 && s.init_completed_us > s.first_us)
    lane.bands.push_back(Band{"start-up", s.first_us, s.init_completed_us, "until Init COMPLETE"});
  else if (s.init_started_us != 0 && s.init_completed_us == 0 && s.last_us > s.first_us)
    lane.bands.push_back(Band{"start-up, never completed", s.first_us, s.last_us,
                              "Init START without Init COMPLETE"});
  return lane;
}

// A host's ranks as one lane: its span, and its earliest mark of each kind.
Lane merge_host(const std::string& host, const std::vector<const Lane*>& members) {
  Lane lane;
  lane.host = host;
  for (const Lane* m : members) {
    lane.ranks.insert(lane.ranks.end(), m->ranks.begin(), m->ranks.end());
    widen(lane.first_us, lane.last_us, m->first_us, m->last_us);
    lane.lines += m->lines;
    for (const Mark& mark : m->marks) {
      auto same = std::find_if(lane.marks.begin(), lane.marks.end(), [&](const Mark& x) { return x.kind == mark.kind; });
      if (same == lane.marks.end()) lane.marks.push_back(mark);
      else if (mark_earlier(mark, *same)) *same = mark;
    }
    lane.culprit = lane.culprit || m->culprit;
    // One band of each kind for the host: from its first rank's start to its last rank's end.
    for (const Band& b : m->bands) {
      auto same = std::find_if(lane.bands.begin(), lane.bands.end(), [&](const Band& x) { return x.label == b.label; });
      if (same == lane.bands.end()) {
        lane.bands.push_back(b);
      } else {
        same->from_us = std::min(same->from_us, b.from_us);
        same->to_us = std::max(same->to_us, b.to_us);
      }
    }
  }
  std::sort(lane.ranks.begin(), lane.ranks.end());
  std::stable_sort(lane.marks.begin(), lane.marks.end(), mark_earlier);
  lane.label = (host.empty() ? std::string("unknown host") : host) + " (" + std::to_string(lane.ranks.size()) +
               (lane.ranks.size() == 1 ? " rank)" : " ranks)");
  return lane;
}

// The value most ranks share; -1 when none is known.
int64_t most_common(const std::vector<RankProgress>& progress, int64_t RankProgress::*field) {
  std::map<int64_t, int> count;
  for (const RankProgress& p : progress)
    if (p.*field >= 0) ++count[p.*field];
  int64_t best = -1;
  int most = 0;
  for (const auto& [v, n] : count)
    if (n > most) best = v, most = n;
  return best;
}

// On a big job the ranks worth a lane of their own: the culprits, ranks
// whose progress differs from most ranks', and ranks with a kind of mark
// most ranks lack (the one that crashed among a thousand that timed out).
std::set<int> odd_ranks(const std::vector<Lane>& rank_lanes, const std::vector<RankProgress>& progress) {
  constexpr size_t kMaxExpanded = 64;
  std::set<int> odd;
  for (const Lane& l : rank_lanes)
    if (l.culprit) odd.insert(l.ranks.front());
  int64_t common_completed = most_common(progress, &RankProgress::last_completed);
  int64_t common_stuck = most_common(progress, &RankProgress::stuck_seq);
  for (const RankProgress& p : progress) {
    if (odd.size() >= kMaxExpanded) break;
    if ((p.last_completed >= 0 && p.last_completed != common_completed) ||
        (p.stuck_seq >= 0 && p.stuck_seq != common_stuck))
      odd.insert(p.rank);
  }
  std::map<std::string, size_t> having;
  for (const Lane& l : rank_lanes) {
    std::set<std::string> kinds;
    for (const Mark& m : l.marks) kinds.insert(m.kind);
    for (const std::string& k : kinds) ++having[k];
  }
  for (const Lane& l : rank_lanes) {
    if (odd.size() >= kMaxExpanded) break;
    for (const Mark& m : l.marks)
      if (m.kind != "completed" && having[m.kind] * 10 < rank_lanes.size()) {
        odd.insert(l.ranks.front());
        break;
      }
  }
  return odd;
}

// Lanes in host order (a host's place is its lowest rank), ranks in order.
std::vector<Lane> lay_out(std::vector<Lane> rank_lanes, std::vector<Lane> other_lanes, bool by_host,
                          const std::vector<RankProgress>& progress) {
  std::map<std::string, int> host_order;
  for (const Lane& l : rank_lanes)
    if (!host_order.count(l.host)) host_order[l.host] = l.ranks.front();
  for (const Lane& l : other_lanes)
    if (!host_order.count(l.host)) host_order[l.host] = 1 << 30;
  auto place = [&](const Lane& l) {
    return std::make_tuple(host_order[l.host], l.host, l.ranks.empty() ? 1 : 0, l.ranks.empty() ? 0 : l.ranks.front(),
                           l.expanded ? 1 : 0);
  };
  std::vector<Lane> lanes;
  if (!by_host) {
    lanes = std::move(rank_lanes);
  } else {
    std::set<int> odd = odd_ranks(rank_lanes, progress);
    std::map<std::string, std::vector<const Lane*>> members;
    for (const Lane& l : rank_lanes) members[l.host].push_back(&l);
    for (const auto& [host, m] : members) lanes.push_back(merge_host(host, m));
    for (const Lane& l : rank_lanes)
      if (odd.count(l.ranks.front())) {
        lanes.push_back(l);
        lanes.back().expanded = true;
      }
  }
  for (Lane& l : other_lanes) lanes.push_back(std::move(l));
  std::stable_sort(lanes.begin(), lanes.end(), [&](const Lane& a, const Lane& b) { return place(a) < place(b); });
  return lanes;
}

// The phase a root-cause finding puts its culprits in, as a band on their
// lanes from its latest timed evidence line (an earlier one may show an
// earlier save that finished) to the end of the logs.
void add_phase_bands(const diagnose::Diagnosis& d, Timeline& t) {
  static const std::map<std::string, std::string> kPhase = {
      {"save_phase_stall", "checkpoint save"},   {"eval_generate_stall", "evaluation or generation"},
      {"packing_deadlock", "TRL training step"}, {"data_imbalance", "uneven data"},
      {"straggler", "slow rank"}};
  for (const diagnose::Finding& f : d.findings) {
    auto phase = kPhase.find(f.category);
    if (!f.root_cause || phase == kPhase.end() || t.end_us == 0) continue;
    const diagnose::Evidence* first = nullptr;
    for (const diagnose::Evidence& e : f.evidence)
      if (e.ts_us != 0 && (first == nullptr || e.ts_us > first->ts_us)) first = &e;
    if (first == nullptr) continue;
    for (Lane& lane : t.lanes)
      if (lane.ranks.size() == 1 &&
          std::find(f.culprit_ranks.begin(), f.culprit_ranks.end(), lane.ranks.front()) != f.culprit_ranks.end())
        lane.bands.push_back(Band{phase->second, first->ts_us, t.end_us, first->file + ":" +
                                                                        std::to_string(first->line) + "  " +
                                                                        std::string(util::clip(first->text, 200))});
  }
}

}  // namespace

Result<Timeline> load_timeline(store::Connection& db, const diagnose::Diagnosis& d) {
  std::map<Key, Source> sources;
  Timeline t;
  if (Status s = read_spans(db, d.job_id, sources, t.years_known); !s) return s.take_error();
  if (Status s = read_marks(db, d.job_id, sources); !s) return s.take_error();
  if (Status s = read_last_completed(db, d.job_id, sources); !s) return s.take_error();
  if (Status s = read_startup(db, d.job_id, sources); !s) return s.take_error();
  auto progress = read_progress(db, d.job_id);
  if (!progress) return progress.take_error();
  t.progress = std::move(*progress);
  // The diagnosis's suspect collective says when the hang began; without
  // one, the earliest of any watchdog firing minus its ran-for.
  for (const diagnose::Finding& f : d.findings)
    if (f.collective && f.collective->hang_start_us != 0 && t.hang_start_us == 0)
      t.hang_start_us = f.collective->hang_start_us;
  if (t.hang_start_us == 0) {
    auto hang = read_hang_start(db, d.job_id);
    if (!hang) return hang.take_error();
    t.hang_start_us = *hang;
  }

  std::set<int> culprit_ranks;
  std::set<std::string> culprit_hosts;
  for (const diagnose::Finding& f : d.findings)
    if (f.root_cause) {
      culprit_ranks.insert(f.culprit_ranks.begin(), f.culprit_ranks.end());
      culprit_hosts.insert(f.culprit_hosts.begin(), f.culprit_hosts.end());
    }
  std::vector<Lane> rank_lanes, other_lanes;
  std::map<std::string, HostRow> hosts;
  for (const auto& [key, source] : sources) {
    Lane lane = lane_of(key, source);
    // Findings that name hosts but no rank mark every lane of those hosts.
    lane.culprit = (key.rank >= 0 && culprit_ranks.count(key.rank)) ||
                   (culprit_ranks.empty() && !lane.host.empty() && culprit_hosts.count(lane.host));
    widen(t.start_us, t.end_us, lane.first_us, lane.last_us);
    HostRow& h = hosts[lane.host];
    h.host = lane.host;
    if (key.rank >= 0) ++h.ranks;
    h.errors += source.errors;
    for (const Mark& m : lane.marks)
      if (m.kind == "error") {
        if (m.ts_us > 0 && (h.first_error_us == 0 || m.ts_us < h.first_error_us)) h.first_error_us = m.ts_us;
      }
    (key.rank >= 0 ? rank_lanes : other_lanes).push_back(std::move(lane));
  }
  t.rank_count = static_cast<int>(rank_lanes.size());
  t.by_host = t.rank_count > kMaxRankLanes;
  t.lanes = lay_out(std::move(rank_lanes), std::move(other_lanes), t.by_host, t.progress);
  if (Status s = read_versions_and_settings(db, d.job_id, hosts, t.nccl_settings); !s) return s.take_error();
  for (auto& [name, row] : hosts)
    if (!name.empty() || row.ranks > 0 || row.errors > 0) t.hosts.push_back(std::move(row));
  if (Status s = read_recurring_hosts(db, t); !s) return s.take_error();
  add_phase_bands(d, t);
  for (const diagnose::JobPhase& p : d.phases)
    t.job_phases.push_back(Band{p.phase, p.from_us, p.to_us != 0 ? p.to_us : std::max(t.end_us, p.from_us),
                                p.marker.file + ":" + std::to_string(p.marker.line) + "  " +
                                    std::string(util::clip(p.marker.text, 200))});
  return t;
}

}  // namespace ncclpm::report
