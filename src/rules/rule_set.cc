// src/rules/rule_set.cc
#include "ncclpm/rules/rule_set.h"

#include <re2/re2.h>
#include <re2/set.h>

#include <algorithm>
#include <cstdlib>
#include <map>

#include "ncclpm/util/text.h"
#include "rule_loader.h"

namespace fs = std::filesystem;

namespace ncclpm::rules {

struct RuleSet::Compiled {
  re2::RE2::Set set{re2::RE2::Options(), re2::RE2::UNANCHORED};
  std::vector<int> rule_of_pattern;                  // set index -> rule index
  std::vector<size_t> gate_of_pattern;               // set index -> the rule's gate, or kPattern
  static constexpr size_t kPattern = static_cast<size_t>(-2);
  std::vector<std::unique_ptr<re2::RE2>> version;    // rule index -> its version pattern, or null
  std::vector<std::vector<std::unique_ptr<re2::RE2>>> per_rule;  // rule index -> its patterns
  std::vector<std::vector<std::unique_ptr<re2::RE2>>> unless;    // rule index -> its exclusions
  std::vector<std::unique_ptr<re2::RE2>> named_ranks;            // rule index -> its rank extractor, or null
  re2::RE2::Set markers{re2::RE2::Options(), re2::RE2::UNANCHORED};
  std::vector<int> marker_of_pattern;                // marker set index -> marker index
};

RuleSet::RuleSet() : compiled_(std::make_unique<Compiled>()) {}
RuleSet::RuleSet(RuleSet&&) noexcept = default;
RuleSet& RuleSet::operator=(RuleSet&&) noexcept = default;
RuleSet::~RuleSet() = default;

fs::path RuleSet::default_dir() {
  const char* env = std::getenv("NCCLPM_RULES");
  if (env != nullptr && *env != '\0') return env;
  return NCCLPM_DEFAULT_RULES_DIR;
}

namespace {

std::vector<fs::path> rule_files(const fs::path& dir, std::vector<Error>& problems) {
  std::vector<fs::path> files;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (fs::is_regular_file(dir, ec)) return {dir};
    problems.push_back(Error::at(dir.string(), "rules directory does not exist"));
    return files;
  }
  for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".toml") files.push_back(it->path());
  std::sort(files.begin(), files.end());
  if (files.empty()) problems.push_back(Error::at(dir.string(), "no rule files (*.toml) here"));
  return files;
}

std::string first_line_of_error(const std::string& s) { return s.substr(0, s.find('\n')); }

}  // namespace

void RuleSet::compile_markers(RuleSet& set, std::vector<Error>& problems) {
  Compiled& c = *set.compiled_;
  for (size_t i = 0; i < set.markers_.size(); ++i) {
    const PhaseMarker& m = set.markers_[i];
    for (const std::string& p : m.patterns) {
      std::string err;
      if (c.markers.Add(p, &err) < 0) {
        problems.push_back(Error::at_line(m.file, m.line,
                                          "pattern of the marker of " + util::quoted(m.phase) +
                                              " does not compile: " + first_line_of_error(err),
                                          "patterns use RE2 syntax; look-behind and back-references are not supported"));
        continue;
      }
      c.marker_of_pattern.push_back(static_cast<int>(i));
    }
  }
  if (!c.marker_of_pattern.empty() && !c.markers.Compile())
    problems.push_back(Error::plain("the marker patterns do not fit in memory together"));
}

