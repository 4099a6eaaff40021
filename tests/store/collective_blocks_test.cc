// tests/store/collective_blocks_test.cc
//
// The compact store of NCCL COLL lines: blocks decode to exactly the calls
// that were encoded, damage is reported instead of decoded, and the virtual
// table `collective_calls` gives back every COLL line of a real ingest with
// the numbers its text says.
#include "ncclpm/store/collective_blocks.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <random>
#include <set>

#include "ncclpm/frame/framer.h"
#include "ncclpm/ingest/ingest.h"
#include "ncclpm/recognize/parsers.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::store {
namespace {

using recognize::CollectiveCall;
using testing::TempDir;

// Calls shaped like a process's COLL stream, with every awkward value mixed
// in: unknown fields (-1, 0), opCounts above 2^63, falling times and lines,
// many comms and a host that is not UTF-8.
std::vector<CollectiveCall> varied_calls(size_t n) {
  std::mt19937_64 rng(42);
  const char* ops[] = {"AllGather", "ReduceScatter", "AllReduce", "Broadcast", ""};
  std::vector<CollectiveCall> calls;
  int64_t line = 1, ts = 1700000000000000;
  for (size_t i = 0; i < n; ++i) {
    CollectiveCall c;
    line += static_cast<int64_t>(rng() % 3) + 1;
    ts += static_cast<int64_t>(rng() % 5000) - (i % 97 == 0 ? 100000 : 0);
    c.line_no = i % 1000 == 999 ? line - 500 : line;
    c.ts_us = i % 50 == 0 ? 0 : ts;
    c.host = i % 300 == 7 ? "bad\xff\xfehost" : (i < n / 2 ? "hgx-001" : "hgx-002");
    c.pid = i % 400 == 0 ? -1 : 4242;
    c.rank = i % 333 == 0 ? -1 : static_cast<int>(i / 5000);
    c.comm_rank = static_cast<int>(rng() % 8) - 1;
    c.device = static_cast<int>(i % 8);
    c.op = ops[rng() % 5];
    c.op_count = i % 777 == 0 ? 0xfffffffffffffff0ull + (i % 7) : i;
    c.count = static_cast<int64_t>(rng() % 100000000);
    c.datatype = static_cast<int>(rng() % 13) - 1;
    c.redop = static_cast<int>(rng() % 6) - 1;
    c.root = static_cast<int>(rng() % 3) - 1;
    c.nranks = i % 10 == 0 ? -1 : 512;
    c.comm = "0x" + std::to_string(0x5555000 + rng() % 20);
    calls.push_back(std::move(c));
  }
  return calls;
}

std::vector<CollectiveRow> decode_all(const EncodedCollectives& e, std::vector<std::string>& errors) {
  std::vector<CollectiveRow> rows;
  for (const CollectiveBlock& b : e.blocks) {
    CollectiveBlockReader reader(b.data);
    EXPECT_EQ(reader.rows(), b.rows);
    for (CollectiveRow r; reader.next(r);) rows.push_back(r);
    if (!reader.error().empty()) errors.push_back(reader.error());
  }
  return rows;
}

TEST(CollectiveBlocks, EveryFieldOfEveryCallSurvivesTheRoundTrip) {
  auto calls = varied_calls(static_cast<size_t>(2 * kBlockRows + 123));
  CollectiveEncoder enc;
  for (const auto& c : calls) enc.add(c);
  EXPECT_EQ(enc.pending_rows(), static_cast<int64_t>(calls.size()));
  EncodedCollectives e = enc.take();
  EXPECT_EQ(enc.pending_rows(), 0);
  ASSERT_EQ(e.blocks.size(), 3u);
  EXPECT_EQ(e.rows, static_cast<int64_t>(calls.size()));
  EXPECT_EQ(e.blocks[0].rows, kBlockRows);
  EXPECT_EQ(e.blocks[2].rows, 123);
  std::vector<std::string> errors;
  auto rows = decode_all(e, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(rows.size(), calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    const CollectiveCall& c = calls[i];
    const CollectiveRow& r = rows[i];
    SCOPED_TRACE("row " + std::to_string(i));
    ASSERT_EQ(r.line_no, c.line_no);
    ASSERT_EQ(r.ts_us, c.ts_us);
    ASSERT_EQ(r.pid, c.pid);
    ASSERT_EQ(r.rank, c.rank);
    ASSERT_EQ(r.comm_rank, c.comm_rank);
    ASSERT_EQ(r.device, c.device);
    ASSERT_EQ(r.op, c.op);
    ASSERT_EQ(r.op_count, c.op_count);
    ASSERT_EQ(r.count, c.count);
    ASSERT_EQ(r.datatype, c.datatype);
    ASSERT_EQ(r.redop, c.redop);
    ASSERT_EQ(r.root, c.root);
    ASSERT_EQ(r.nranks, c.nranks);
    ASSERT_EQ(r.comm, c.comm);
    // Invalid UTF-8 in a host name is repaired, since SQLite text must be UTF-8.
    ASSERT_EQ(r.host, c.host == "bad\xff\xfehost" ? "bad\xEF\xBF\xBD\xEF\xBF\xBDhost" : c.host);
  }
}

TEST(CollectiveBlocks, BlocksRecordTheirLinesAndRanksForSkipping) {
  auto calls = varied_calls(static_cast<size_t>(kBlockRows + 10));
  CollectiveEncoder enc;
  for (const auto& c : calls) enc.add(c);
  EncodedCollectives e = enc.take();
  ASSERT_EQ(e.blocks.size(), 2u);
  const CollectiveBlock& first = e.blocks[0];
  EXPECT_EQ(first.first_line, calls[0].line_no);
  EXPECT_EQ(first.last_line, calls[kBlockRows - 1].line_no);
  int lo = 1 << 30, hi = -1;
  for (int64_t i = 0; i < kBlockRows; ++i) {
    if (calls[i].rank < 0) continue;
    lo = std::min(lo, calls[i].rank);
    hi = std::max(hi, calls[i].rank);
  }
  EXPECT_EQ(first.rank_min, lo);
  EXPECT_EQ(first.rank_max, hi);
  // A block where no row has a rank says so.
  CollectiveEncoder none;
  CollectiveCall c;
  c.op = "AllReduce";
  none.add(c);
  EncodedCollectives n = none.take();
  ASSERT_EQ(n.blocks.size(), 1u);
  EXPECT_EQ(n.blocks[0].rank_min, -1);
  EXPECT_EQ(n.blocks[0].rank_max, -1);
}

TEST(CollectiveBlocks, TheSummaryCountsEveryCallOnceUnderItsKey) {
  auto calls = varied_calls(static_cast<size_t>(kBlockRows + 999));
  CollectiveSummary expected;
  for (const auto& c : calls) {
    CollectiveSummaryValue& v = expected[CollectiveSummaryKey{c.rank, c.nranks, c.op, c.datatype}];
    ++v.calls;
    v.max_op_count = std::max(v.max_op_count, c.op_count);
  }
  CollectiveEncoder enc;
  CollectiveSummary got;
  for (size_t i = 0; i < calls.size(); ++i) {
    enc.add(calls[i]);
    if (i == calls.size() / 3) merge_summary(got, enc.take().summary);  // taken mid-way, as ingest does
  }
  merge_summary(got, enc.take().summary);
  ASSERT_EQ(got.size(), expected.size());
  for (const auto& [k, v] : expected) {
    auto it = got.find(k);
    ASSERT_NE(it, got.end()) << k.rank << " " << k.op;
    EXPECT_EQ(it->second.calls, v.calls);
    EXPECT_EQ(it->second.max_op_count, v.max_op_count);
  }
}

TEST(CollectiveBlocks, DamageIsReportedNotDecoded) {
  CollectiveEncoder enc;
  for (const auto& c : varied_calls(100)) enc.add(c);
  const std::string good = enc.take().blocks.at(0).data;
  auto errors_of = [](const std::string& data) {
    CollectiveBlockReader reader(data);
    int64_t n = 0;
    for (CollectiveRow r; reader.next(r);) ++n;
    return std::make_pair(n, reader.error());
  };
  EXPECT_EQ(errors_of(good), std::make_pair(int64_t{100}, std::string()));
  auto [cut_rows, cut_error] = errors_of(good.substr(0, good.size() - 3));
  EXPECT_LT(cut_rows, 100);
  EXPECT_NE(cut_error.find("cut short"), std::string::npos) << cut_error;
  std::string other_version = good;
  other_version[0] = 7;
  EXPECT_EQ(errors_of(other_version), std::make_pair(int64_t{0}, std::string("unknown block format 7")));
  EXPECT_EQ(errors_of(""), std::make_pair(int64_t{0}, std::string("empty block")));
  EXPECT_EQ(errors_of(std::string("\x01\x05", 2)), std::make_pair(int64_t{0}, std::string("damaged block header")));
}

// A real ingest of a console log with COLL lines from several ranks.
class CollectiveTable : public ::testing::Test {
 protected:
  void SetUp() override {
    logs_ = testing::source_path("fixtures/incidents/collective-mismatch-desync/logs");
    ingest::Options o;
    o.paths = {logs_};
    o.db_path = tmp_ / "t.db";
    o.job_name = "desync";
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
  TempDir tmp_;
  std::filesystem::path logs_;
  Connection db_;
};

TEST_F(CollectiveTable, EveryCollLineComesBackWithTheNumbersItsTextSays) {
  // The reference: frame each line of the log and parse it as a COLL line.
  std::ifstream in(logs_ / "console.log");
  std::vector<std::pair<int64_t, CollectiveCall>> expected;
  frame::Framer framer;
  int64_t line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    frame::Frame f = framer.frame(line);
    if (f.producer != frame::Producer::kNccl) continue;
    if (auto c = recognize::parse_nccl_coll(f.body)) expected.emplace_back(line_no, *c);
  }
  ASSERT_EQ(expected.size(), 964u);  // the fixture's README
  auto st = db_.prepare(
      "SELECT line_no, op, op_count, count, datatype, redop_id, root, nranks, comm, rank, host FROM collective_calls"
      " ORDER BY line_no");
  ASSERT_TRUE(st);
  size_t i = 0;
  std::set<int64_t> ranks;
  for (; st->step(); ++i) {
    ASSERT_LT(i, expected.size());
    const auto& [line, c] = expected[i];
    SCOPED_TRACE("line " + std::to_string(line));
    EXPECT_EQ(st->column_int(0), line);
    EXPECT_EQ(st->column_text(1), c.op);
    EXPECT_EQ(static_cast<uint64_t>(st->column_int(2)), c.op_count);
    EXPECT_EQ(st->column_int(3), c.count);
    EXPECT_EQ(st->column_int(4), c.datatype);
    EXPECT_EQ(st->column_int(5), c.redop);
    EXPECT_EQ(st->column_int(6), c.root);
    EXPECT_EQ(st->column_int(7), c.nranks);
    EXPECT_EQ(st->column_text(8), c.comm);
    EXPECT_FALSE(st->column_is_null(9));
    ranks.insert(st->column_int(9));
    EXPECT_FALSE(st->column_text(10).empty());
  }
  EXPECT_EQ(i, expected.size());
  EXPECT_EQ(ranks, (std::set<int64_t>{0, 1, 2, 3}));
}

TEST_F(CollectiveTable, ConstraintsSelectTheSameRowsAsAFullScan) {
  int64_t all = count("SELECT count(*) FROM collective_calls");
  ASSERT_EQ(all, 964);
  int64_t by_rank = 0;
  for (int rank = 0; rank < 4; ++rank) {
    std::string r = std::to_string(rank);
    int64_t n = count("SELECT count(*) FROM collective_calls WHERE rank = " + r);
    EXPECT_GT(n, 0);
    // The same rows when the rank is compared in a way the table cannot use.
    EXPECT_EQ(n, count("SELECT count(*) FROM collective_calls WHERE rank + 0 = " + r));
    by_rank += n;
  }
  EXPECT_EQ(by_rank, all);
  EXPECT_EQ(count("SELECT count(*) FROM collective_calls WHERE rank = 99"), 0);
  EXPECT_EQ(count("SELECT count(*) FROM collective_calls c JOIN jobs j USING (job_id) WHERE j.name = 'desync'"), all);
  EXPECT_EQ(count("SELECT count(*) FROM collective_calls WHERE job_id = 2"), 0);
  int64_t file = count("SELECT file_id FROM files WHERE rel_path = 'console.log'");
  EXPECT_EQ(count("SELECT count(*) FROM collective_calls WHERE file_id = " + std::to_string(file)), all);
  EXPECT_EQ(count("SELECT count(*) FROM collective_calls WHERE file_id = -5"), 0);
  EXPECT_EQ(count("SELECT count(DISTINCT rowid) FROM collective_calls"), all);
  EXPECT_EQ(count("SELECT count(*) FROM collectives WHERE dtype = 'float32' AND bytes = 4 * count"),
            count("SELECT count(*) FROM collective_calls WHERE datatype = 7"));
}

TEST_F(CollectiveTable, IsReadOnlyAndNamesADamagedBlock) {
  auto db = Connection::open(tmp_ / "t.db", false);
  ASSERT_TRUE(db);
  Status upd = db->exec("DELETE FROM collective_calls");
  ASSERT_FALSE(upd);
  EXPECT_NE(upd.error().message.find("collective_calls may not be modified"), std::string::npos)
      << upd.error().message;
  ASSERT_TRUE(db->exec("UPDATE collective_blocks SET data = substr(data, 1, 40)"));
  auto n = db->scalar_int("SELECT count(*) FROM collective_calls");
  ASSERT_FALSE(n);
  EXPECT_NE(n.error().message.find("collective block 1 of file 1 is damaged: damaged dictionary"),
            std::string::npos) << n.error().message;
}

}  // namespace
}  // namespace ncclpm::store
