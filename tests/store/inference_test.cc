// tests/store/inference_test.cc
//
// Ranks that single lines do not state but the job does, worked out after the
// load (src/store/inference.cc): from the process's world communicator, and
// from the launcher's local-rank tag of a merged console.
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "ncclpm/ingest/ingest.h"
#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::store {
namespace {

using testing::TempDir;
using testing::write_file;

// Writes `files` into `dir`, ingests it into DIR.db and opens that for reading.
Connection ingest_files(const std::filesystem::path& dir, const std::map<std::string, std::string>& files) {
  for (const auto& [name, text] : files) write_file(dir / name, text);
  ingest::Options o;
  o.paths = {dir};
  o.db_path = dir.string() + ".db";
  auto r = ingest::run(o);
  EXPECT_TRUE(r) << r.error().message;
  auto db = open_for_reading(o.db_path);
  EXPECT_TRUE(db) << db.error().message;
  return db ? std::move(db).value() : Connection();
}

// Ingests `console` as one file; returns rank (or -1) of the line holding `marker`.
class ConsoleRanks : public ::testing::Test {
 protected:
  // Each `job` in a directory and database of its own.
  void ingest(const std::string& console, const std::string& job = "logs") {
    db_ = ingest_files(tmp_ / job, {{"console.log", console}});
  }
  int64_t rank_of(const std::string& marker) {
    auto st = db_.prepare(
        "SELECT coalesce(rank, -1) FROM (SELECT rank, text FROM events UNION ALL SELECT rank, text FROM unparsed_lines)"
        " WHERE instr(text, ?) > 0");
    EXPECT_TRUE(st);
    if (!st || !st->bind_all({marker}) || !st->step()) {
      ADD_FAILURE() << "no line holds " << marker;
      return -2;
    }
    return st->column_int(0);
  }
  TempDir tmp_;
  Connection db_;
};

// NCCL's init line names the process's rank in the world communicator
// (16 ranks, 2 hosts): rank 9 is local rank 1 on node-b.
constexpr const char* kInitB1 =
    "node-b: [default1]:node-b:5151:5151 [1] NCCL INFO comm 0x55aa00000001 rank 9 nRanks 16 nNodes 2 "
    "localRanks 8 localRank 1 MNNVL 0\n";
constexpr const char* kInitA1 =
    "node-a: [default1]:node-a:4141:4141 [1] NCCL INFO comm 0x55bb00000001 rank 1 nRanks 16 nNodes 2 "
    "localRanks 8 localRank 1 MNNVL 0\n";

TEST_F(ConsoleRanks, APrintInAMergedConsoleTakesTheGlobalRankOfItsHostAndLocalRank) {
  ingest(std::string(kInitA1) + kInitB1 +
         "node-b: [default1]:epoch 3 step 120 loss 1.25 marker-b1\n"
         "node-a: [default1]:epoch 3 step 120 loss 1.31 marker-a1\n"
         "node-a: [default2]:no NCCL line of local rank 2 on node-a: marker-a2\n");
  EXPECT_EQ(rank_of("marker-b1"), 9);
  EXPECT_EQ(rank_of("marker-a1"), 1);
  // Nothing says who local rank 2 on node-a is: no rank is made up.
  EXPECT_EQ(rank_of("marker-a2"), -1);
  // The NCCL line itself has its process's rank.
  EXPECT_EQ(rank_of("comm 0x55aa00000001 rank 9"), 9);
}

TEST_F(ConsoleRanks, ALocalRankThatMeantTwoGlobalRanksGivesNone) {
  // A restarted job: local rank 1 on node-b was rank 9, then rank 13.
  std::string restarted = kInitB1;
  restarted += "node-b: [default1]:before the restart marker-before\n";
  restarted +=
      "node-b: [default1]:node-b:6161:6161 [1] NCCL INFO comm 0x55cc00000001 rank 13 nRanks 16 nNodes 2 "
      "localRanks 8 localRank 1 MNNVL 0\n";
  restarted += "node-b: [default1]:after the restart marker-after\n";
  ingest(restarted);
  EXPECT_EQ(rank_of("marker-before"), -1);
  EXPECT_EQ(rank_of("marker-after"), -1);
  EXPECT_EQ(rank_of("comm 0x55cc00000001 rank 13"), 13);
}

// torchrun reports a failed worker by its local rank; on one node, which the
// logs show by its launch or by showing nothing of another node, that is the
// global rank.
constexpr const char* kWorkerFailed =
    "[2024-11-26 02:04:31,514] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) "
    "local_rank: 1 (pid: 750662) of binary: /usr/bin/python\n";
constexpr const char* kOtherWorkerStopped =
    "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 750661 closing signal SIGTERM\n";

TEST_F(ConsoleRanks, AFailedWorkersLocalRankIsItsRankWhenTheLaunchWasOnOneNode) {
  int jobs = 0;
  for (const char* launch : {"+ torchrun --standalone --nproc_per_node=2 train.py\n",
                             "+ torchrun --nnodes=1 --nproc_per_node=2 train.py\n",
                             "deepspeed --num_nodes 1 --num_gpus 2 train.py\n"}) {
    ingest(std::string(launch) + kWorkerFailed, "job" + std::to_string(++jobs));
    EXPECT_EQ(rank_of("local_rank: 1 (pid: 750662)"), 1) << launch;
  }
}

TEST_F(ConsoleRanks, AFailedWorkersLocalRankIsItsRankWhenNothingShowsAnotherNode) {
  ingest(std::string("training started\n[rank0]: epoch 1 loss 2.5\n[rank1]: epoch 1 loss 2.4\n") +
             kOtherWorkerStopped + kWorkerFailed,
         "one");
  EXPECT_EQ(rank_of("local_rank: 1 (pid: 750662)"), 1);
  // DeepSpeed's launcher names the local rank in the worker's command line.
  ingest(
      "[2022-01-30 20:09:26,784] [ERROR] [launch.py:184:sigkill_handler] ['/usr/bin/python', '-u', 'train.py', "
      "'--local_rank=1'] exits with return code = -9\n",
      "deepspeed");
  EXPECT_EQ(rank_of("exits with return code = -9"), 1);
  // One machine under its short and its full name is one node.
  ingest(std::string("gpu-7:5151:5151 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
                     "gpu-7.cluster.internal:5152:5152 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n") +
             kOtherWorkerStopped + kWorkerFailed,
         "two-names");
  EXPECT_EQ(rank_of("local_rank: 1 (pid: 750662)"), 1);
}

TEST_F(ConsoleRanks, AFailedWorkersLocalRankGivesNoRankWhereTheLogsShowAnotherNode) {
  int jobs = 0;
  for (std::string before : {
           std::string("+ torchrun --nnodes=2 --nproc_per_node=2 train.py\n"),
           std::string("+ torchrun --nnodes=1:4 --nproc_per_node=2 train.py\n"),
           std::string("+ torchrun --node_rank=1 --nproc_per_node=2 train.py\n"),
           std::string("NODE_RANK=1 MASTER_ADDR=10.0.0.1\n"),
           // another machine's line
           std::string("node-b:5151:5151 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
                       "node-a:4141:4141 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"),
           // a communicator over two nodes
           std::string(kInitB1),
           // a rank beyond the two workers this launcher had
           std::string("[rank5]: epoch 1 loss 2.4\n") + kOtherWorkerStopped,
       }) {
    ingest(before + kWorkerFailed, "job" + std::to_string(++jobs));
    EXPECT_EQ(rank_of("local_rank: 1 (pid: 750662)"), -1) << before;
  }
}

// torch.multiprocessing.spawn reports a failed worker by its process index,
// the worker's local rank, under the parent's traceback; the worker's own
// traceback follows. On one node both are that rank; where the logs show
// another node, neither is.
constexpr const char* kSpawnReport =
    "Traceback (most recent call last):\n"
    "  File \"tools/train_net.py\", line 161, in <module>\n"
    "    args=(args,),\n"
    "  File \"/opt/torch/multiprocessing/spawn.py\", line 118, in join\n"
    "    raise Exception(msg)\n"
    "Exception: \n"
    "\n"
    "-- Process 3 terminated with the following error:\n"
    "Traceback (most recent call last):\n"
    "  File \"/opt/torch/multiprocessing/spawn.py\", line 19, in _wrap\n"
    "    fn(i, *args)\n"
    "OSError: image file is truncated (marker-worker)\n";

TEST_F(ConsoleRanks, ASpawnedWorkersProcessIndexIsItsRankOnOneNode) {
  ingest(kSpawnReport, "one");
  EXPECT_EQ(rank_of("tools/train_net.py"), 3);
  EXPECT_EQ(rank_of("marker-worker"), 3);
  ingest(std::string("node-b:5151:5151 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
                     "node-a:4141:4141 [1] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n") +
             kSpawnReport,
         "two");
  EXPECT_EQ(rank_of("tools/train_net.py"), -1);
  EXPECT_EQ(rank_of("marker-worker"), -1);
}

// The machine of lines that name none: a job whose lines name one machine,
// and whose communicators span one node, ran there.
class JobHosts : public ::testing::Test {
 protected:
  void ingest(const std::map<std::string, std::string>& files) { db_ = ingest_files(tmp_ / "logs", files); }
  std::string host_of(const std::string& marker) {
    auto st = db_.prepare(
        "SELECT coalesce(host, '') FROM (SELECT host, text FROM events UNION ALL SELECT host, text FROM unparsed_lines)"
        " WHERE instr(text, ?) > 0");
    EXPECT_TRUE(st);
    if (!st || !st->bind_all({marker}) || !st->step()) {
      ADD_FAILURE() << "no line holds " << marker;
      return "?";
    }
    return st->column_text(0);
  }
  TempDir tmp_;
  Connection db_;
};

TEST_F(JobHosts, ABannerNamingTheOneMachineGivesItToLinesWithNeitherHostNorRank) {
  ingest({{"console.log",
           "RETURNN starting up, version 1.2024, pid 6472\n"
           "Hostname: cn-251\n"
           "ep 272 train, step 176, ce 0.424\n"
           "Unhandled exception <class 'RuntimeError'> marker-exception\n"},
          {"nvidia-smi.log", "Unable to determine the device handle for GPU0000:03:00.0: Unknown Error marker-smi\n"}});
  EXPECT_EQ(host_of("Hostname: cn-251"), "cn-251");
  EXPECT_EQ(host_of("marker-exception"), "cn-251");
  EXPECT_EQ(host_of("marker-smi"), "cn-251") << "another file of the same one-machine job";
}

TEST_F(JobHosts, LinesWithARankOrAJobOnSeveralNodesGetNoMachineOfAnothersLines) {
  // node2's NCCL file names its host; node1's console does not: its ranked
  // lines may be another node's.
  ingest({{"node1.log", "[rank1]: RuntimeError: CUDA error: marker-ranked\n"},
          {"nccl.node2.log", "node2:200:200 [0] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0\n"}});
  EXPECT_EQ(host_of("marker-ranked"), "");
}

TEST_F(JobHosts, NoMachineIsGivenWhenNcclSaysTheCommunicatorSpansNodes) {
  ingest({{"node-a.log", std::string(kInitA1) + "an untagged line marker-untagged\n"}});
  EXPECT_EQ(host_of("marker-untagged"), "");
}

// rank_lines is what counting the stored lines by rank and host gives, once
// the ranks and hosts were inferred: diagnose reads it instead of them.
std::vector<std::string> rank_lines_of(Connection& db, const std::string& source) {
  auto st = db.prepare("SELECT rank || ' ' || coalesce(host, '-') || ' ' || lines FROM " + source +
                       " ORDER BY job_id, rank, host");
  EXPECT_TRUE(st) << st.error().message;
  std::vector<std::string> rows;
  while (st && st->step()) rows.push_back(st->column_text(0));
  return rows;
}

// The stored lines counted by rank and host, line by line: what rank_lines must hold.
const std::string kCountedRankLines =
    "(SELECT job_id, rank, host, count(*) AS lines FROM (SELECT job_id, rank, host FROM events WHERE rank IS NOT NULL"
    " UNION ALL SELECT job_id, rank, host FROM unparsed_lines WHERE rank IS NOT NULL"
    " UNION ALL SELECT job_id, rank, host FROM training_progress WHERE rank IS NOT NULL"
    " UNION ALL SELECT job_id, rank, host FROM nccl_channel_lines WHERE rank IS NOT NULL"
    " UNION ALL SELECT job_id, rank, host FROM nccl_network_lines WHERE rank IS NOT NULL) GROUP BY job_id, rank, host)";

// Ingests each bundled incident into a database of its own and hands it over.
void each_bundled_incident(const std::function<void(const std::filesystem::path&, Connection&)>& check) {
  for (const auto& dir : std::filesystem::directory_iterator(testing::source_path("fixtures/incidents"))) {
    TempDir tmp;
    ingest::Options o;
    o.paths = {dir.path() / "logs"};
    o.db_path = tmp / "x.db";
    ASSERT_TRUE(ingest::run(o)) << dir.path();
    auto db = open_for_reading(o.db_path);
    ASSERT_TRUE(db);
    check(dir.path(), *db);
  }
}

TEST(RankLines, AreTheStoredLinesCountedOnEveryBundledIncident) {
  each_bundled_incident([](const std::filesystem::path& dir, Connection& db) {
    auto kept = rank_lines_of(db, "rank_lines");
    EXPECT_EQ(kept, rank_lines_of(db, kCountedRankLines)) << dir;
    EXPECT_FALSE(kept.empty()) << dir;
  });
}

// progress_streams, tallied while writing and given ranks after the
// inference, is what grouping the stored progress lines gives: per file,
// rank, source and label, the timed lines and the last bar counting steps.
std::vector<std::string> progress_streams_of(Connection& db, const std::string& source) {
  return rank_lines_of(db, "(SELECT job_id, 0 AS rank, '' AS host, file_id || ' ' || coalesce(rank, -1) || ' ' ||"
                           " source || ' ' || label || ' ' || sum(timed_lines) || ' ' ||"
                           " coalesce(max(last_bar_line), 0) AS lines FROM " + source +
                           " GROUP BY job_id, file_id, rank, source, label)");
}

const std::string kCountedProgressStreams =
    "(SELECT job_id, file_id, rank, source, coalesce(label, '') AS label,"
    " sum(coalesce(seconds_per_step, 0) > 0 AND coalesce(unit, 'it') = 'it') AS timed_lines,"
    " max(CASE WHEN source = 'tqdm' AND coalesce(unit, 'it') = 'it' AND step IS NOT NULL AND total > 0"
    " THEN line_no END) AS last_bar_line FROM training_progress GROUP BY job_id, file_id, rank, source, coalesce(label, ''))";

TEST(ProgressStreams, AreTheStoredProgressLinesCountedOnEveryBundledIncident) {
  size_t with_progress = 0;
  each_bundled_incident([&](const std::filesystem::path& dir, Connection& db) {
    auto kept = progress_streams_of(db, "progress_streams");
    EXPECT_EQ(kept, progress_streams_of(db, kCountedProgressStreams)) << dir;
    if (!kept.empty()) ++with_progress;
  });
  EXPECT_GE(with_progress, 3u) << "the bundled incidents with training progress";
}

// A second ingest into the same job: its lines without a host get their
// rank's, the first ingest's stay as they were, and the counts follow both.
TEST(RankLines, FollowASecondIngestIntoTheSameJob) {
  TempDir tmp;
  write_file(tmp / "logs/a.log", "[rank1]: untagged line one\n[rank1]: untagged line two\n");
  ingest::Options o;
  o.paths = {tmp / "logs"};
  o.db_path = tmp / "x.db";
  ASSERT_TRUE(ingest::run(o));
  write_file(tmp / "logs/b.log", "node7:300:300 [1] NCCL INFO comm 0x1 rank 1 nranks 2 cudaDev 1 busId 2000 - Init COMPLETE\n"
                                  "[rank1]: another untagged line\n");
  ASSERT_TRUE(ingest::run(o));
  auto db = open_for_reading(o.db_path);
  ASSERT_TRUE(db);
  auto kept = rank_lines_of(*db, "rank_lines");
  EXPECT_EQ(kept, rank_lines_of(*db, kCountedRankLines));
  EXPECT_EQ(kept, (std::vector<std::string>{"1 - 2", "1 node7 2"})) << "a.log's two lines were stored before node7 was known";
}

}  // namespace
}  // namespace ncclpm::store
