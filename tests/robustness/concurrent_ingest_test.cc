// tests/robustness/concurrent_ingest_test.cc
//
// Two writers on one database: an ingest that finds another writer holding
// it waits (5 s), then stops with a clear line and leaves the database as it
// was; once the other has finished, the same ingest goes through.
#include <gtest/gtest.h>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

TEST(ConcurrentIngest, AnIngestThatFindsAnotherWriterWaitsThenSaysSoAndChangesNothing) {
  TempDir t;
  write_file(t / "first/rank1.log", testing::kWatchdogLine);
  write_file(t / "second/rank2.log", testing::kWatchdogLine);
  ASSERT_EQ(run_ncclpm({"ingest", (t / "first").string(), "--db", (t / "x.db").string()}).exit_code, 0);

  // Read before the lock is taken: closing any descriptor of the file would
  // drop this process's POSIX locks on it.
  std::string before = read_file(t / "x.db");
  auto other = store::Connection::open(t / "x.db", false);  // the other writer, mid-transaction
  ASSERT_TRUE(other);
  ASSERT_TRUE(other->exec("BEGIN IMMEDIATE"));
  auto blocked = run_ncclpm({"ingest", (t / "second").string(), "--db", (t / "x.db").string(), "--job", "second"});
  ASSERT_TRUE(other->exec("ROLLBACK"));
  other->close();
  EXPECT_EQ(blocked.exit_code, 1);
  EXPECT_NE(blocked.err.find("the database is locked by another writer (an ingest still running?); waited 5 s"),
            std::string::npos)
      << blocked.err.substr(0, 400);
  EXPECT_TRUE(read_file(t / "x.db") == before) << "the blocked ingest changed the database";

  auto after = run_ncclpm({"ingest", (t / "second").string(), "--db", (t / "x.db").string(), "--job", "second"});
  EXPECT_EQ(after.exit_code, 0) << after.err;
  auto db = store::open_for_reading(t / "x.db");
  ASSERT_TRUE(db);
  EXPECT_EQ(*db->scalar_int("SELECT count(*) FROM jobs"), 2);
  EXPECT_EQ(*db->scalar_int("SELECT count(*) FROM watchdog_timeouts"), 2);
}

}  // namespace
}  // namespace ncclpm
