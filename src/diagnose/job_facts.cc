// src/diagnose/job_facts.cc
#include "job_facts.h"

#include <re2/re2.h>

#include <algorithm>
#include <tuple>

#include "ncclpm/recognize/events.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/store/schema.h"
#include "duplicate_gpu.h"
#include "flight_recorder.h"
#include "progress.h"
#include "ncclpm/store/line_blocks.h"

namespace ncclpm::diagnose {
namespace {

using store::Value;

}  // namespace

std::string event_kind_not_in(const char* kinds) {
  std::string wanted;
  for (int k = 0; k < static_cast<int>(recognize::EventKind::kCount_); ++k) {
    std::string name = std::string("'") + recognize::event_kind_name(static_cast<recognize::EventKind>(k)) + "'";
    if (std::string_view(kinds).find(name) != std::string_view::npos) continue;
    wanted += (wanted.empty() ? "" : ", ") + name;
  }
  return "e.event_id IN (SELECT event_id FROM events WHERE job_id = ?1 AND kind IN (" + wanted + "))";
}

Located read_located(const store::Statement& s) {
  Located l;
  l.file = s.column_text(0);
  l.line = s.column_int(1);
  l.rank = s.column_is_null(2) ? -1 : static_cast<int>(s.column_int(2));
  l.host = s.column_text(3);
  l.ts_us = s.column_int(4);
  l.text = s.column_text(5);
  return l;
}

namespace {

// Runs `sql` (with ?1 = job id) and calls `row` for every row.
template <typename F>
Status each_row(store::Connection& db, const std::string& sql, int64_t job_id, F row) {
  auto stmt = db.prepare(sql);
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s;
  std::optional<Error> err;
  while (stmt->step(&err)) row(*stmt);
  if (err) return *err;
  return Ok{};
}

std::string pg_key(const store::Statement& s, int id_col, int desc_col) {
  std::string desc = s.column_text(desc_col);
  std::string id = s.column_text(id_col);
  if (!desc.empty()) return desc;
  return id.empty() ? "default" : id;
}

// PyTorch's own reports name culprits: the desync report's lagging ranks, and
// in mismatch reports the ranks whose collective differs from the majority's.
Status load_reported_culprits(store::Connection& db, int64_t job_id, JobFacts& f) {
  std::map<int, std::string> op_of;
  Status s = each_row(db, "SELECT rank_a, op_a, rank_b, op_b FROM collective_mismatches WHERE job_id = ?1", job_id,
                      [&](const store::Statement& r) {
                        if (!r.column_is_null(0)) op_of[static_cast<int>(r.column_int(0))] = r.column_text(1);
                        if (!r.column_is_null(2)) op_of[static_cast<int>(r.column_int(2))] = r.column_text(3);
                      });
  if (!s) return s;
  std::map<std::string, int> votes;
  for (const auto& [rank, op] : op_of)
    if (!op.empty()) ++votes[op];
  // Every report names one op: the ranks agreed on the collective and
  // disagreed on its shape, i.e. on the data they were given.
  // (One rank's side alone says nothing of the other's op; reports from two
  // ranks, even one-sided ones of the 1.x era, name two sides.)
  size_t sides = std::count_if(op_of.begin(), op_of.end(), [](const auto& kv) { return !kv.second.empty(); });
  f.mismatch_same_op = votes.size() == 1 && sides >= 2;
  if (votes.size() > 1) {
    auto majority = std::max_element(votes.begin(), votes.end(),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
    bool tie = std::count_if(votes.begin(), votes.end(), [&](const auto& v) { return v.second == majority->second; }) > 1;
    for (const auto& [rank, op] : op_of)
      if (tie || op != majority->first) f.reported_culprits.insert(rank);
  }
  // "joined but didn't finish" lists every rank that is stuck, not culprits.
  return each_row(db, "SELECT lagging_ranks FROM desync_reports WHERE job_id = ?1 AND lagging_ranks IS NOT NULL"
                      " AND kind IN ('never_joined', 'finished_not_joined')",
                  job_id, [&](const store::Statement& r) {
                    std::string text = r.column_text(0);
                    re2::StringPiece in(text);
                    int rank = 0;
                    static const RE2 num(R"((\d+))");
                    while (RE2::FindAndConsume(&in, num, &rank)) f.reported_culprits.insert(rank);
                  });
}

// Exceptions a rank raises because of another rank's failure: the process
// group was aborted, the launcher stopped it, the store went away.
bool is_cascade_exception(const std::string& what) {
  static const char* kCascade[] = {"DistBackendError", "ChildFailedError", "ActorDiedError",
                                   "communicator was aborted", "Watchdog caught", "SignalException",
                                   "KeyboardInterrupt", "DistNetworkError", "DistStoreError",
                                   "RendezvousConnectionError", "remote process exited"};
  return std::any_of(std::begin(kCascade), std::end(kCascade),
                     [&](const char* c) { return what.find(c) != std::string::npos; });
}

// A restated timeout counts only for a known rank whose own report of that
// collective is not in the logs, and once (what() repeats the termination,
// often on a line no prefix attributes). The process group is left out of
// the comparison: the termination names it ("[PG 0 Rank 1]") where the
// watchdog's line of the same era does not.
void drop_restated_timeouts(std::vector<TimeoutRecord>& timeouts, const std::vector<bool>& restated) {
  auto key = [](const TimeoutRecord& t) {
    return std::make_tuple(t.at.rank, t.at.host, t.seq, t.op_type, t.numel_in);
  };
  std::set<std::tuple<int, std::string, int64_t, std::string, int64_t>> reported;
  for (size_t i = 0; i < timeouts.size(); ++i)
    if (!restated[i]) reported.insert(key(timeouts[i]));
  std::vector<TimeoutRecord> kept;
  for (size_t i = 0; i < timeouts.size(); ++i)
    if (!restated[i] || (timeouts[i].at.rank >= 0 && reported.insert(key(timeouts[i])).second))
      kept.push_back(timeouts[i]);
  timeouts = std::move(kept);
}

// The rank a launcher names as the first to fail: torchrun's Root Cause
// entry, else the one rank that mpirun or srun saw exit by itself (a signal
// other than the launcher's SIGTERM, or a non-zero code). Two ranks with no
// order between them name none.
std::optional<Located> launcher_first_failed(const std::vector<Failure>& failures) {
  auto names_own_exit = [](const Failure& fl) {
    bool names_rank = fl.kind.starts_with("process_exit:elastic_summary:") || fl.kind.starts_with("process_exit:srun:") ||
                      fl.kind.starts_with("process_exit:mpirun:");
    return names_rank && !fl.cascade && fl.at.rank >= 0;
  };
  for (const Failure& fl : failures)
    if (names_own_exit(fl) && fl.first_observed) return fl.at;
  std::optional<Located> only;
  for (const Failure& fl : failures) {
    if (!names_own_exit(fl)) continue;
    if (only && only->rank != fl.at.rank) return std::nullopt;
    only = fl.at;
  }
  return only;
}

}  // namespace

Result<JobFacts> load_facts(store::Connection& db, int64_t job_id) {
  JobFacts f;
  f.job_id = job_id;
  // A typed table is small, events may hold millions of NCCL start-up lines:
  // CROSS JOIN makes SQLite walk the typed rows and look their events up.
  auto rows_of = [](const char* typed_table) {
    return std::string(" FROM ") + typed_table + " CROSS JOIN events e USING (event_id) JOIN files f USING (file_id) ";
  };

  // Each rank's host is the one most of its lines name, as ingest counted them.
  Status s = each_row(db,
      "SELECT rank, host, sum(lines) AS n FROM rank_lines"
      " WHERE job_id = ?1 GROUP BY rank, host ORDER BY rank, n DESC, host", job_id,
      [&](const store::Statement& r) {
        int rank = static_cast<int>(r.column_int(0));
        f.ranks.insert(rank);
        std::string host = r.column_text(1);
        if (!host.empty() && f.host_of_rank.count(rank) == 0) f.host_of_rank[rank] = host;
      });
  if (!s) return s.take_error();

  // A rank's timeout is its watchdog's report, or, where that line is not in
  // the logs, the exception that terminated the watchdog restating it ("NCCL
  // watchdog thread terminated with exception: [Rank 0] Watchdog caught
  // collective operation timeout: WorkNCCL(...)"): that rank waited too.
  std::vector<bool> restated;
  s = each_row(db,
      std::string("SELECT ") + kLocatedColumns +
          ", e.pg_id, e.pg_desc, e.pg_rank, w.seq, w.op_type, w.numel_in, w.numel_out, w.timeout_ms,"
          " w.ran_for_ms, w.context = 'terminate_exception'" + rows_of("work_records w") +
          "WHERE e.job_id = ?1 AND (w.context = 'watchdog_timeout' OR (w.context = 'terminate_exception'"
          " AND e.text LIKE '%caught collective operation timeout%')) ORDER BY e.ts_us, f.rel_path, e.line_no",
      job_id, [&](const store::Statement& r) {
        restated.push_back(r.column_int(15) != 0);
        TimeoutRecord t;
        t.at = read_located(r);
        t.pg = pg_key(r, 6, 7);
        t.pg_rank = r.column_is_null(8) ? -1 : static_cast<int>(r.column_int(8));
        t.seq = r.column_is_null(9) ? -1 : r.column_int(9);
        t.op_type = r.column_text(10);
        t.numel_in = r.column_is_null(11) ? -1 : r.column_int(11);
        t.numel_out = r.column_is_null(12) ? -1 : r.column_int(12);
        t.timeout_ms = r.column_is_null(13) ? -1 : r.column_int(13);
        t.ran_for_ms = r.column_is_null(14) ? -1 : r.column_int(14);
        f.timeouts.push_back(std::move(t));
      });
  if (!s) return s.take_error();
  drop_restated_timeouts(f.timeouts, restated);

  s = each_row(db,
      std::string("SELECT ") + kLocatedColumns +
          ", e.pg_id, e.pg_desc, p.seq, p.last_enqueued, p.last_completed, p.wording" + rows_of("pg_status p") +
          "WHERE e.job_id = ?1 ORDER BY f.rel_path, e.line_no",
      job_id, [&](const store::Statement& r) {
        StatusRecord st;
        st.at = read_located(r);
        st.pg = pg_key(r, 6, 7);
        st.seq = r.column_is_null(8) ? -1 : r.column_int(8);
        st.last_enqueued = r.column_is_null(9) ? -1 : r.column_int(9);
        st.last_completed = r.column_is_null(10) ? -1 : r.column_int(10);
        st.wording = r.column_text(11);
        f.statuses.push_back(std::move(st));
      });
  if (!s) return s.take_error();

  // Failures of a rank's own: exceptions (but not the ones a dying process
  // group throws at everyone) and exits by a signal other than the
  // launcher's SIGTERM.
  s = each_row(db,
      std::string("SELECT ") + kLocatedColumns + ", t.exc_type, t.exc_message" + rows_of("tracebacks t") +
          "WHERE e.job_id = ?1",
      job_id, [&](const store::Statement& r) {
        Failure fl;
        fl.at = read_located(r);
        fl.what = r.column_text(6);
        std::string msg = r.column_text(7);
        if (!msg.empty()) fl.what += ": " + msg.substr(0, msg.find('\n'));
        fl.kind = "traceback";
        fl.cascade = is_cascade_exception(fl.what);
        f.failures.push_back(std::move(fl));
      });
  if (!s) return s.take_error();
  s = each_row(db,
      std::string("SELECT ") + kLocatedColumns + ", x.exit_code, x.signal, x.source, x.rank, x.root_cause_block" +
          rows_of("process_exits x") +
          "WHERE e.job_id = ?1 AND x.exit_code IS NOT NULL AND x.exit_code != 0",
      job_id, [&](const store::Statement& r) {
        Failure fl;
        fl.at = read_located(r);
        if (!r.column_is_null(9)) fl.at.rank = static_cast<int>(r.column_int(9));
        fl.what = "exit code " + r.column_text(6) + (r.column_text(7).empty() ? "" : " (" + r.column_text(7) + ")");
        std::string signal = r.column_text(7);
        int64_t code = r.column_int(6);
        if (signal.empty() && code == -6) signal = "SIGABRT";
        if (signal.empty() && code == -15) signal = "SIGTERM";
        fl.kind = "process_exit:" + r.column_text(8) + ":" + signal;
        fl.cascade = signal == "SIGTERM";  // the launcher stopping the others
        fl.first_observed = r.column_int(10) != 0;
        f.failures.push_back(std::move(fl));
      });
  if (!s) return s.take_error();
  std::sort(f.failures.begin(), f.failures.end(), [](const Failure& a, const Failure& b) {
    if ((a.at.ts_us == 0) != (b.at.ts_us == 0)) return a.at.ts_us != 0;
    return std::tie(a.at.ts_us, a.at.file, a.at.line, a.kind) < std::tie(b.at.ts_us, b.at.file, b.at.line, b.kind);
  });
  f.launcher_first_failed = launcher_first_failed(f.failures);

  s = each_row(db,
      "SELECT n.name, n.value, count(*) FROM nccl_env n WHERE n.job_id = ?1 GROUP BY n.name, n.value"
      " ORDER BY count(*), n.name, n.value", job_id,
      [&](const store::Statement& r) { f.nccl_env[r.column_text(0)] = r.column_text(1); });
  if (!s) return s.take_error();

  s = each_row(db,
      std::string("SELECT ") + kLocatedColumns + ", v.version, v.cuda" + rows_of("nccl_versions v") +
          "WHERE e.job_id = ?1 ORDER BY f.rel_path, e.line_no",
      job_id, [&](const store::Statement& r) {
        std::string v = r.column_text(6);
        if (!r.column_text(7).empty()) v += "+cuda" + r.column_text(7);
        f.nccl_versions[v].push_back(read_located(r));
      });
  if (!s) return s.take_error();

  // Interfaces and HCAs NCCL said it used: the names advice should quote.
  static const RE2 ifname(R"((?:OOB|Using|Using \[\d+\])\s*\[?\d*\]?([A-Za-z][\w.-]*):\d+\.\d+\.\d+\.\d+)");
  static const RE2 hca(R"(\[\d+\](mlx\d+_\d+|\w+_\d+):\d+/)");
  s = each_row(db,
      "SELECT text FROM nccl_network_lines WHERE job_id = ?1 ORDER BY file_id, line_no LIMIT 2000", job_id,
      [&](const store::Statement& r) {
        std::string text = r.column_text(0);
        re2::StringPiece in(text);
        std::string name;
        while (RE2::FindAndConsume(&in, ifname, &name))
          if (std::find(f.interfaces.begin(), f.interfaces.end(), name) == f.interfaces.end())
            f.interfaces.push_back(name);
        re2::StringPiece in2(text);
        while (RE2::FindAndConsume(&in2, hca, &name))
          if (std::find(f.hcas.begin(), f.hcas.end(), name) == f.hcas.end()) f.hcas.push_back(name);
      });
  if (!s) return s.take_error();

  // World size: the largest communicator or process count any line names.
  int world = f.ranks.empty() ? 0 : *f.ranks.rbegin() + 1;
  s = each_row(db,
      "SELECT max(nranks) FROM (SELECT max(nranks) AS nranks FROM communicators WHERE job_id = ?1"
      " UNION ALL SELECT max(nranks) FROM collective_summary WHERE job_id = ?1)", job_id,
      [&](const store::Statement& r) { world = std::max<int>(world, static_cast<int>(r.column_int(0))); });
  if (!s) return s.take_error();
  f.world_size = world;

  s = each_row(db,
      // The summary ingest keeps, not the millions of collective rows.
      "SELECT rank, max(nranks), sum(calls), max(max_op_count) FROM collective_summary WHERE job_id = ?1"
      " AND rank IS NOT NULL AND nranks = " + std::to_string(world) + " GROUP BY rank ORDER BY rank",
      job_id, [&](const store::Statement& r) {
        f.coll_stats.push_back(CollStats{static_cast<int>(r.column_int(0)), static_cast<int>(r.column_int(1)),
                                         r.column_int(2), r.column_int(3)});
      });
  if (!s) return s.take_error();

  if (Status st = load_reported_culprits(db, job_id, f); !st) return st.take_error();
  auto bars = load_last_bars(db, job_id);
  if (!bars) return bars.take_error();
  f.last_bars = std::move(bars).value();
  f.uneven_batches = find_uneven_batches(f.last_bars);
  f.slow_host = find_slow_host(f.last_bars);
  if (!f.slow_host) {
    auto timers = load_rank_timers(db, job_id, f.host_of_rank);
    if (!timers) return timers.take_error();
    f.slow_host = find_slow_host_in_timers(*timers);
  }
  auto timed = load_timed_steps(db, job_id);
  if (!timed) return timed.take_error();
  f.slowdown = find_slowdown(*timed);
  auto fr = find_fr_missing_ranks(db, job_id);
  if (!fr) return fr.take_error();
  f.fr_missing = std::move(fr).value();
  auto fr_mismatch = find_fr_mismatch(db, job_id);
  if (!fr_mismatch) return fr_mismatch.take_error();
  f.fr_mismatch = std::move(fr_mismatch).value();
  auto duplicate = find_duplicate_gpu(db, job_id);
  if (!duplicate) return duplicate.take_error();
  f.duplicate_gpu = std::move(duplicate).value();
  // The ranks whose own error says they waited for rank 0's ncclUniqueId:
  // the line's rank, or the one its message names.
  s = each_row(db,
      "SELECT coalesce(rank, -1), text FROM events WHERE job_id = ?1"
      " AND kind IN ('traceback', 'cpp_exception', 'store_error', 'nccl_error_surfaced')"
      " AND text LIKE '%] is setting up NCCL communicator%'",
      job_id, [&](const store::Statement& r) {
        int rank = r.column_int(0) >= 0 ? static_cast<int>(r.column_int(0))
                                        : recognize::rank_awaiting_unique_id(r.column_text(1));
        if (rank >= 0) f.awaited_rank0.insert(rank);
      });
  if (!s) return s.take_error();

  s = each_row(db,
      "SELECT rank, max(last_enqueued) FROM flight_recorder_pg_status WHERE job_id = ?1 AND rank IS NOT NULL"
      " GROUP BY rank", job_id,
      [&](const store::Statement& r) { f.fr_last_enqueued[static_cast<int>(r.column_int(0))] = r.column_int(1); });
  if (!s) return s.take_error();
  return f;
}

Result<std::map<int, std::vector<Located>>> rank_tails(store::Connection& db, int64_t job_id,
                                                       const std::set<int>& ranks, int max_lines) {
  // Lines of these ranks, in file order, up to (not including) each one's
  // first watchdog or error line in that file: what it was doing while the
  // others waited. One pass for all ranks: with every rank stuck, a query per
  // rank would read the unparsed lines once per rank.
  std::string wanted = "[";
  for (int r : ranks) wanted += (wanted.size() > 1 ? "," : "") + std::to_string(r);
  wanted += "]";
  std::string sql =
      "WITH wanted AS (SELECT value AS rank FROM json_each(?2)),"
      " lines AS ("
      " SELECT f.rel_path, e.line_no, e.rank, e.host, coalesce(e.ts_us, 0) AS ts, e.text, e.kind, e.file_id"
      "  FROM events e JOIN files f USING (file_id) WHERE e.job_id = ?1 AND e.rank IN wanted"
      " UNION ALL"
      // (Progress lines before unparsed ones: a bar and the line glued to it
      // share a line number, and the bar came first.)
      " SELECT f.rel_path, p.line_no, p.rank, p.host, coalesce(p.ts_us, 0), p.text, 'training_progress', p.file_id"
      "  FROM training_progress p JOIN files f USING (file_id) WHERE p.job_id = ?1 AND p.rank IN wanted"
      " UNION ALL"
      " SELECT f.rel_path, u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text, 'unparsed', u.file_id"
      "  FROM unparsed_lines u JOIN files f USING (file_id) WHERE u.job_id = ?1 AND u.rank IN wanted),"
      " first_error AS (SELECT rank, file_id, min(line_no) AS line_no FROM lines WHERE kind IN"
      "  ('work_record', 'pg_status', 'pg_terminate', 'traceback', 'nccl_error_surfaced', 'cpp_exception',"
      "   'dump_signal', 'watchdog_stuck') GROUP BY rank, file_id),"
      " tail_lines AS (SELECT l.*, row_number() OVER (PARTITION BY l.rank, l.file_id ORDER BY l.line_no DESC) AS back"
      "  FROM lines l LEFT JOIN first_error fe ON fe.rank = l.rank AND fe.file_id = l.file_id"
      "  WHERE l.line_no < coalesce(fe.line_no, 1 << 62) AND l.kind NOT IN " + std::string(kNcclChatterKinds) + ")"
      // The last lines of each of the rank's files: its stdout and its stderr both tell.
      " SELECT rel_path, line_no, rank, host, ts, text FROM tail_lines WHERE back <= ?3"
      " ORDER BY rank, file_id, line_no";
  std::map<int, std::vector<Located>> out;
  for (int r : ranks) out[r];
  if (ranks.empty()) return out;
  Status s = db.each_row(sql, {job_id, wanted, int64_t{max_lines}}, [&](const store::Statement& row) {
    Located l = read_located(row);
    out[l.rank].push_back(std::move(l));
  });
  if (!s) return s.take_error();
  return out;
}

Result<std::vector<Located>> rank_tail(store::Connection& db, int64_t job_id, int rank, int max_lines) {
  auto tails = rank_tails(db, job_id, {rank}, max_lines);
  if (!tails) return tails.take_error();
  return std::move((*tails)[rank]);
}

std::string last_blocks_bound_sql(const char* kind, const std::string& file, const std::string& upto,
                                  const std::string& blocks) {
  return "(SELECT coalesce(min(first), 0) FROM (SELECT min(first_line) AS first FROM line_groups WHERE file_id = " +
         file + " AND kind = '" + kind + "' AND first_line <= " + upto + " GROUP BY block_id ORDER BY block_id DESC"
         " LIMIT " + blocks + "))";
}

Result<std::vector<Located>> lines_before(store::Connection& db, int64_t job_id, const Located& at, int max_lines) {
  // By file_id, so the events' (file_id, line_no) index and the line groups'
  // find the lines: this runs once per file that timed out, thousands on a big
  // job. Lines are numbered in the file whatever their kind, so the lines
  // wanted are among the few numbers before the stop; the window widens only
  // where NCCL's chatter or blank lines fill it. The stored lines' tables
  // then decode only the blocks that hold the window.
  auto stmt = db.prepare(
      "WITH file AS (SELECT file_id FROM files WHERE job_id = ?1 AND rel_path = ?2),"
      " lines AS ("
      " SELECT e.line_no, e.rank, e.host, coalesce(e.ts_us, 0) AS ts, e.text FROM events e"
      "  WHERE e.file_id = (SELECT file_id FROM file) AND e.line_no BETWEEN ?5 AND ?3"
      "  AND e.kind NOT IN " + std::string(kNcclChatterKinds) +
      " UNION ALL"
      " SELECT p.line_no, p.rank, p.host, coalesce(p.ts_us, 0), p.text FROM training_progress p"
      "  WHERE p.file_id = (SELECT file_id FROM file) AND p.line_no BETWEEN ?5 AND ?3"
      " UNION ALL"
      " SELECT u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text FROM unparsed_lines u"
      "  WHERE u.file_id = (SELECT file_id FROM file) AND u.line_no BETWEEN ?5 AND ?3)"
      " SELECT ?2, * FROM lines ORDER BY line_no DESC LIMIT ?4");
  if (!stmt) return stmt.take_error();
  std::vector<Located> out;
  for (int64_t window = 4 * int64_t{max_lines};; window *= 8) {
    int64_t from = at.line - window;
    if (Status s = stmt->bind_all({job_id, at.file, at.line, int64_t{max_lines}, from}); !s) return s.take_error();
    out.clear();
    std::optional<Error> err;
    while (stmt->step(&err)) out.push_back(read_located(*stmt));
    if (err) return *err;
    if (static_cast<int>(out.size()) >= max_lines || from <= 0) break;
    stmt->reset();
  }
  std::reverse(out.begin(), out.end());
  return out;
}

Status load_cut_timeout_ranks(store::Connection& db, JobFacts& f) {
  return each_row(db,
      "SELECT DISTINCT rank FROM unparsed_lines WHERE job_id = ?1 AND rank IS NOT NULL AND severity IN ('E', 'F')"
      " AND text LIKE '%Watchdog caught%'",
      f.job_id, [&](const store::Statement& r) { f.cut_timeout_ranks.insert(static_cast<int>(r.column_int(0))); });
}

}  // namespace ncclpm::diagnose
