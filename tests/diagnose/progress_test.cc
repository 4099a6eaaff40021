// tests/diagnose/progress_test.cc
//
// Hangs explained by the ranks' own progress bars (src/diagnose/progress.cc):
// a rank that ran out of batches before the others (data_imbalance), a host
// whose ranks stepped 30% slower (straggler); and the bars that explain
// nothing (even totals, rates within noise).
#include <gtest/gtest.h>

#include <cstdio>

#include "ncclpm/util/text.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using testing::diagnose_files;
using testing::watchdog_line;

// A Lightning-style bar of epoch 1 at `step` of `total`, at `seconds` per step.
std::string bar(int step, int total, double seconds) {
  char buf[160];
  int percent = step * 100 / total;
  std::snprintf(buf, sizeof buf, "Epoch 1: %3d%%|%-10s| %d/%d [10:00<01:00, %.2fs/it, loss=0.412, v_num=3]\n",
                percent, std::string(static_cast<size_t>(percent / 10), '#').c_str(), step, total, seconds);
  return buf;
}

std::string init_line(const std::string& host, int rank, int nranks) {
  std::string r = std::to_string(rank), pid = std::to_string(3000 + rank), dev = std::to_string(rank % 4);
  return host + ":" + pid + ":" + pid + " [" + dev + "] NCCL INFO comm 0x7f" + r + " rank " + r + " nranks " +
         std::to_string(nranks) + " cudaDev " + dev + " nvmlDev " + dev + " busId 1b000 commId 0x51 - Init COMPLETE\n";
}

const diagnose::Finding* first_root(const diagnose::Diagnosis& d) {
  for (const auto& f : d.findings)
    if (f.root_cause) return &f;
  return nullptr;
}

TEST(ProgressBars, TheRankThatRanOutOfBatchesFirstIsTheCulpritInEitherLayout) {
  // Rank 3 had 998 batches and finished them; ranks 0-2 had 1000 and waited
  // in their 999th step's gradient all-reduce.
  std::map<std::string, std::string> per_rank, console;
  for (int r = 0; r < 4; ++r) {
    std::string text = init_line("gpu-7", r, 4) + (r == 3 ? bar(998, 998, 0.91) : bar(999, 1000, 0.90));
    if (r != 3) text += watchdog_line(r, 4051);
    per_rank["rank" + std::to_string(r) + ".log"] = text;
    // torchrun's console: every line behind "[rankN]:".
    for (std::string_view line : {std::string_view(text)}) {
      size_t at = 0;
      while (at < line.size()) {
        size_t end = line.find('\n', at);
        std::string one(line.substr(at, end - at));
        console["console.log"] += one.starts_with("[rank") ? one + "\n" : "[rank" + std::to_string(r) + "]:" + one + "\n";
        at = end + 1;
      }
    }
  }
  for (const auto& files : {per_rank, console}) {
    SCOPED_TRACE(files.begin()->first);
    diagnose::Diagnosis d = diagnose_files(files);
    const diagnose::Finding* top = first_root(d);
    ASSERT_NE(top, nullptr);
    EXPECT_EQ(top->rule, "uneven-batches-per-rank");
    EXPECT_EQ(top->category, "data_imbalance");
    EXPECT_EQ(top->culprit_ranks, std::vector<int>{3});
    EXPECT_EQ(top->culprit_hosts, std::vector<std::string>{"gpu-7"});
    EXPECT_NE(top->summary.find("had 998 steps in 'Epoch 1' and finished them"), std::string::npos) << top->summary;
  }
}

TEST(ProgressBars, EvenTotalsOrATotalNobodyFinishedIsNoImbalance) {
  std::map<std::string, std::string> even, unfinished;
  for (int r = 0; r < 4; ++r) {
    even["rank" + std::to_string(r) + ".log"] = init_line("gpu-7", r, 4) + bar(999, 1000, 0.9) + watchdog_line(r, 9);
    // Totals differ, but the short rank still had steps left: no one ran out.
    unfinished["rank" + std::to_string(r) + ".log"] =
        init_line("gpu-7", r, 4) + (r == 3 ? bar(500, 998, 0.9) : bar(500, 1000, 0.9)) + watchdog_line(r, 9);
  }
  for (const auto& files : {even, unfinished}) {
    diagnose::Diagnosis d = diagnose_files(files);
    for (const auto& f : d.findings) EXPECT_NE(f.rule, "uneven-batches-per-rank") << f.summary;
  }
}

