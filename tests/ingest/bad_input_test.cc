// tests/ingest/bad_input_test.cc
//
// One test per kind of bad input: each names the file (and line), exits with
// the right code, and leaves the database either as it was or complete.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace fs = std::filesystem;

namespace ncclpm {
namespace {

using testing::read_file;
using testing::run_ncclpm;
using testing::TempDir;
using testing::write_file;

const std::string& kWatchdog = testing::kWatchdogLine;

constexpr auto* count = &testing::query_int;

TEST(BadInput, MissingPathIsAnErrorNamingIt) {
  TempDir t;
  auto r = run_ncclpm({"ingest", (t / "nope").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find((t / "nope").string() + ": no such file or directory"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t / "x.db"));
}

TEST(BadInput, EmptyDirectoryIsAnError) {
  TempDir t;
  fs::create_directory(t / "logs");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no log files found"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(t / "x.db"));
}

TEST(BadInput, BrokenSymlinkIsReportedAndTheRestIngested) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  fs::create_symlink(t / "logs/gone.log", t / "logs/link.log");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("link.log: broken symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM watchdog_timeouts"), 1);
}

TEST(BadInput, UnreadableFileIsReportedAndTheRestIngested) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every file; see BrokenSymlink for the same path";
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  write_file(t / "logs/secret.log", "x\n");
  chmod((t / "logs/secret.log").c_str(), 0);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("secret.log: cannot open: permission denied"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files WHERE rel_path = 'secret.log' AND status = 'error'"
                              " AND problem LIKE '%permission denied%'"),
            1)
      << "an unreadable file still has its row, with its problem";
}

TEST(BadInput, ACompressedFileThatDecodesToNothingHasARowWithItsProblem) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  testing::write_gzip(t / "whole.gz", kWatchdog + kWatchdog);
  write_file(t / "logs/cut.log.gz", read_file(t / "whole.gz").substr(0, 12));  // the header and no more
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cut.log.gz: gzip stream decodes to nothing"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files WHERE rel_path = 'cut.log.gz' AND status = 'error'"
                              " AND kind = 'unreadable' AND problem LIKE 'gzip stream decodes to nothing%'"),
            1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM watchdog_timeouts"), 1) << "the readable file is ingested";
  EXPECT_NE(r.out.find("1 unreadable"), std::string::npos) << r.out;
}

TEST(BadInput, SymlinkLoopsAreReportedAndNeverWalked) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  fs::create_directory_symlink(t / "logs", t / "logs/self");
  fs::create_symlink(t / "logs/l2", t / "logs/l1");
  fs::create_symlink(t / "logs/l1", t / "logs/l2");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("l1: symbolic link loop: it never reaches a file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("self: symbolic link to a directory, not followed"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files"), 1);
}

TEST(BadInput, ASymlinkToADirectoryIsReportedNotSilentlySkipped) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  write_file(t / "elsewhere/rank2.log", kWatchdog);
  fs::create_directory_symlink(t / "elsewhere", t / "logs/more");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("more: symbolic link to a directory, not followed"), std::string::npos) << r.err;
}

TEST(BadInput, TruncatedGzipKeepsWhatWasReadableAndFlagsTheFile) {
  TempDir t;
  std::string content;
  for (int i = 0; i < 20000; ++i) content += "step " + std::to_string(i) + " loss 1.25\n";
  content += kWatchdog;
  testing::write_gzip(t / "full.log.gz", content);
  std::string gz = read_file(t / "full.log.gz");
  write_file(t / "logs/cut.log.gz", gz.substr(0, gz.size() * 6 / 10));
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("cut.log.gz: gzip stream is damaged or truncated"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files WHERE status = 'partial'"), 1);
  int64_t lines = count(t / "x.db", "SELECT lines_read FROM files");
  EXPECT_GT(lines, 5000);       // most of what was compressed came back
  EXPECT_LT(lines, 20001);      // but not the cut-off end
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0);
}

