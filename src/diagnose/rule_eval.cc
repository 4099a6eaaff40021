// src/diagnose/rule_eval.cc
#include "rule_eval.h"

#include <algorithm>
#include <limits>

#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

constexpr size_t kMaxHitsKept = 50;
constexpr int kTailLines = 12;  // per file of the rank
constexpr int kLinesBeforeStop = 30;  // per file with a timeout (or, without any, a failure)

bool version_in_range(const rules::VersionGate& g, const std::string& v) {
  if (v.empty()) return false;
  if (!g.min.empty() && rules::compare_versions(v, g.min) < 0) return false;
  if (!g.below.empty() && rules::compare_versions(v, g.below) >= 0) return false;
  return true;
}

// The builtins whose analysis names its culprits itself, with the lines
// that show it; nullopt for the others (or when the analysis found nothing).
struct NamedCulprits {
  const std::vector<Located>* lines;
  const std::vector<int>* ranks;
};
std::optional<NamedCulprits> named_culprits(const std::string& name, const JobFacts& f) {
  if (name == "uneven-batches" && f.uneven_batches)
    return NamedCulprits{&f.uneven_batches->lines, &f.uneven_batches->short_ranks};
  if (name == "slow-host" && f.slow_host) return NamedCulprits{&f.slow_host->lines, &f.slow_host->ranks};
  if (name == "fr-missing-ranks" && f.fr_missing) return NamedCulprits{&f.fr_missing->lines, &f.fr_missing->missing};
  if (name == "fr-mismatch" && f.fr_mismatch) return NamedCulprits{&f.fr_mismatch->lines, &f.fr_mismatch->culprits};
  if (name == "duplicate-gpu-init" && f.duplicate_gpu)
    return NamedCulprits{&f.duplicate_gpu->lines, &f.duplicate_gpu->ranks};
  // A slowdown is the job's, read from one rank's bar: it names no culprit.
  static const std::vector<int> kNone;
  if (name == "slowdown" && f.slowdown) return NamedCulprits{&f.slowdown->lines, &kNone};
  return std::nullopt;
}

bool builtin_fires(const std::string& name, const JobFacts& f, const Alignment& a) {
  // A rank absent from the group's first collective never got as far as the
  // others: it was late (or stuck) in start-up, not out of step with a
  // sequence it had not begun. PyTorch numbers a group's collectives from 1.
  bool in_another = a.culprit_basis == "other_seq" || a.culprit_basis == "op_mismatch";
  bool absent_from_first = a.seq <= 1 && !in_another;
  if (name == "never-issued") return a.has_timeouts && !a.culprits.empty() && !absent_from_first;
  if (name == "never-reached-first") return a.has_timeouts && !a.culprits.empty() && absent_from_first;
  if (name == "out-of-step") return a.culprits.empty() && !a.other_seq.empty();
  if (name == "all-stuck") return a.all_stuck;
  if (name == "ignored-settings") return !f.ignored_settings.empty();
  if (name == "uneven-inputs") return f.mismatch_same_op;
  // A loop's bars tell why a job hung, not that it did.
  if (name == "uneven-batches") return f.uneven_batches && (a.has_timeouts || !f.failures.empty());
  if (name == "slow-host") return f.slow_host && a.has_timeouts;
  if (name == "fr-missing-ranks") return f.fr_missing.has_value();
  if (name == "fr-mismatch") return f.fr_mismatch.has_value();
  if (name == "duplicate-gpu-init") return f.duplicate_gpu.has_value();
  if (name == "slowdown") return f.slowdown && (a.has_timeouts || !f.failures.empty());
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
    for (const auto& [v, lines] : f.nccl_versions) h.add(lines.front());
    return Ok{};
  }
  if (name == "ignored-settings") {
    for (const IgnoredSetting& s : f.ignored_settings) h.add(s.at);
    return Ok{};
  }
  if (auto named = named_culprits(name, f)) {
    for (const Located& l : *named->lines) h.add(l);
    h.ranks.clear();  // the lines include one of the other ranks', for comparison
    h.ranks.insert(named->ranks->begin(), named->ranks->end());
    return Ok{};
  }
  if (name == "uneven-inputs") {
    auto stmt = db.prepare(
        std::string("SELECT ") + kLocatedColumns + " FROM collective_mismatches m"
        " JOIN events e USING (event_id) JOIN files f USING (file_id) WHERE m.job_id = ?1 ORDER BY e.line_no");
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->bind_all({f.job_id}); !s) return s.take_error();
    std::optional<Error> err;
    while (stmt->step(&err)) h.add(read_located(*stmt));
    if (err) return *err;
    for (int r : f.reported_culprits) h.ranks.insert(r);
    return Ok{};
  }
  for (const Located& l : a.evidence) h.add(l);
  if (name == "out-of-step") {
    // Both sides' records, and no culprit: neither side is the odd one out.
    for (const TimeoutRecord& t : f.timeouts)
      if (a.other_seq.count(t.rank()) != 0 && t.seq == a.other_seq.at(t.rank())) h.add(t.at);
    h.ranks.clear();
    return Ok{};
  }
  for (int r : a.culprits) h.ranks.insert(r);
  if (name == "never-issued" || name == "never-reached-first") {
    for (int r : a.culprits) {
      auto tail = rank_tail(db, f.job_id, r, 1);
      if (!tail) return tail.take_error();
      if (!tail->empty()) h.add(tail->back());  // its very last line before it failed
    }
  }
  if (h.count == 0) h.count = 1;
  return Ok{};
}

}  // namespace

