// tests/ingest/line_mender_test.cc
//
// Lines a terminal cut into rows are read as the lines they were; lines that
// only happen to fill the window are left alone.
#include <gtest/gtest.h>

#include "ingest/line_mender.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

constexpr auto* count = &testing::query_int;

// Cuts `line` into rows of `width` columns, the way a terminal shows it; the
// first row is `first` columns when the line began mid-row (what came before
// it on that row is not part of the paste). With `pad`, the last row is padded
// with spaces to the width (tmux, screen).
std::string as_terminal(const std::string& line, size_t width, bool pad, size_t first = 0) {
  std::string out;
  size_t at = 0, row = first != 0 ? first : width;
  while (at < line.size()) {
    std::string part = line.substr(at, row);
    at += part.size();
    bool began_mid_row = at == part.size() && first != 0;
    if (pad && part.size() < width && !began_mid_row) part.append(width - part.size(), ' ');
    out += part + "\n";
    row = width;
  }
  return out;
}

const std::string kTimeout =
    "[rank7]:[E821 16:40:45.240894715 ProcessGroupNCCL.cpp:632] [Rank 7] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=5701784, OpType=_ALLGATHER_BASE, NumelIn=6288000, NumelOut=50304000, "
    "Timeout(ms)=1800000) ran for 1800006 milliseconds before timing out.";
const std::string kStatus =
    "[rank7]:[E821 16:40:45.241026910 ProcessGroupNCCL.cpp:2271] [PG ID 0 PG GUID 0(default_pg) Rank 7]  failure "
    "detected by watchdog at work sequence id: 5701784 PG status: last enqueued work: 5701814, last completed "
    "work: 5701783";
const std::string kStuck =
    "[rank6]:[E429 13:55:49.384372190 ProcessGroupNCCL.cpp:1743] [PG ID 0 PG GUID 0(default_pg) Rank 6] "
    "ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued "
    "collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.";

