// tests/plan/replay_report_test.cc
//
// Text and JSON of a replay, fed a fake result: eight H100s on one host that
// ran the save-phase-stall allgather.
#include "ncclpm/plan/replay_report.h"

#include <gtest/gtest.h>

namespace ncclpm::plan {
namespace {

struct Fixture {
  FindingRef finding;
  ReplaySettings settings;
  ReplayResult result;
  ReplayContext context;

  Fixture() {
    finding.finding_id = 1;
    finding.job = "save-phase-stall-torchrun-logdir";
    finding.category = "save_phase_stall";
    finding.rule = "checkpoint-save-stall";
    finding.timeout_ms = 1800000;
    finding.numel_in = 29171712;
    CollectivePlan p;
    p.op = Op::kAllGather;
    p.count = 29171712;
    p.datatype = 9;
    p.nranks = 8;
    p.dtype_note = "bfloat16 assumed: the logs do not name the dtype";
    p.env = {{"NCCL_IB_HCA", "mlx5"}};
    finding.plan = p;
    ReplayOptions o;
    o.env_from_logs = true;
    o.check = true;
    settings = resolve_settings(o, &finding).value();
    EXPECT_TRUE(set_nranks(settings, 8));
    result.outcome = Outcome::kCompleted;
    result.nccl_version = "2.28.9";
    result.cuda_driver = "13.0";
    result.cuda_runtime = "13.0";
    result.warmup = 5;
    result.iters = 20;
    for (int r = 0; r < 8; ++r) {
      RankResult k;
      k.rank = r;
      k.host = "hgx-017";
      k.gpu = GpuInfo{r, "NVIDIA H100 80GB HBM3", "0000:1" + std::to_string(r) + ":00.0", 0};
      k.reported = true;
      k.outcome = Outcome::kCompleted;
      k.time_us = 2400 + 2.5 * r;  // average 2408.75
      k.wrong = 0;
      result.ranks.push_back(k);
    }
    summarize(result, settings.plan);
    context.settings = &settings;
    context.finding = &finding;
    context.gpus_per_process = 8;
  }
};

TEST(ReplayReport, SummarizeAveragesOverRanksAndAppliesTheBusFactor) {
  Fixture f;
  EXPECT_DOUBLE_EQ(f.result.time_us, 2408.75);
  EXPECT_DOUBLE_EQ(f.result.time_us_min, 2400);
  EXPECT_DOUBLE_EQ(f.result.time_us_max, 2417.5);
  EXPECT_NEAR(f.result.algbw_gbps, 466747392 / 2408.75 / 1e3, 1e-9);
  EXPECT_NEAR(f.result.busbw_gbps, f.result.algbw_gbps * 7 / 8, 1e-9);
  EXPECT_EQ(f.result.wrong, 0);
}

TEST(ReplayReport, TableHasNcclTestsColumns) {
  Fixture f;
  EXPECT_EQ(
      table_header(),
      "#       size         count       type   redop   root       time    algbw    busbw   #wrong\n"
      "#        (B)    (elements)                                 (us)   (GB/s)   (GB/s)         "
      "\n");
  EXPECT_EQ(table_row(f.settings.plan, &f.result, true),
            "   466747392      29171712   bfloat16    none     -1    2408.75   193.77   169.55     "
            "   0\n");
  EXPECT_EQ(table_row(f.settings.plan, &f.result, false),
            "   466747392      29171712   bfloat16    none     -1    2408.75   193.77   169.55     "
            " N/A\n");
  ReplayResult hung;
  hung.outcome = Outcome::kTimedOut;
  EXPECT_EQ(table_row(f.settings.plan, &hung, true),
            "   466747392      29171712   bfloat16    none     -1    timeout        -        -     "
            "   -\n");
}

TEST(ReplayReport, TextHasMetadataTableAndVerdict) {
  Fixture f;
  Verdict v{"completes in 2.4 ms at 170 GB/s busbw", true};
  std::string text = render_result_text(f.context, f.result, v);
  EXPECT_NE(
      text.find("# ncclpm replay: finding 1 (save_phase_stall, rule checkpoint-save-stall) of job "
                "save-phase-stall-torchrun-logdir\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# collective: allgather, 29171712 bfloat16 per rank (NumelIn), 8 ranks\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("# NCCL 2.28.9, CUDA driver 13.0, runtime 13.0\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("# environment: NCCL_IB_HCA=mlx5 (from the job's logs)\n"), std::string::npos)
      << text;
  EXPECT_NE(
      text.find(
          "#  rank   3  host hgx-017          GPU  3  NVIDIA H100 80GB HBM3    0000:13:00.0\n"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("# warm-up 5, iterations 20, deadline 120 s (the job's watchdog allowed 1800 "
                      "s), data check on\n"),
            std::string::npos)
      << text;
  EXPECT_TRUE(
      text.ends_with("verdict: completes in 2.4 ms at 170 GB/s busbw [confirms the finding]\n"))
      << text;
}

TEST(ReplayReport, TextNamesTheRanksThatDidNotComplete) {
  Fixture f;
  for (int r = 4; r < 8; ++r) {
    f.result.ranks[r].reported = false;
    f.result.ranks[r].host = "hgx-018";
  }
  f.result.outcome = Outcome::kTimedOut;
  f.result.failure = "no result from ranks 4-7";
  std::string text = render_result_text(f.context, f.result, Verdict{"does not complete", false});
  EXPECT_NE(text.find("# did not complete: ranks 4-7 on hgx-018\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# error: no result from ranks 4-7\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[refutes the finding]"), std::string::npos) << text;
}

TEST(ReplayReport, JsonCarriesPlanEnvironmentDevicesResultsAndVerdict) {
  Fixture f;
  std::string json = render_result_json(f.context, f.result, Verdict{"ok", std::nullopt}, 7);
  for (const char* key :
       {"\"schema\": \"ncclpm.replay/1\"", "\"replay_id\": 7", "\"finding_id\": 1",
        "\"op\": \"allgather\"", "\"count\": 29171712", "\"count_source\": \"NumelIn\"",
        "\"size_bytes\": 466747392", "\"NCCL_IB_HCA\": \"mlx5\"", "\"bus_id\": \"0000:17:00.0\"",
        "\"nccl_version\": \"2.28.9\"", "\"outcome\": \"completed\"", "\"busbw_gbps\": 169.55",
        "\"wrong\": 0", "\"confirms\": null", "\"exit_code\": 0",
        "\"nccl_tests_command\": \"NCCL_IB_HCA=mlx5 all_gather_perf -b 466747392 -e 466747392 -g 8 "
        "-d bfloat16 -w 5 -n 20 -c 1\""})
    EXPECT_NE(json.find(key), std::string::npos) << key << "\n" << json;
}

TEST(ReplayReport, DryRunShowsPlanAndNcclTestsCommand) {
  Fixture f;
  f.context.dry_run = true;
  std::string text = render_dry_run_text(f.context);
  for (const char* line :
       {"op           allgather\n", "count        29171712 per rank (NumelIn)\n",
        "dtype        bfloat16\n",
        "             bfloat16 assumed: the logs do not name the dtype; --dtype sets it\n",
        "ranks        8\n",
        "bytes        58,343,424 sent, 466,747,392 received per rank; nccl-tests size 466747392\n",
        "environment  NCCL_IB_HCA=mlx5 (from the job's logs)\n",
        "nccl-tests   NCCL_IB_HCA=mlx5 all_gather_perf -b 466747392 -e 466747392 -g 8 -d bfloat16 "
        "-w 5 -n 20 -c 1\n"})
    EXPECT_NE(text.find(line), std::string::npos) << line << "\n" << text;
  std::string json = render_dry_run_json(f.context);
  EXPECT_NE(json.find("\"schema\": \"ncclpm.replay-plan/1\""), std::string::npos) << json;
}

TEST(ReplayReport, DryRunUnderALauncherShowsOneGpuPerProcess) {
  Fixture f;
  f.context.launch.launcher = Launcher::kSlurm;
  f.context.launch.world_size = 16;
  f.context.launch.comm_id = "gpu-node07:29510";
  f.context.launch.comm_id_source = "first host of SLURM_STEP_NODELIST";
  f.context.gpus_per_process = 1;
  ASSERT_TRUE(set_nranks(f.settings, 16));
  std::string text = render_dry_run_text(f.context);
  EXPECT_NE(text.find("launch       srun: process 0 of 16, 1 GPU(s) each, bootstrap "
                      "NCCL_COMM_ID=gpu-node07:29510 "
                      "(first host of SLURM_STEP_NODELIST)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("ranks        16 (the job's collective had 8; per-rank sizes are kept)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("all_gather_perf -b 933494784 -e 933494784 -g 1 "), std::string::npos)
      << text;
}

}  // namespace
}  // namespace ncclpm::plan
