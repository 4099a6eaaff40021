// tests/support/field_corpus.cc
#include "support/field_corpus.h"

#include <algorithm>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <toml++/toml.h>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "ncclpm/vocab/categories.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm::testing {
namespace {

std::string split_of(const std::string& slug) {
  uint32_t h = 2166136261u;  // FNV-1a: stable across platforms and runs
  for (unsigned char c : slug) h = (h ^ c) * 16777619u;
  return h % 3 == 0 ? "holdout" : "dev";
}

std::vector<std::string> string_list(const toml::table& t, const char* key) {
  std::vector<std::string> out;
  if (const toml::array* a = t[key].as_array())
    for (const toml::node& n : *a)
      if (auto s = n.value<std::string>()) out.push_back(*s);
  return out;
}

template <typename T>
bool names_only_culprits(const std::vector<T>& named, const std::set<T>& known) {
  return !named.empty() && std::all_of(named.begin(), named.end(), [&](const T& x) { return known.count(x) != 0; });
}

}  // namespace

std::vector<FieldIncident> load_field_corpus(const fs::path& root, std::vector<std::string>& problems) {
  std::vector<FieldIncident> out;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const fs::path& dir : dirs) {
    fs::path meta = dir / "incident.toml";
    if (!fs::exists(meta) || !fs::is_directory(dir / "logs")) {
      problems.push_back(dir.string() + ": needs incident.toml and logs/");
      continue;
    }
    toml::table t;
    try {
      t = toml::parse_file(meta.string());
    } catch (const toml::parse_error& e) {
      problems.push_back(meta.string() + ":" + std::to_string(e.source().begin.line) + ": " +
                         std::string(e.description()));
      continue;
    }
    FieldIncident i;
    i.slug = dir.filename().string();
    i.dir = dir;
    i.root = t["root"].value_or(std::string());
    i.expected = string_list(t, "expected");
    if (std::find(i.expected.begin(), i.expected.end(), i.root) == i.expected.end()) i.expected.push_back(i.root);
    if (const toml::array* a = t["culprit_ranks"].as_array())
      for (const toml::node& n : *a)
        if (auto r = n.value<int64_t>()) i.culprit_ranks.insert(static_cast<int>(*r));
    for (const std::string& h : string_list(t, "culprit_hosts")) i.culprit_hosts.insert(h);
    i.label_confidence = t["label_confidence"].value_or(std::string());
    i.split = split_of(i.slug);
    if (i.root.empty()) {
      problems.push_back(meta.string() + ": no root category");
      continue;
    }
    for (const std::string& c : i.expected)
      if (!vocab::is_category(c)) problems.push_back(meta.string() + ": " + util::quoted(c) + " is not a category");
    out.push_back(std::move(i));
  }
  return out;
}

FieldOutcome diagnose_incident(const FieldIncident& incident, const fs::path& rules_dir) {
  FieldOutcome o;
  o.slug = incident.slug;
  o.expected_total = static_cast<int>(incident.expected.size());
  o.shows_error_line = logs_show_error_line(incident.dir / "logs");
  TempDir t;
  ingest::Options opts;
  opts.paths = {incident.dir / "logs"};
  opts.db_path = t / "field.db";
  opts.job_name = incident.slug;
  opts.threads = 1;
  auto ingested = ingest::run(opts);
  if (!ingested) {
    o.error = ingested.error().to_string();
    return o;
  }
  auto db = store::open_for_update(opts.db_path);
  if (!db) {
    o.error = db.error().to_string();
    return o;
  }
  auto rules = rules::RuleSet::load({rules_dir});
  if (!rules) {
    o.error = "the rules do not load: " + rules.error().front().to_string();
    return o;
  }
  auto job_id = diagnose::resolve_job(*db, incident.slug, nullptr);
  if (!job_id) {
    o.error = job_id.error().to_string();
    return o;
  }
  auto d = diagnose::run(*db, *job_id, *rules);
  if (!d) {
    o.error = d.error().to_string();
    return o;
  }
  o.ran = true;
  for (const diagnose::Finding& f : d->findings)
    if (std::find(o.found.begin(), o.found.end(), f.category) == o.found.end()) o.found.push_back(f.category);
  for (const std::string& c : incident.expected)
    if (std::find(o.found.begin(), o.found.end(), c) != o.found.end()) ++o.expected_found;
  if (d->has_root_cause()) {
    const diagnose::Finding& top = d->findings.front();
    o.top_category = top.category;
    o.top_ranks = top.culprit_ranks;
    o.top_hosts = top.culprit_hosts;
  }
  o.top1 = o.top_category == incident.root;
  o.culprit_known = !incident.culprit_ranks.empty() || !incident.culprit_hosts.empty();
  if (o.culprit_known) {
    // Right when the first finding names at least one known culprit and no
    // rank or host that is not one: half a culprit list sends the on-call
    // engineer to the wrong node.
    bool ranks_ok = incident.culprit_ranks.empty() || names_only_culprits(o.top_ranks, incident.culprit_ranks);
    bool hosts_ok = incident.culprit_hosts.empty() || names_only_culprits(o.top_hosts, incident.culprit_hosts);
    o.culprit_ok = ranks_ok && hosts_ok;
  }
  return o;
}

