// tests/replay/replay_cli_test.cc
//
// `ncclpm replay` as a user runs it, on machines with or without a GPU: dry
// runs of a stored finding, usage errors, launcher environments, and a real
// run with every GPU hidden (CUDA_VISIBLE_DEVICES=""), which must stop at once
// with exit code 1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>

#include "ncclpm/store/schema.h"
#include "support/test_support.h"

namespace ncclpm::testing {
namespace {

// Sets environment variables for the child processes of one test.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<std::string, std::string>> vars) : vars_(vars) {
    for (const auto& [k, v] : vars_) setenv(k.c_str(), v.c_str(), 1);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  ~ScopedEnv() {
    for (const auto& [k, v] : vars_) unsetenv(k.c_str());
  }

 private:
  std::vector<std::pair<std::string, std::string>> vars_;
};

// The save-phase-stall incident, ingested and diagnosed once for all tests.
class ReplayCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    db_ = (dir_->path() / "incidents.db").string();
    auto in = run_ncclpm(
        {"ingest", source_path("fixtures/incidents/save-phase-stall-torchrun-logdir/logs").string(),
         "--db", db_});
    ASSERT_EQ(in.exit_code, 0) << in.err;
    auto d = run_ncclpm({"diagnose", "--db", db_});
    ASSERT_EQ(d.exit_code, 0) << d.err;
  }
  static void TearDownTestSuite() { delete dir_; }
  static TempDir* dir_;
  static std::string db_;
};
TempDir* ReplayCli::dir_ = nullptr;
std::string ReplayCli::db_;

