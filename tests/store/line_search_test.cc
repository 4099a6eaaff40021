// tests/store/line_search_test.cc
//
// `ncclpm grep` over a real ingested job: hits carry the rank, host, time and
// file:line ingest gave the line; NCCL's lines are found by the words users
// grep for; a traceback is searched line by line; the filters narrow by rank,
// host (short or full name) and time; bad patterns and times are clear errors.
#include <gtest/gtest.h>

#include "ncclpm/store/line_search.h"
#include "ncclpm/frame/timestamp.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

// Rank 1 on node1 fails at 17:05:40; node2's NCCL file has a WARN without a time.
const char* kConsole =
    "[rank0]:[I709 17:05:38.100000000 ProcessGroupNCCL.cpp:900] [Rank 0] ProcessGroupNCCL initialized\n"
    "[rank1]:[I709 17:05:38.200000000 ProcessGroupNCCL.cpp:900] [Rank 1] ProcessGroupNCCL initialized\n"
    "[rank1]: Traceback (most recent call last):\n"
    "[rank1]:   File \"train.py\", line 12, in <module>\n"
    "[rank1]:     loss = step(batch)\n"
    "[rank1]: RuntimeError: CUDA error: an illegal memory access was encountered\n"
    "[rank0]:[E709 17:05:40.000000000 ProcessGroupNCCL.cpp:632] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for "
    "600102 milliseconds before timing out.\n";
const char* kNcclFile =
    "node2.cluster:200:200 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"
    "node2.cluster:200:200 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.7 with "
    "status=IBV_WC_RETRY_EXC_ERR(12)\n";

