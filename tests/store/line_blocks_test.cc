// tests/store/line_blocks_test.cc
//
// The compact store of the lines no parser typed: blocks decode to exactly the
// lines that were encoded, runs carry each line's attribution, damage is
// reported instead of decoded, and the virtual table `unparsed_lines` gives
// back every unparsed line of a real ingest, with the year and rank the job
// inferred for it.
#include "ncclpm/store/line_blocks.h"

#include <gtest/gtest.h>

#include <random>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::store {
namespace {

using recognize::UnparsedLine;
using testing::TempDir;

// Lines shaped like a console's, with the awkward values mixed in: no time,
// falling times and line numbers, invalid UTF-8, NUL bytes, empty text, and
// attribution that changes every few lines.
std::vector<UnparsedLine> varied_lines(size_t n) {
  std::mt19937_64 rng(7);
  std::vector<UnparsedLine> lines;
  int64_t line = 1, offset = 0, ts = 1700000000000000;
  for (size_t i = 0; i < n; ++i) {
    UnparsedLine u;
    line += static_cast<int64_t>(rng() % 3) + 1;
    u.line_no = i % 500 == 499 ? line - 40 : line;
    u.byte_offset = offset;
    offset += 80;
    ts += static_cast<int64_t>(rng() % 5000) - (i % 97 == 0 ? 100000 : 0);
    u.ts_us = i % 7 == 0 ? 0 : ts;
    u.ts_has_year = (i / 300) % 2 == 0;
    u.host = (i / 50) % 3 == 0 ? "" : "hgx-00" + std::to_string((i / 50) % 3);
    u.pid = (i / 20) % 4 == 0 ? -1 : 4000 + static_cast<int64_t>((i / 20) % 4);
    u.rank = (i / 10) % 5 == 0 ? -1 : static_cast<int>((i / 10) % 5);
    u.local_rank = (i / 30) % 2 == 0 ? -1 : 3;
    u.producer = i % 11 == 0 ? "python_logging" : "plain";
    u.severity = i % 11 == 0 ? 'W' : 0;
    u.text = i % 250 == 3   ? std::string("bad\xff\xfe bytes")
             : i % 250 == 4 ? std::string("nul\0here", 8)
                            : "step " + std::to_string(i) + " of the loop, loss " + std::to_string(rng() % 1000);
    lines.push_back(std::move(u));
  }
  return lines;
}

std::string cleaned(const std::string& text) {
  if (text == "bad\xff\xfe bytes") return "bad\xEF\xBF\xBD\xEF\xBF\xBD bytes";
  if (text == std::string("nul\0here", 8)) return "nul\xEF\xBF\xBDhere";
  return text;
}

TEST(LineBlocks, EveryLineAndItsAttributionSurvivesTheRoundTrip) {
  auto lines = varied_lines(static_cast<size_t>(2 * kLineBlockRows + 77));
  LineEncoder enc;
  for (const auto& u : lines) enc.add(u);
  EXPECT_EQ(enc.pending_rows(), static_cast<int64_t>(lines.size()));
  EncodedLines e = enc.take();
  EXPECT_EQ(enc.pending_rows(), 0);
  ASSERT_EQ(e.blocks.size(), 3u);
  EXPECT_EQ(e.blocks[0].rows, kLineBlockRows);
  EXPECT_EQ(e.blocks[2].rows, 77);
  size_t i = 0;
  for (const LineBlock& b : e.blocks) {
    LineBlockReader reader(b.data);
    ASSERT_TRUE(reader.error().empty()) << reader.error();
    ASSERT_EQ(reader.rows(), b.rows);
    int64_t covered = 0;
    for (const LineRun& run : b.runs) {
      ASSERT_EQ(run.first_row, covered) << "runs partition the block";
      covered += run.rows;
      for (int64_t k = 0; k < run.rows; ++k, ++i) {
        const UnparsedLine& u = lines[i];
        SCOPED_TRACE("line " + std::to_string(i));
        BlockLine l;
        ASSERT_TRUE(reader.seek(run.first_row + k, l)) << reader.error();
        ASSERT_EQ(l.line_no, u.line_no);
        ASSERT_EQ(l.byte_offset, u.byte_offset);
        ASSERT_EQ(l.ts_us, u.ts_us);
        ASSERT_EQ(std::string(l.text), cleaned(u.text));
        ASSERT_EQ(run.host, u.host);
        ASSERT_EQ(run.pid, u.pid);
        ASSERT_EQ(run.rank, u.rank);
        ASSERT_EQ(run.local_rank, u.local_rank);
        ASSERT_EQ(run.producer, u.producer);
        ASSERT_EQ(run.severity, u.severity);
        if (u.ts_us != 0) {
          ASSERT_EQ(run.ts_has_year, u.ts_has_year ? 1 : 0);
        }
        ASSERT_LE(run.first_line, u.line_no);
        ASSERT_GE(run.last_line, u.line_no);
      }
    }
    ASSERT_EQ(covered, b.rows);
  }
  EXPECT_EQ(i, lines.size());
}

TEST(LineBlocks, ARunIsCutOnlyWhereTheAttributionChanges) {
  LineEncoder enc;
  auto line = [](int64_t n, int rank, int64_t ts) {
    UnparsedLine u;
    u.line_no = n;
    u.rank = rank;
    u.ts_us = ts;
    u.ts_has_year = true;
    u.producer = "plain";
    u.text = "x";
    return u;
  };
  enc.add(line(1, 0, 100));
  enc.add(line(2, 0, 0));  // no time: stays in the run
  enc.add(line(3, 0, 90));
  enc.add(line(4, 1, 95));
  enc.add(line(5, 0, 96));
  EncodedLines e = enc.take();
  ASSERT_EQ(e.blocks.size(), 1u);
  const auto& runs = e.blocks[0].runs;
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].rows, 3);
  EXPECT_EQ(runs[0].min_ts_us, 90);
  EXPECT_EQ(runs[0].last_line, 3);
  EXPECT_EQ(runs[1].rank, 1);
  EXPECT_EQ(runs[2].first_row, 4);
}

