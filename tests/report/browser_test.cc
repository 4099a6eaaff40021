// tests/report/browser_test.cc
//
// Each fixture incident's HTML postmortem loaded in a real browser (headless
// Chromium, installed by scripts/install-deps.sh): the page must not log a
// single console message (an uncaught exception is one), its script must
// finish, and the rendered DOM must hold the lanes, the culprit highlight
// and the findings that the database says it should.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <regex>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/report/timeline.h"
#include "ncclpm/store/schema.h"
#include "ncclpm/util/text.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

namespace fs = std::filesystem;

std::string browser() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::string cmd = std::string("command -v ") + name + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) == 0) return name;
  }
  return "";
}

struct Loaded {
  int exit_code = -1;
  std::string dom, console;  // the DOM after the script ran; the page's console lines
};

// Loads `page` headless and dumps the DOM once the script has run. The
// profile lives in `dir` so that tests running side by side do not share one.
Loaded load(const std::string& chromium, const fs::path& page, const fs::path& dir) {
  fs::path dom = dir / "dom.html", log = dir / "chromium.log";
  std::string cmd = "timeout 120 " + chromium +
                    " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir='" +
                    (dir / "profile").string() + "' --enable-logging=stderr --v=0 --virtual-time-budget=10000" +
                    " --dump-dom 'file://" + page.string() + "' >'" + dom.string() + "' 2>'" + log.string() + "'";
  Loaded l;
  l.exit_code = std::system(cmd.c_str());
  l.dom = testing::read_file(dom);
  std::string all = testing::read_file(log);
  for (std::string_view line : util::split(all, '\n'))
    if (line.find(":CONSOLE") != std::string_view::npos) (l.console += line) += "\n";
  return l;
}

size_t count(const std::string& text, const std::string& pattern) {
  std::regex re(pattern);
  return static_cast<size_t>(std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator()));
}

std::string body_attr(const std::string& dom, const std::string& name) {
  std::smatch m;
  std::regex re("<body[^>]*\\b" + name + "=\"([^\"]*)\"");
  return std::regex_search(dom, m, re) ? m[1].str() : "";
}

struct Expected {
  size_t lanes = 0, culprit_lanes = 0, findings = 0, job_phases = 0;
};

// What the page should show, from the same database the page was made from.
Expected expected_from(const fs::path& db_path) {
  Expected e;
  auto db = store::open_for_reading(db_path);
  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  if (!db || !rules) {
    ADD_FAILURE() << "database or rules failed";
    return e;
  }
  auto job = diagnose::resolve_job(*db, "", nullptr);
  auto d = job ? diagnose::run(*db, *job, *rules) : Result<diagnose::Diagnosis>(job.error());
  if (!d) {
    ADD_FAILURE() << d.error().to_string();
    return e;
  }
  auto t = report::load_timeline(*db, *d);
  if (!t) {
    ADD_FAILURE() << t.error().to_string();
    return e;
  }
  e.lanes = t->lanes.size();
  for (const report::Lane& l : t->lanes) e.culprit_lanes += l.culprit ? 1 : 0;
  e.findings = d->findings.size();
  if (t->start_us > 0 && t->end_us > t->start_us) e.job_phases = t->job_phases.size();  // drawn when timed
  return e;
}

class BrowserReport : public ::testing::TestWithParam<std::string> {};

TEST_P(BrowserReport, RendersWithoutAConsoleMessageAndShowsWhatTheDatabaseHolds) {
  std::string chromium = browser();
  ASSERT_FALSE(chromium.empty()) << "no Chromium: scripts/install-deps.sh installs it (Debian package chromium)";
  testing::TempDir dir;
  fs::path logs = testing::source_path("fixtures/incidents/" + GetParam() + "/logs");
  fs::path db = dir / "j.db", page = dir / "report.html";
  auto ingested = testing::run_ncclpm({"ingest", logs.string(), "--db", db.string()});
  ASSERT_EQ(ingested.exit_code, 0) << ingested.err;
  auto reported = testing::run_ncclpm({"report", "--db", db.string(), "--html", page.string()});
  ASSERT_EQ(reported.exit_code, 0) << reported.err;
  Expected want = expected_from(db);

  Loaded got = load(chromium, page, dir.path());
  ASSERT_EQ(got.exit_code, 0) << "chromium failed or timed out";
  EXPECT_EQ(got.console, "") << "the page logged to the console";
  ASSERT_EQ(body_attr(got.dom, "data-rendered"), "ok") << "the script did not finish";
  EXPECT_EQ(body_attr(got.dom, "data-lanes"), std::to_string(want.lanes));
  EXPECT_EQ(count(got.dom, "<g class=\"lane[\" ]"), want.lanes);
  EXPECT_EQ(count(got.dom, "<g class=\"lane culprit"), want.culprit_lanes);
  EXPECT_EQ(count(got.dom, "<article class=\"finding "), want.findings);
  EXPECT_EQ(count(got.dom, "<rect [^>]*class=\"phase "), want.job_phases);
}

// The save-phase fixture's Trainer and DeepSpeed lines lay out its phases:
// the strip above the lanes must show them, the last one the save.
TEST(BrowserReport, TheJobsPhasesAreAStripAboveTheLanes) {
  std::string chromium = browser();
  ASSERT_FALSE(chromium.empty()) << "no Chromium: scripts/install-deps.sh installs it (Debian package chromium)";
  testing::TempDir dir;
  fs::path logs = testing::source_path("fixtures/incidents/save-phase-stall-torchrun-logdir/logs");
  fs::path db = dir / "j.db", page = dir / "report.html";
  ASSERT_EQ(testing::run_ncclpm({"ingest", logs.string(), "--db", db.string()}).exit_code, 0);
  ASSERT_EQ(testing::run_ncclpm({"report", "--db", db.string(), "--html", page.string()}).exit_code, 0);
  Loaded got = load(chromium, page, dir.path());
  ASSERT_EQ(got.exit_code, 0) << "chromium failed or timed out";
  EXPECT_EQ(count(got.dom, "<rect [^>]*data-phase=\"checkpoint save\""), 3u);
  EXPECT_EQ(count(got.dom, "<rect [^>]*data-phase=\"training\""), 3u);
  EXPECT_NE(got.dom.find("job phase (main process)"), std::string::npos);
}

std::vector<std::string> incidents() {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(testing::source_path("fixtures/incidents")))
    if (fs::is_directory(e.path() / "logs")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Incidents, BrowserReport, ::testing::ValuesIn(incidents()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

}  // namespace
}  // namespace ncclpm
