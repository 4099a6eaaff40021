// tests/report/html_report_test.cc
//
// The HTML postmortem without a browser: the timeline read from small jobs
// ingested for real (lanes per rank, per host above kMaxRankLanes with the
// odd rank kept apart, the culprit marked, the hang's start), the page's
// self-containment and escaping, and `ncclpm report` on the command line.
// tests/report/browser_test.cc loads the pages in Chromium.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "ncclpm/diagnose/diagnose.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/report/html_report.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

struct Reported {
  diagnose::Diagnosis d;
  report::Timeline t;
  std::string page;
};

// Ingests a log directory, diagnoses it, reads its timeline and renders the page.
Reported report_dir(const std::filesystem::path& logs) {
  testing::TempDir dir;
  ingest::Options o;
  o.paths = {logs};
  o.db_path = dir / "j.db";
  Reported r;
  auto ingested = ingest::run(o);
  auto db = store::open_for_reading(o.db_path);
  auto rules = rules::RuleSet::load({rules::RuleSet::default_dir()});
  if (!ingested || !db || !rules) {
    ADD_FAILURE() << "ingest, database or rules failed";
    return r;
  }
  std::string job_name;
  auto job = diagnose::resolve_job(*db, "", &job_name);
  auto d = job ? diagnose::run(*db, *job, *rules) : Result<diagnose::Diagnosis>(job.error());
  if (!d) {
    ADD_FAILURE() << d.error().to_string();
    return r;
  }
  r.d = std::move(*d);
  r.d.job = job_name;
  auto t = report::load_timeline(*db, r.d);
  if (!t) {
    ADD_FAILURE() << t.error().to_string();
    return r;
  }
  r.t = std::move(*t);
  r.page = report::render_html(r.d, r.t, report::RenderOptions{o.db_path.string(), false});
  return r;
}

Reported report_log(const std::string& log) {
  testing::TempDir dir;
  testing::write_file(dir / "logs/job.log", log);
  return report_dir(dir / "logs");
}

// Rank `rank`'s watchdog timeout in `seq`, fired at `time` (HH:MM:SS).
std::string watchdog(int rank, int seq, const std::string& time) {
  return testing::watchdog_line(rank, seq, time + ".162814");
}

const report::Lane* lane_of_rank(const report::Timeline& t, int rank) {
  for (const report::Lane& l : t.lanes)
    if (l.ranks == std::vector<int>{rank}) return &l;
  return nullptr;
}

TEST(Timeline, OneLanePerRankWithItsMarksAndTheMomentTheHangBegan) {
  std::string log = "[rank0]:[I709 17:00:00.000000 train.py:1] step 1\n"
                    "[rank1]:[I709 17:00:00.000000 train.py:1] step 1\n" +
                    watchdog(1, 7, "17:10:00") +
                    "[rank0]:[E709 17:09:00.000000 train.py:9] Traceback (most recent call last):\n"
                    "[rank0]:  File \"train.py\", line 9, in <module>\n"
                    "[rank0]: RuntimeError: CUDA error: an illegal memory access was encountered\n";
  Reported r = report_log(log);
  ASSERT_EQ(r.t.rank_count, 2);
  EXPECT_FALSE(r.t.by_host);
  const report::Lane* rank1 = lane_of_rank(r.t, 1);
  ASSERT_NE(rank1, nullptr);
  ASSERT_FALSE(rank1->marks.empty());
  EXPECT_EQ(rank1->marks.back().kind, "watchdog");
  EXPECT_NE(rank1->marks.back().text.find("seq 7"), std::string::npos) << rank1->marks.back().text;
  const report::Lane* rank0 = lane_of_rank(r.t, 0);
  ASSERT_NE(rank0, nullptr);
  ASSERT_FALSE(rank0->marks.empty());
  EXPECT_EQ(rank0->marks.front().kind, "error");
  // The watchdog fired at 17:10:00 after 600.102 s: the hang began 600.102 s before.
  ASSERT_GT(r.t.hang_start_us, 0);
  EXPECT_EQ(rank1->marks.back().ts_us - r.t.hang_start_us, 600102000);
  auto with_collective = std::find_if(r.d.findings.begin(), r.d.findings.end(),
                                      [](const diagnose::Finding& f) { return f.collective.has_value(); });
  ASSERT_NE(with_collective, r.d.findings.end());
  EXPECT_EQ(with_collective->collective->hang_start_us, r.t.hang_start_us) << "diagnose and the page agree";
  // 17:10:00 (c10's sub-second digits are monotonic, not wall clock: dropped) - 600.102 s.
  EXPECT_NE(r.page.find("hanging since 07-09 16:59:59"), std::string::npos)
      << r.page.substr(r.page.find("<dt>collective"), 300);
  ASSERT_EQ(r.t.progress.size(), 1u);
  EXPECT_EQ(r.t.progress[0].rank, 1);
  EXPECT_EQ(r.t.progress[0].stuck_seq, 7);
  // c10's `E709 17:10:00` has no year: the page does not make one up.
  EXPECT_FALSE(r.t.years_known);
  EXPECT_NE(r.page.find("(the lines give no year)"), std::string::npos);
  EXPECT_NE(r.page.find("07-09 17:00:00"), std::string::npos);
}