bool logs_show_error_line(const fs::path& logs_dir) {
  static const char* kWords[] = {"NCCL WARN", "Traceback (most recent call last)", "Error", "ERROR", "error:",
                                 "CUDA error", "Xid", "Watchdog caught", "Segmentation fault", "Killed",
                                 "CANCELLED", "exitcode", "exit code"};
  for (const auto& e : fs::recursive_directory_iterator(logs_dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::string line;
    while (std::getline(in, line))
      for (const char* w : kWords)
        if (line.find(w) != std::string::npos) return true;
  }
  return false;
}

namespace {

struct Tally {
  int n = 0, hit = 0;
  void add(bool ok) {
    ++n;
    hit += ok ? 1 : 0;
  }
  std::string ratio() const {
    if (n == 0) return "   -";
    std::ostringstream s;
    s << std::fixed << std::setprecision(2) << static_cast<double>(hit) / n;
    return s.str();
  }
};

struct Figures {
  Tally recall, top1, culprit;
  int incidents = 0;
};

Figures overall(const std::vector<FieldIncident>& incidents, const std::vector<FieldOutcome>& outcomes,
                const std::string& split) {
  Figures f;
  for (size_t i = 0; i < incidents.size(); ++i) {
    if (!split.empty() && incidents[i].split != split) continue;
    const FieldOutcome& o = outcomes[i];
    ++f.incidents;
    f.recall.n += o.expected_total;
    f.recall.hit += o.expected_found;
    f.top1.add(o.top1);
    if (o.culprit_known) f.culprit.add(o.culprit_ok);
  }
  return f;
}

}  // namespace

std::string score_table(const std::vector<FieldIncident>& incidents, const std::vector<FieldOutcome>& outcomes) {
  std::map<std::string, Figures> by_cat;
  for (size_t i = 0; i < incidents.size(); ++i) {
    const FieldIncident& in = incidents[i];
    const FieldOutcome& o = outcomes[i];
    for (const std::string& c : in.expected)
      by_cat[c].recall.add(std::find(o.found.begin(), o.found.end(), c) != o.found.end());
    Figures& root = by_cat[in.root];
    ++root.incidents;
    root.top1.add(o.top1);
    if (o.culprit_known) root.culprit.add(o.culprit_ok);
  }
  std::ostringstream s;
  s << std::left << std::setw(20) << "category" << std::right << std::setw(6) << "root" << std::setw(7) << "top1"
    << std::setw(9) << "expected" << std::setw(8) << "recall" << std::setw(9) << "culprits" << std::setw(9)
    << "culprit" << "\n";
  for (const auto& [cat, f] : by_cat)
    s << std::left << std::setw(20) << cat << std::right << std::setw(6) << f.incidents << std::setw(7)
      << f.top1.ratio() << std::setw(9) << f.recall.n << std::setw(8) << f.recall.ratio() << std::setw(9)
      << f.culprit.n << std::setw(9) << f.culprit.ratio() << "\n";
  for (const char* split : {"dev", "holdout"}) {
    Figures f = overall(incidents, outcomes, split);
    s << split << ": recall " << f.recall.ratio() << " top1 " << f.top1.ratio() << " culprit " << f.culprit.ratio()
      << " (" << f.incidents << " incidents)\n";
  }
  Figures f = overall(incidents, outcomes, "");
  s << "overall: recall " << f.recall.ratio() << " top1 " << f.top1.ratio() << " culprit " << f.culprit.ratio()
    << " (" << f.incidents << " incidents)\n";
  return s.str();
}

std::string scoreboard(const std::vector<FieldIncident>& incidents, const std::vector<FieldOutcome>& outcomes) {
  std::ostringstream s;
  s << "slug\tsplit\troot\ttop\ttop1\trecall\tculprit\n";
  for (size_t i = 0; i < incidents.size(); ++i) {
    const FieldOutcome& o = outcomes[i];
    s << o.slug << '\t' << incidents[i].split << '\t' << incidents[i].root << '\t'
      << (o.ran ? (o.top_category.empty() ? "none" : o.top_category) : "error") << '\t' << (o.top1 ? "yes" : "no")
      << '\t' << o.expected_found << '/' << o.expected_total << '\t'
      << (o.culprit_known ? (o.culprit_ok ? "yes" : "no") : "-") << '\n';
  }
  return s.str();
}

}  // namespace ncclpm::testing