bool builtin_names_culprits(const std::string& name) {
  return name == "uneven-batches" || name == "slow-host" || name == "fr-missing-ranks" || name == "slowdown" ||
         name == "duplicate-gpu-init";
}

namespace {

// One evaluation of the rule base on one job, in the order the passes run:
// every stored line (the line scan, done before), the culprits' tails (or the
// lines before the first failure), the builtins, then the conditions that
// drop hits.
class Evaluation {
 public:
  Evaluation(store::Connection& db, const JobFacts& f, const Alignment& a, const rules::RuleSet& set, LineScan scan)
      : db_(db), f_(f), a_(a), set_(set), rules_(set.rules()), gates_(std::move(scan.gates)),
        hits_(std::move(scan.hits)) {}

  Result<std::map<size_t, RuleHits>> run() {
    if (Status s = scan_tails(); !s) return s.take_error();
    if (Status s = add_builtins(); !s) return s.take_error();
    apply_gates();
    apply_requires();
    apply_absent();
    order_hits();
    return std::move(hits_);
  }

 private:
  void match_tail_rules(const std::vector<Located>& lines, bool before_failure) {
    for (const Located& l : lines) {
      set_.match(l.text, matched_);
      for (int i : matched_) {
        auto index = static_cast<size_t>(i);
        if (rules_[index].scope != rules::Scope::kCulpritTail || set_.rule_excludes(index, l.text)) continue;
        hits_[index].add(l);
        hits_[index].before_failure = before_failure;
      }
    }
  }

  // Rules about what a culprit was doing look only at its last lines; when
  // every rank is stuck, at everyone's. When no culprit's tail told, the
  // lines just before the first timeout of each file that has one tell what
  // the job was doing then; without a timeout, the first failure of each
  // file (a store timeout while waiting for rank 0, an exception) does, and
  // without one, the first C++ exception or store error.
  Status scan_tails() {
    auto tails = rank_tails(db_, f_.job_id, a_.culprits.empty() ? a_.victims : a_.culprits, kTailLines);
    if (!tails) return tails.take_error();
    for (const auto& [rank, tail] : *tails) match_tail_rules(tail, false);
    bool tail_hit = std::any_of(hits_.begin(), hits_.end(),
                                [&](const auto& kv) { return rules_[kv.first].scope == rules::Scope::kCulpritTail; });
    if (tail_hit) return Ok{};
    std::map<std::string, Located> first_stop;  // file -> its first timeout (or failure)
    auto keep_first = [&](const Located& at) {
      auto [it, fresh] = first_stop.try_emplace(at.file, at);
      if (!fresh && at.line < it->second.line) it->second = at;
    };
    for (const TimeoutRecord& t : f_.timeouts) keep_first(t.at);
    if (first_stop.empty())
      for (const Failure& fl : f_.failures) keep_first(fl.at);
    // A file that stopped on neither while another did went quiet: a rank's
    // own file (the one preparing data while the others gave up waiting for
    // it in the store) tells as the lines before a stop do in one console.
    if (!first_stop.empty()) {
      if (Status s = add_quiet_files(first_stop); !s) return s;
    }
    // Nor a traceback: a C++ exception's trace or a store error is where the
    // process stopped (a store wait that timed out, printed without the
    // Python traceback above it).
    if (first_stop.empty()) {
      Status s = db_.each_row(
          std::string("SELECT ") + kLocatedColumns + " FROM events e"
          " JOIN files f USING (file_id) WHERE e.job_id = ?1 AND e.kind IN ('cpp_exception', 'store_error')",
          {f_.job_id}, [&](const store::Statement& r) { keep_first(read_located(r)); });
      if (!s) return s;
    }
    for (const auto& [file, at] : first_stop) {
      auto before = lines_before(db_, f_.job_id, at, kLinesBeforeStop);
      if (!before) return before.take_error();
      match_tail_rules(since_last_training_step(*before), true);
    }
    return Ok{};
  }

