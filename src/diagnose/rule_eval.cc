// src/diagnose/rule_eval.cc
#include "rule_eval.h"

#include <re2/re2.h>

#include <algorithm>
#include <tuple>

#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

constexpr size_t kMaxHitsKept = 50;
constexpr int kTailLines = 12;  // per file of the rank
constexpr int kLinesBeforeStop = 30;  // per file with a timeout (or, without any, a failure)

struct Gate {
  std::vector<std::unique_ptr<RE2>> also;
  std::vector<bool> also_seen;
  std::unique_ptr<RE2> version;
  std::string version_seen;
};

bool kind_allowed(const rules::Rule& r, const std::string& kind) {
  return r.kinds.empty() || std::find(r.kinds.begin(), r.kinds.end(), kind) != r.kinds.end();
}

void add_hit(RuleHits& h, const Located& l) {
  ++h.count;
  if (l.rank >= 0) h.ranks.insert(l.rank);
  h.lines.push_back(l);
}

bool version_in_range(const rules::VersionGate& g, const std::string& v) {
  if (v.empty()) return false;
  if (!g.min.empty() && rules::compare_versions(v, g.min) < 0) return false;
  if (!g.below.empty() && rules::compare_versions(v, g.below) >= 0) return false;
  return true;
}

bool builtin_fires(const std::string& name, const JobFacts& f, const Alignment& a) {
  if (name == "never-issued") return a.has_timeouts && !a.culprits.empty();
  if (name == "all-stuck") return a.all_stuck;
  if (name == "ignored-settings") return !f.ignored_settings.empty();
  if (name == "uneven-inputs") return f.mismatch_same_op;
  if (name == "version-mismatch") {
    std::set<std::string> versions;
    for (const auto& [v, lines] : f.nccl_versions) versions.insert(v.substr(0, v.find('+')));
    return versions.size() > 1;
  }
  return false;
}

// The lines a builtin rule rests on; for a missing rank, also its own last
// lines: what it was doing while the others waited.
Status builtin_evidence(store::Connection& db, const std::string& name, const JobFacts& f,
                        const Alignment& a, RuleHits& h) {
  if (name == "version-mismatch") {
    for (const auto& [v, lines] : f.nccl_versions) add_hit(h, lines.front());
    return Ok{};
  }
  if (name == "ignored-settings") {
    for (const IgnoredSetting& s : f.ignored_settings) add_hit(h, s.at);
    return Ok{};
  }
  if (name == "uneven-inputs") {
    auto stmt = db.prepare(
        "SELECT f.rel_path, e.line_no, e.rank, e.host, coalesce(e.ts_us, 0), e.text FROM collective_mismatches m"
        " JOIN events e USING (event_id) JOIN files f USING (file_id) WHERE m.job_id = ?1 ORDER BY e.line_no");
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->bind_all({f.job_id}); !s) return s.take_error();
    std::optional<Error> err;
    while (stmt->step(&err)) add_hit(h, read_located(*stmt));
    if (err) return *err;
    for (int r : f.reported_culprits) h.ranks.insert(r);
    return Ok{};
  }
  for (const Located& l : a.evidence) add_hit(h, l);
  for (int r : a.culprits) h.ranks.insert(r);
  if (name == "never-issued") {
    for (int r : a.culprits) {
      auto tail = rank_tail(db, f.job_id, r, 1);
      if (!tail) return tail.take_error();
      if (!tail->empty()) add_hit(h, tail->back());  // its very last line before it failed
    }
  }
  if (h.count == 0) h.count = 1;
  return Ok{};
}

// Of a multi-line event (a traceback), the line the rule matched is the
// evidence worth showing, not the block's first line.
std::string matching_line(const rules::RuleSet& set, size_t rule, std::string_view text) {
  if (text.find('\n') == std::string_view::npos) return std::string(text);
  for (std::string_view line : util::split(text, '\n'))
    if (set.rule_matches(rule, line)) return std::string(util::trim(line));
  // The pattern spans lines or matched the whole block: show the last line
  // (for a traceback, the exception).
  std::string_view t = util::trim(text);
  return std::string(util::trim(t.substr(t.rfind('\n') + 1)));
}

}  // namespace

