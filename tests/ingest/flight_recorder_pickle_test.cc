// tests/ingest/flight_recorder_pickle_test.cc
//
// Flight Recorder dumps as PyTorch writes them by default, pickled
// (src/read/pickle.cc), for every documented schema version
// (fixtures/flight-recorder/, made by fixtures/tools/make_fr_pickles.py): the
// same rows as their JSON twins, and fr_trace's verdict on them. Then the
// pickle machine on hand-made and damaged streams.
#include <gtest/gtest.h>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/read/pickle.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

// Ingests `dir` and returns one text line per query row, columns joined by '|'.
std::vector<std::string> rows_after_ingest(const std::filesystem::path& dir, const std::string& sql) {
  testing::TempDir t;
  ingest::Options o;
  o.paths = {dir};
  o.db_path = t / "fr.db";
  auto r = ingest::run(o);
  EXPECT_TRUE(r) << r.error().to_string();
  auto db = store::open_for_reading(o.db_path);
  EXPECT_TRUE(db) << db.error().to_string();
  std::vector<std::string> out;
  if (!db) return out;
  auto stmt = db->prepare(sql);
  EXPECT_TRUE(stmt) << stmt.error().to_string();
  if (!stmt) return out;
  while (stmt->step()) {
    std::string row;
    for (int c = 0; c < stmt->columns(); ++c) row += (c ? "|" : "") + stmt->column_text(c);
    out.push_back(row);
  }
  return out;
}

const char* kVersions[] = {"2.3", "2.4", "2.5", "2.7", "2.10"};

TEST(FlightRecorderPickle, EachSchemaVersionReadsAsItsJsonTwin) {
  const std::string entries =
      "SELECT rank, pg_id, pg_name, pg_desc, record_id, collective_seq_id, op, state, retired, input_sizes,"
      " output_sizes, input_dtypes, numel_in, numel_out, datatype, timeout_ms, time_created_ns"
      " FROM flight_recorder_entries ORDER BY rank, record_id";
  const std::string status =
      "SELECT rank, pg_id, last_enqueued, last_started, last_completed FROM flight_recorder_pg_status ORDER BY rank";
  for (const char* v : kVersions) {
    SCOPED_TRACE(std::string("schema ") + v);
    auto pickled = testing::source_path(std::string("fixtures/flight-recorder/v") + v + "-rank2-missing");
    auto json = testing::source_path(std::string("fixtures/flight-recorder/v") + v + "-rank2-missing-json");
    auto from_pickle = rows_after_ingest(pickled, entries);
    ASSERT_EQ(from_pickle.size(), 19u);  // ranks 0, 1, 3: seq 38-42; rank 2: 38-41
    EXPECT_EQ(from_pickle, rows_after_ingest(json, entries));
    EXPECT_EQ(from_pickle.front(),
              "0|0|0|default_pg|138|38|allgather|completed|1|[[27264000]]|[[218112000]]|[\"BFloat16\"]|27264000|"
              "218112000|9|600000|1752075938038000000");
    EXPECT_EQ(rows_after_ingest(pickled, status), rows_after_ingest(json, status));
    EXPECT_EQ(rows_after_ingest(pickled, "SELECT kind, status, lines_read, lines_recognized FROM files LIMIT 1"),
              std::vector<std::string>{"flight_recorder_pickle|ok|1|1"});
  }
}

// fr_trace on these dumps: "Not all ranks joining collective 42 ... missing
// ranks: {2}" (its first check, all_ranks_joined, over the dumps' entries).
TEST(FlightRecorderPickle, DumpsAloneGiveFrTracesVerdict) {
  for (const char* v : kVersions) {
    SCOPED_TRACE(std::string("schema ") + v);
    testing::TempDir t;
    ingest::Options o;
    o.paths = {testing::source_path(std::string("fixtures/flight-recorder/v") + v + "-rank2-missing")};
    o.db_path = t / "fr.db";
    ASSERT_TRUE(ingest::run(o));
    auto r = testing::run_ncclpm({"diagnose", "--db", o.db_path.string(), "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("\"rule\": \"flight-recorder-missing-ranks\""), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("Not all ranks joined collective 42 (nccl:_all_gather_base) of process group 0: rank 2 "
                         "never enqueued it, rank 0-1, 3 did"),
              std::string::npos)
        << r.out;
  }
}

