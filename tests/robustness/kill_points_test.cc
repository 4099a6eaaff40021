// tests/robustness/kill_points_test.cc
//
// An ingest killed with SIGKILL at any moment leaves the database as it was
// before, or (killed after its commit) with the whole new job: never a part
// of it, never damaged. The kills land at points spread over the time a whole
// ingest of the same logs took: while files are discovered and parsed, while
// their rows are written, while the job's derived tables are built, around
// the commit and after it. What is checked is what a user does next: a
// query through ncclpm itself (which rolls back a killed writer's journal),
// then another ingest.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

// Eight ranks' consoles, a few seconds of ingest: progress lines, lines no
// parser knows (stored as unparsed), and each rank's watchdog timeout.
void write_job(const fs::path& dir) {
  for (int r = 0; r < 8; ++r) {
    std::ofstream out(dir / ("rank" + std::to_string(r) + ".log"));
    for (int i = 0; i < 8000; ++i) {
      out << "[rank" << r << "]: {'loss': 1." << i % 97 << ", 'learning_rate': 2e-05, 'epoch': 0." << i % 100
          << "} step " << i << "\n";
      out << "[rank" << r << "]: data worker " << i % 8 << " fetched shard " << i << " of /data/train.arrow\n";
    }
    out << testing::watchdog_line(r, 40001);
  }
}

// The single value a query prints (csv: a header line, then the value).
std::string query_value(const fs::path& db, const std::string& sql) {
  auto r = run_ncclpm({"query", "--db", db.string(), "--format", "csv", sql});
  EXPECT_EQ(r.exit_code, 0) << sql << ": " << r.err;
  std::string out = r.out;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out.substr(out.rfind('\n') + 1);
}

struct Snapshot {
  std::string jobs, events, unparsed, integrity;
  bool operator==(const Snapshot&) const = default;
};

Snapshot snapshot(const fs::path& db) {
  return {query_value(db, "SELECT count(*) FROM jobs"), query_value(db, "SELECT count(*) FROM events"),
          query_value(db, "SELECT count(*) FROM unparsed_lines"), query_value(db, "PRAGMA integrity_check")};
}

std::ostream& operator<<(std::ostream& os, const Snapshot& s) {
  return os << "{jobs " << s.jobs << ", events " << s.events << ", unparsed " << s.unparsed << ", " << s.integrity
            << "}";
}

// Runs `ncclpm ingest logs --db db`, kills it with SIGKILL after `after`
// (unless it ended first); true when the kill landed on a running ingest.
bool ingest_killed_after(const fs::path& logs, const fs::path& db, std::chrono::milliseconds after) {
  pid_t pid = testing::start_ncclpm({"ingest", logs.string(), "--db", db.string()});
  std::this_thread::sleep_for(after);
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

class KillPoints : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(t_ / "first/rank1.log", testing::kWatchdogLine);
    fs::create_directories(t_ / "logs");
    write_job(t_ / "logs");
    ASSERT_EQ(run_ncclpm({"ingest", (t_ / "first").string(), "--db", (t_ / "base.db").string()}).exit_code, 0);
    before_ = snapshot(t_ / "base.db");
    // The whole ingest, uninterrupted: how long it takes and what it leaves.
    fs::copy_file(t_ / "base.db", t_ / "whole.db");
    auto start = std::chrono::steady_clock::now();
    auto whole = run_ncclpm({"ingest", (t_ / "logs").string(), "--db", (t_ / "whole.db").string()});
    took_ = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    ASSERT_EQ(whole.exit_code, 0) << whole.err;
    after_ = snapshot(t_ / "whole.db");
    ASSERT_NE(before_, after_);
  }
  std::vector<std::chrono::milliseconds> kill_points() const {
    std::vector<std::chrono::milliseconds> at;
    for (int percent : {2, 10, 25, 45, 65, 85, 95, 100, 110})
      at.push_back(std::chrono::milliseconds(took_.count() * percent / 100));
    return at;
  }
  TempDir t_;
  Snapshot before_, after_;
  std::chrono::milliseconds took_{0};
};

TEST_F(KillPoints, AnExistingDatabaseIsAsItWasOrHasTheWholeJob) {
  int killed = 0;
  for (std::chrono::milliseconds at : kill_points()) {
    fs::path db = t_ / ("killed-" + std::to_string(at.count()) + ".db");
    fs::copy_file(t_ / "base.db", db);
    killed += ingest_killed_after(t_ / "logs", db, at);
    Snapshot now = snapshot(db);
    EXPECT_TRUE(now == before_ || now == after_)
        << "killed after " << at.count() << " of " << took_.count() << " ms: " << now << "; before " << before_
        << ", whole " << after_;
    // And the next ingest goes on from there.
    auto again = run_ncclpm({"ingest", (t_ / "logs").string(), "--db", db.string()});
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(snapshot(db), after_) << "re-ingested after a kill at " << at.count() << " ms";
  }
  EXPECT_GE(killed, 3) << "too few kills landed on a running ingest (it took " << took_.count() << " ms)";
  RecordProperty("kills_landed", killed);
}

TEST_F(KillPoints, ANewDatabaseIsAbsentOrHasTheWholeJob) {
  int killed = 0;
  for (std::chrono::milliseconds at : kill_points()) {
    fs::path db = t_ / ("new-" + std::to_string(at.count()) + ".db");
    killed += ingest_killed_after(t_ / "logs", db, at);
    if (fs::exists(db)) {
      Snapshot now = snapshot(db);
      EXPECT_EQ(now.integrity, "ok");
      EXPECT_EQ(now.events, std::to_string(std::stoll(after_.events) - std::stoll(before_.events)))
          << "killed after " << at.count() << " ms: a new database appears only whole";
    }
    auto again = run_ncclpm({"ingest", (t_ / "logs").string(), "--db", db.string()});
    EXPECT_EQ(again.exit_code, 0) << again.err;
  }
  EXPECT_GE(killed, 3) << "too few kills landed on a running ingest (it took " << took_.count() << " ms)";
  for (const auto& e : fs::directory_iterator(t_.path()))
    EXPECT_EQ(e.path().filename().string().find(".tmp-"), std::string::npos)
        << "a killed run's temporary file outlived the next ingest: " << e.path();
}

}  // namespace
}  // namespace ncclpm