// Two hosts of four ranks; node-b's ranks step at `slow_seconds`, node-a's at
// 1.0 s. node-a's ranks timed out waiting; node-b's were still stepping.
std::map<std::string, std::string> two_hosts(double slow_seconds) {
  std::map<std::string, std::string> files;
  for (int r = 0; r < 8; ++r) {
    bool b = r >= 4;
    double seconds = b ? slow_seconds : 1.0;
    std::string text = init_line(b ? "node-b" : "node-a", r, 8) + bar(b ? 615 : 800, 1000, seconds);
    if (!b) text += watchdog_line(r, 12007);
    files["rank" + std::to_string(r) + ".log"] = text;
  }
  return files;
}

TEST(ProgressBars, AHostThirtyPercentSlowerIsTheStraggler) {
  diagnose::Diagnosis d = diagnose_files(two_hosts(1.30));
  const diagnose::Finding* top = first_root(d);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->rule, "slow-host-progress");
  EXPECT_EQ(top->category, "straggler");
  EXPECT_EQ(top->culprit_hosts, std::vector<std::string>{"node-b"});
  EXPECT_EQ(top->culprit_ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_NE(top->summary.find("The ranks on node-b (rank 4-7) stepped at 1.30 s per step, 30% slower than the "
                              "other ranks' 1.00 s"),
            std::string::npos)
      << top->summary;
}

TEST(ProgressBars, RatesWithinNoiseNameNoStraggler) {
  diagnose::Diagnosis d = diagnose_files(two_hosts(1.08));
  for (const auto& f : d.findings) EXPECT_NE(f.rule, "slow-host-progress") << f.summary;
}

// Megatron's iteration lines of rank 0 at these milliseconds per iteration,
// then every rank's watchdog timeout.
std::map<std::string, std::string> megatron_job(const std::vector<double>& ms_per_iteration) {
  std::string log = init_line("gpu-1", 0, 2) + init_line("gpu-1", 1, 2);
  for (size_t i = 0; i < ms_per_iteration.size(); ++i) {
    char line[256];
    std::snprintf(line, sizeof line,
                  "[rank0]: iteration %8zu/   10000 | consumed samples: %8zu | elapsed time per iteration (ms): "
                  "%.1f | learning rate: 3.000E-04 | lm loss: 6.512E+00 |\n",
                  (i + 1) * 10, (i + 1) * 640, ms_per_iteration[i]);
    log += line;
  }
  return {{"console.log", log + watchdog_line(0, 4242) + watchdog_line(1, 4242)}};
}

const diagnose::Finding* find_rule(const diagnose::Diagnosis& d, const std::string& rule) {
  for (const auto& f : d.findings)
    if (f.rule == rule) return &f;
  return nullptr;
}

TEST(StepTime, AJobThatSlowedDownBeforeItHungSaysWhenAndByHowMuch) {
  // Warm-up, a steady second per iteration, then from iteration 150 2.6 s.
  std::vector<double> ms = {4100, 1010, 990, 1000, 1020, 980, 1000, 1010, 990, 1000, 1000, 1010, 995, 1005};
  for (int i = 0; i < 8; ++i) ms.push_back(i == 3 ? 1900 : 2600);  // one line of the stretch less slow
  diagnose::Diagnosis d = diagnose_files(megatron_job(ms));
  const diagnose::Finding* f = find_rule(d, "step-time-slowdown");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->category, "straggler");
  EXPECT_FALSE(f->root_cause) << "a slowdown says what led up to the hang, not which rank hung it";
  EXPECT_TRUE(f->culprit_ranks.empty());
  EXPECT_NE(f->summary.find("Rank 0's 'iteration' slowed down from 1.00 s to 2.60 s per step (2.6x) from step 150"),
            std::string::npos)
      << f->summary;
  ASSERT_EQ(f->evidence.size(), 3u);
  EXPECT_NE(f->evidence[0].text.find("iteration      140/"), std::string::npos) << f->evidence[0].text;
  EXPECT_NE(f->evidence[1].text.find("iteration      150/"), std::string::npos) << f->evidence[1].text;
  EXPECT_NE(f->evidence[2].text.find("iteration      220/"), std::string::npos) << f->evidence[2].text;
}

