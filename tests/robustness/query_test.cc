// tests/robustness/query_test.cc
//
// `ncclpm query` can only read: one statement, no writes, no ATTACH, no
// pragma that sets something, no extension or tokenizer functions; a runaway
// query stops at --timeout (exit 3) or Ctrl-C (exit 130). Each refusal says
// what was refused, and the database is the same file afterwards.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "ncclpm/store/sqlite.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

const std::string kRunaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c";

// A small real incident database.
class Query : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(t_ / "logs/rank1.log",
               testing::kWatchdogLine);
    auto r = run_ncclpm({"ingest", (t_ / "logs").string(), "--db", db().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    before_ = read_file(db());
  }
  fs::path db() const { return t_ / "x.db"; }
  testing::RunResult query(const std::string& sql, std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"query", sql, "--db", db().string()};
    args.insert(args.end(), more.begin(), more.end());
    return run_ncclpm(args);
  }
  // The refusal is an error (exit 1) naming what was refused, and nothing changed.
  void expect_refused(const std::string& sql, const std::string& why) {
    auto r = query(sql);
    EXPECT_EQ(r.exit_code, 1) << sql;
    EXPECT_NE(r.err.find(why), std::string::npos) << sql << "\n" << r.err;
    EXPECT_EQ(read_file(db()), before_) << sql;
  }
  TempDir t_;
  std::string before_;
};

TEST_F(Query, ReadsOneStatement) {
  auto r = query("SELECT rank, seq FROM watchdog_timeouts", {"--format", "csv"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "rank,seq\n1,7\n");
  EXPECT_EQ(query("SELECT 1; -- a comment after it\n;").exit_code, 0);
  auto pragma = query("SELECT name FROM pragma_table_info('files') WHERE name = 'lines_read'", {"--format", "csv"});
  EXPECT_EQ(pragma.out, "name\nlines_read\n") << pragma.err;
  EXPECT_EQ(query("SELECT count(*) FROM collectives").exit_code, 0) << "the blocks' virtual table reads";
}

TEST_F(Query, ASecondStatementIsAnErrorThatNamesIt) {
  expect_refused("SELECT 1; DELETE FROM events", "exactly one statement; this follows the first: \"DELETE FROM events\"");
}

TEST_F(Query, WritesAreRefused) {
  expect_refused("DELETE FROM events", "DELETE writes to the database");
  expect_refused("UPDATE files SET kind = 'x'", "UPDATE writes to the database");
  expect_refused("INSERT INTO jobs(name, created_at) VALUES ('x', 'y')", "INSERT writes to the database");
  expect_refused("DROP TABLE events", "it creates or drops something");
  expect_refused("CREATE TEMP TABLE t(x)", "it creates or drops something");
  expect_refused("BEGIN", "transaction control");
  expect_refused("VACUUM", "the statement writes");
}

TEST_F(Query, AttachIsRefusedAndCreatesNoFile) {
  expect_refused("ATTACH DATABASE '" + (t_ / "other.db").string() + "' AS o", "ATTACH would open (or create)");
  EXPECT_FALSE(fs::exists(t_ / "other.db"));
  expect_refused("VACUUM INTO '" + (t_ / "copy.db").string() + "'", "the statement writes");
  EXPECT_FALSE(fs::exists(t_ / "copy.db"));
}

TEST_F(Query, PragmasThatSetSomethingAndOutsideFunctionsAreRefused) {
  expect_refused("PRAGMA user_version = 5", "PRAGMA user_version with a value sets something");
  expect_refused("PRAGMA journal_mode = DELETE", "PRAGMA journal_mode with a value sets something");
  expect_refused("SELECT fts3_tokenizer('simple')", "fts3_tokenizer() reaches outside the database");
  expect_refused("SELECT load_extension('libevil')", "load_extension() reaches outside the database");
  auto version = query("PRAGMA user_version", {"--format", "csv"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
}

TEST_F(Query, JsonHasNoInfinity) {
  auto r = query("SELECT 1e999 AS big, -1e999 AS small, 2.5 AS x", {"--format", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("{\"big\": null, \"small\": null, \"x\": 2.5}"), std::string::npos) << r.out;
}

TEST_F(Query, ARunawayQueryStopsAtTheTimeout) {
  auto start = std::chrono::steady_clock::now();
  auto r = query(kRunaway, {"--timeout", "0.5"});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("stopped at --timeout"), std::string::npos) << r.err;
  EXPECT_LT(seconds, 30.0) << "it stopped, rather than running to the end";
  EXPECT_EQ(query("SELECT 1", {"--timeout", "0"}).exit_code, 2) << "a timeout must be above 0";
}

TEST_F(Query, CtrlCStopsARunawayQueryWithExit130) {
  pid_t pid = fork();
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen("/dev/null", "w", stderr)) _exit(127);
    std::string bin = NCCLPM_BINARY;
    execl(bin.c_str(), bin.c_str(), "query", kRunaway.c_str(), "--db", db().c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
}

TEST_F(Query, ADatabaseBeingWrittenSaysSoAfterWaiting) {
  auto writer = store::Connection::open(db(), false);
  ASSERT_TRUE(writer);
  ASSERT_TRUE(writer->exec("BEGIN EXCLUSIVE"));
  auto r = query("SELECT 1");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the database is locked by another writer (an ingest still running?); waited 5 s"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not an ncclpm incident database"), std::string::npos) << r.err;
  ASSERT_TRUE(writer->exec("ROLLBACK"));
}

}  // namespace
}  // namespace ncclpm
