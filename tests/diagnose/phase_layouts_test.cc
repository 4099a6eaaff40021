// tests/diagnose/phase_layouts_test.cc
//
// Only the main process says what the job was doing: rank 0 logs a checkpoint
// save, an evaluation or a generation, and every other rank times out in the
// collective rank 0 never reached. Diagnosed as the phase with rank 0 as
// culprit, for each framework's wording (fixtures/phase-markers/markers.tsv),
// in the three layouts logs come in (a torchrun console, a file per rank, a
// Slurm output with `srun -l` labels), at 8 and at 1,024 ranks.
#include <gtest/gtest.h>

#include "support/test_support.h"

namespace ncclpm {
namespace {

struct Marker {
  const char* framework;
  const char* line;
  const char* category;
};

const Marker kMarkers[] = {
    {"transformers", "[INFO|trainer.py:3639] 2025-07-09 16:35:30,554 >> Saving model checkpoint to out/checkpoint-500",
     "save_phase_stall"},
    {"transformers", "***** Running Evaluation *****", "eval_generate_stall"},
    {"accelerate", "07/09/2025 16:35:30 - INFO - accelerate.accelerator - Saving current state to out/checkpoint_3",
     "save_phase_stall"},
    {"deepspeed",
     "[2025-07-09 16:35:30,554] [INFO] [logging.py:123:log_dist] [Rank 0] [Torch] Checkpoint global_step500 is about "
     "to be saved!",
     "save_phase_stall"},
    {"lightning", "Validation DataLoader 0:  40%|████      | 40/100 [00:05<00:07,  7.80it/s]", "eval_generate_stall"},
    {"lightning", "Predicting DataLoader 0:  12%|█▏        | 6/50 [00:03<00:22,  1.95it/s]", "eval_generate_stall"},
};

enum class Layout { kConsole, kPerRank, kSlurm };

// c10's line without torchrun's "[rankN]:" tee prefix (srun starts the ranks itself).
std::string bare(const std::string& line) { return line.substr(line.find("]:") + 2); }

// Rank 0 prints the marker and goes quiet; ranks 1..n-1 time out in seq 811.
std::map<std::string, std::string> job(const Marker& m, Layout layout, int ranks) {
  std::map<std::string, std::string> files;
  for (int r = 0; r < ranks; ++r) {
    std::string own = r == 0 ? std::string(m.line) + "\n" : testing::watchdog_line(r, 811);
    switch (layout) {
      case Layout::kConsole:
        files["console.log"] += r == 0 ? "[rank0]:" + own : own;
        break;
      case Layout::kPerRank:
        files["rank" + std::to_string(r) + ".log"] = own;
        break;
      case Layout::kSlurm:
        files["slurm-88231.out"] += std::to_string(r) + ": " + (r == 0 ? own : bare(own));
        break;
    }
  }
  return files;
}

TEST(PhaseOfTheMainProcess, EachFrameworksMarkerInEachLayoutAtEightAndAThousandRanks) {
  const std::pair<Layout, const char*> layouts[] = {
      {Layout::kConsole, "torchrun console"}, {Layout::kPerRank, "file per rank"}, {Layout::kSlurm, "srun -l"}};
  for (int ranks : {8, 1024}) {
    for (const auto& [layout, layout_name] : layouts) {
      for (const Marker& m : kMarkers) {
        SCOPED_TRACE(std::string(m.framework) + " '" + m.line + "', " + layout_name + ", " + std::to_string(ranks) +
                     " ranks");
        diagnose::Diagnosis d = testing::diagnose_files(job(m, layout, ranks));
        ASSERT_TRUE(d.has_root_cause());
        const diagnose::Finding& top = d.findings.front();
        EXPECT_EQ(top.category, m.category) << top.rule << ": " << top.summary;
        EXPECT_EQ(top.culprit_ranks, std::vector<int>{0}) << top.summary;
        // Each rank's phase when the job hung.
        ASSERT_EQ(d.ranks.size(), static_cast<size_t>(ranks));
        // (A Lightning bar adds how far it got: "..., at step 40/100 of 'Validation DataLoader 0'".)
        EXPECT_TRUE(d.ranks.front().phase.starts_with(std::string(m.category) == "save_phase_stall"
                                                          ? "saving a checkpoint"
                                                          : "evaluating or generating"))
            << d.ranks.front().phase;
        EXPECT_EQ(d.ranks.back().phase, "waiting in ALLREDUCE seq 811");
      }
    }
  }
}

TEST(PhaseOfTheMainProcess, DiagnoseStoresEachRanksPhaseWithTheFindings) {
  testing::TempDir t;
  for (const auto& [name, text] : job(kMarkers[0], Layout::kConsole, 8)) testing::write_file(t / "logs" / name, text);
  std::string db = (t / "j.db").string();
  ASSERT_EQ(testing::run_ncclpm({"ingest", (t / "logs").string(), "--db", db}).exit_code, 0);
  auto r = testing::run_ncclpm({"diagnose", "--db", db});
  EXPECT_NE(r.out.find("Ranks when the job hung (2025-07-09 16:55:37):\n  rank 0: saving a checkpoint\n"
                       "  rank 1-7: waiting in ALLREDUCE seq 811\n"),
            std::string::npos)
      << r.out;
  auto q = testing::run_ncclpm({"query", "--db", db, "--format", "csv",
                                "SELECT rank, role, phase FROM rank_states ORDER BY rank LIMIT 2"});
  EXPECT_NE(q.out.find("0,culprit,saving a checkpoint"), std::string::npos) << q.out << q.err;
  EXPECT_NE(q.out.find("1,victim,waiting in ALLREDUCE seq 811"), std::string::npos) << q.out << q.err;
}

}  // namespace
}  // namespace ncclpm