class Grep : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file(t_ / "logs/node1.log", kConsole);
    write_file(t_ / "logs/nccl.node2.log", kNcclFile);
    auto r = run_ncclpm({"ingest", (t_ / "logs").string(), "--db", db()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  std::string db() const { return (t_ / "x.db").string(); }
  testing::RunResult grep(std::vector<std::string> args) {
    args.insert(args.begin(), "grep");
    args.insert(args.end(), {"--db", db()});
    return run_ncclpm(args);
  }
  TempDir t_;
};

TEST_F(Grep, HitsCarryFileLineRankAndTime) {
  auto r = grep({"Watchdog caught"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "node1.log:7: [rank 0, 07-09 17:05:40] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for "
            "600102 milliseconds before timing out.\n")
      << "the year is not shown (the logs gave none), nor the prefixes up to the PG's [Rank 0]";
}

TEST_F(Grep, NcclLinesAreFoundByTheirLevelWordsAndShortHostName) {
  auto r = grep({"NCCL WARN", "--host", "node2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "nccl.node2.log:2: [node2.cluster] NCCL WARN NET/IB : Got completion from peer 10.0.0.7 with "
            "status=IBV_WC_RETRY_EXC_ERR(12)\n");
  EXPECT_EQ(grep({"NCCL INFO NCCL_SOCKET_IFNAME", "--host", "node2.cluster", "--count"}).out, "1\n");
  EXPECT_EQ(grep({"NCCL", "--host", "node1", "--count"}).out, "0\n");
}

TEST_F(Grep, ATracebackIsSearchedLineByLine) {
  auto r = grep({"File \"train.py\"|RuntimeError"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "node1.log:4: [rank 1]   File \"train.py\", line 12, in <module>\n"
            "node1.log:6: [rank 1] RuntimeError: CUDA error: an illegal memory access was encountered\n");
}

TEST_F(Grep, RankTimeAndCountFiltersNarrowTheHits) {
  EXPECT_EQ(grep({"initialized", "--count"}).out, "2\n");
  EXPECT_EQ(grep({"initialized", "--rank", "1", "--count"}).out, "1\n");
  EXPECT_EQ(grep({"ProcessGroupNCCL|Watchdog", "--since", "17:05:38.5", "--count"}).exit_code, 2)
      << "fractions of a second are not a documented form";
  EXPECT_EQ(grep({"initialized|Watchdog", "--since", "17:05:39", "--count"}).out, "1\n");
  EXPECT_EQ(grep({"initialized|Watchdog", "--until", "07-09 17:05:38", "--count"}).out, "2\n");
  EXPECT_EQ(grep({"(?i)INITIALIZED", "--max-count", "1", "--count"}).out, "1\n");
  EXPECT_EQ(grep({"INITIALIZED", "-i", "--count"}).out, "2\n");
}

TEST_F(Grep, ByTimeOrdersAcrossFilesWithUntimedLinesLast) {
  auto r = grep({"initialized|Watchdog|NCCL WARN", "--by-time"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> places;  // "file:line" of each hit
  for (size_t pos = 0; pos < r.out.size(); pos = r.out.find('\n', pos) + 1)
    places.push_back(r.out.substr(pos, r.out.find(": ", pos) - pos));
  EXPECT_EQ(places, (std::vector<std::string>{"node1.log:1", "node1.log:2", "node1.log:7", "nccl.node2.log:2"}));
}

TEST_F(Grep, NoHitSaysSoAndBadInputIsAClearError) {
  auto none = grep({"flux capacitor"});
  EXPECT_EQ(none.exit_code, 0);
  EXPECT_EQ(none.out, "");
  EXPECT_EQ(none.err.rfind("ncclpm grep: no line of job ", 0), 0u) << none.err;

  auto bad = grep({"(unclosed"});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("the pattern '(unclosed' is not a regular expression: missing )"), std::string::npos)
      << bad.err;

  auto time = grep({"x", "--since", "yesterday"});
  EXPECT_EQ(time.exit_code, 2);
  EXPECT_NE(time.err.find("--since: 'yesterday' is not a time"), std::string::npos) << time.err;

  auto missing = run_ncclpm({"grep", "x", "--db", (t_ / "none.db").string()});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("no incident database here"), std::string::npos) << missing.err;
}

// NCCL's channel and transport lines are stored as lines, not events rows:
// they keep the rank their process's communicator gives, and grep finds them
// by the words users grep for.
TEST(GrepChannels, ChannelLinesAreStoredAsLinesWithTheirProcesssRank) {
  TempDir t;
  write_file(t / "logs/nccl.node3.log",
             "node3:300:300 [1] NCCL INFO comm 0x55 rank 3 nranks 4 cudaDev 1 busId 41000 - Init START\n"
             "node3:300:301 [1] NCCL INFO Channel 00/02 :    0   1   2   3\n"
             "node3:300:301 [1] NCCL INFO Channel 00/0 : 3[1] -> 0[0] via P2P/CUMEM/read\n"
             "node3:300:300 [1] NCCL INFO comm 0x55 rank 3 nranks 4 cudaDev 1 busId 41000 - Init COMPLETE\n"
             "node3:300:300 [1] NCCL INFO Using network IB\n");
  std::string db = (t / "x.db").string();
  auto ingested = run_ncclpm({"ingest", (t / "logs").string(), "--db", db});
  ASSERT_EQ(ingested.exit_code, 0) << ingested.err;
  auto query = [&](const std::string& sql) { return run_ncclpm({"query", sql, "--db", db, "--format", "csv"}).out; };
  EXPECT_EQ(query("SELECT count(*) FROM events WHERE kind IN ('nccl_channel', 'nccl_network')"), "count(*)\n0\n");
  EXPECT_EQ(query("SELECT line_no, rank, text FROM nccl_network_lines"), "line_no,rank,text\n5,3,Using network IB\n");
  EXPECT_EQ(query("SELECT line_no, rank, host, pid, severity, text FROM nccl_channel_lines ORDER BY line_no"),
            "line_no,rank,host,pid,severity,text\n"
            "2,3,node3,300,I,Channel 00/02 :    0   1   2   3\n"
            "3,3,node3,300,I,Channel 00/0 : 3[1] -> 0[0] via P2P/CUMEM/read\n");
  auto r = run_ncclpm({"grep", "NCCL INFO Channel 00/0 :", "--rank", "3", "--db", db});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "nccl.node3.log:3: [rank 3, node3] NCCL INFO Channel 00/0 : 3[1] -> 0[0] via P2P/CUMEM/read\n");
}

TEST(ParseMoment, LeftOutPartsComeFromTheReference) {
  const int64_t day = 86'400'000'000LL;
  int64_t ref = frame::days_from_civil(2025, 6, 12) * day + 5 * 3'600'000'000LL;  // 2025-06-12 05:00
  auto at = [&](int y, int mo, int d, int h, int mi, int s) {
    return frame::days_from_civil(y, mo, d) * day + (h * 3600 + mi * 60 + s) * 1'000'000LL;
  };
  EXPECT_EQ(*store::parse_moment("2024-02-29 23:59:59", ref), at(2024, 2, 29, 23, 59, 59));
  EXPECT_EQ(*store::parse_moment("2024-02-29T08:30", ref), at(2024, 2, 29, 8, 30, 0));
  EXPECT_EQ(*store::parse_moment("06-13 09:28:37", ref), at(2025, 6, 13, 9, 28, 37));
  EXPECT_EQ(*store::parse_moment("09:28", ref), at(2025, 6, 12, 9, 28, 0));
  EXPECT_EQ(*store::parse_moment("  09:28:01 ", ref), at(2025, 6, 12, 9, 28, 1));
  int64_t new_year = frame::days_from_civil(2000, 1, 1) * day;
  EXPECT_EQ(*store::parse_moment("12:00", new_year), at(2000, 1, 1, 12, 0, 0));
  for (const char* bad : {"", "9", "25:00", "12:60", "13-01 10:00", "2025-06-12", "2025-06-12 10:00x", "10:00:00.5",
                          "noon"})
    EXPECT_FALSE(store::parse_moment(bad, ref)) << bad;
}

}  // namespace
}  // namespace ncclpm