TEST(Timeline, TimesWithAYearAreShownWithIt) {
  Reported r = report_log("[rank0]: 2024-07-09 17:00:00,000 - INFO - step 1\n"
                          "[rank0]: 2024-07-09 17:05:00,000 - INFO - step 2\n");
  EXPECT_TRUE(r.t.years_known);
  EXPECT_NE(r.page.find("logs from 2024-07-09 17:00:00"), std::string::npos)
      << r.page.substr(r.page.find("<header>"), 300);
}

TEST(Timeline, TheRootCausesCulpritLaneIsMarked) {
  Reported r = report_dir(testing::source_path("fixtures/incidents/save-phase-stall-torchrun-logdir/logs"));
  ASSERT_TRUE(r.d.has_root_cause());
  std::vector<int> culprits = r.d.findings.front().culprit_ranks;
  for (const report::Lane& l : r.t.lanes) {
    bool named = !l.ranks.empty() && std::find(culprits.begin(), culprits.end(), l.ranks.front()) != culprits.end();
    EXPECT_EQ(l.culprit, named) << l.label;
    // The save the culprit was in, from its last save line to the end of the logs.
    std::vector<report::Band> phases;
    for (const report::Band& b : l.bands)
      if (b.label.rfind("start-up", 0) != 0) phases.push_back(b);
    if (!named) {
      EXPECT_TRUE(phases.empty()) << l.label;
      continue;
    }
    ASSERT_EQ(phases.size(), 1u) << l.label;
    EXPECT_EQ(phases[0].label, "checkpoint save");
    EXPECT_NE(phases[0].why.find("Saving model checkpoint"), std::string::npos) << phases[0].why;
    EXPECT_EQ(phases[0].to_us, r.t.end_us);
  }
}

// Start-up ends at the job-wide communicator's Init COMPLETE; a rank whose
// init started and never completed stays in start-up to its last line.
TEST(Timeline, StartUpLastsUntilInitCompleteOrToTheEndWhenItNeverCame) {
  auto nccl = [](int rank, const std::string& time, const std::string& what) {
    return "2024-07-09 " + time + " node" + std::to_string(rank) + ":1" + std::to_string(rank) + ":1" +
           std::to_string(rank) + " [0] NCCL INFO ncclCommInitRank comm 0x5" + std::to_string(rank) + " rank " +
           std::to_string(rank) + " nranks 2 cudaDev 0 busId 1000 - " + what + "\n";
  };
  Reported r = report_log("[rank0]: 2024-07-09 17:00:00,000 - INFO - starting\n"
                          "[rank1]: 2024-07-09 17:00:00,000 - INFO - starting\n" +
                          nccl(0, "17:00:05", "Init START") + nccl(0, "17:00:09", "Init COMPLETE") +
                          nccl(1, "17:00:05", "Init START") +
                          "[rank0]: 2024-07-09 17:05:00,000 - INFO - step 1\n"
                          "[rank1]: 2024-07-09 17:06:00,000 - INFO - still here\n");
  auto startup = [&](int rank) -> const report::Band* {
    const report::Lane* lane = lane_of_rank(r.t, rank);
    if (lane == nullptr) return nullptr;
    for (const report::Band& b : lane->bands)
      if (b.label.rfind("start-up", 0) == 0) return &b;
    return nullptr;
  };
  const report::Band* done = startup(0);
  ASSERT_NE(done, nullptr);
  EXPECT_EQ(done->label, "start-up");
  EXPECT_EQ(done->to_us - done->from_us, 9'000'000);
  const report::Band* stuck = startup(1);
  ASSERT_NE(stuck, nullptr);
  EXPECT_EQ(stuck->label, "start-up, never completed");
  EXPECT_EQ(stuck->to_us - stuck->from_us, 360'000'000);
}

// The logs never say when a collective completed; a Flight Recorder dump does.
TEST(Timeline, AFlightRecorderDumpMarksTheLastCollectiveARankCompleted) {
  Reported r = report_dir(testing::source_path("fixtures/incidents/ugly-input/logs"));
  const report::Lane* rank0 = lane_of_rank(r.t, 0);
  ASSERT_NE(rank0, nullptr);
  auto completed = std::find_if(rank0->marks.begin(), rank0->marks.end(),
                                [](const report::Mark& m) { return m.kind == "completed"; });
  ASSERT_NE(completed, rank0->marks.end());
  // Entry 9712 was created at ...960907346428 ns and ran 50.972 ms on the GPU.
  EXPECT_NE(completed->text.find("seq 9712"), std::string::npos) << completed->text;
  EXPECT_EQ(completed->where, "flight_recorder/nccl_trace_rank_0.json");
}

