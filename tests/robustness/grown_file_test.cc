// tests/robustness/grown_file_test.cc
//
// A log ingested while the job still wrote it, then again once it was done:
// the file's new content replaces its old rows, so the database holds what a
// single ingest of the finished file holds, not every event twice.
#include <gtest/gtest.h>

#include <fstream>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

std::string watchdog(int seq) { return testing::watchdog_line(1, seq); }

std::string coll(int op_count) {
  char hex[16];
  std::snprintf(hex, sizeof hex, "%x", op_count);
  return std::string("node1:1:1 [0] NCCL INFO AllReduce: opCount ") + hex +
         " sendbuff 0x7f3c2e000000 recvbuff 0x7f3c30000000 count 131072 datatype 7 op 0 root 0 comm "
         "0x55d5a8b3c2d0 [nranks=8] stream 0x55d5\n";
}

// What a database holds, table by table.
std::string contents(const fs::path& db) {
  auto c = store::open_for_reading(db);
  EXPECT_TRUE(c);
  if (!c) return {};
  std::string out;
  for (const char* sql :
       {"SELECT count(*) FROM files", "SELECT sum(lines_read) FROM files", "SELECT count(*) FROM events",
        "SELECT count(*) FROM work_records", "SELECT count(*) FROM unparsed_lines",
        "SELECT count(*) FROM collectives", "SELECT sum(calls) FROM collective_summary",
        "SELECT max(max_op_count) FROM collective_summary", "SELECT count(*) FROM file_accounting WHERE adds_up"}) {
    auto n = c->scalar_int(sql);
    out += std::string(sql) + " = " + (n ? std::to_string(*n) : n.error().message) + "\n";
  }
  return out;
}

TEST(GrownFile, ReplacesItsOwnRowsInsteadOfAddingThemTwice) {
  TempDir t;
  fs::path log = t / "logs/rank1.log";
  write_file(log, "step 1\n" + coll(1) + watchdog(7));
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "live.db").string()}).exit_code, 0);
  {
    std::ofstream more(log, std::ios::app);
    more << "step 2\n" << coll(2) << coll(3) << watchdog(8);
  }
  auto again = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "live.db").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("1 changed since and replaced"), std::string::npos) << again.err;

  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "once.db").string()}).exit_code, 0);
  EXPECT_EQ(contents(t / "live.db"), contents(t / "once.db"));

  auto third = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "live.db").string()});
  EXPECT_NE(third.err.find("(1 already in the database)"), std::string::npos) << third.err;
  EXPECT_EQ(contents(t / "live.db"), contents(t / "once.db"));
}

}  // namespace
}  // namespace ncclpm
