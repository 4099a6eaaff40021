// tests/plan/finding_ref_test.cc
#include "ncclpm/plan/finding_ref.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

// Finding 1 of fixtures/incidents/save-phase-stall-torchrun-logdir, shortened.
const char* kSaveStall =
    R"({"id": 1, "rule": "checkpoint-save-stall", "category": "save_phase_stall",
  "title": "A checkpoint save stalled the other ranks' collective", "root_cause": true,
  "culprit_ranks": [0], "culprit_hosts": ["hgx-017"],
  "collective": {"pg": "default", "seq": 59709, "op": "_ALLGATHER_BASE", "numel_in": 29171712,
                 "numel_out": 233373696, "dtype": null, "bytes": null, "timeout_ms": 1800000},
  "replay": {"op": "allgather", "count": 29171712, "dtype": "bfloat16",
             "dtype_note": "bfloat16 assumed: the logs do not name the dtype", "redop": "sum", "nranks": 8,
             "bytes_per_rank": 466747392, "env": {"NCCL_IB_HCA": "mlx5", "NCCL_SOCKET_IFNAME": "eth0"},
             "command": "ncclpm replay --finding 1"}})";

TEST(PlanFindingRef, ReadsThePlanAndWhatTheVerdictNeeds) {
  auto f = parse_finding_json(kSaveStall);
  ASSERT_TRUE(f) << f.error().message;
  EXPECT_EQ(f->finding_id, 1);
  EXPECT_EQ(f->category, "save_phase_stall");
  EXPECT_EQ(f->rule, "checkpoint-save-stall");
  EXPECT_TRUE(f->root_cause);
  EXPECT_EQ(f->culprit_ranks, std::vector<int>{0});
  EXPECT_EQ(f->culprit_hosts, std::vector<std::string>{"hgx-017"});
  EXPECT_EQ(f->timeout_ms, 1800000);
  ASSERT_TRUE(f->plan);
  EXPECT_EQ(f->plan->op, Op::kAllGather);
  EXPECT_EQ(f->plan->count, 29171712);
  EXPECT_EQ(f->plan->datatype, 9);
  EXPECT_EQ(f->plan->nranks, 8);
  EXPECT_EQ(f->plan->root, 0);
  EXPECT_EQ(f->plan->timeout_ms, 1800000);
  EXPECT_EQ(f->plan->env.at("NCCL_SOCKET_IFNAME"), "eth0");
  EXPECT_FALSE(f->plan->dtype_note.empty());
  EXPECT_EQ(count_source(*f), "NumelIn");
}

TEST(PlanFindingRef, FindingWithoutCollectiveHasNoPlan) {
  auto f = parse_finding_json(R"({"id": 3, "rule": "cuda-oom", "category": "rank_crash_oom",
                                   "collective": null, "replay": null})");
  ASSERT_TRUE(f);
  EXPECT_FALSE(f->plan);
  EXPECT_EQ(f->timeout_ms, -1);
}

TEST(PlanFindingRef, CountSourceNamesNumelOutForReduceScatter) {
  auto f = parse_finding_json(R"({"id": 2, "category": "collective_timeout",
      "collective": {"op": "_REDUCE_SCATTER_BASE", "numel_in": 8000, "numel_out": 1000, "timeout_ms": 600000},
      "replay": {"op": "reducescatter", "count": 1000, "dtype": "float32", "redop": "avg", "nranks": 8}})");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->plan->redop, 4);
  EXPECT_EQ(count_source(*f), "NumelOut");
}

TEST(PlanFindingRef, RejectsBrokenJsonAndUnknownNames) {
  EXPECT_FALSE(parse_finding_json("{not json"));
  auto bad_op =
      parse_finding_json(R"({"replay": {"op": "gatherv", "count": 4, "dtype": "float32"}})");
  ASSERT_FALSE(bad_op);
  EXPECT_EQ(bad_op.error().message, "replay plan names an unknown op 'gatherv'");
  auto bad_type =
      parse_finding_json(R"({"replay": {"op": "allreduce", "count": 4, "dtype": "float128"}})");
  ASSERT_FALSE(bad_type);
  EXPECT_EQ(bad_type.error().message, "replay plan names an unknown dtype 'float128'");
}

}  // namespace
}  // namespace ncclpm::plan
