// src/diagnose/line_scan.cc
#include "line_scan.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

namespace ncclpm::diagnose {
namespace {

bool kind_allowed(const rules::Rule& r, std::string_view kind) {
  return r.kinds.empty() || std::find(r.kinds.begin(), r.kinds.end(), kind) != r.kinds.end();
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

// The rules' gates: every line passes once through one matcher of all their
// patterns (not each pattern over each line); a gate seen is not looked for
// again, and once all are seen no line is.
class GateMatcher {
 public:
  explicit GateMatcher(const std::vector<rules::Rule>& rules) : versions_(rules.size()) {
    seen_.resize(rules.size());
    for (size_t i = 0; i < rules.size(); ++i) {
      seen_[i].also.assign(rules[i].also.size(), false);
      for (size_t k = 0; k < rules[i].also.size(); ++k) add(rules[i].also[k], {i, k});
      if (rules[i].version) {
        versions_[i] = std::make_unique<RE2>(rules[i].version->pattern);
        add(rules[i].version->pattern, {i, kVersion});
      }
    }
    open_ = gate_of_.size();
    if (open_ > 0 && !set_.Compile()) open_ = 0;  // the rule loader compiled each pattern alone
  }

  void see(std::string_view text) {
    if (open_ == 0) return;
    re2::StringPiece in(text.data(), text.size());
    if (!set_.Match(in, &matched_)) return;
    for (int m : matched_) {
      auto [rule, also] = gate_of_[static_cast<size_t>(m)];
      GatesSeen& g = seen_[rule];
      if (also != kVersion && !g.also[also]) {
        g.also[also] = true;
        --open_;
      }
      std::string v;
      if (also == kVersion && g.version.empty() && RE2::PartialMatch(in, *versions_[rule], &v) && !v.empty()) {
        g.version = v;
        --open_;
      }
    }
  }

  std::vector<GatesSeen> take() { return std::move(seen_); }

 private:
  static constexpr size_t kVersion = std::numeric_limits<size_t>::max();
  struct GateRef {
    size_t rule;
    size_t also;  // index into the rule's `also`, or kVersion
  };

  void add(const std::string& pattern, GateRef ref) {
    if (set_.Add(pattern, nullptr) >= 0) gate_of_.push_back(ref);
  }

  RE2::Set set_{RE2::Options(), RE2::UNANCHORED};
  std::vector<GateRef> gate_of_;  // by the set's index
  std::vector<std::unique_ptr<RE2>> versions_;
  std::vector<GatesSeen> seen_;
  size_t open_ = 0;  // gates not seen yet
  std::vector<int> matched_;
};

// The NCCL_ variables a line sets, the first line of each in file and line order.
void note_nccl_assignments(std::string_view text, const Located& at, std::map<std::string, Located>& first) {
  size_t name = text.find("NCCL_");
  if (name == std::string_view::npos || text.find('=', name) == std::string_view::npos) return;
  static const RE2 assignment(R"((?:^|[^A-Z0-9_])(NCCL_[A-Z0-9_]+)=)");
  re2::StringPiece in(text.data(), text.size());
  std::string var;
  while (RE2::FindAndConsume(&in, assignment, &var)) {
    auto [it, added] = first.try_emplace(var, at);
    if (!added && std::tie(at.file, at.line) < std::tie(it->second.file, it->second.line)) it->second = at;
  }
}

// Whether a line may be one of NCCL's errors. NCCL's INFO chatter is most of
// a big job's unparsed lines; the INFO lines that report a failure carry one
// of recognize's failure words or an error trace's arrow. NCCL's words also
// turn up in other producers' lines ("[trainer0|0]:ncclSocketInit: ...",
// "NET/IB : ..." after a prefix no framer knows, "ibv_reg_mr failed",
// "libibverbs: Warning: ..."); the rest need not be read for them.
bool may_be_nccl_error(std::string_view kind, std::string_view producer, std::string_view text) {
  if (kind == "nccl_warn" || kind == "nccl_error_trace" || kind == "nccl_error_surfaced") return true;
  if (kind != "unparsed") return false;
  auto failure = [&] { return text.find(" -> ") != std::string_view::npos || recognize::reports_failure(text); };
  auto nccls_words = [&] {
    thread_local std::string buffer;
    std::string_view lowered = util::ascii_lower(text, buffer);
    auto has = [&](std::string_view word) { return lowered.find(word) != std::string_view::npos; };
    // "ibv" and any character after it: the libibverbs and ibv_* calls' words.
    size_t ibv = lowered.find("ibv");
    return has("ncc") || has("net/") || (ibv != std::string_view::npos && ibv + 3 < lowered.size()) ||
           has("cuda failure");
  };
  if (producer == "nccl") return failure();
  if (producer.empty()) return failure() && nccls_words();  // a line of no known producer
  return nccls_words();
}

}  // namespace

Result<LineScan> scan_lines(store::Connection& db, int64_t job_id, const rules::RuleSet& set) {
  const std::vector<rules::Rule>& rules = set.rules();
  auto stmt = db.prepare(
      std::string("SELECT ") + kLocatedColumns + ", e.kind, coalesce(e.pid, 0), '', ''"
      " FROM events e JOIN files f USING (file_id) WHERE " + event_kind_not_in(kUnscannedBulkKinds) +
      " UNION ALL SELECT f.rel_path, u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text, 'unparsed',"
      " coalesce(u.pid, 0), coalesce(u.producer, ''), coalesce(u.severity, '')"
      " FROM unparsed_lines u JOIN files f USING (file_id) WHERE u.job_id = ?1");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  LineScan scan;
  GateMatcher gates(rules);
  std::vector<int> matched;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(stmt->raw(), 5));
    std::string_view text =
        raw != nullptr ? std::string_view(raw, static_cast<size_t>(sqlite3_column_bytes(stmt->raw(), 5)))
                       : std::string_view();
    gates.see(text);
    set.match(text, matched);
    std::string kind = stmt->column_text(6);
    bool sets_nccl = text.find("NCCL_") != std::string_view::npos;
    bool nccl_error = may_be_nccl_error(kind, stmt->column_text(8), text);
    if (matched.empty() && !sets_nccl && !nccl_error) continue;
    Located l{stmt->column_text(0), stmt->column_int(1),
              stmt->column_is_null(2) ? -1 : static_cast<int>(stmt->column_int(2)), stmt->column_text(3),
              stmt->column_int(4), std::string(text.substr(0, text.find('\n'))), stmt->column_int(7)};
    // NCCL's own "NCCL_X set by environment to Y" lines are what it read.
    if (sets_nccl && kind != "nccl_env") note_nccl_assignments(text, l, scan.nccl_assignments);
    if (nccl_error) {
      std::string severity = stmt->column_text(9);
      bool logged_error = kind == "unparsed" && (severity == "E" || severity == "F");
      ScannedLine line{l, logged_error ? "logged_error" : kind};
      line.at.text = std::string(text);
      scan.nccl_error_lines.push_back(std::move(line));
    }
    for (int i : matched) {
      auto index = static_cast<size_t>(i);
      const rules::Rule& r = rules[index];
      if (r.scope == rules::Scope::kCulpritTail || !kind_allowed(r, kind)) continue;
      if (set.rule_excludes(index, text)) continue;
      Located hit = l;
      hit.text = matching_line(set, index, text);
      RuleHits& h = scan.hits[index];
      h.add(hit);
      for (int rank : set.named_ranks(index, text)) (r.named_ranks_waited_for ? h.waited_for : h.ranks).insert(rank);
    }
  }
  if (err) return *err;
  scan.gates = gates.take();
  return scan;
}

}  // namespace ncclpm::diagnose
