// src/diagnose/line_scan.cc
#include "line_scan.h"

#include <re2/re2.h>

#include <algorithm>
#include <tuple>
#include <unordered_map>

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

// What the rules' gates saw: RuleSet::match reports the gates a line
// matches in the same pass as the rules; a rule's version is the first one
// a line names, in scan order.
class GatesRecord {
 public:
  explicit GatesRecord(const rules::RuleSet& set) : set_(set), seen_(set.rules().size()) {
    for (size_t i = 0; i < seen_.size(); ++i) seen_[i].also.assign(set.rules()[i].also.size(), false);
  }

  void note(const std::vector<rules::RuleSet::GateHit>& hits, std::string_view text) {
    for (const rules::RuleSet::GateHit& hit : hits) {
      GatesSeen& g = seen_[hit.rule];
      if (hit.also != rules::RuleSet::kVersionGate) g.also[hit.also] = true;
      else if (g.version.empty()) g.version = set_.version_in(hit.rule, text);
    }
  }

  std::vector<GatesSeen> take() { return std::move(seen_); }

 private:
  const rules::RuleSet& set_;
  std::vector<GatesSeen> seen_;
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
  // Files are named from one map, not joined per line: the few lines a rule
  // keeps need their path, the hundreds of thousands read do not.
  std::unordered_map<int64_t, std::string> path_of;
  Status listed = db.each_row("SELECT file_id, rel_path FROM files WHERE job_id = ?1", {job_id},
                              [&](const store::Statement& row) { path_of[row.column_int(0)] = row.column_text(1); });
  if (!listed) return listed.take_error();
  auto stmt = db.prepare(
      "SELECT e.file_id, e.line_no, e.rank, e.host, coalesce(e.ts_us, 0), e.text, e.kind, coalesce(e.pid, 0), '', ''"
      " FROM events e WHERE " + event_kind_not_in(kUnscannedBulkKinds) +
      " UNION ALL SELECT u.file_id, u.line_no, u.rank, u.host, coalesce(u.ts_us, 0), u.text, 'unparsed',"
      " coalesce(u.pid, 0), coalesce(u.producer, ''), coalesce(u.severity, '')"
      " FROM unparsed_lines u WHERE u.job_id = ?1");
  if (!stmt) return stmt.take_error();
  if (Status s = stmt->bind_all({job_id}); !s) return s.take_error();
  LineScan scan;
  GatesRecord gates(set);
  std::vector<int> matched;
  std::vector<rules::RuleSet::GateHit> gate_hits;
  std::optional<Error> err;
  while (stmt->step(&err)) {
    const char* raw = reinterpret_cast<const char*>(sqlite3_column_text(stmt->raw(), 5));
    std::string_view text =
        raw != nullptr ? std::string_view(raw, static_cast<size_t>(sqlite3_column_bytes(stmt->raw(), 5)))
                       : std::string_view();
    set.match(text, matched, &gate_hits);
    gates.note(gate_hits, text);
    std::string kind = stmt->column_text(6);
    bool sets_nccl = text.find("NCCL_") != std::string_view::npos;
    bool nccl_error = may_be_nccl_error(kind, stmt->column_text(8), text);
    if (matched.empty() && !sets_nccl && !nccl_error) continue;
    Located l{path_of[stmt->column_int(0)], stmt->column_int(1),
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