TEST(LineBlocks, SeekingBackReadsTheBlockAgain) {
  LineEncoder enc;
  for (const auto& u : varied_lines(300)) enc.add(u);
  EncodedLines e = enc.take();
  LineBlockReader reader(e.blocks.at(0).data);
  BlockLine a, b, again;
  ASSERT_TRUE(reader.seek(10, a));
  ASSERT_TRUE(reader.seek(200, b));
  ASSERT_TRUE(reader.seek(10, again));
  EXPECT_EQ(again.line_no, a.line_no);
  EXPECT_EQ(again.ts_us, a.ts_us);
  EXPECT_EQ(again.text, a.text);
  EXPECT_FALSE(reader.seek(300, b));
}

TEST(LineBlocks, DamageIsReportedNotDecoded) {
  LineEncoder enc;
  for (const auto& u : varied_lines(100)) enc.add(u);
  const std::string good = enc.take().blocks.at(0).data;
  EXPECT_TRUE(LineBlockReader(good).error().empty());
  EXPECT_EQ(LineBlockReader("").error(), "not a compressed line block");
  EXPECT_EQ(LineBlockReader("plain text, not zstd").error(), "not a compressed line block");
  std::string cut = good.substr(0, good.size() - 5);
  EXPECT_NE(LineBlockReader(cut).error().find("does not decompress"), std::string::npos)
      << LineBlockReader(cut).error();
}

