// src/rules/rule_loader.cc
#include "rule_loader.h"

#include <re2/re2.h>

#include <algorithm>
#include <set>
#include <toml++/toml.h>

#include "ncclpm/util/text.h"

namespace ncclpm::rules {
namespace {

const std::set<std::string> kKnownKeys = {
    "id",    "title", "category", "severity", "confidence", "root_cause", "patterns", "kinds",
    "scope", "requires", "absent", "also",  "unless",   "version",    "builtin",    "advice",     "samples",
    "named_ranks", "named_ranks_role"};
const std::set<std::string> kSeverities = {"critical", "error", "warning", "info"};
const std::set<std::string> kKinds = {
    "unparsed",      "nccl_version",        "nccl_env",       "nccl_comm",
    "nccl_warn",     "nccl_error_trace",    "work_record",    "pg_status",
    "desync_report", "collective_mismatch", "watchdog_stuck", "nccl_error_surfaced",
    "pg_terminate",  "dump_signal",         "cpp_exception",  "traceback",
    "process_exit",  "signal_sent",         "store_error",    "flight_recorder"};
const std::set<std::string> kBuiltins = {
    "never-issued",     "never-reached-first", "out-of-step",   "all-stuck",
    "version-mismatch", "ignored-settings",    "uneven-inputs", "uneven-batches",
    "slow-host",        "fr-missing-ranks",    "fr-mismatch",   "slowdown",
    "duplicate-gpu-init"};

bool is_kebab(const std::string& id) {
  if (id.empty() || id.front() == '-' || id.back() == '-') return false;
  for (char c : id)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  return true;
}

int line_of(const toml::node& n) { return static_cast<int>(n.source().begin.line); }

// Reads a string array field; a single string is accepted as a one-element array.
std::vector<std::string> strings(const toml::table& t, const char* key, const std::string& where,
                                 std::vector<Error>& problems, const std::string& file) {
  std::vector<std::string> out;
  const toml::node* n = t.get(key);
  if (n == nullptr) return out;
  if (auto s = n->value<std::string>()) return {*s};
  const toml::array* a = n->as_array();
  if (a == nullptr) {
    problems.push_back(Error::at_line(file, line_of(*n), where + ": " + key + " must be a list of strings"));
    return out;
  }
  for (const toml::node& e : *a) {
    if (auto s = e.value<std::string>()) {
      out.push_back(*s);
    } else {
      problems.push_back(Error::at_line(file, line_of(e), where + ": " + key + " must hold only strings"));
    }
  }
  return out;
}

Rule read_rule(const toml::table& t, const std::string& file, std::vector<Error>& problems) {
  Rule r;
  r.file = file;
  r.line = line_of(t);
  auto fail = [&](const toml::node* at, const std::string& msg, std::string hint = {}) {
    problems.push_back(Error::at_line(file, at != nullptr ? line_of(*at) : r.line, msg, std::move(hint)));
  };
  r.id = t["id"].value_or(std::string());
  std::string who = r.id.empty() ? "rule" : "rule " + util::quoted(r.id);
  if (r.id.empty()) fail(&t, "rule has no 'id'");
  else if (!is_kebab(r.id)) fail(t.get("id"), who + ": id must be kebab-case (a-z, 0-9, -)");
  for (const auto& [key, node] : t) {
    if (kKnownKeys.count(std::string(key.str())) == 0)
      fail(&node, who + ": unknown key " + util::quoted(key.str()),
           "known keys: id title category severity confidence root_cause patterns kinds scope "
           "requires absent also unless named_ranks named_ranks_role version builtin advice samples");
  }
  r.title = t["title"].value_or(std::string());
  if (r.title.empty()) fail(&t, who + " has no 'title'");
  r.category = t["category"].value_or(std::string());
  if (r.category.empty()) fail(&t, who + " has no 'category'");
  else if (!is_category(r.category))
    fail(t.get("category"), who + ": category " + util::quoted(r.category) + " is not a finding category",
         "see the category table in docs/ARCHITECTURE.md");
  r.severity = t["severity"].value_or(std::string("error"));
  if (kSeverities.count(r.severity) == 0)
    fail(t.get("severity"), who + ": severity " + util::quoted(r.severity) + " is not critical, error, warning or info");
  r.confidence = t["confidence"].value_or(0.5);
  if (r.confidence < 0 || r.confidence > 1) fail(t.get("confidence"), who + ": confidence must be between 0 and 1");
  r.root_cause = t["root_cause"].value_or(false);
  r.advice = t["advice"].value_or(std::string());
  if (r.advice.empty()) fail(&t, who + " has no 'advice'", "say what to change: a setting, a command, a version");
  r.builtin = t["builtin"].value_or(std::string());
  if (!r.builtin.empty() && kBuiltins.count(r.builtin) == 0)
    fail(t.get("builtin"), who + ": builtin " + util::quoted(r.builtin) + " is not a cross-rank analysis");
  r.patterns = strings(t, "patterns", who, problems, file);
  r.kinds = strings(t, "kinds", who, problems, file);
  for (const auto& k : r.kinds)
    if (kKinds.count(k) == 0) fail(t.get("kinds"), who + ": kind " + util::quoted(k) + " is not an event kind");
  std::string scope = t["scope"].value_or(std::string("any"));
  if (scope == "culprit_tail") r.scope = Scope::kCulpritTail;
  else if (scope != "any") fail(t.get("scope"), who + ": scope must be \"any\" or \"culprit_tail\"");
  r.requires_fired = strings(t, "requires", who, problems, file);
  r.absent_fired = strings(t, "absent", who, problems, file);
  r.also = strings(t, "also", who, problems, file);
  r.unless = strings(t, "unless", who, problems, file);
  r.named_ranks = t["named_ranks"].value_or(std::string());
  std::string role = t["named_ranks_role"].value_or(std::string("culprits_too"));
  if (role == "waited_for") r.named_ranks_waited_for = true;
  else if (role != "culprits_too")
    fail(t.get("named_ranks_role"), who + ": named_ranks_role must be \"culprits_too\" or \"waited_for\"");
  if (r.named_ranks_waited_for && r.named_ranks.empty())
    fail(t.get("named_ranks_role"), who + ": named_ranks_role without named_ranks");
  if (const toml::table* v = t["version"].as_table()) {
    VersionGate g{(*v)["pattern"].value_or(std::string()), (*v)["min"].value_or(std::string()),
                  (*v)["below"].value_or(std::string())};
    if (g.pattern.empty()) fail(t.get("version"), who + ": version needs a 'pattern'");
    r.version = g;
  }
  if (const toml::table* s = t["samples"].as_table()) {
    r.samples_match = strings(*s, "match", who + " samples", problems, file);
    r.samples_no_match = strings(*s, "no_match", who + " samples", problems, file);
  }
  if (r.patterns.empty() && r.builtin.empty())
    fail(&t, who + " has no 'patterns' and no 'builtin': it could never fire");
  if (!r.patterns.empty() && r.samples_match.empty())
    fail(&t, who + " has patterns but no samples.match", "add a real log line it must match");
  return r;
}

PhaseMarker read_marker(const toml::table& t, const std::string& file, std::vector<Error>& problems) {
  PhaseMarker m;
  m.file = file;
  m.line = line_of(t);
  auto fail = [&](const toml::node* at, const std::string& msg, std::string hint = {}) {
    problems.push_back(Error::at_line(file, at != nullptr ? line_of(*at) : m.line, msg, std::move(hint)));
  };
  for (const auto& [key, node] : t) {
    std::string k(key.str());
    if (k != "phase" && k != "edge" && k != "patterns" && k != "samples")
      fail(&node, "marker: unknown key " + util::quoted(k), "known keys: phase edge patterns samples");
  }
  m.phase = t["phase"].value_or(std::string());
  if (std::find(std::begin(kPhases), std::end(kPhases), m.phase) == std::end(kPhases))
    fail(t.get("phase") != nullptr ? t.get("phase") : &t, "marker: phase " + util::quoted(m.phase) + " is not a job phase",
         "one of: training, evaluation, generation, checkpoint save, data preparation, after training");
  m.edge = t["edge"].value_or(std::string("begin"));
  if (m.edge != "begin" && m.edge != "end") fail(t.get("edge"), "marker: edge must be \"begin\" or \"end\"");
  std::string who = "marker of " + util::quoted(m.phase);
  m.patterns = strings(t, "patterns", who, problems, file);
  m.samples = strings(t, "samples", who, problems, file);
  if (m.patterns.empty()) fail(&t, who + " has no 'patterns'");
  if (m.samples.empty()) fail(&t, who + " has no 'samples'", "add a real log line it must match");
  return m;
}

}  // namespace

void load_rule_file(const std::filesystem::path& path, std::vector<Rule>& out, std::vector<PhaseMarker>& markers,
                    std::vector<Error>& problems) {
  std::string file = path.string();
  toml::table doc;
  try {
    doc = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    problems.push_back(Error::at_line(file, static_cast<int64_t>(e.source().begin.line),
                                      "invalid TOML: " + std::string(e.description())));
    return;
  }
  const toml::array* rules = doc["rule"].as_array();
  const toml::array* marker_tables = doc["marker"].as_array();
  if (rules == nullptr && marker_tables == nullptr) {
    problems.push_back(Error::at(file, "no [[rule]] or [[marker]] tables in this file"));
    return;
  }
  for (const auto& [key, node] : doc)
    if (key.str() != "rule" && key.str() != "marker")
      problems.push_back(Error::at_line(file, line_of(node), "unknown top-level key " + util::quoted(key.str())));
  if (rules != nullptr)
    for (const toml::node& n : *rules)
      if (const toml::table* t = n.as_table()) out.push_back(read_rule(*t, file, problems));
  if (marker_tables != nullptr)
    for (const toml::node& n : *marker_tables)
      if (const toml::table* t = n.as_table()) markers.push_back(read_marker(*t, file, problems));
}

}  // namespace ncclpm::rules