// 300 ranks on 38 hosts: every rank times out in seq 7 except rank 123,
// which crashed; the host lanes stand for all, rank 123 keeps its own lane.
TEST(Timeline, AboveTheRankLimitHostsGetLanesAndTheOddRankStaysApart) {
  std::string log;
  for (int rank = 0; rank < 300; ++rank) {
    std::string host = "node" + std::to_string(rank / 8);
    // The elastic agent's per-rank file names no host; NCCL's lines do.
    log += host + ":" + std::to_string(1000 + rank) + ":" + std::to_string(1000 + rank) + " [" +
           std::to_string(rank % 8) + "] NCCL INFO comm 0x5 rank " + std::to_string(rank) +
           " nranks 300 cudaDev " + std::to_string(rank % 8) + " busId 1000 - Init COMPLETE\n";
    if (rank == 123)
      log += "[rank123]:[E709 17:00:05.000000 train.py:9] RuntimeError: CUDA error: an illegal memory access\n";
    else
      log += watchdog(rank, 7, "17:10:00");
  }
  Reported r = report_log(log);
  ASSERT_EQ(r.t.rank_count, 300);
  ASSERT_TRUE(r.t.by_host);
  const report::Lane* odd = lane_of_rank(r.t, 123);
  ASSERT_NE(odd, nullptr) << "the crashed rank among 299 that timed out is drawn apart";
  EXPECT_TRUE(odd->expanded);
  size_t rank_lanes = std::count_if(r.t.lanes.begin(), r.t.lanes.end(), [](const report::Lane& l) {
    return l.ranks.size() == 1 && l.expanded;
  });
  EXPECT_LT(rank_lanes, 10u) << "only the odd ranks get a lane of their own";
  EXPECT_LT(r.t.lanes.size(), 60u);
}

TEST(HtmlReport, IsOneFileThatFetchesNothing) {
  Reported r = report_log(testing::kWatchdogLine);
  ASSERT_FALSE(r.page.empty());
  EXPECT_EQ(r.page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* fetch : {"<link", "src=", "@import", "url(", "fetch(", "XMLHttpRequest", "https://"})
    EXPECT_EQ(r.page.find(fetch), std::string::npos) << fetch;
  EXPECT_NE(r.page.find("id=\"ncclpm-data\""), std::string::npos);
  EXPECT_NE(r.page.find("class=\"finding root\""), std::string::npos);
}

