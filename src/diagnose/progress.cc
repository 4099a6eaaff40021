// src/diagnose/progress.cc
#include "progress.h"

#include <re2/re2.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include "ncclpm/store/line_blocks.h"
#include "ncclpm/util/stats.h"
#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

// Bars by label; within a label one bar per rank (the query's last).
std::map<std::string, std::vector<const ProgressBar*>> by_label(const std::vector<ProgressBar>& bars) {
  std::map<std::string, std::vector<const ProgressBar*>> out;
  for (const ProgressBar& b : bars) out[b.label].push_back(&b);
  return out;
}

// The label most ranks' bars share among those that pass `usable`.
std::vector<const ProgressBar*> busiest_label(const std::vector<ProgressBar>& bars,
                                              bool (*usable)(const ProgressBar&)) {
  std::vector<const ProgressBar*> best;
  for (auto& [label, group] : by_label(bars)) {
    std::vector<const ProgressBar*> kept;
    for (const ProgressBar* b : group)
      if (usable(*b)) kept.push_back(b);
    if (kept.size() > best.size()) best = std::move(kept);
  }
  return best;
}

}  // namespace

Result<std::vector<ProgressBar>> load_last_bars(store::Connection& db, int64_t job_id) {
  // Ingest kept each stream's last bar: per rank and label, the latest of
  // its streams' (a rank's bar may be in its stdout and a restart's file).
  std::string sql =
      "WITH last AS (SELECT s.*, row_number() OVER (PARTITION BY s.rank, s.label"
      "   ORDER BY s.last_bar_group_id DESC, s.last_bar_line DESC) AS n"
      "   FROM progress_streams s WHERE s.job_id = ?1 AND s.rank IS NOT NULL AND s.last_bar_group_id IS NOT NULL)"
      " SELECT f.rel_path, s.last_bar_line, r.rank, r.host, 0, s.last_bar_text, s.label,"
      " s.last_bar_step, s.last_bar_total, coalesce(s.last_bar_seconds_per_step, -1),"
      " coalesce(s.last_bar_ts_us, 0), coalesce(r.ts_year, 0), r.ts_shift_us"
      " FROM last s JOIN line_groups r ON r.group_id = s.last_bar_group_id JOIN files f ON f.file_id = s.file_id"
      " WHERE s.n = 1 ORDER BY r.rank";
  std::vector<ProgressBar> out;
  Status read = db.each_row(sql, {job_id}, [&](const store::Statement& row) {
    ProgressBar b;
    b.at = read_located(row);
    b.at.ts_us = store::stored_time(row.column_int(10), row.column_int(11), row.column_int(12));
    b.label = row.column_text(6);
    b.step = row.column_int(7);
    b.total = row.column_int(8);
    b.seconds_per_step = sqlite3_column_double(row.raw(), 9);
    out.push_back(std::move(b));
  });
  if (!read) return read.take_error();
  return out;
}

// The loop's total differs between ranks, and a short rank finished its
// steps while a long one had steps left: the short rank went on alone to
// whatever follows the loop (the next epoch's first collective, an
// evaluation) and the others waited for it in their next gradient collective.
std::optional<UnevenBatches> find_uneven_batches(const std::vector<ProgressBar>& bars) {
  std::optional<UnevenBatches> best;
  size_t best_ranks = 0;  // the loop most ranks report on wins
  for (auto& [label, group] : by_label(bars)) {
    if (group.size() < 2) continue;
    auto [lo, hi] = std::minmax_element(group.begin(), group.end(),
                                        [](const ProgressBar* x, const ProgressBar* y) { return x->total < y->total; });
    int64_t short_total = (*lo)->total, long_total = (*hi)->total;
    if (short_total == long_total) continue;
    UnevenBatches u;
    u.label = label;
    u.short_total = short_total;
    u.long_total = long_total;
    bool short_done = false;
    const ProgressBar* long_going = nullptr;
    for (const ProgressBar* b : group) {
      if (b->total == short_total) {
        u.short_ranks.push_back(b->at.rank);
        if (b->step >= b->total) short_done = true;
        if (u.lines.size() < 3) u.lines.push_back(b->at);
      } else if (b->step < b->total && long_going == nullptr) {
        long_going = b;
      }
    }
    if (!short_done || long_going == nullptr) continue;
    u.lines.push_back(long_going->at);
    if (group.size() <= best_ranks) continue;
    best_ranks = group.size();
    best = std::move(u);
  }
  return best;
}