TEST(LineMender, TmuxPaddedRowsAreOneLineAgain) {
  TempDir t;
  // The timeout began mid-row: its first row is short and ends mid-word.
  write_file(t / "logs/console.log", as_terminal(kTimeout, 120, true, 89) + as_terminal(kStatus, 120, true));
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM work_records JOIN events USING (event_id)"
                              " WHERE context = 'watchdog_timeout' AND seq = 5701784 AND rank = 7"
                              " AND line_no = 1 AND end_line = 3"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE kind = 'pg_status' AND line_no = 4"), 1);
  EXPECT_EQ(count(t / "x.db", "SELECT lines_read FROM files"), 5);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

// tqdm writes nothing after its stats bracket but the next redraw: what
// follows on the line is another line that lost its newline. Both are kept,
// the bar as progress, the rest as what it is, and both count as line 1.
TEST(LineMender, TextGluedAfterAProgressBarIsALineOfItsOwn) {
  TempDir t;
  write_file(t / "logs/console.log",
             "Preparing test set...:  46%|####6     | 31/67 [29:02<35:12, 58.67s/it]slurmstepd: error: *** STEP "
             "6053.0 ON DEL2212S020 CANCELLED AT 2024-04-23T12:18:08 ***\n"
             "Running tokenizer on dataset:  47%|####7     | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]"
             "Traceback (most recent call last):\n"
             "  File \"train.py\", line 10, in main\n"
             "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients.\n");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM training_progress WHERE line_no IN (1, 2)"), 2);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE kind = 'process_exit' AND line_no = 1"
                              " AND text LIKE 'slurmstepd: error: *** STEP 6053.0%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE kind = 'traceback' AND line_no = 2"
                              " AND text LIKE 'Traceback (most recent call last):%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

TEST(LineMender, UnpaddedRowsAreOneLineAgain) {
  TempDir t;
  write_file(t / "logs/console.log", as_terminal(kStuck, 100, false) + as_terminal(kTimeout, 100, false));
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE kind = 'watchdog_stuck' AND line_no = 1"
                              " AND text LIKE '%monitoring enqueued collectives%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM work_records WHERE context = 'watchdog_timeout'"), 1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

// A terminal's rows pasted as a Markdown quote: the quote is on every row,
// and the rest of a line is what follows it.
TEST(LineMender, RowsQuotedAfterTheTerminalCutThemAreOneLineAgain) {
  auto quoted = [](const std::string& rows) {
    std::string out;
    for (size_t at = 0; at < rows.size();) {
      size_t nl = rows.find('\n', at);
      out += "> " + rows.substr(at, nl - at) + "\n";
      at = nl + 1;
    }
    return out;
  };
  TempDir t;
  write_file(t / "logs/console.log", quoted(as_terminal(kStuck, 100, false) + as_terminal(kTimeout, 100, false)));
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE kind = 'watchdog_stuck' AND line_no = 1"
                              " AND text LIKE '%monitoring enqueued collectives. This typically%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM work_records WHERE context = 'watchdog_timeout'"
                              " AND seq = 5701784 AND timeout_ms = 1800000"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

TEST(LineMender, LinesThatOnlyFillTheWindowStayApart) {
  TempDir t;
  // Equal-length NCCL lines, then a full-width line followed by lines that
  // begin as fresh lines do: no terminal cut anything here.
  std::string nccl;
  for (int i = 0; i < 6; ++i)
    nccl += "host-a:1234:1300 [" + std::to_string(i) + "] NCCL INFO [Service thread] Connection closed by localRank 7\n";
  std::string full(nccl.substr(0, nccl.find('\n')).size(), 'x');
  write_file(t / "logs/console.log", nccl + full + "\nHostname: host-a\n" + full + "\n[rank0]: Traceback\n");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM unparsed_lines)"), 10);
}

TEST(LineMender, AFileOfRowsThatAllGoOnStillEndsItsLinesAtABound) {
  TempDir t;
  // 2,000 full-width rows, each reading as the rest of the one before: one
  // "line" of 200 kB if nothing bounded it.
  std::string rows;
  for (int i = 0; i < 2000; ++i) rows += std::string(99, 'a') + "b\n";
  write_file(t / "logs/console.log", rows);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT lines_read FROM files"), 2000);
  EXPECT_LE(count(t / "x.db", "SELECT max(length(text)) FROM unparsed_lines"), 64 * 1024);
  EXPECT_GE(count(t / "x.db", "SELECT count(*) FROM unparsed_lines"), 3) << "joined, but in bounded pieces";
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

TEST(LineMender, LearnsTheWidthOnlyFromRowsThatGoOn) {
  frame::Framer framer;
  std::vector<std::string> rows;
  for (const std::string& line : {kStuck, kTimeout}) {
    std::string cut = as_terminal(line, 100, false);
    for (size_t at = 0; at < cut.size();) {
      size_t nl = cut.find('\n', at);
      rows.push_back(cut.substr(at, nl - at));
      at = nl + 1;
    }
  }
  std::vector<std::string_view> views(rows.begin(), rows.end());
  auto wrap = ingest::learn_terminal_wrap(views, framer);
  ASSERT_TRUE(wrap.has_value());
  EXPECT_EQ(wrap->width, 100u);
  EXPECT_FALSE(wrap->padded);
  // The same lines whole: their longest line is not followed by a row that goes on.
  std::vector<std::string_view> whole{kStuck, kTimeout, kStatus};
  EXPECT_FALSE(ingest::learn_terminal_wrap(whole, framer).has_value());
}

TEST(LineMender, CountsColumnsNotBytes) {
  EXPECT_EQ(ingest::display_columns("42%|\xe2\x96\x88\xe2\x96\x88  |"), 9u);
  ingest::TerminalWrap padded{8, true};
  EXPECT_TRUE(padded.cut("abcdefgh"));
  EXPECT_FALSE(padded.cut("abcdef  "));  // a line's end, padded
  EXPECT_FALSE(padded.cut("abc"));
}

// A chat client took NCCL's "net_ib.cc:101" (.cc is a country's domain) and
// the addresses for links; undone, they are NCCL's lines again.
TEST(Autolinks, ALinkWhoseAddressIsItsTextIsThatText) {
  std::string out = "left alone";
  EXPECT_TRUE(ingest::without_autolinks("transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN x", out));
  EXPECT_EQ(out, "transport/net_ib.cc:101 NCCL WARN x");
  EXPECT_TRUE(ingest::without_autolinks(
      "peer [10.1.3.201](http://10.1.3.201/)<33057> gid ::ffff:[10.206.1.23](https://10.206.1.23) end", out));
  EXPECT_EQ(out, "peer 10.1.3.201<33057> gid ::ffff:10.206.1.23 end");
  EXPECT_TRUE(ingest::without_autolinks("[http://a.io/x](http://a.io/x)", out));
  EXPECT_EQ(out, "http://a.io/x");

  out = "left alone";
  for (std::string_view kept : {"see [the docs](http://docs.nvidia.com/nccl/) first", "[rank0](http://rank1/)",
                                "[](http://)", "[a](http://a", "no link](http://x) at all", "[a](ftp://a)",
                                "[00:01<00:02, 1.2it/s]"})
    EXPECT_FALSE(ingest::without_autolinks(kept, out)) << kept;
  EXPECT_EQ(out, "left alone");
}

TEST(Autolinks, AnAutolinkedNcclWarningIsReadAsNcclsOwn) {
  TempDir t;
  write_file(t / "logs/console.log",
             "> node201:127799:127863 [0] transport/[net_ib.cc:101](http://net_ib.cc:101/) NCCL WARN NET/IB : "
             "mlx5_0:1 Got async event : local access violation work queue error\n"
             "> \n"
             "> node023:10214:10303 [0] NCCL INFO transport/[net.cc:1137](http://net.cc:1137/) -> 6\n");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE host = 'node201' AND pid = 127799 AND line_no = 1"
                              " AND kind = 'nccl_warn' AND text LIKE 'NET/IB : mlx5_0:1 Got async event%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events WHERE host = 'node023' AND line_no = 3"
                              " AND text LIKE 'transport/net.cc:1137 -> 6'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

}  // namespace
}  // namespace ncclpm
