// tests/recognize/parsers_progress_test.cc
//
// Training progress as each framework prints it (src/recognize/parsers_progress.cc):
// tqdm bars with and without a description, rate in s/it, it/s or examples/s,
// Lightning's postfix, the Trainer's metrics dicts, Megatron-LM's iteration
// lines; and the lines that only look like them.
#include <gtest/gtest.h>
#include <re2/re2.h>

#include <cmath>
#include <cstdlib>
#include <random>

#include "ncclpm/recognize/parsers.h"
#include "ncclpm/util/text.h"

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

// The readers stand for regular expressions (each reader's comment gives
// its own): here are those expressions, run the slow way, as the reference.
std::optional<TrainingProgress> by_expressions(const std::string& body) {
  static const RE2 bar(
      R"re(^\s*(?:(.*?):?\s+)?(\d{1,3})%\|[^|]*\|\s*(\d+)/(\d+)\s*\[[0-9:]*(?:<[0-9:?]*)?(?:,\s*([0-9.]+|\?)\s*(s/it|it/s|[A-Za-z]+/s))?)re");
  static const RE2 epoch(R"re('epoch': ([0-9.]+)[,}])re");
  static const RE2 dict_loss(R"re(\{'(?:train_)?loss': ([0-9.eE+-]+)[,}])re");
  static const RE2 iteration(R"re(\biteration\s+(\d+)/\s*(\d+)\s*\|)re");
  static const RE2 elapsed(R"re(elapsed time per iteration \(ms\): ([0-9.]+))re");
  static const RE2 lm_loss(R"re(\blm loss: ([0-9.eE+-]+))re");
  auto number = [](const std::string& s) { return std::strtod(s.c_str(), nullptr); };
  TrainingProgress p;
  std::string a, b, c, d, e, f;
  if (body.find("%|") != std::string::npos) {
    if (!RE2::PartialMatch(body, bar, &a, &b, &c, &d, &e, &f)) return std::nullopt;
    p.source = "tqdm";
    p.label = a;
    p.step = std::atoll(c.c_str());
    p.total = std::atoll(d.c_str());
    if (!e.empty() && number(e) > 0) p.seconds_per_step = f == "s/it" ? number(e) : 1.0 / number(e);
    if (!f.empty()) p.unit = f == "s/it" || f == "it/s" ? "it" : f.substr(0, f.size() - 2);
  } else if (body.find("'epoch': ") != std::string::npos) {
    if (body.find("{'") == std::string::npos || !RE2::PartialMatch(body, epoch, &a)) return std::nullopt;
    p.source = "hf_metrics";
    p.epoch = number(a);
    if (RE2::PartialMatch(body, dict_loss, &b)) p.loss = number(b);
  } else if (body.find("iteration") != std::string::npos) {
    if (!RE2::PartialMatch(body, iteration, &a, &b)) return std::nullopt;
    p.source = "megatron";
    p.step = std::atoll(a.c_str());
    p.total = std::atoll(b.c_str());
    if (RE2::PartialMatch(body, elapsed, &c)) p.seconds_per_step = number(c) / 1000;
    if (RE2::PartialMatch(body, lm_loss, &d)) p.loss = number(d);
  } else {
    return std::nullopt;
  }
  return p;
}

std::string describe(const std::optional<TrainingProgress>& p) {
  if (!p) return "none";
  auto num = [](double v) { return std::isnan(v) ? std::string("nan") : std::to_string(v); };
  return p->source + " [" + p->label + "] [" + p->unit + "] " + std::to_string(p->step) + "/" +
         std::to_string(p->total) + " " + num(p->seconds_per_step) + " " + num(p->epoch) + " " + num(p->loss);
}

// Real shapes, then each shape cut, doubled and garbled at random: the
// readers and the expressions must agree on every one that is UTF-8. Where
// a byte is not (a block character cut in two), RE2's `.` and `[^|]` match
// nothing and the bar was lost; the readers take bytes as they are.
TEST(ProgressParse, ReadersAgreeWithTheirExpressions) {
  const std::vector<std::string> shapes = {
      " 45%|████▌     | 450/1000 [10:00<12:13,  1.33s/it]",
      "Epoch 3:  12%|█▏        | 120/1000 [01:00<07:20,  2.00it/s, loss=0.512, v_num=7]",
      "Map:  47%|███▊ | 3169000/6811963 [30:11<38:27, 1578.58 examples/s]",
      "  0%|          | 0/1000 [00:00<?, ?it/s]",
      "Training: 100%|##########| 500/500 [05:00<00:00, 1.67it/s]",
      "Epoch 0 :  5%|x| 5/9 [00:01<00:02,3.1 ba/s]",
      "a: b 12%| 1/2 [ 9%|| 3/4 [",
      "  7%|a| 1/2 [00:01, 3s/it] b: 8%|c| 3/4 [",
      "line\nbreak: 5%|x| 1/2 [",
      "{'loss': 1.2345, 'grad_norm': 0.87, 'learning_rate': 1.9e-05, 'epoch': 0.42}",
      "{'train_runtime': 745.13, 'train_loss': 1.58e+00, 'epoch': 1.0}",
      "x{'loss': +1, 'epoch': 3.}{'loss': 2}",
      " [2025-03-01 10:11:12] iteration      100/  500000 | consumed samples:        25600 | elapsed time per "
      "iteration (ms): 1234.5 | learning rate: 3.000E-04 | global batch size:   256 | lm loss: 2.104E+00 |",
      "xiteration 5/6 | iteration 7/ 8| elapsed time per iteration (ms): . | lm loss: -e |",
      " iteration 1/2 | elapsed time per iteration (ms): 1e999 | lm loss: +1.5e-3 |",
      "{'loss': 1e, 'epoch': 1.5.2}{'train_loss': --1, 'epoch': 2}",
      "  3%|x| 1/2 [00:01, 1e400it/s]",
  };
  const std::string alphabet = "0123456789%|/[]:<>,.? \t\n\r{}'-+eEsitba_\xff\xe2\x96\x88";
  std::mt19937 random(20261127);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(random); };
  size_t checked = 0, read = 0;
  for (const std::string& shape : shapes) {
    for (int trial = 0; trial < 10000; ++trial) {
      std::string s = shape;
      for (int edits = 1 + static_cast<int>(pick(4)); edits > 0; --edits) {
        size_t at = pick(s.size() + 1);
        switch (pick(4)) {
          case 0: s.insert(at, 1, alphabet[pick(alphabet.size())]); break;
          case 1: if (at < s.size()) s.erase(at, 1); break;
          case 2: if (at < s.size()) s[at] = alphabet[pick(alphabet.size())]; break;
          default: s = s.substr(0, at) + shape.substr(pick(shape.size())); break;
        }
      }
      if (!util::is_valid_utf8(s)) continue;
      auto expected = by_expressions(s);
      ASSERT_EQ(describe(parse_training_progress(s)), describe(expected)) << "line: " << s;
      ++checked;
      read += expected.has_value();
    }
  }
  EXPECT_GT(checked, shapes.size() * 5000) << "the garbling leaves too few UTF-8 lines";
  EXPECT_GT(read, checked / 4) << "the garbling leaves too few lines that read";

  auto cut_block = parse_training_progress(" 45%|\xe2\x96\xe2\x96\x88   | 450/1000 [10:00<12:13,  1.33s/it]");
  ASSERT_TRUE(cut_block) << "a bar with a broken block character still reads";
  EXPECT_EQ(cut_block->step, 450);
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