// One host's ranks stepping slower than the others' hold every collective
// back: the median rate per host against the median of all other ranks. On a
// single host (or with no hosts named), the same per rank.
std::optional<SlowHost> find_slow_host(const std::vector<ProgressBar>& bars) {
  std::vector<const ProgressBar*> timed =
      busiest_label(bars, [](const ProgressBar& b) { return b.seconds_per_step > 0; });
  if (timed.size() < 3) return std::nullopt;
  std::map<std::string, std::vector<const ProgressBar*>> hosts;
  for (const ProgressBar* b : timed) hosts[b->at.host].push_back(b);
  hosts.erase("");
  bool per_host = hosts.size() >= 2;
  if (!per_host) {
    hosts.clear();
    for (const ProgressBar* b : timed) hosts["rank " + std::to_string(b->at.rank)].push_back(b);
  }
  std::optional<SlowHost> slowest;
  for (const auto& [name, group] : hosts) {
    std::vector<double> mine, others;
    for (const ProgressBar* b : timed) {
      bool in = std::find(group.begin(), group.end(), b) != group.end();
      (in ? mine : others).push_back(b->seconds_per_step);
    }
    if (others.size() < 2) continue;
    double m = util::median(mine), rest = util::median(others);
    if (m < kStragglerFactor * rest || (slowest && m / rest <= slowest->seconds / slowest->others_seconds)) continue;
    SlowHost s;
    s.host = per_host ? name : group.front()->at.host;
    s.seconds = m;
    s.others_seconds = rest;
    for (const ProgressBar* b : group) {
      s.ranks.push_back(b->at.rank);
      if (s.lines.size() < 3) s.lines.push_back(b->at);
    }
    for (const ProgressBar* b : timed)
      if (std::find(group.begin(), group.end(), b) == group.end()) {
        s.lines.push_back(b->at);
        break;
      }
    slowest = std::move(s);
  }
  return slowest;
}


Result<std::vector<TimedStep>> load_timed_steps(store::Connection& db, int64_t job_id) {
  // One stream per rank, loop and source; the longest says most (ties: the
  // lowest rank, then label and source). Counted first, then only that
  // stream's lines are read: on an app-heavy job every rank prints a timed
  // line per step, millions of lines, and one stream is all the trend needs.
  const std::string timed =
      " WHERE p.job_id = ?1 AND p.seconds_per_step > 0 AND coalesce(p.unit, 'it') = 'it'";
  auto loop_of = [](const std::string& t) {
    return "CASE WHEN " + t + ".source = 'megatron' THEN 'iteration' ELSE coalesce(" + t + ".label, '') END";
  };
  const std::string loop = loop_of("p");
  auto longest = db.prepare("SELECT coalesce(rank, -1) AS r, " + loop_of("s") + " AS l, s.source, sum(timed_lines) AS n"
                            " FROM progress_streams s WHERE job_id = ?1 AND timed_lines > 0"
                            " GROUP BY r, l, s.source ORDER BY n DESC, r, l, s.source LIMIT 1");
  if (!longest) return longest.take_error();
  if (Status s = longest->bind_all({job_id}); !s) return s.take_error();
  std::optional<Error> err;
  if (!longest->step(&err)) {
    if (err) return *err;
    return std::vector<TimedStep>{};
  }
  int64_t rank = longest->column_int(0);
  std::string label = longest->column_text(1), source = longest->column_text(2);
  std::string sql = "SELECT f.rel_path, p.line_no, p.rank, p.host, coalesce(p.ts_us, 0), p.text, " + loop +
                    ", coalesce(p.step, -1), p.seconds_per_step"
                    " FROM training_progress p JOIN files f USING (file_id)" + timed +
                    " AND coalesce(p.rank, -1) = ?2 AND " + loop + " = ?3 AND p.source = ?4"
                    // Only the files that stream is in: the table reads those files' blocks only.
                    " AND p.file_id IN (SELECT file_id FROM progress_streams s WHERE job_id = ?1 AND timed_lines > 0"
                    "   AND coalesce(rank, -1) = ?2 AND " + loop_of("s") + " = ?3 AND s.source = ?4)"
                    // In the order the lines were stored.
                    " ORDER BY p.rowid";
  std::vector<TimedStep> steps;
  Status read = db.each_row(sql, {job_id, rank, label, source}, [&](const store::Statement& row) {
    TimedStep t;
    t.at = read_located(row);
    t.label = row.column_text(6);
    t.step = row.column_int(7);
    t.seconds_per_step = sqlite3_column_double(row.raw(), 8);
    steps.push_back(std::move(t));
  });
  if (!read) return read.take_error();
  return steps;
}

