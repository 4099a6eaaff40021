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

}  // namespace
}  // namespace ncclpm::recognize
