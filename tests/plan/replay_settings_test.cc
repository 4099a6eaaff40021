// tests/plan/replay_settings_test.cc
#include "ncclpm/plan/replay_settings.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

FindingRef save_stall() {
  FindingRef f;
  f.finding_id = 1;
  f.category = "save_phase_stall";
  f.numel_in = 29171712;
  f.numel_out = 233373696;
  f.timeout_ms = 1800000;
  CollectivePlan p;
  p.op = Op::kAllGather;
  p.count = 29171712;
  p.datatype = 9;
  p.nranks = 8;
  p.dtype_note = "bfloat16 assumed";
  p.env = {
      {"NCCL_IB_HCA", "mlx5"}, {"NCCL_SOCKET_IFNAME", "eth0"}, {"NCCL_COMM_ID", "10.1.1.1:5000"}};
  f.plan = p;
  return f;
}

TEST(PlanSettings, FromAFindingKeepsItsPlanAndLeavesTheLogsEnvironmentOutByDefault) {
  FindingRef f = save_stall();
  auto s = resolve_settings(ReplayOptions{}, &f);
  ASSERT_TRUE(s) << s.error().message;
  EXPECT_EQ(s->plan.op, Op::kAllGather);
  EXPECT_EQ(s->plan.count, 29171712);
  EXPECT_EQ(s->job_nranks, 8);
  EXPECT_EQ(s->count_source, "NumelIn");
  EXPECT_TRUE(s->plan.env.empty());
  EXPECT_EQ(s->timeout_ms, 120000);
  EXPECT_EQ(s->iters, 20);
  EXPECT_EQ(s->warmup, 5);
}

TEST(PlanSettings, EnvFromLogsAppliesTheJobsSettingsButNotItsBootstrap) {
  FindingRef f = save_stall();
  ReplayOptions o;
  o.env_from_logs = true;
  o.env = {"NCCL_SOCKET_IFNAME=ib0", "NCCL_ALGO=Ring"};
  auto s = resolve_settings(o, &f);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->plan.env.at("NCCL_IB_HCA"), "mlx5");
  EXPECT_EQ(s->plan.env.at("NCCL_SOCKET_IFNAME"), "ib0");  // --env wins
  EXPECT_EQ(s->plan.env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(s->plan.env.count("NCCL_COMM_ID"), 0u);
  ASSERT_EQ(s->env_not_applied.size(), 1u);
  EXPECT_EQ(s->env_not_applied[0], "NCCL_COMM_ID (replay bootstraps its own communicator)");
}

TEST(PlanSettings, ExplicitFlagsOverrideAnAssumedDtype) {
  FindingRef f = save_stall();
  ReplayOptions o;
  o.dtype = "fp32";
  o.count = 1000;
  auto s = resolve_settings(o, &f);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->plan.datatype, 7);
  EXPECT_TRUE(s->plan.dtype_note.empty());
  EXPECT_EQ(s->plan.count, 1000);
  EXPECT_EQ(s->count_source, "--count");
}

TEST(PlanSettings, ExplicitCollectiveNeedsOpAndASize) {
  ReplayOptions o;
  auto none = resolve_settings(o, nullptr);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "nothing to replay");
  o.op = "allgather";
  auto no_size = resolve_settings(o, nullptr);
  ASSERT_FALSE(no_size);
  EXPECT_EQ(no_size.error().message,
            "--op needs --count (elements per rank) or --bytes (nccl-tests' size)");
  o.count = 4;
  o.bytes = 16;
  EXPECT_FALSE(resolve_settings(o, nullptr));
  o.bytes = -1;
  auto ok = resolve_settings(o, nullptr);
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->plan.datatype, 7);  // float32 unless told, as nccl-tests
}