// The verdict fr_trace printed on each mismatch fixture, pickled and JSON
// (scripts/fr-trace-compare.sh ran it): "Collective sequence number: 42 has
// errors ... Culprit rank R; Error type: SIZE_OR_SYNTAX_MISMATCH | ..._DTYPE_
// | ..._TYPE_MISMATCH". The JSON twins, which fr_trace cannot read, get the
// same answer.
TEST(FlightRecorderPickle, RanksThatCalledACollectiveDifferentlyAreItsCulprits) {
  struct Case {
    const char* dir;
    const char* culprit;
    const char* words;
  };
  const Case cases[] = {
      {"v2.10-rank3-size-mismatch", "3",
       "rank 3 called it with input sizes [[27262976]] where rank 0 called nccl:_all_gather_base with [[27264000]]"},
      {"v2.7-rank1-dtype-mismatch", "1",
       R"(rank 1 called it with dtypes [\"Float\"] -> [\"Float\"] where rank 0 called nccl:_all_gather_base with )"
       R"([\"BFloat16\"] -> [\"BFloat16\"])"},  // as JSON escapes it
      {"v2.4-rank2-type-mismatch", "2",
       "rank 2 called it with collective type nccl:all_reduce where rank 0 called nccl:_all_gather_base"},
  };
  for (const Case& c : cases) {
    for (const char* suffix : {"", "-json"}) {
      SCOPED_TRACE(std::string(c.dir) + suffix);
      testing::TempDir t;
      ingest::Options o;
      o.paths = {testing::source_path(std::string("fixtures/flight-recorder/") + c.dir + suffix)};
      o.db_path = t / "fr.db";
      ASSERT_TRUE(ingest::run(o));
      auto r = testing::run_ncclpm({"diagnose", "--db", o.db_path.string(), "--format", "json"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      const std::string rule = "\"rule\": \"flight-recorder-mismatched-collective\"";
      auto first = r.out.find("\"rule\": ");
      ASSERT_NE(first, std::string::npos) << r.out;
      EXPECT_EQ(r.out.compare(first, rule.size(), rule), 0) << r.out;  // the first finding
      EXPECT_NE(r.out.find("\"culprit_ranks\": [\n        " + std::string(c.culprit) + "\n      ]"), std::string::npos)
          << r.out;
      EXPECT_NE(r.out.find(c.words), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("flight-recorder-missing-ranks"), std::string::npos) << r.out;
    }
  }
}

// Ranks that agree on every collective give no mismatch: the missing-rank
// fixtures' seq 38-41 are the same call on every rank.
TEST(FlightRecorderPickle, RanksThatAgreeGiveNoMismatch) {
  testing::TempDir t;
  ingest::Options o;
  o.paths = {testing::source_path("fixtures/flight-recorder/v2.7-rank2-missing")};
  o.db_path = t / "fr.db";
  ASSERT_TRUE(ingest::run(o));
  auto r = testing::run_ncclpm({"diagnose", "--db", o.db_path.string(), "--format", "json"});
  EXPECT_EQ(r.out.find("flight-recorder-mismatched-collective"), std::string::npos) << r.out;
}

using namespace std::string_literals;

// A pickle as bytes: PROTO 2, then `body`. (Literals are split where a hex
// escape would swallow the next character.)
std::string p2(const std::string& body) { return "\x80\x02"s + body; }

TEST(PickleMachine, PlainDataInTheOpcodesTorchAndPythonUse) {
  // {'a': [1, -2, 300, 70000], 'b': (True, None), 'c': 1.5}, memo and marks,
  // BININT1 / BININT2 / BININT / LONG1, BINFLOAT (big-endian), TUPLE2.
  std::string body = "}q\x00(X\x01\x00\x00\x00" "a]q\x01(K\x01J\xfe\xff\xff\xffM,\x01\x8a\x03p\x11\x01" "e"s +
                     "X\x01\x00\x00\x00" "b\x88N\x86"s + "X\x01\x00\x00\x00" "cG?\xf8\x00\x00\x00\x00\x00\x00u."s;
  auto json = read::pickle_to_json(p2(body));
  ASSERT_TRUE(json) << json.error().to_string();
  EXPECT_EQ(*json, R"({"a":[1,-2,300,70000],"b":[true,null],"c":1.5})");
}

TEST(PickleMachine, MemoisedContainersAreSharedAndWrappersGiveTheirData) {
  // l = []; {'x': l, 'y': l} with l filled after it was memoised; then
  // torch.jit._pickle.build_intlist(([7],)) reads as [7]; another global as null.
  std::string body = "}(X\x01\x00\x00\x00x]q\x05X\x01\x00\x00\x00yh\x05u"s +
                     "h\x05K\x09" "a0"s +  // append 9 to the memoised list, drop it
                     "(X\x01\x00\x00\x00zctorch.jit._pickle\nbuild_intlist\n]K\x07" "a\x85R"s +
                     "X\x01\x00\x00\x00wcos\nsystem\nX\x02\x00\x00\x00ls\x85Ru."s;
  auto json = read::pickle_to_json(p2(body));
  ASSERT_TRUE(json) << json.error().to_string();
  EXPECT_EQ(*json, R"({"x":[9],"y":[9],"z":[7],"w":null})");
}

TEST(PickleMachine, DamagedStreamsAreErrorsThatSayWhere) {
  struct Case {
    std::string bytes, says;
  } cases[] = {
      {p2("}"), "ends before its STOP"},
      {p2("X\xff\x00\x00\x00" "ab."s), "truncated: a string of 255 bytes"},
      {p2("h\x09."), "memo key 9 was never stored"},
      {p2("a."), "pop from an empty stack"},
      {p2("Pabc\n."), "unsupported opcode 0x50"},
      {p2("N0."), "STOP with 0 values left"},
      {p2("(N(N."), "STOP with 2 values left"},
      {p2(std::string(300, ']') + "."), "STOP with 300 values left"},
  };
  for (const Case& c : cases) {
    auto json = read::pickle_to_json(c.bytes);
    ASSERT_FALSE(json) << *json;
    EXPECT_NE(json.error().message.find(c.says), std::string::npos) << json.error().message;
    EXPECT_NE(json.error().message.find("pickle byte "), std::string::npos) << json.error().message;
  }
  // A list that contains itself (legal in a pickle): an error, not a hang or a leak.
  auto cycle = read::pickle_to_json(p2("]q\x00h\x00" "a."s));
  ASSERT_FALSE(cycle);
  EXPECT_NE(cycle.error().message.find("nested deeper than"), std::string::npos) << cycle.error().message;
  // Nested deeper than any dump: refused, not a stack overflow.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "]";
  for (int i = 0; i < 99999; ++i) deep += "a";
  auto json = read::pickle_to_json(p2(deep + "."));
  ASSERT_FALSE(json);
  EXPECT_NE(json.error().message.find("nested deeper than"), std::string::npos) << json.error().message;
}

TEST(PickleMachine, ADamagedDumpIsAFileErrorAndTheRestIsIngested) {
  testing::TempDir t;
  std::string dump = testing::read_file(
      testing::source_path("fixtures/flight-recorder/v2.5-rank2-missing/nccl_trace_rank_0"));
  testing::write_file(t / "logs/nccl_trace_rank_0", dump.substr(0, dump.size() / 2));
  testing::write_file(t / "logs/train.log", testing::kWatchdogLine);
  auto r = testing::run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // the other files were ingested: a warning, as for any damaged file
  EXPECT_NE(r.err.find("warning: nccl_trace_rank_0: Flight Recorder pickle not read: pickle byte "),
            std::string::npos)
      << r.err;
  auto q = testing::run_ncclpm({"query", "--db", (t / "x.db").string(), "SELECT count(*) FROM watchdog_timeouts"});
  EXPECT_NE(q.out.find("1"), std::string::npos) << q.out;
}

}  // namespace
}  // namespace ncclpm