Result<RuleSet, std::vector<Error>> RuleSet::load(const std::vector<fs::path>& dirs) {
  std::vector<Error> problems;
  RuleSet set;
  for (const fs::path& dir : dirs)
    for (const fs::path& file : rule_files(dir, problems)) load_rule_file(file, set.rules_, set.markers_, problems);

  std::map<std::string, const Rule*> seen;
  for (const Rule& r : set.rules_) {
    if (r.id.empty()) continue;
    auto [it, inserted] = seen.emplace(r.id, &r);
    if (!inserted) {
      problems.push_back(Error::at_line(r.file, r.line,
                                        "rule id " + util::quoted(r.id) + " is already defined at " +
                                            it->second->file + ":" + std::to_string(it->second->line)));
    }
  }

  // 'absent' names rules: a typo would silently never suppress anything.
  for (const Rule& r : set.rules_)
    for (const std::string& id : r.absent_fired)
      if (seen.count(id) == 0)
        problems.push_back(Error::at_line(r.file, r.line, "rule " + util::quoted(r.id) + ": absent names no rule: " +
                                                              util::quoted(id)));

  // Compile each pattern alone first so that an error names its rule.
  Compiled& c = *set.compiled_;
  c.per_rule.resize(set.rules_.size());
  c.unless.resize(set.rules_.size());
  c.named_ranks.resize(set.rules_.size());
  c.version.resize(set.rules_.size());
  auto compiles = [&](const Rule& r, const std::string& pattern, const char* what) {
    re2::RE2 re(pattern, re2::RE2::Quiet);
    if (re.ok()) return true;
    problems.push_back(Error::at_line(r.file, r.line,
                                      std::string(what) + " of rule " + util::quoted(r.id) +
                                          " does not compile: " + first_line_of_error(re.error()),
                                      "patterns use RE2 syntax; look-behind and back-references are not supported"));
    return false;
  };
  for (size_t i = 0; i < set.rules_.size(); ++i) {
    const Rule& r = set.rules_[i];
    for (const std::string& p : r.patterns) {
      if (!compiles(r, p, "pattern")) continue;
      std::string err;
      int index = c.set.Add(p, &err);
      if (index < 0) continue;
      c.rule_of_pattern.push_back(static_cast<int>(i));
      c.gate_of_pattern.push_back(Compiled::kPattern);
      c.per_rule[i].push_back(std::make_unique<re2::RE2>(p, re2::RE2::Quiet));
    }
    // The gates ride in the same set: a line is read once for both.
    auto add_gate = [&](const std::string& p, size_t gate) {
      if (c.set.Add(p, nullptr) < 0) return;
      c.rule_of_pattern.push_back(static_cast<int>(i));
      c.gate_of_pattern.push_back(gate);
    };
    for (size_t k = 0; k < r.also.size(); ++k)
      if (compiles(r, r.also[k], "'also' pattern")) add_gate(r.also[k], k);
    for (const std::string& p : r.unless)
      if (compiles(r, p, "'unless' pattern")) c.unless[i].push_back(std::make_unique<re2::RE2>(p, re2::RE2::Quiet));
    if (r.version && compiles(r, r.version->pattern, "version pattern")) {
      c.version[i] = std::make_unique<re2::RE2>(r.version->pattern, re2::RE2::Quiet);
      add_gate(r.version->pattern, kVersionGate);
    }
    if (!r.named_ranks.empty() && compiles(r, r.named_ranks, "'named_ranks' pattern")) {
      c.named_ranks[i] = std::make_unique<re2::RE2>(r.named_ranks, re2::RE2::Quiet);
      if (c.named_ranks[i]->NumberOfCapturingGroups() < 1)
        problems.push_back(Error::at_line(r.file, r.line, "rule " + util::quoted(r.id) +
                                                              ": named_ranks has no capture group",
                                          "capture each rank the message names: 'rank (\\d+) and rank (\\d+)'"));
    }
  }
  if (!c.set.Compile()) problems.push_back(Error::plain("the rule patterns do not fit in memory together"));
  compile_markers(set, problems);

  // Rules test themselves: their samples must agree with their patterns.
  for (size_t i = 0; i < set.rules_.size() && problems.empty(); ++i) {
    const Rule& r = set.rules_[i];
    for (const std::string& s : r.samples_match)
      if (!set.rule_matches(i, s) || set.rule_excludes(i, s))
        problems.push_back(Error::at_line(r.file, r.line,
                                          "rule " + util::quoted(r.id) + ": sample does not match: " + util::quoted(s)));
    if (c.named_ranks[i] != nullptr && std::none_of(r.samples_match.begin(), r.samples_match.end(),
                                                    [&](const std::string& s) { return !set.named_ranks(i, s).empty(); }))
      problems.push_back(Error::at_line(r.file, r.line, "rule " + util::quoted(r.id) +
                                                            ": named_ranks finds no rank in any sample"));
    for (const std::string& s : r.samples_no_match)
      if (set.rule_matches(i, s) && !set.rule_excludes(i, s))
        problems.push_back(Error::at_line(r.file, r.line,
                                          "rule " + util::quoted(r.id) + ": no_match sample matches: " + util::quoted(s)));
  }
  for (const PhaseMarker& m : set.markers_)
    for (const std::string& sample : m.samples)
      if (problems.empty() && set.match_marker(sample) != &m)
        problems.push_back(Error::at_line(m.file, m.line,
                                          "marker of " + util::quoted(m.phase) + ": sample " + util::quoted(sample) +
                                              " is not recognized as this marker",
                                          "a marker earlier in file order may take it first"));
  auto catalog = vocab::Catalog::load(dirs);
  if (!catalog) {
    problems.insert(problems.end(), catalog.error().begin(), catalog.error().end());
  } else {
    set.catalog_ = std::move(*catalog);
  }
  if (!problems.empty()) return problems;
  return set;
}