TEST(PlanSettings, RejectsUnknownNamesAndBadNumbers) {
  ReplayOptions o;
  o.op = "gatherv";
  o.count = 1;
  auto op = resolve_settings(o, nullptr);
  ASSERT_FALSE(op);
  EXPECT_EQ(op.error().message, "unknown op 'gatherv'");
  o.op = "allreduce";
  o.dtype = "float128";
  EXPECT_FALSE(resolve_settings(o, nullptr));
  o.dtype = "bf16";
  o.redop = "median";
  EXPECT_FALSE(resolve_settings(o, nullptr));
  o.redop = "avg";
  o.iters = 0;
  auto iters = resolve_settings(o, nullptr);
  ASSERT_FALSE(iters);
  EXPECT_EQ(iters.error().message, "--iters must be at least 1, not 0");
  o.iters = 1;
  o.timeout_s = 0;
  EXPECT_FALSE(resolve_settings(o, nullptr));
  o.timeout_s = 1;
  o.env_from_logs = true;
  auto logs = resolve_settings(o, nullptr);
  ASSERT_FALSE(logs);
  EXPECT_EQ(logs.error().message,
            "--env-from-logs needs --finding: the settings come from its logs");
}

TEST(PlanSettings, FindingWithoutCollectiveCannotBeReplayed) {
  FindingRef f;
  f.finding_id = 4;
  f.category = "rank_crash_oom";
  auto s = resolve_settings(ReplayOptions{}, &f);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().message, "finding 4 (rank_crash_oom) names no collective to replay");
}

TEST(PlanSettings, BytesFollowNcclTestsSizeConvention) {
  ReplayOptions o;
  o.op = "allgather";
  o.bytes = 466747392;
  o.dtype = "bfloat16";
  auto s = resolve_settings(o, nullptr);
  ASSERT_TRUE(s);
  ASSERT_TRUE(set_nranks(*s, 8));
  EXPECT_EQ(s->plan.count, 29171712);
  EXPECT_EQ(s->plan.nccl_tests_size_bytes(), 466747392);
  o.op = "allreduce";
  o.bytes = 4096;
  o.dtype = "float32";
  auto ar = resolve_settings(o, nullptr);
  ASSERT_TRUE(ar);
  ASSERT_TRUE(set_nranks(*ar, 8));
  EXPECT_EQ(ar->plan.count, 1024);
  o.op = "reducescatter";
  o.bytes = 8;
  auto tiny = resolve_settings(o, nullptr);
  ASSERT_TRUE(tiny);
  EXPECT_FALSE(set_nranks(*tiny, 8));
}

TEST(PlanSettings, RootMustBeARankAndSendRecvNeedsTwo) {
  ReplayOptions o;
  o.op = "broadcast";
  o.count = 16;
  o.root = 8;
  auto s = resolve_settings(o, nullptr);
  ASSERT_TRUE(s);
  auto st = set_nranks(*s, 8);
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().message, "--root 8 is not one of the 8 ranks");
  o.op = "sendrecv";
  o.root = -1;
  auto sr = resolve_settings(o, nullptr);
  ASSERT_TRUE(sr);
  EXPECT_FALSE(set_nranks(*sr, 1));
  EXPECT_TRUE(set_nranks(*sr, 2));
}

TEST(PlanSettings, EnvAssignments) {
  auto kv = parse_env_assignment("NCCL_ALGO=Ring");
  ASSERT_TRUE(kv);
  EXPECT_EQ(kv->first, "NCCL_ALGO");
  EXPECT_EQ(kv->second, "Ring");
  auto empty_value = parse_env_assignment("NCCL_IB_HCA=");
  ASSERT_TRUE(empty_value);
  EXPECT_EQ(empty_value->second, "");
  auto with_eq = parse_env_assignment("NCCL_TOPO_FILE=/a=b.xml");
  ASSERT_TRUE(with_eq);
  EXPECT_EQ(with_eq->second, "/a=b.xml");
  EXPECT_FALSE(parse_env_assignment("NCCL_ALGO"));
  EXPECT_FALSE(parse_env_assignment("=Ring"));
  EXPECT_FALSE(parse_env_assignment("1NCCL=x"));
  EXPECT_FALSE(parse_env_assignment("NCCL ALGO=x"));
}

}  // namespace
}  // namespace ncclpm::plan