TEST(BadInput, FiftyMegabyteLineIsCountedClippedAndReported) {
  TempDir t;
  std::string content = "first line\n" + std::string(50u << 20, 'x') + "\n" + kWatchdog;
  write_file(t / "logs/rank1.log", content);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("rank1.log: 1 line(s) longer than 4 MiB"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT lines_read FROM files"), 3);
  EXPECT_EQ(count(t / "x.db", "SELECT lines_oversized FROM files"), 1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM watchdog_timeouts"), 1);  // the line after it is not lost
  EXPECT_EQ(count(t / "x.db", "SELECT max(length(text)) FROM unparsed_lines"), 4096);
}

// A tqdm bar of one local rank (no newline) with another rank's line glued to
// its end, as torchrun's tee writes them: both are kept, each with its own
// rank, as two lines read from one line number. So when the bar is coloured
// (the colours' codes are no part of either line's words).
TEST(BadInput, ProgressBarGluedToAnotherRanksLineKeepsBoth) {
  const std::string bar =
      "Grouping texts in chunks of 2049:   8%|8         | 726000/9672101 [02:32<30:38, 4866.01 examples/s]";
  const std::string glued =
      "[default2]:[E ProcessGroupNCCL.cpp:475] [Rank 2] Watchdog caught collective operation timeout: "
      "WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600888 "
      "milliseconds before timing out.";
  for (const std::string& line : {"[default0]:" + bar + glued, "[default0]:\x1b[36m" + bar + "\x1b[0m" + glued}) {
    TempDir t;
    write_file(t / "logs/console.log", line + "\n");
    auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM training_progress"
                                " WHERE local_rank = 0 AND line_no = 1 AND label = 'Grouping texts in chunks of 2049'"
                                " AND step = 726000 AND total = 9672101 AND unit = 'examples'"),
              1) << line;
    EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM work_records JOIN events USING (event_id)"
                                " WHERE context = 'watchdog_timeout' AND local_rank = 2 AND line_no = 1"),
              1) << line;
    EXPECT_EQ(count(t / "x.db", "SELECT lines_read FROM files"), 2) << line;
    EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM file_accounting WHERE NOT adds_up"), 0) << line;
  }
}

TEST(BadInput, BinaryGarbageIsSkippedAndReported) {
  TempDir t;
  std::string garbage(4096, '\0');
  for (size_t i = 0; i < garbage.size(); ++i) garbage[i] = static_cast<char>((i * 7919) % 256);
  write_file(t / "logs/core.1234", garbage);
  write_file(t / "logs/rank1.log", kWatchdog);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("core.1234: binary data, not a text log"), std::string::npos) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files WHERE status = 'skipped' AND kind = 'binary'"), 1);
}

// Tensor sizes in a Flight Recorder dump whose element count does not fit
// in int64, or that are no shape (a negative dimension), are an unknown
// count, not a wrapped one (signed overflow, found by fuzzing:
// tests/fuzz-inputs/flight_recorder/sizes-whose-count-overflows).
TEST(BadInput, FlightRecorderSizesPastInt64AreAnUnknownCount) {
  TempDir t;
  auto entry = [](int id, const std::string& sizes) {
    return "{\"record_id\": " + std::to_string(id) + ", \"pg_id\": 0, \"process_group\": [\"0\", \"default_pg\"], "
           "\"collective_seq_id\": " + std::to_string(id) + ", \"profiling_name\": \"nccl:all_reduce\", "
           "\"input_sizes\": " + sizes + ", \"output_sizes\": " + sizes + ", \"state\": \"completed\"}";
  };
  write_file(t / "logs/nccl_trace_rank_0.json",
             "{\"version\": \"2.4\", \"pg_config\": {\"0\": {\"name\": \"0\", \"desc\": \"default_pg\", "
             "\"ranks\": \"[0, 1]\"}}, \"entries\": [" +
                 entry(1, "[[4096, 1024]]") + ", " + entry(2, "[[4294967297, 4294967296]]") + ", " +
                 entry(3, "[[4611686018427387904], [4611686018427387904], [4611686018427387904], "
                          "[4611686018427387904], [5]]") +
                 ", " + entry(4, "[[-3, 4]]") + "]}");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(count(t / "x.db", "SELECT numel_in FROM flight_recorder_entries WHERE record_id = 1"), 4194304);
  // Wrapped, these would read 2^32 and 5 elements.
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM flight_recorder_entries WHERE record_id > 1 AND numel_in IS NULL"), 3);
}

