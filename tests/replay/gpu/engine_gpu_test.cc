// tests/replay/gpu/engine_gpu_test.cc
//
// The replay engine on real GPUs (ctest label `gpu`). Every test skips with a
// message when no GPU is visible, so the binary passes on CI machines too.
// Single process: allreduce and allgather with --check on every visible GPU,
// then every op, redop and type on small buffers. Several processes: two `ncclpm replay`
// processes meeting through NCCL_COMM_ID (two GPUs), and a rank that never
// arrives, which must end in exit code 3 at the deadline instead of a hang.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "ncclpm/replay/engine.h"
#include "support/test_support.h"

namespace ncclpm::replay {
namespace {

using plan::Op;
using plan::Outcome;

std::vector<plan::GpuInfo> gpus_or_skip(std::string* why) {
  auto g = visible_gpus();
  if (!g) {
    *why = g.error().message;
    return {};
  }
  return *g;
}

EngineConfig config(Op op, int64_t count, int datatype, const std::vector<plan::GpuInfo>& gpus) {
  EngineConfig c;
  c.plan.op = op;
  c.plan.count = count;
  c.plan.datatype = datatype;
  c.plan.nranks = static_cast<int>(gpus.size());
  c.gpus = gpus;
  c.check = true;
  c.warmup = 2;
  c.iters = 5;
  c.timeout_ms = 60000;
  c.host = "localhost";
  return c;
}

#define SKIP_WITHOUT_GPUS(gpus, n)                             \
  std::string why;                                             \
  auto gpus = gpus_or_skip(&why);                              \
  if (gpus.empty()) GTEST_SKIP() << "no GPU visible: " << why; \
  if (static_cast<int>(gpus.size()) < (n))                     \
  GTEST_SKIP() << "needs " << (n) << " GPUs, " << gpus.size() << " visible"

TEST(GpuReplay, AllReduceOnEveryVisibleGpuChecksOut) {
  SKIP_WITHOUT_GPUS(gpus, 1);
  plan::ReplayResult r = run(config(Op::kAllReduce, 1 << 22, 7, gpus));
  ASSERT_EQ(r.outcome, Outcome::kCompleted) << r.failure;
  EXPECT_EQ(r.wrong, 0);
  EXPECT_GT(r.time_us, 0);
  EXPECT_GT(r.algbw_gbps, 0);
  EXPECT_EQ(r.ranks.size(), gpus.size());
  EXPECT_FALSE(r.nccl_version.empty());
}

TEST(GpuReplay, AllGatherBf16OnEveryVisibleGpuChecksOut) {
  SKIP_WITHOUT_GPUS(gpus, 1);
  plan::ReplayResult r = run(config(Op::kAllGather, 29171712 / 8, 9, gpus));
  ASSERT_EQ(r.outcome, Outcome::kCompleted) << r.failure;
  EXPECT_EQ(r.wrong, 0);
  for (const plan::RankResult& k : r.ranks) {
    EXPECT_TRUE(k.reported);
    EXPECT_EQ(k.wrong, 0) << "rank " << k.rank;
    EXPECT_FALSE(k.gpu.bus_id.empty());
  }
}

// Each case is a fresh set of communicators, so the cases are chosen rather
// than crossed: every op in float32, every redop in bfloat16, every
// non-fp8 type in allreduce (fp8 needs a Hopper-class GPU).
TEST(GpuReplay, EveryOpRedopAndTypeChecksOut) {
  SKIP_WITHOUT_GPUS(gpus, 1);
  struct Case {
    Op op;
    int type, redop;
  };
  std::vector<Case> cases;
  for (Op op : {Op::kAllReduce, Op::kAllGather, Op::kReduceScatter, Op::kBroadcast, Op::kReduce,
                Op::kAllToAll, Op::kSendRecv})
    if (op != Op::kSendRecv || gpus.size() >= 2) cases.push_back({op, 7, 0});
  for (Op op : {Op::kAllReduce, Op::kReduceScatter, Op::kReduce})
    for (int redop = 1; redop < 5; ++redop) cases.push_back({op, 9, redop});
  for (int type : {0, 1, 2, 3, 4, 5, 6, 8}) cases.push_back({Op::kAllReduce, type, 0});
  for (const Case& k : cases) {
    EngineConfig c = config(k.op, 4099, k.type, gpus);
    c.plan.redop = k.redop;
    c.plan.root = static_cast<int>(gpus.size()) - 1;
    c.iters = 2;
    c.warmup = 1;
    plan::ReplayResult r = run(c);
    std::string what = std::string(plan::op_name(k.op)) + " type " + std::to_string(k.type) +
                       " redop " + std::to_string(k.redop);
    ASSERT_EQ(r.outcome, Outcome::kCompleted) << what << ": " << r.failure;
    EXPECT_EQ(r.wrong, 0) << what;
  }
}

int free_port() {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(s, reinterpret_cast<sockaddr*>(&a), &len);
  close(s);
  return ntohs(a.sin_port);
}

struct Child {
  pid_t pid = -1;
  std::filesystem::path out, err;
};

// Starts `ncclpm args...` with extra environment variables, as a launcher would.
Child spawn(const std::vector<std::string>& args,
            const std::vector<std::pair<std::string, std::string>>& env,
            const testing::TempDir& dir, const std::string& name) {
  Child c{-1, dir / (name + ".out"), dir / (name + ".err")};
  c.pid = fork();
  if (c.pid == 0) {
    for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
    std::vector<std::string> copy = args;
    std::string bin = NCCLPM_BINARY;
    std::vector<char*> argv{bin.data()};
    for (auto& a : copy) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (!freopen(c.out.c_str(), "w", stdout) || !freopen(c.err.c_str(), "w", stderr)) _exit(127);
    execv(bin.c_str(), argv.data());
    _exit(127);
  }
  return c;
}

int wait_exit(const Child& c) {
  int status = 0;
  waitpid(c.pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST(GpuReplayProcesses, TwoProcessesMeetThroughNcclCommId) {
  SKIP_WITHOUT_GPUS(gpus, 2);
  testing::TempDir dir;
  std::string port = std::to_string(free_port());
  std::vector<std::string> args{"replay",  "--op",      "allreduce", "--count",  "1048576",
                                "--check", "--timeout", "60",        "--format", "json"};
  std::vector<Child> children;
  for (int rank = 0; rank < 2; ++rank) {
    children.push_back(spawn(args,
                             {{"RANK", std::to_string(rank)},
                              {"WORLD_SIZE", "2"},
                              {"LOCAL_RANK", std::to_string(rank)},
                              {"MASTER_ADDR", "127.0.0.1"},
                              {"MASTER_PORT", port}},
                             dir, "rank" + std::to_string(rank)));
  }
  int rc0 = wait_exit(children[0]), rc1 = wait_exit(children[1]);
  std::string out0 = testing::read_file(children[0].out);
  EXPECT_EQ(rc0, 0) << out0 << testing::read_file(children[0].err);
  EXPECT_EQ(rc1, 0) << testing::read_file(children[1].err);
  EXPECT_NE(out0.find("\"outcome\": \"completed\""), std::string::npos) << out0;
  EXPECT_NE(out0.find("\"wrong\": 0"), std::string::npos) << out0;
  EXPECT_NE(out0.find("\"incomplete_ranks\": []"), std::string::npos) << out0;
  EXPECT_EQ(testing::read_file(children[1].out), "");  // rank 0 reports for everyone
}

TEST(GpuReplayProcesses, ARankThatNeverArrivesEndsInExitCode3NotAHang) {
  SKIP_WITHOUT_GPUS(gpus, 1);
  testing::TempDir dir;
  auto start = std::chrono::steady_clock::now();
  Child c = spawn({"replay", "--op", "allreduce", "--count", "1024", "--timeout", "5"},
                  {{"RANK", "0"},
                   {"WORLD_SIZE", "2"},
                   {"LOCAL_RANK", "0"},
                   {"MASTER_ADDR", "127.0.0.1"},
                   {"MASTER_PORT", std::to_string(free_port())}},
                  dir, "alone");
  int rc = wait_exit(c);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::string out = testing::read_file(c.out), err = testing::read_file(c.err);
  EXPECT_EQ(rc, 3) << out << err;
  EXPECT_LT(seconds, 60);
  EXPECT_NE(err.find("did not complete within the 5.0 s deadline"), std::string::npos) << err;
  EXPECT_NE(out.find("verdict: does not complete within the 5.0 s deadline (stuck in init)"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace ncclpm::replay
