// tests/plan/collective_plan_test.cc
#include "ncclpm/plan/collective_plan.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

CollectivePlan make(Op op, int64_t count, int nranks, int dtype = 9) {
  CollectivePlan p;
  p.op = op;
  p.count = count;
  p.nranks = nranks;
  p.datatype = dtype;
  return p;
}

TEST(PlanSizes, AllGatherCountIsThePerRankInput) {
  CollectivePlan p = make(Op::kAllGather, 29171712, 8);
  EXPECT_EQ(p.send_count(), 29171712);
  EXPECT_EQ(p.recv_count(), 29171712 * 8);
  EXPECT_EQ(p.nccl_tests_size_bytes(), int64_t{29171712} * 8 * 2);
  EXPECT_EQ(p.bytes_per_rank(), 466747392);
}

TEST(PlanSizes, ReduceScatterCountIsThePerRankOutput) {
  CollectivePlan p = make(Op::kReduceScatter, 1000, 4, 7);
  EXPECT_EQ(p.send_count(), 4000);
  EXPECT_EQ(p.recv_count(), 1000);
  EXPECT_EQ(p.nccl_tests_size_bytes(), 16000);
}

TEST(PlanSizes, AllToAllCountIsPerPeer) {
  CollectivePlan p = make(Op::kAllToAll, 10, 4, 7);
  EXPECT_EQ(p.send_count(), 40);
  EXPECT_EQ(p.recv_count(), 40);
  EXPECT_EQ(p.nccl_tests_size_bytes(), 160);
}

TEST(PlanSizes, AllReduceBroadcastReduceSendRecvUseTheCountAsIs) {
  for (Op op : {Op::kAllReduce, Op::kBroadcast, Op::kReduce, Op::kSendRecv}) {
    CollectivePlan p = make(op, 1 << 20, 8, 7);
    EXPECT_EQ(p.send_count(), 1 << 20) << op_name(op);
    EXPECT_EQ(p.recv_count(), 1 << 20) << op_name(op);
    EXPECT_EQ(p.nccl_tests_size_bytes(), 4 << 20) << op_name(op);
  }
}

TEST(PlanSizes, FromWatchdogRecordTakesNumelInForAllGatherAndNumelOutForReduceScatter) {
  auto ag = plan_from_work("_ALLGATHER_BASE", 29171712, 233373696, 8);
  ASSERT_TRUE(ag);
  EXPECT_EQ(ag->op, Op::kAllGather);
  EXPECT_EQ(ag->count, 29171712);
  auto rs = plan_from_work("_REDUCE_SCATTER_BASE", 8000, 1000, 8);
  ASSERT_TRUE(rs);
  EXPECT_EQ(rs->op, Op::kReduceScatter);
  EXPECT_EQ(rs->count, 1000);
  auto a2a = plan_from_work("ALLTOALL_BASE", 800, 800, 8);
  ASSERT_TRUE(a2a);
  EXPECT_EQ(a2a->count, 100);
  auto barrier = plan_from_work("BARRIER", -1, -1, 8);
  ASSERT_TRUE(barrier);
  EXPECT_EQ(barrier->op, Op::kAllReduce);
  EXPECT_EQ(barrier->count, 1);
}

TEST(PlanBusFactor, MatchesNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllGather, 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduceScatter, 16), 15.0 / 16);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllToAll, 4), 3.0 / 4);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kBroadcast, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kReduce, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kSendRecv, 8), 1.0);
  EXPECT_DOUBLE_EQ(bus_factor(Op::kAllReduce, 1), 0.0);
}

TEST(PlanNcclTests, CommandUsesNcclTestsOwnTypeNamesAndIterations) {
  CollectivePlan p = make(Op::kAllGather, 29171712, 8);
  p.env["NCCL_IB_HCA"] = "mlx5";
  NcclTestsArgs a;
  a.warmup_iters = 3;
  a.iters = 50;
  a.check = false;
  EXPECT_EQ(p.nccl_tests_command(a),
            "NCCL_IB_HCA=mlx5 all_gather_perf -b 466747392 -e 466747392 -g 8 -d bfloat16 -w 3 -n "
            "50 -c 0");
  CollectivePlan half = make(Op::kReduce, 1024, 4, 6);
  half.root = 2;
  half.redop = 2;
  EXPECT_EQ(half.nccl_tests_command(NcclTestsArgs{}),
            "reduce_perf -b 2048 -e 2048 -g 4 -d half -w 5 -n 20 -c 1 -o max -r 2");
  EXPECT_STREQ(nccl_tests_datatype_name(7), "float");
  EXPECT_STREQ(nccl_tests_datatype_name(10), "f8e4m3");
}

TEST(PlanNcclTests, DefaultCommandUsesNcclTestsOwnDtypeNames) {
  CollectivePlan p = make(Op::kAllReduce, 1024, 4, 7);
  // nccl-tests knows "float", not "float32" (it would silently run float for an unknown name).
  EXPECT_EQ(p.nccl_tests_command(),
            "all_reduce_perf -b 4096 -e 4096 -g 4 -d float -w 5 -n 20 -c 1 -o sum");
}

}  // namespace
}  // namespace ncclpm::plan