TEST(BadInput, HundredThousandTinyFilesAreAllIngested) {
  TempDir t;
  for (int i = 0; i < 100000; ++i)
    write_file(t / ("logs/d" + std::to_string(i % 100) + "/rank" + std::to_string(i) + ".log"),
               "hello from " + std::to_string(i) + "\n");
  ingest::Options o;
  o.paths = {t / "logs"};
  o.db_path = t / "x.db";
  auto r = ingest::run(o);
  ASSERT_TRUE(r) << r.error().to_string();
  EXPECT_EQ(r->files_new, 100000);
  EXPECT_EQ(r->totals.read, 100000);
  EXPECT_EQ(count(t / "x.db", "SELECT count(DISTINCT rank) FROM unparsed_lines"), 100000);
}

TEST(BadInput, DatabaseInMissingDirectoryIsAnErrorWithAHint) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "no/such/dir/x.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("x.db: cannot create the database: directory"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint:"), std::string::npos);
}

TEST(BadInput, FileThatIsNotSqliteIsLeftUntouched) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  std::string notes = "these are my notes, not a database\n" + std::string(2000, 'n');
  write_file(t / "notes.db", notes);
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "notes.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("notes.db: not an ncclpm incident database"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("damaged"), std::string::npos) << "a file that never was SQLite is not a damaged database";
  EXPECT_EQ(read_file(t / "notes.db"), notes);
}

TEST(BadInput, DatabaseFromNewerSchemaIsRefusedAndUntouched) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  {
    auto db = store::Connection::open(t / "new.db", false);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("CREATE TABLE jobs(x); PRAGMA user_version = 99"));
  }
  std::string before = read_file(t / "new.db");
  auto r = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "new.db").string()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("new.db: database has schema version 99, newer than this ncclpm reads (" +
                      std::to_string(store::kSchemaVersion) + ")"),
            std::string::npos) << r.err;
  EXPECT_EQ(read_file(t / "new.db"), before);
}

class OlderSchema : public ::testing::TestWithParam<int> {};

TEST_P(OlderSchema, AsksForANewIngestAndIsUntouched) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  const std::string version = std::to_string(GetParam());
  {
    auto db = store::Connection::open(t / "old.db", false);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("CREATE TABLE collective_calls(x); PRAGMA user_version = " + version));
  }
  std::string before = read_file(t / "old.db");
  for (const char* command : {"ingest", "diagnose"}) {
    std::vector<std::string> args = {command, "--db", (t / "old.db").string()};
    if (std::string(command) == "ingest") args.insert(args.begin() + 1, (t / "logs").string());
    auto r = run_ncclpm(args);
    EXPECT_EQ(r.exit_code, 1) << command;
    EXPECT_NE(r.err.find("old.db: database has schema version " + version +
                         ", from an older ncclpm; this one reads version " +
                         std::to_string(store::kSchemaVersion)),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("ingest the logs again into a new database"), std::string::npos) << r.err;
  }
  EXPECT_EQ(read_file(t / "old.db"), before);
}

// Version 1 kept one row per collective, version 2 no severity of unparsed
// lines, versions 3 to 5 a row per unparsed and per progress line, version 6
// a row per NCCL channel and transport line.
INSTANTIATE_TEST_SUITE_P(BadInput, OlderSchema, ::testing::Values(1, 2, 3, 4, 5, 6));

// Version 7 differs only in the format of its line blocks, which is still
// read: such a database is diagnosed as it is, and an ingest into it (which
// writes blocks of the newer format) marks it with the current version.
TEST(BadInput, ASchemaOfRowWiseLineBlocksIsReadAndMovedOnByAnIngest) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  write_file(t / "more/rank2.log", kWatchdog);
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "v7.db").string()}).exit_code, 0);
  auto version = [&] {
    auto db = store::Connection::open(t / "v7.db", true);
    if (!db) return int64_t{-1};
    auto v = db->scalar_int("PRAGMA user_version");
    return v ? *v : int64_t{-1};
  };
  {
    auto db = store::Connection::open(t / "v7.db", false);
    ASSERT_TRUE(db);
    ASSERT_TRUE(db->exec("PRAGMA user_version = 7"));
  }
  auto diagnosed = run_ncclpm({"diagnose", "--db", (t / "v7.db").string()});
  EXPECT_EQ(diagnosed.exit_code, 0) << diagnosed.err;
  EXPECT_NE(diagnosed.out.find("collective_timeout"), std::string::npos) << diagnosed.out;
  EXPECT_EQ(version(), 7);
  auto more = run_ncclpm({"ingest", (t / "more").string(), "--db", (t / "v7.db").string()});
  EXPECT_EQ(more.exit_code, 0) << more.err;
  EXPECT_EQ(version(), store::kSchemaVersion);
}



