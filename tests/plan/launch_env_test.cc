// tests/plan/launch_env_test.cc
#include "ncclpm/plan/launch_env.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

TEST(PlanLaunch, NoLauncherIsOneProcess) {
  auto l = detect_launch(map_env({}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->launcher, Launcher::kNone);
  EXPECT_FALSE(l->multi_process());
  EXPECT_TRUE(l->comm_id.empty());
}

TEST(PlanLaunch, TorchrunUsesTheNextPortAfterItsOwnStore) {
  auto l = detect_launch(map_env({{"RANK", "9"},
                                  {"WORLD_SIZE", "16"},
                                  {"LOCAL_RANK", "1"},
                                  {"TORCHELASTIC_RUN_ID", "none"},
                                  {"MASTER_ADDR", "gpu-node07"},
                                  {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(l) << l.error().message;
  EXPECT_EQ(l->launcher, Launcher::kTorchrun);
  EXPECT_EQ(l->rank, 9);
  EXPECT_EQ(l->world_size, 16);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_EQ(l->comm_id, "gpu-node07:29501");
  EXPECT_EQ(l->comm_id_source, "MASTER_ADDR:MASTER_PORT+1");
}

TEST(PlanLaunch, SrunStepWithMasterAddrUsesItsPortAsIs) {
  auto l = detect_launch(map_env({{"SLURM_PROCID", "3"},
                                  {"SLURM_NTASKS", "16"},
                                  {"SLURM_LOCALID", "3"},
                                  {"SLURM_STEP_ID", "0"},
                                  {"MASTER_ADDR", "10.0.0.7"},
                                  {"MASTER_PORT", "29500"}}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->launcher, Launcher::kSlurm);
  EXPECT_EQ(l->rank, 3);
  EXPECT_EQ(l->local_rank, 3);
  EXPECT_EQ(l->comm_id, "10.0.0.7:29500");
}

TEST(PlanLaunch, SrunWithoutMasterAddrBootstrapsOnTheFirstNodeOfTheStep) {
  auto l = detect_launch(map_env({{"SLURM_PROCID", "0"},
                                  {"SLURM_NTASKS", "16"},
                                  {"SLURM_LOCALID", "0"},
                                  {"SLURM_STEP_NUM_TASKS", "16"},
                                  {"SLURM_STEP_NODELIST", "gpu-node[07-08]"}}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->comm_id, "gpu-node07:" + std::to_string(kDefaultBootstrapPort));
  EXPECT_EQ(l->comm_id_source, "first host of SLURM_STEP_NODELIST");
}

TEST(PlanLaunch, SbatchScriptItselfIsNotALaunch) {
  // sbatch sets SLURM_PROCID=0 and SLURM_NTASKS for the batch script; only srun starts ranks.
  auto l = detect_launch(
      map_env({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "16"}, {"SLURM_JOB_ID", "42"}}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->launcher, Launcher::kNone);
  EXPECT_FALSE(l->multi_process());
}

TEST(PlanLaunch, MpirunNeedsABootstrapAddress) {
  std::map<std::string, std::string> env{{"OMPI_COMM_WORLD_RANK", "5"},
                                         {"OMPI_COMM_WORLD_SIZE", "16"},
                                         {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}};
  auto none = detect_launch(map_env(env));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message,
            "mpirun started 16 processes but nothing names the bootstrap address");
  auto flag = detect_launch(map_env(env), "gpu-node07:29600");
  ASSERT_TRUE(flag);
  EXPECT_EQ(flag->launcher, Launcher::kOpenMpi);
  EXPECT_EQ(flag->rank, 5);
  EXPECT_EQ(flag->comm_id, "gpu-node07:29600");
  EXPECT_EQ(flag->comm_id_source, "--bootstrap");
}

TEST(PlanLaunch, TorchrunInsideSrunTakesTorchrunsRanks) {
  auto l = detect_launch(map_env({{"RANK", "12"},
                                  {"WORLD_SIZE", "16"},
                                  {"LOCAL_RANK", "4"},
                                  {"SLURM_PROCID", "1"},
                                  {"SLURM_NTASKS", "2"},
                                  {"SLURM_STEP_ID", "0"},
                                  {"NCCL_COMM_ID", "gpu-node07:29511"}}));
  ASSERT_TRUE(l);
  EXPECT_EQ(l->rank, 12);
  EXPECT_EQ(l->world_size, 16);
  EXPECT_EQ(l->launcher, Launcher::kEnv);
  EXPECT_EQ(l->comm_id, "gpu-node07:29511");
}

TEST(PlanLaunch, WorldOfOneIsOneProcessEvenUnderALauncher) {
  auto l = detect_launch(map_env({{"RANK", "0"}, {"WORLD_SIZE", "1"}}));
  ASSERT_TRUE(l);
  EXPECT_FALSE(l->multi_process());
  EXPECT_TRUE(l->comm_id.empty());
}

TEST(PlanLaunch, BadNumbersAreErrors) {
  auto l = detect_launch(map_env({{"RANK", "x"}, {"WORLD_SIZE", "4"}}));
  ASSERT_FALSE(l);
  EXPECT_EQ(l.error().message, "environment variable RANK='x' is not a rank number");
  auto out = detect_launch(map_env({{"RANK", "4"}, {"WORLD_SIZE", "4"}}));
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message, "RANK=4 is outside WORLD_SIZE=4");
}

TEST(PlanLaunch, ParsesHostPortIncludingIpv6) {
  auto a = parse_host_port("gpu-node07:29500");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->first, "gpu-node07");
  EXPECT_EQ(a->second, 29500);
  auto b = parse_host_port("[fe80::1]:29500");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->first, "fe80::1");
  EXPECT_FALSE(parse_host_port("gpu-node07"));
  EXPECT_FALSE(parse_host_port("gpu-node07:0"));
  EXPECT_FALSE(parse_host_port(":29500"));
  EXPECT_FALSE(parse_host_port("fe80::1:29500"));
}

TEST(PlanLaunch, FirstHostOfSlurmNodeList) {
  EXPECT_EQ(first_host_of_nodelist("gpu-node[07-08,10],login1"), "gpu-node07");
  EXPECT_EQ(first_host_of_nodelist("gpu-node07,gpu-node08"), "gpu-node07");
  EXPECT_EQ(first_host_of_nodelist("a[3,5]"), "a3");
  EXPECT_EQ(first_host_of_nodelist("rack[1-2]-gpu[01-04]"), "rack1-gpu01");
  EXPECT_EQ(first_host_of_nodelist("solo"), "solo");
}

TEST(PlanLaunch, PicksTheGpusOfTheLocalRank) {
  LaunchInfo l;
  l.world_size = 16;
  l.rank = 11;
  l.local_rank = 3;
  auto d = pick_devices(l, 1, 8);
  ASSERT_TRUE(d);
  EXPECT_EQ(*d, std::vector<int>{3});
  auto two = pick_devices(l, 2, 8);
  ASSERT_TRUE(two);
  EXPECT_EQ(*two, (std::vector<int>{6, 7}));
  // The launcher already narrowed CUDA_VISIBLE_DEVICES to this process's GPU.
  auto own = pick_devices(l, 1, 1);
  ASSERT_TRUE(own);
  EXPECT_EQ(*own, std::vector<int>{0});
  l.local_rank = 9;
  auto too_far = pick_devices(l, 1, 8);
  ASSERT_FALSE(too_far);
  EXPECT_EQ(too_far.error().message, "local rank 9 needs GPUs 9..9 but 8 are visible");
  EXPECT_FALSE(pick_devices(l, 4, 2));
}

TEST(PlanLaunch, InheritedNcclVariablesOnly) {
  const char* env[] = {"PATH=/bin", "NCCL_DEBUG=INFO", "NCCL_IB_HCA=mlx5_0,mlx5_1", "XNCCL_A=1",
                       nullptr};
  auto got = inherited_nccl_env(env);
  EXPECT_EQ(got.size(), 2u);
  EXPECT_EQ(got["NCCL_IB_HCA"], "mlx5_0,mlx5_1");
}

}  // namespace
}  // namespace ncclpm::plan