// The steady pace is the median after the warm-up (the first tenth: compiling,
// caches, the first rates tqdm guesses) over the first half of the rest; the
// pace at the end is the median of the last eighth (three lines at least), so
// one slow line (an evaluation's pause folded into the rate) is not a trend.
std::optional<Slowdown> find_slowdown(const std::vector<TimedStep>& steps) {
  size_t n = steps.size();
  if (n < kMinTimedSteps) return std::nullopt;
  size_t warmup = std::max<size_t>(1, n / 10);
  size_t tail = std::max<size_t>(3, n / 8);
  std::vector<double> steady, last;
  for (size_t i = warmup; i < warmup + (n - warmup) / 2; ++i) steady.push_back(steps[i].seconds_per_step);
  for (size_t i = n - tail; i < n; ++i) last.push_back(steps[i].seconds_per_step);
  double before = util::median(steady), after = util::median(last);
  if (!(before > 0) || after < kSlowdownFactor * before) return std::nullopt;
  // The slow stretch begins at the earliest slow line from which four in five
  // lines to the end are slow.
  double threshold = kSlowdownFactor * before;
  size_t onset = n - 1;
  size_t slow = 0;
  for (size_t i = n; i-- > warmup;) {
    if (steps[i].seconds_per_step >= threshold) ++slow;
    if (steps[i].seconds_per_step >= threshold && slow * 5 >= (n - i) * 4) onset = i;
  }
  Slowdown s;
  s.label = steps[onset].label;
  s.rank = steps[onset].at.rank;
  s.before_seconds = before;
  s.after_seconds = after;
  s.from_step = steps[onset].step;
  s.from_ts_us = steps[onset].at.ts_us;
  s.lines = {steps[onset - 1].at, steps[onset].at};
  if (onset + 1 < n) s.lines.push_back(steps.back().at);
  return s;
}


namespace {

// The line of a rank's value in its report: exact when the report's lines
// were consecutive in the file (no other process's lines between them),
// else the report's first line.
int64_t value_line(int64_t first, int64_t last, const std::string& report, const std::string& timer, int rank) {
  auto lines = util::split(report, '\n');
  if (static_cast<int64_t>(lines.size()) != last - first + 1) return first;
  static const RE2 rank_time(R"re(^\s*rank\s+(\d+):)re");
  bool in_timer = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view t = util::trim(lines[i]);
    if (t.ends_with(":") && !t.starts_with("rank")) in_timer = t == timer + ":";
    int r = -1;
    if (in_timer && RE2::PartialMatch(re2::StringPiece(lines[i].data(), lines[i].size()), rank_time, &r) && r == rank)
      return first + static_cast<int64_t>(i);
  }
  return first;
}

}  // namespace

Result<std::vector<ProgressBar>> load_rank_timers(store::Connection& db, int64_t job_id,
                                                  const std::map<int, std::string>& host_of_rank) {
  const char* sql =
      "SELECT f.rel_path, e.line_no, v.rank, '', coalesce(e.ts_us, 0), v.timer, v.ms, e.end_line, e.text"
      " FROM rank_timer_values v JOIN events e USING (event_id) JOIN files f USING (file_id)"
      " WHERE v.event_id = (SELECT max(event_id) FROM rank_timer_values WHERE job_id = ?1 AND option = 'all')"
      " AND v.ms > 0 AND v.rank IS NOT NULL"
      " AND (v.timer GLOB '*-compute' OR v.timer IN ('batch-generator', 'optimizer-inner-step'))"
      " ORDER BY v.timer, v.rank";
  std::vector<ProgressBar> out;
  Status read = db.each_row(sql, {job_id}, [&](const store::Statement& row) {
    ProgressBar b;
    b.at = read_located(row);
    if (auto h = host_of_rank.find(b.at.rank); h != host_of_rank.end()) b.at.host = h->second;
    b.label = b.at.text;  // the timer's name
    double ms = sqlite3_column_double(row.raw(), 6);
    char text[160];
    std::snprintf(text, sizeof text, "%s: rank %d: %.2f ms (Megatron times across ranks)", b.label.c_str(),
                  b.at.rank, ms);
    b.at.text = text;
    b.at.line = value_line(b.at.line, row.column_int(7), row.column_text(8), b.label, b.at.rank);
    b.seconds_per_step = ms / 1000;
    out.push_back(std::move(b));
  });
  if (!read) return read.take_error();
  return out;
}

std::optional<SlowHost> find_slow_host_in_timers(const std::vector<ProgressBar>& timers) {
  std::optional<SlowHost> slowest;
  for (auto& [timer, group] : by_label(timers)) {
    std::vector<ProgressBar> one;
    for (const ProgressBar* b : group) one.push_back(*b);
    auto s = find_slow_host(one);
    if (!s || (slowest && s->seconds / s->others_seconds <= slowest->seconds / slowest->others_seconds)) continue;
    s->timer = timer;
    slowest = std::move(s);
  }
  return slowest;
}

}  // namespace ncclpm::diagnose