TEST(StepTime, ASteadyPaceWithOnePauseOrTooFewLinesIsNoSlowdown) {
  std::vector<double> steady = {3000, 1000, 1010, 990, 1000, 1020, 980, 1000, 1010, 990, 1000, 1000, 1010};
  std::vector<double> pause = steady;
  pause.insert(pause.end(), {1000, 5200, 1000, 1010, 990});  // an evaluation folded into one line
  std::vector<double> short_run = {1000, 1000, 1000, 1000, 3000, 3000, 3000};
  for (const auto& ms : {steady, pause, short_run}) {
    diagnose::Diagnosis d = diagnose_files(megatron_job(ms));
    EXPECT_EQ(find_rule(d, "step-time-slowdown"), nullptr) << ms.size() << " lines";
  }
}

// Megatron's last report of every rank's times (--timing-log-option all),
// printed by the last rank: `slow_ms` for the ranks of gpu-b, 1000 ms for gpu-a's.
std::map<std::string, std::string> megatron_timers_job(double slow_ms) {
  std::map<std::string, std::string> files;
  std::string report = "[rank7]: times across ranks (ms):\n";
  for (const char* timer : {"forward-compute", "all-grads-sync"}) {
    report += std::string("[rank7]:   ") + timer + ":\n";
    for (int r = 0; r < 8; ++r) {
      bool slow_host = r >= 4, compute = std::string(timer) == "forward-compute";
      // The fast ranks wait for the slow ones in the gradient sync.
      double ms = compute ? (slow_host ? slow_ms : 1000.0) : (slow_host ? 20.0 : 20.0 + slow_ms - 1000.0);
      char line[96];
      std::snprintf(line, sizeof line, "[rank7]:      rank %2d: %.2f\n", r, ms);
      report += line;
    }
  }
  for (int r = 0; r < 8; ++r) {
    std::string text = init_line(r < 4 ? "gpu-a" : "gpu-b", r, 8);
    for (std::string_view l : util::split(text, '\n'))
      if (!l.empty()) files["console.log"] += "[rank" + std::to_string(r) + "]:" + std::string(l) + "\n";
  }
  files["console.log"] += report;
  for (int r = 0; r < 4; ++r) files["console.log"] += watchdog_line(r, 777);
  return files;
}

TEST(RankTimers, AHostWhoseComputeTimersAreThirtyPercentSlowerIsTheStraggler) {
  diagnose::Diagnosis d = diagnose_files(megatron_timers_job(1300.0));
  const diagnose::Finding* top = first_root(d);
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(top->rule, "slow-host-progress");
  EXPECT_EQ(top->category, "straggler");
  EXPECT_EQ(top->culprit_hosts, std::vector<std::string>{"gpu-b"});
  EXPECT_EQ(top->culprit_ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_NE(top->summary.find("The ranks on gpu-b (rank 4-7) took 1300.00 ms, 30% slower than the other ranks' "
                              "1000.00 ms in Megatron's forward-compute timer"),
            std::string::npos)
      << top->summary;
}

TEST(RankTimers, EvenComputeTimersNameNoStraggler) {
  diagnose::Diagnosis d = diagnose_files(megatron_timers_job(1050.0));
  for (const auto& f : d.findings) EXPECT_NE(f.rule, "slow-host-progress") << f.summary;
}

}  // namespace
}  // namespace ncclpm