TEST(HtmlReport, ALogLineCannotEndTheScriptOrAddMarkup) {
  std::string hostile = "</script><script>alert(1)</script><!-- <b>bold</b>";
  Reported r = report_log("[rank0]:[E709 17:00:05.000000 train.py:9] RuntimeError: " + hostile + "\n" +
                          testing::kWatchdogLine);
  ASSERT_FALSE(r.page.empty());
  EXPECT_EQ(r.page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(r.page.find("<b>bold"), std::string::npos);
  // The page's own two scripts, each closed once.
  std::regex close("</script>");
  EXPECT_EQ(std::distance(std::sregex_iterator(r.page.begin(), r.page.end(), close), std::sregex_iterator()), 2);
  EXPECT_EQ(report::html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
}

TEST(ReportCommand, WritesThePageAndSaysWhere) {
  testing::TempDir dir;
  testing::write_file(dir / "logs/job.log", testing::kWatchdogLine);
  auto ingested = testing::run_ncclpm({"ingest", (dir / "logs").string(), "--db", (dir / "j.db").string()});
  ASSERT_EQ(ingested.exit_code, 0) << ingested.err;
  auto r = testing::run_ncclpm({"report", "--db", (dir / "j.db").string(), "--html", (dir / "out.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("out.html"), std::string::npos) << r.err;
  std::string page = testing::read_file(dir / "out.html");
  EXPECT_NE(page.find("Watchdog"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / ("out.html.tmp")));
}

TEST(HtmlReport, ASkewedHostsLinesAreDrawnOnTheReferenceClockAndTheHeaderSaysSo) {
  // Both ranks entered seq 5 together; node-b's clock prints it 600 s later.
  testing::TempDir t;
  for (int r : {0, 1}) {
    std::string host = r == 0 ? "node-a" : "node-b", id = std::to_string(r);
    testing::write_file(t / ("logs/rank" + id + ".log"),
                        host + ":70" + id + ":70" + id + " [" + id + "] NCCL INFO comm 0x5" + id + " rank " + id +
                            " nranks 2 cudaDev " + id + " nvmlDev " + id +
                            " busId 1b000 commId 0x77 - Init COMPLETE\n" +
                            testing::watchdog_line(r, 5, r == 0 ? "10:10:02.100" : "10:20:02.100"));
  }
  Reported r = report_dir(t / "logs");
  EXPECT_NE(r.page.find("<p class=\"clock\">The clock of node-b runs 600.0 s ahead of node-a&#39;s"),
            std::string::npos)
      << r.page.substr(r.page.find("<header>"), 600);
  std::vector<int64_t> fired;
  for (const auto& lane : r.t.lanes)
    for (const auto& m : lane.marks)
      if (m.kind == "watchdog") fired.push_back(m.ts_us);
  ASSERT_EQ(fired.size(), 2u);
  EXPECT_EQ(fired[0], fired[1]);
}

TEST(ReportCommand, DiagnoseEndsWithTheCommandThatDrawsThePage) {
  testing::TempDir dir;
  testing::write_file(dir / "logs/job.log", testing::kWatchdogLine);
  std::string db = (dir / "my db.db").string();
  ASSERT_EQ(testing::run_ncclpm({"ingest", (dir / "logs").string(), "--db", db, "--job", "run 7"}).exit_code, 0);
  auto d = testing::run_ncclpm({"diagnose", "--db", db});
  ASSERT_EQ(d.exit_code, 0) << d.err;
  std::string out = d.out.substr(0, d.out.find_last_not_of('\n') + 1);
  std::string last = out.substr(out.rfind('\n') + 1);
  EXPECT_EQ(last, "As a web page with a per-rank timeline: ncclpm report --html run_7.html --db '" + db +
                      "' --job 'run 7'");
}

TEST(ReportCommand, AHostThatWasTheCulpritOfSeveralJobsIsListed) {
  testing::TempDir dir;
  std::string db = (dir / "team.db").string();
  const std::string ib_failure =
      "nodeX:11:40 [0] transport/net_ib.cc:1200 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4321> with "
      "error 12, opcode 0, len 0, vendor err 129\n";
  for (const char* job : {"run-1", "run-2"}) {
    testing::write_file(dir / job / "job.log", ib_failure);
    ASSERT_EQ(testing::run_ncclpm({"ingest", (dir / job).string(), "--db", db, "--job", job}).exit_code, 0);
    ASSERT_EQ(testing::run_ncclpm({"diagnose", "--db", db, "--job", job}).exit_code, 0);
  }
  auto r = testing::run_ncclpm({"report", "--db", db, "--job", "run-2", "--html", (dir / "p.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string page = testing::read_file(dir / "p.html");
  EXPECT_NE(page.find("<tr><td>nodeX</td><td>2</td><td>run-1,run-2</td></tr>"), std::string::npos)
      << page.substr(page.find("Recurring") == std::string::npos ? 0 : page.find("Recurring"), 400);
}

TEST(ReportCommand, BadUseIsAClearError) {
  testing::TempDir dir;
  testing::write_file(dir / "logs/job.log", testing::kWatchdogLine);
  ASSERT_EQ(testing::run_ncclpm({"ingest", (dir / "logs").string(), "--db", (dir / "j.db").string()}).exit_code, 0);
  auto no_target = testing::run_ncclpm({"report", "--db", (dir / "j.db").string()});
  EXPECT_NE(no_target.exit_code, 0);
  EXPECT_NE(no_target.err.find("--html"), std::string::npos) << no_target.err;
  auto bad_dir = testing::run_ncclpm(
      {"report", "--db", (dir / "j.db").string(), "--html", (dir / "no/such/dir/out.html").string()});
  EXPECT_NE(bad_dir.exit_code, 0);
  EXPECT_NE(bad_dir.err.find("no/such/dir"), std::string::npos) << bad_dir.err;
  // A job whose files hold no readable line gets no page, as diagnose gets no verdict.
  testing::write_file(dir / "empty/job.log", "");
  ASSERT_EQ(testing::run_ncclpm({"ingest", (dir / "empty").string(), "--db", (dir / "e.db").string()}).exit_code, 0);
  auto nothing = testing::run_ncclpm({"report", "--db", (dir / "e.db").string(), "--html", (dir / "e.html").string()});
  EXPECT_EQ(nothing.exit_code, 4) << nothing.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "e.html"));
  auto no_db = testing::run_ncclpm({"report", "--db", (dir / "none.db").string(), "--html", (dir / "x.html").string()});
  EXPECT_NE(no_db.exit_code, 0);
  EXPECT_NE(no_db.err.find("none.db"), std::string::npos) << no_db.err;
}

}  // namespace
}  // namespace ncclpm