TEST(BadInput, CancelledIngestWritesNothing) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  std::atomic<bool> cancel{true};
  ingest::Options o;
  o.paths = {t / "logs"};
  o.db_path = t / "x.db";
  o.cancel = &cancel;
  auto r = ingest::run(o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("interrupted"), std::string::npos);
  EXPECT_FALSE(fs::exists(t / "x.db"));
}

// A COLL-heavy file big enough that ingest is still running when the signal comes.
void write_big_log(const fs::path& path) {
  std::string line =
      "node1:4242:4242 [0] NCCL INFO AllReduce: opCount 1a sendbuff 0x7f3c2e000000 recvbuff "
      "0x7f3c30000000 count 131072 datatype 7 op 0 root 0 comm 0x55d5a8b3c2d0 [nranks=8] stream 0x55d5\n";
  std::string block;
  for (int i = 0; i < 10000; ++i) block += line;
  fs::create_directories(path.parent_path());
  std::ofstream out(path);
  for (int i = 0; i < 200; ++i) out << block;  // ~340 MB, 2M lines
}

// Starts an ingest, waits until it is writing, sends `sig`, returns the exit status.
int ingest_and_signal(const fs::path& logs, const fs::path& db, int sig) {
  pid_t pid = testing::start_ncclpm({"ingest", logs.string(), "--db", db.string()});
  std::string temp_prefix = db.filename().string() + ".tmp-" + std::to_string(pid);
  for (int i = 0; i < 400; ++i) {
    bool started = fs::exists(db.parent_path() / temp_prefix) || fs::exists(db.string() + "-journal");
    if (started) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(pid, sig);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

TEST(BadInput, CtrlCDuringIngestExits130AndLeavesNoDatabase) {
  TempDir t;
  write_big_log(t / "logs/console.log");
  int status = ingest_and_signal(t / "logs", t / "x.db", SIGINT);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_FALSE(fs::exists(t / "x.db"));
  for (const auto& e : fs::directory_iterator(t.path()))
    EXPECT_EQ(e.path().filename().string().find("x.db.tmp-"), std::string::npos) << "temporary left behind";
}

TEST(BadInput, KillDuringIngestIntoExistingDatabaseLeavesItAsItWas) {
  TempDir t;
  write_file(t / "first/rank1.log", kWatchdog);
  auto first = run_ncclpm({"ingest", (t / "first").string(), "--db", (t / "x.db").string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  write_big_log(t / "logs/console.log");
  int status = ingest_and_signal(t / "logs", t / "x.db", SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  // The hot journal is rolled back when the database is next opened.
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM jobs"), 1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM collectives"), 0);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM watchdog_timeouts"), 1);
}

TEST(BadInput, KillDuringIngestIntoNewDatabaseLeavesNoDatabase) {
  TempDir t;
  write_big_log(t / "logs/console.log");
  int status = ingest_and_signal(t / "logs", t / "x.db", SIGKILL);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(fs::exists(t / "x.db"));
  // The next ingest removes the dead run's temporary file.
  write_file(t / "small/rank1.log", kWatchdog);
  auto r = run_ncclpm({"ingest", (t / "small").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(r.exit_code, 0);
  for (const auto& e : fs::directory_iterator(t.path()))
    EXPECT_EQ(e.path().filename().string().find("x.db.tmp-"), std::string::npos) << "temporary left behind";
}

TEST(Ingest, SameFilesTwiceAddNothing) {
  TempDir t;
  write_file(t / "logs/rank1.log", kWatchdog);
  ASSERT_EQ(run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()}).exit_code, 0);
  auto again = run_ncclpm({"ingest", (t / "logs").string(), "--db", (t / "x.db").string()});
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_NE(again.err.find("(1 already in the database)"), std::string::npos) << again.err;
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM files"), 1);
  EXPECT_EQ(count(t / "x.db", "SELECT count(*) FROM events"), 1);
}

}  // namespace
}  // namespace ncclpm