  // `lines` (in file order) after the last training step among them: a phase
  // that training went on from (an evaluation, a save) was over before the stop.
  std::vector<Located> since_last_training_step(std::vector<Located> lines) const {
    auto step = std::find_if(lines.rbegin(), lines.rend(), [&](const Located& l) {
      const rules::PhaseMarker* m = set_.match_marker(l.text);
      return m != nullptr && m->phase == "training";
    });
    lines.erase(lines.begin(), step.base());
    return lines;
  }

  // A file that never timed out (or failed) while others did is a stream that
  // went quiet (the rank that was saving, or the script's own prints): its
  // last lines tell what it was doing when the others began to wait.
  Status add_quiet_files(std::map<std::string, Located>& first_stop) {
    auto stmt = db_.prepare("SELECT rel_path FROM files WHERE job_id = ?1 AND lines_read > 0");
    if (!stmt) return stmt.take_error();
    if (Status s = stmt->bind_all({f_.job_id}); !s) return s;
    std::optional<Error> err;
    while (stmt->step(&err)) {
      Located end;
      end.file = stmt->column_text(0);
      end.line = std::numeric_limits<int64_t>::max();
      first_stop.try_emplace(end.file, end);
    }
    if (err) return *err;
    return Ok{};
  }

  Status add_builtins() {
    for (size_t i = 0; i < rules_.size(); ++i) {
      const rules::Rule& r = rules_[i];
      if (r.builtin.empty() || !builtin_fires(r.builtin, f_, a_)) continue;
      if (Status s = builtin_evidence(db_, r.builtin, f_, a_, hits_[i]); !s) return s;
    }
    return Ok{};
  }

  // Every 'also' pattern seen, the version in range.
  void apply_gates() {
    for (auto it = hits_.begin(); it != hits_.end();) {
      const GatesSeen& g = gates_[it->first];
      const rules::Rule& r = rules_[it->first];
      bool ok = std::all_of(g.also.begin(), g.also.end(), [](bool b) { return b; });
      if (r.version) {
        ok = ok && version_in_range(*r.version, g.version);
        it->second.version = g.version;
      }
      it = ok ? std::next(it) : hits_.erase(it);
    }
  }

  bool fired(std::string_view id_or_category) const {
    return std::any_of(hits_.begin(), hits_.end(), [&](const auto& kv) {
      return rules_[kv.first].id == id_or_category || rules_[kv.first].category == id_or_category;
    });
  }

  // 'requires': drop rules whose companions did not fire, until nothing changes.
  void apply_requires() {
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = hits_.begin(); it != hits_.end();) {
        const auto& needs = rules_[it->first].requires_fired;
        bool ok = std::all_of(needs.begin(), needs.end(), [&](const std::string& need) {
          auto options = util::split(need, '|');  // "a|b": either fired
          return std::any_of(options.begin(), options.end(), [&](std::string_view o) { return fired(o); });
        });
        changed = changed || !ok;
        it = ok ? std::next(it) : hits_.erase(it);
      }
    }
  }

  // 'absent': a rule that only says what a more direct one already says.
  void apply_absent() {
    std::set<std::string> ids;
    for (const auto& kv : hits_) ids.insert(rules_[kv.first].id);
    std::erase_if(hits_, [&](const auto& kv) {
      const auto& absent = rules_[kv.first].absent_fired;
      return std::any_of(absent.begin(), absent.end(), [&](const std::string& id) { return ids.count(id) != 0; });
    });
  }

  // Signatures: the earliest hit first. A culprit's activity: its latest line
  // first. A total order, so that the result does not depend on row order.
  void order_hits() {
    for (auto& [i, h] : hits_) {
      bool latest_first = rules_[i].scope == rules::Scope::kCulpritTail;
      std::sort(h.lines.begin(), h.lines.end(), [&](const Located& x, const Located& y) {
        if ((x.ts_us == 0) != (y.ts_us == 0)) return x.ts_us != 0;  // lines with a time first, either way
        return latest_first ? earlier(y, x) : earlier(x, y);
      });
      if (h.lines.size() > kMaxHitsKept) h.lines.resize(kMaxHitsKept);
    }
  }

  store::Connection& db_;
  const JobFacts& f_;
  const Alignment& a_;
  const rules::RuleSet& set_;
  const std::vector<rules::Rule>& rules_;
  std::vector<GatesSeen> gates_;
  std::map<size_t, RuleHits> hits_;
  std::vector<int> matched_;
};

}  // namespace

Result<std::map<size_t, RuleHits>> evaluate_rules(store::Connection& db, const JobFacts& f, const Alignment& a,
                                                  const rules::RuleSet& set, LineScan scan) {
  return Evaluation(db, f, a, set, std::move(scan)).run();
}

}  // namespace ncclpm::diagnose