// A real ingest: lines no parser knows, in a per-rank file and a console,
// with and without years.
class LineTable : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string rank3;
    for (int i = 1; i <= 5000; ++i) rank3 += "epoch 1 batch " + std::to_string(i) + " something the loop printed\n";
    testing::write_file(tmp_ / "logs/rank3.log", rank3);
    testing::write_file(tmp_ / "logs/console.log",
                        "2024-03-05 10:00:00,123 - root - INFO - starting up\n"
                        "E0709 17:05:38.162814 123 trainer.cc:12] a glog line no parser knows\n"
                        "plain words\n");
    ingest::Options o;
    o.paths = {tmp_ / "logs"};
    o.db_path = tmp_ / "t.db";
    o.job_name = "lines";
    auto r = ingest::run(o);
    ASSERT_TRUE(r) << r.error().message;
    auto db = open_for_reading(tmp_ / "t.db");
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(db).value();
  }
  int64_t count(const std::string& sql) {
    auto n = db_.scalar_int(sql);
    EXPECT_TRUE(n) << sql << ": " << (n ? "" : n.error().message);
    return n ? *n : -1;
  }
  std::string text(const std::string& sql) {
    auto st = db_.prepare(sql);
    EXPECT_TRUE(st) << sql;
    if (!st || !st->step()) return "<none>";
    return st->column_is_null(0) ? "<null>" : st->column_text(0);
  }
  TempDir tmp_;
  Connection db_;
};

TEST_F(LineTable, EveryLineComesBackWithItsNumberOffsetAndFileRank) {
  auto st = db_.prepare(
      "SELECT line_no, byte_offset, text, rank FROM unparsed_lines u JOIN files f USING (file_id)"
      " WHERE f.rel_path = 'rank3.log' ORDER BY line_no");
  ASSERT_TRUE(st);
  int64_t n = 0, offset = 0;
  while (st->step()) {
    ++n;
    std::string expected = "epoch 1 batch " + std::to_string(n) + " something the loop printed";
    ASSERT_EQ(st->column_int(0), n);
    ASSERT_EQ(st->column_int(1), offset);
    ASSERT_EQ(st->column_text(2), expected);
    ASSERT_EQ(st->column_int(3), 3);  // from the file's name
    offset += static_cast<int64_t>(expected.size()) + 1;
  }
  EXPECT_EQ(n, 5000);
  EXPECT_EQ(count("SELECT sum(lines_unparsed) FROM files"), count("SELECT count(*) FROM unparsed_lines"));
}

TEST_F(LineTable, AYearLessTimeTakesTheJobsYear) {
  EXPECT_EQ(text("SELECT strftime('%Y-%m-%d %H:%M:%S', ts_us / 1000000, 'unixepoch') || ' ' || ts_has_year"
                 " FROM unparsed_lines WHERE text LIKE '%glog line%'"),
            "2024-07-09 17:05:38 2");
  EXPECT_EQ(text("SELECT ts_has_year FROM unparsed_lines WHERE text = 'plain words'"), "<null>");
}

TEST_F(LineTable, ConstraintsSelectTheSameRowsAsAFullScan) {
  // `+col` keeps SQLite from handing the constraint to the table: the full scan.
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank = 3"),
            count("SELECT count(*) FROM unparsed_lines WHERE +rank = 3"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank = 3"), 5000);
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND line_no BETWEEN 100 AND 4100"),
            count("SELECT count(*) FROM unparsed_lines WHERE +file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND +line_no BETWEEN 100 AND 4100"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank IS NULL"),
            count("SELECT count(*) FROM unparsed_lines WHERE +rank IS NULL"));
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE rank IS NULL AND host IS NULL"), 3);
  EXPECT_EQ(count("SELECT count(*) FROM unparsed_lines WHERE producer = 'glog'"),
            count("SELECT count(*) FROM unparsed_lines WHERE +producer = 'glog'"));
  EXPECT_EQ(count("SELECT max(line_no) FROM unparsed_lines WHERE file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND line_no < 4000"),
            count("SELECT max(line_no) FROM unparsed_lines WHERE +file_id = (SELECT file_id FROM files WHERE rel_path = 'rank3.log') AND +line_no < 4000"));
}

TEST_F(LineTable, FiveThousandLinesTakeLessRoomThanTheirText) {
  // 5,000 lines of about 45 bytes: 225 kB as rows; compressed, a few kB.
  EXPECT_LT(count("SELECT sum(length(data)) FROM line_blocks"), 40000);
  EXPECT_LE(count("SELECT count(*) FROM line_runs"), 10);
}

}  // namespace
}  // namespace ncclpm::store