TEST_F(ReplayCli, DryRunOfAStoredFindingPrintsPlanAndNcclTestsCommand) {
  auto r = run_ncclpm({"replay", "--finding", "1", "--db", db_, "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line :
       {"op           allgather\n", "count        29171712 per rank (NumelIn)\n",
        "dtype        bfloat16\n", "bfloat16 assumed", "ranks        8\n",
        "not applied: NCCL_IB_HCA=mlx5 NCCL_SOCKET_IFNAME=eth0 from the job's logs",
        "nccl-tests   all_gather_perf -b 466747392 -e 466747392 -g 8 -d bfloat16 -w 5 -n 20 -c "
        "0\n"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(ReplayCli, DryRunAppliesTheLogsEnvironmentOnRequest) {
  auto r = run_ncclpm({"replay", "--finding", "1", "--db", db_, "--dry-run", "--env-from-logs",
                       "--env", "NCCL_ALGO=Ring", "--iters", "50", "--check", "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* key :
       {"\"schema\": \"ncclpm.replay-plan/1\"", "\"NCCL_ALGO\": \"Ring\"",
        "\"nccl_tests_command\": \"NCCL_ALGO=Ring NCCL_IB_HCA=mlx5 NCCL_SOCKET_IFNAME=eth0 "
        "all_gather_perf -b 466747392 -e 466747392 -g 8 -d bfloat16 -w 5 -n 50 -c 1\""})
    EXPECT_NE(r.out.find(key), std::string::npos) << key << "\n" << r.out;
}

TEST_F(ReplayCli, OverridingTheAssumedDtype) {
  auto r = run_ncclpm({"replay", "--finding", "1", "--db", db_, "--dry-run", "--dtype", "float32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("-b 933494784 -e 933494784 -g 8 -d float "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("assumed"), std::string::npos) << r.out;
}

TEST_F(ReplayCli, UnknownFindingIsAnError) {
  auto r = run_ncclpm({"replay", "--finding", "99", "--db", db_, "--dry-run"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no finding 99"), std::string::npos) << r.err;
}

TEST_F(ReplayCli, RealRunWithoutAGpuStopsAtOnce) {
  ScopedEnv hide({{"CUDA_VISIBLE_DEVICES", ""}});
  auto r = run_ncclpm({"replay", "--finding", "1", "--db", db_});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
#ifdef NCCLPM_HAVE_REPLAY
  EXPECT_NE(r.err.find("ncclpm: error: replay: host "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("no CUDA device visible"), std::string::npos) << r.err;
#else
  EXPECT_NE(r.err.find("built without the replay engine"), std::string::npos) << r.err;
#endif
  EXPECT_EQ(r.out, "");
  auto rows =
      run_ncclpm({"query", "SELECT count(*) AS n FROM replays", "--db", db_, "--format", "csv"});
  EXPECT_NE(rows.out.find("\n0"), std::string::npos) << rows.out;  // nothing ran, nothing stored
}

TEST(ReplayCliUsage, ExplicitCollectives) {
  auto no_gpus = run_ncclpm({"replay", "--op", "allreduce", "--count", "1024", "--dry-run"});
  EXPECT_EQ(no_gpus.exit_code, 2);
  EXPECT_NE(no_gpus.err.find("needs --gpus N"), std::string::npos) << no_gpus.err;
  auto ok = run_ncclpm({"replay", "--op", "reducescatter", "--bytes", "65536", "--dtype", "half",
                        "--redop", "max", "--gpus", "4", "--dry-run"});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("count        8192 per rank (--bytes)\n"), std::string::npos) << ok.out;
  EXPECT_NE(
      ok.out.find("reduce_scatter_perf -b 65536 -e 65536 -g 4 -d half -w 5 -n 20 -c 0 -o max\n"),
      std::string::npos)
      << ok.out;
}

TEST(ReplayCliUsage, BadFlagsAreUsageErrors) {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"replay"},
        {"replay", "--op", "allreduce", "--count", "8", "--format", "xml"},
        {"replay", "--op", "allreduce", "--count", "8", "--env", "NCCL_ALGO"},
        {"replay", "--op", "allreduce", "--count", "8", "--bytes", "32"},
        {"replay", "--op", "gatherv", "--count", "8"},
        {"replay", "--op", "broadcast", "--count", "8", "--root", "4", "--gpus", "4", "--dry-run"},
        {"replay", "--finding", "0"},
        {"replay", "--frobnicate"}}) {
    auto r = run_ncclpm(args);
    EXPECT_EQ(r.exit_code, 2) << args.back() << "\n" << r.err;
    EXPECT_NE(r.err.find("ncclpm replay --help"), std::string::npos) << r.err;
  }
}

TEST(ReplayCliUsage, HelpListsOptionsAndLaunchers) {
  auto r = run_ncclpm({"replay", "--help"});
  ASSERT_EQ(r.exit_code, 0);
  for (const char* s :
       {"--finding", "--env-from-logs", "--bootstrap", "--timeout", "srun -N2", "--no-python"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  auto top = run_ncclpm({"--help"});
  EXPECT_NE(top.out.find("replay"), std::string::npos);
}

TEST(ReplayCliLaunch, OnlyRankZeroPrintsAndTheBootstrapIsDerived) {
  std::vector<std::string> args{"replay", "--op", "allgather", "--count", "1024", "--dry-run"};
  {
    ScopedEnv env({{"SLURM_PROCID", "5"},
                   {"SLURM_NTASKS", "16"},
                   {"SLURM_LOCALID", "5"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_STEP_NODELIST", "gpu-node[07-08]"}});
    auto r = run_ncclpm(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "");
  }
  {
    ScopedEnv env({{"SLURM_PROCID", "0"},
                   {"SLURM_NTASKS", "16"},
                   {"SLURM_LOCALID", "0"},
                   {"SLURM_STEP_ID", "0"},
                   {"SLURM_STEP_NODELIST", "gpu-node[07-08]"}});
    auto r = run_ncclpm(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(
        r.out.find("srun: process 0 of 16, 1 GPU(s) each, bootstrap NCCL_COMM_ID=gpu-node07:29510"),
        std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("all_gather_perf -b 65536 -e 65536 -g 1 -d float"), std::string::npos)
        << r.out;
  }
  {
    ScopedEnv env({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}});
    auto r = run_ncclpm(args);
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("mpirun started 2 processes but nothing names the bootstrap address"),
              std::string::npos)
        << r.err;
  }
}

}  // namespace
}  // namespace ncclpm::testing
