// tests/recognize/parsers_progress_test.cc
//
// Training progress as each framework prints it (src/recognize/parsers_progress.cc):
// tqdm bars with and without a description, rate in s/it, it/s or examples/s,
// Lightning's postfix, the Trainer's metrics dicts, Megatron-LM's iteration
// lines; and the lines that only look like them.
#include <gtest/gtest.h>

#include "ncclpm/recognize/parsers.h"

namespace ncclpm::recognize {
namespace {

TEST(ProgressParse, TqdmBarsInTheirCommonShapes) {
  auto hf = parse_training_progress(" 45%|████▌     | 450/1000 [10:00<12:13,  1.33s/it]");
  ASSERT_TRUE(hf);
  EXPECT_EQ(hf->source, "tqdm");
  EXPECT_EQ(hf->label, "");
  EXPECT_EQ(hf->step, 450);
  EXPECT_EQ(hf->total, 1000);
  EXPECT_DOUBLE_EQ(hf->seconds_per_step, 1.33);
  EXPECT_EQ(hf->unit, "it");

  auto lightning = parse_training_progress(
      "Epoch 3:  12%|█▏        | 120/1000 [01:00<07:20,  2.00it/s, loss=0.512, v_num=7]");
  ASSERT_TRUE(lightning);
  EXPECT_EQ(lightning->label, "Epoch 3");
  EXPECT_EQ(lightning->step, 120);
  EXPECT_DOUBLE_EQ(lightning->seconds_per_step, 0.5);

  auto map = parse_training_progress(
      "Running tokenizer on dataset:  47%|███████████████▊                  | 3169000/6811963 [30:11<38:27, "
      "1578.58 examples/s]");
  ASSERT_TRUE(map);
  EXPECT_EQ(map->label, "Running tokenizer on dataset");
  EXPECT_EQ(map->total, 6811963);
  EXPECT_NEAR(map->seconds_per_step, 1 / 1578.58, 1e-9);
  EXPECT_EQ(map->unit, "examples");

  auto first = parse_training_progress("  0%|          | 0/1000 [00:00<?, ?it/s]");
  ASSERT_TRUE(first);
  EXPECT_EQ(first->step, 0);
  EXPECT_EQ(first->seconds_per_step, -1) << "no rate before the first step";
  EXPECT_EQ(first->unit, "it");

  auto ascii = parse_training_progress("Training: 100%|##########| 500/500 [05:00<00:00, 1.67it/s]");
  ASSERT_TRUE(ascii);
  EXPECT_EQ(ascii->label, "Training");
  EXPECT_EQ(ascii->step, 500);
}

TEST(ProgressParse, TrainerMetricsAndMegatronIterations) {
  auto dict = parse_training_progress(
      "{'loss': 1.2345, 'grad_norm': 0.87, 'learning_rate': 1.9e-05, 'epoch': 0.42}");
  ASSERT_TRUE(dict);
  EXPECT_EQ(dict->source, "hf_metrics");
  EXPECT_DOUBLE_EQ(dict->epoch, 0.42);
  EXPECT_DOUBLE_EQ(dict->loss, 1.2345);
  EXPECT_EQ(dict->step, -1);

  auto megatron = parse_training_progress(
      " [2025-03-01 10:11:12] iteration      100/  500000 | consumed samples:        25600 | elapsed time per "
      "iteration (ms): 1234.5 | learning rate: 3.000E-04 | global batch size:   256 | lm loss: 2.104E+00 |");
  ASSERT_TRUE(megatron);
  EXPECT_EQ(megatron->source, "megatron");
  EXPECT_EQ(megatron->step, 100);
  EXPECT_EQ(megatron->total, 500000);
  EXPECT_DOUBLE_EQ(megatron->seconds_per_step, 1.2345);
  EXPECT_DOUBLE_EQ(megatron->loss, 2.104);
}

TEST(ProgressParse, LinesThatOnlyLookLikeProgress) {
  EXPECT_FALSE(parse_training_progress("Saving model checkpoint to /ckpt/checkpoint-500"));
  EXPECT_FALSE(parse_training_progress("loss went up 45%| of the time"));
  EXPECT_FALSE(parse_training_progress("{'epoch': 'not a number'}"));
  EXPECT_FALSE(parse_training_progress("no iteration here | at all"));
  EXPECT_FALSE(parse_training_progress(""));
}

// megatron/core/timers.py prints its report in three shapes, one per
// --timing-log-option; the lines are given here as the logger writes them.
TEST(RankTimersParse, EachTimingLogOptionReadsItsLines) {
  EXPECT_EQ(parse_rank_timers_header("times across ranks (ms):"), "all");
  EXPECT_EQ(parse_rank_timers_header("(min, max) time across ranks (ms):"), "minmax");
  EXPECT_EQ(parse_rank_timers_header("max time across ranks (ms):"), "max");
  EXPECT_EQ(parse_rank_timers_header("[2024-05-01 10:00:00] times across ranks (ms):"), "all");
  EXPECT_FALSE(parse_rank_timers_header("times across ranks (ms): 12"));
  EXPECT_FALSE(parse_rank_timers_header("elapsed time per iteration (ms): 1000.0"));

  RankTimers all{"all", {}};
  std::string timer;
  EXPECT_TRUE(parse_rank_timer_line("  forward-compute:", timer, all));
  EXPECT_EQ(timer, "forward-compute");
  EXPECT_TRUE(parse_rank_timer_line("     rank  0: 1012.34", timer, all));
  EXPECT_TRUE(parse_rank_timer_line("     rank 12: 1300.00", timer, all));
  EXPECT_TRUE(parse_rank_timer_line("  backward-compute:", timer, all));
  EXPECT_TRUE(parse_rank_timer_line("     rank  0: 2000.5", timer, all));
  ASSERT_EQ(all.values.size(), 3u);
  EXPECT_EQ(all.values[1].timer, "forward-compute");
  EXPECT_EQ(all.values[1].rank, 12);
  EXPECT_DOUBLE_EQ(all.values[1].ms, 1300.0);
  EXPECT_EQ(all.values[2].timer, "backward-compute");
  EXPECT_FALSE(parse_rank_timer_line(" iteration      100/    1000 | consumed samples: 6400 |", timer, all));

  RankTimers minmax{"minmax", {}};
  EXPECT_TRUE(parse_rank_timer_line(
      "    forward-backward ...............................: (1234.56, 2345.67)", timer, minmax));
  EXPECT_TRUE(parse_rank_timer_line(
      "    forward-backward-send-forward-backward-recv ....: (0.01, 0.05)", timer, minmax));
  ASSERT_EQ(minmax.values.size(), 2u);
  EXPECT_EQ(minmax.values[0].timer, "forward-backward");
  EXPECT_DOUBLE_EQ(minmax.values[0].min_ms, 1234.56);
  EXPECT_DOUBLE_EQ(minmax.values[0].max_ms, 2345.67);
  EXPECT_EQ(minmax.values[0].rank, -1);
  EXPECT_FALSE(parse_rank_timer_line("     rank  0: 1012.34", timer, minmax)) << "not a minmax line";

  RankTimers max{"max", {}};
  EXPECT_TRUE(parse_rank_timer_line("    optimizer ......................................: 45.60", timer, max));
  ASSERT_EQ(max.values.size(), 1u);
  EXPECT_DOUBLE_EQ(max.values[0].ms, 45.6);
}

}  // namespace
}  // namespace ncclpm::recognize