Result<std::map<size_t, RuleHits>> evaluate_rules(store::Connection& db, const JobFacts& f,
                                                  const Alignment& a, const rules::RuleSet& set) {
  const auto& rules = set.rules();
  std::map<size_t, RuleHits> hits;
  std::vector<Gate> gates(rules.size());
  for (size_t i = 0; i < rules.size(); ++i) {
    for (const std::string& p : rules[i].also) gates[i].also.push_back(std::make_unique<RE2>(p));
    gates[i].also_seen.assign(rules[i].also.size(), false);
    if (rules[i].version) gates[i].version = std::make_unique<RE2>(rules[i].version->pattern);
  }
  auto check_gates = [&](std::string_view text) {
    re2::StringPiece in(text.data(), text.size());
    for (size_t i = 0; i < rules.size(); ++i) {
      Gate& g = gates[i];
      for (size_t k = 0; k < g.also.size(); ++k)
        if (!g.also_seen[k] && RE2::PartialMatch(in, *g.also[k])) g.also_seen[k] = true;
      std::string v;
      if (g.version && g.version_seen.empty() && RE2::PartialMatch(in, *g.version, &v)) g.version_seen = v;
    }
  };
  bool any_gates = std::any_of(rules.begin(), rules.end(),
                               [](const rules::Rule& r) { return !r.also.empty() || r.version; });

  auto stmt = db.prepare(
      "SELECT f.rel_path, e.line_no, e.rank, e.host, coalesce(e.ts_us, 0), e.text, e.kind"
      " FROM events e JOIN files f USING (file_id) WHERE e.job_id = ?1"
      " UNION ALL SELECT f.rel_path, u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text, 'unparsed'"
      " FROM unparsed_lines u JOIN files f USING (file_id) WHERE u.job_id = ?1");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({f.job_id}); !s) return s.take_error();
  std::vector<int> matched;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(stmt->raw(), 5));
    std::string_view text = raw != nullptr ? std::string_view(raw, static_cast<size_t>(sqlite3_column_bytes(stmt->raw(), 5))) : std::string_view();
    if (any_gates) check_gates(text);
    set.match(text, matched);
    if (matched.empty()) continue;
    std::string kind = stmt->column_text(6);
    Located l{stmt->column_text(0), stmt->column_int(1),
              stmt->column_is_null(2) ? -1 : static_cast<int>(stmt->column_int(2)), stmt->column_text(3),
              stmt->column_int(4), std::string(text.substr(0, text.find('\n')))};
    for (int i : matched) {
      const rules::Rule& r = rules[static_cast<size_t>(i)];
      if (r.scope == rules::Scope::kCulpritTail || !kind_allowed(r, kind)) continue;
      if (set.rule_excludes(static_cast<size_t>(i), text)) continue;
      l.text = matching_line(set, static_cast<size_t>(i), text);
      add_hit(hits[static_cast<size_t>(i)], l);
    }
  }
  if (err) return *err;

  // Rules about what a culprit was doing look only at its last lines; when
  // every rank is stuck, at everyone's.
  auto match_tail_rules = [&](const std::vector<Located>& lines, bool before_failure) {
    for (const Located& l : lines) {
      set.match(l.text, matched);
      for (int i : matched)
        if (rules[static_cast<size_t>(i)].scope == rules::Scope::kCulpritTail &&
            !set.rule_excludes(static_cast<size_t>(i), l.text)) {
          add_hit(hits[static_cast<size_t>(i)], l);
          hits[static_cast<size_t>(i)].before_failure = before_failure;
        }
    }
  };
  std::set<int> tail_ranks = a.culprits.empty() ? a.victims : a.culprits;
  for (int rank : tail_ranks) {
    auto tail = rank_tail(db, f.job_id, rank, kTailLines);
    if (!tail) return tail.take_error();
    match_tail_rules(*tail, false);
  }

  // No culprit's tail told what it was doing: the lines just before the first
  // timeout in each file that has one tell what the job was doing then.
  bool tail_hit = std::any_of(hits.begin(), hits.end(),
                              [&](const auto& kv) { return rules[kv.first].scope == rules::Scope::kCulpritTail; });
  // Without a timeout, the first failure of each file (a store timeout while
  // waiting for rank 0, an exception) plays its part.
  if (!tail_hit) {
    std::map<std::string, Located> first_stop;  // file -> its first timeout (or failure)
    auto keep_first = [&](const Located& at) {
      auto [it, fresh] = first_stop.try_emplace(at.file, at);
      if (!fresh && at.line < it->second.line) it->second = at;
    };
    for (const TimeoutRecord& t : f.timeouts) keep_first(t.at);
    if (first_stop.empty())
      for (const Failure& fl : f.failures) keep_first(fl.at);
    for (const auto& [file, at] : first_stop) {
      auto before = lines_before(db, f.job_id, at, kLinesBeforeStop);
      if (!before) return before.take_error();
      match_tail_rules(*before, true);
    }
  }

  for (size_t i = 0; i < rules.size(); ++i) {
    const rules::Rule& r = rules[i];
    if (!r.builtin.empty() && builtin_fires(r.builtin, f, a)) {
      if (Status s = builtin_evidence(db, r.builtin, f, a, hits[i]); !s) return s.take_error();
    }
  }
  // Gates: every 'also' pattern seen, the version in range.
  for (auto it = hits.begin(); it != hits.end();) {
    const Gate& g = gates[it->first];
    const rules::Rule& r = rules[it->first];
    bool ok = std::all_of(g.also_seen.begin(), g.also_seen.end(), [](bool b) { return b; });
    if (r.version) {
      ok = ok && version_in_range(*r.version, g.version_seen);
      it->second.version = g.version_seen;
    }
    it = ok ? std::next(it) : hits.erase(it);
  }
  // 'requires': drop rules whose companions did not fire, until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = hits.begin(); it != hits.end();) {
      const rules::Rule& r = rules[it->first];
      bool ok = std::all_of(r.requires_fired.begin(), r.requires_fired.end(), [&](const std::string& need) {
        auto options = util::split(need, '|');  // "a|b": either fired
        return std::any_of(hits.begin(), hits.end(), [&](const auto& kv) {
          return std::any_of(options.begin(), options.end(), [&](std::string_view o) {
            return rules[kv.first].id == o || rules[kv.first].category == o;
          });
        });
      });
      if (ok) {
        ++it;
      } else {
        it = hits.erase(it);
        changed = true;
      }
    }
  }
  // 'absent': a rule that only says what a more direct one already says.
  std::set<std::string> fired;
  for (const auto& kv : hits) fired.insert(rules[kv.first].id);
  std::erase_if(hits, [&](const auto& kv) {
    const auto& absent = rules[kv.first].absent_fired;
    return std::any_of(absent.begin(), absent.end(), [&](const std::string& id) { return fired.count(id) != 0; });
  });
  for (auto& [i, h] : hits) {
    // Signatures: the earliest hit first. A culprit's activity: its latest line first.
    bool latest_first = rules[i].scope == rules::Scope::kCulpritTail;
    // A total order, so that the result does not depend on row order in the store.
    std::sort(h.lines.begin(), h.lines.end(), [&](const Located& x, const Located& y) {
      if ((x.ts_us == 0) != (y.ts_us == 0)) return x.ts_us != 0;
      if (latest_first) return std::tie(y.ts_us, y.file, y.line) < std::tie(x.ts_us, x.file, x.line);
      return std::tie(x.ts_us, x.file, x.line) < std::tie(y.ts_us, y.file, y.line);
    });
    if (h.lines.size() > kMaxHitsKept) h.lines.resize(kMaxHitsKept);
  }
  return hits;
}

}  // namespace ncclpm::diagnose