const Rule* RuleSet::find(std::string_view id) const {
  for (const Rule& r : rules_)
    if (r.id == id) return &r;
  return nullptr;
}

void RuleSet::match(std::string_view line, std::vector<int>& hits, std::vector<GateHit>* gates) const {
  hits.clear();
  if (gates != nullptr) gates->clear();
  std::vector<int> patterns;
  if (compiled_->rule_of_pattern.empty() ||
      !compiled_->set.Match(re2::StringPiece(line.data(), line.size()), &patterns))
    return;
  for (int p : patterns) {
    auto at = static_cast<size_t>(p);
    int rule = compiled_->rule_of_pattern[at];
    size_t gate = compiled_->gate_of_pattern[at];
    if (gate == Compiled::kPattern) hits.push_back(rule);
    else if (gates != nullptr) gates->push_back({static_cast<size_t>(rule), gate});
  }
  std::sort(hits.begin(), hits.end());
  hits.erase(std::unique(hits.begin(), hits.end()), hits.end());
}

std::string RuleSet::version_in(size_t index, std::string_view line) const {
  const re2::RE2* re = compiled_->version[index].get();
  std::string v;
  if (re != nullptr) re2::RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re, &v);
  return v;
}

bool RuleSet::rule_excludes(size_t index, std::string_view line) const {
  for (const auto& re : compiled_->unless[index])
    if (re2::RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re)) return true;
  return false;
}

std::vector<int> RuleSet::named_ranks(size_t index, std::string_view line) const {
  const re2::RE2* re = compiled_->named_ranks[index].get();
  if (re == nullptr) return {};
  std::vector<re2::StringPiece> groups(static_cast<size_t>(re->NumberOfCapturingGroups()) + 1);
  re2::StringPiece in(line.data(), line.size());
  // Every match on the line counts: a report may name each culprit in a
  // clause of its own ("Culprit rank 22; ..., Culprit rank 110; ...").
  std::vector<int> ranks;
  size_t from = 0;
  while (from <= in.size() &&
         re->Match(in, from, in.size(), re2::RE2::UNANCHORED, groups.data(), static_cast<int>(groups.size()))) {
    // A group holds one rank, or a list of them ("0, 2": Horovod's missing ranks).
    for (size_t g = 1; g < groups.size(); ++g) {
      for (std::string_view item : util::split(std::string_view(groups[g].data(), groups[g].size()), ',')) {
        auto r = util::parse_int(util::trim(item));
        if (r && *r >= 0 && *r < (int64_t{1} << 24)) ranks.push_back(static_cast<int>(*r));
      }
    }
    size_t end = static_cast<size_t>(groups[0].data() - in.data()) + groups[0].size();
    from = end > from ? end : from + 1;
  }
  return ranks;
}

const PhaseMarker* RuleSet::match_marker(std::string_view line) const {
  std::vector<int> patterns;
  if (compiled_->marker_of_pattern.empty() ||
      !compiled_->markers.Match(re2::StringPiece(line.data(), line.size()), &patterns))
    return nullptr;
  int first = compiled_->marker_of_pattern[static_cast<size_t>(*std::min_element(patterns.begin(), patterns.end()))];
  return &markers_[static_cast<size_t>(first)];
}

bool RuleSet::rule_matches(size_t index, std::string_view line) const {
  for (const auto& re : compiled_->per_rule[index])
    if (re2::RE2::PartialMatch(re2::StringPiece(line.data(), line.size()), *re)) return true;
  return false;
}

}  // namespace ncclpm::rules
