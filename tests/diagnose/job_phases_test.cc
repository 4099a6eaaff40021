// tests/diagnose/job_phases_test.cc
//
// What the whole job was doing when a collective began to hang: the main
// process's phase markers (rules/phases/markers.toml) laid out in time.
#include <gtest/gtest.h>

#include "diagnose/job_phases.h"
#include "support/test_support.h"

namespace ncclpm {
namespace {

using diagnose::JobPhase;
using diagnose::MarkerLine;

rules::PhaseMarker marker(const char* phase, const char* edge) { return {phase, edge, {}, {}, "markers.toml", 1}; }

TEST(JobPhases, BeginsOpenEndsReturnToTrainingAndAStrayEndSaysNothing) {
  const rules::PhaseMarker train = marker("training", "begin"), eval = marker("evaluation", "begin"),
                           eval_end = marker("evaluation", "end"), save = marker("checkpoint save", "begin"),
                           save_end = marker("checkpoint save", "end");
  auto at = [](int64_t s) { return diagnose::Evidence{"c.log", s, "line", 0, "", s * 1000000}; };
  std::vector<MarkerLine> lines = {{&train, at(100)},    {&train, at(110)},    {&eval, at(200)},
                                   {&eval_end, at(220)}, {&save, at(300)},     {&save_end, at(310)},
                                   {&eval_end, at(400)}, {&save, at(500)}};
  std::vector<JobPhase> phases = diagnose::lay_out_phases(lines);
  std::vector<std::tuple<std::string, int64_t, int64_t>> got;
  for (const JobPhase& p : phases) got.emplace_back(p.phase, p.from_us / 1000000, p.to_us / 1000000);
  std::vector<std::tuple<std::string, int64_t, int64_t>> want = {
      {"training", 100, 200},        {"evaluation", 200, 220}, {"training", 220, 300},
      {"checkpoint save", 300, 310}, {"training", 310, 500},   {"checkpoint save", 500, 0}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(phases.front().marker.line, 100);  // a second step line of an open phase starts nothing

  EXPECT_EQ(diagnose::phase_at(phases, 250 * 1000000LL)->phase, "training");
  EXPECT_EQ(diagnose::phase_at(phases, 205 * 1000000LL)->phase, "evaluation");
  EXPECT_EQ(diagnose::phase_at(phases, 197 * 1000000LL)->phase, "evaluation");  // its marker came 3 s after
  EXPECT_EQ(diagnose::phase_at(phases, 190 * 1000000LL)->phase, "training");
  EXPECT_EQ(diagnose::phase_at(phases, 9000 * 1000000LL)->phase, "checkpoint save");  // open to the end
  EXPECT_FALSE(diagnose::phase_at(phases, 50 * 1000000LL));  // before any marker
  EXPECT_FALSE(diagnose::phase_at(phases, 0));               // no time: no phase
}

// Transformers says the weights are saved and DeepSpeed's engine starts
// saving its own state in the same second: one save, not a training step of
// no length between two.
TEST(JobPhases, APhaseOfNoLengthIsDroppedAndThePhaseBeforeItGoesOn) {
  const rules::PhaseMarker train = marker("training", "begin"), save = marker("checkpoint save", "begin"),
                           save_end = marker("checkpoint save", "end");
  auto at = [](int64_t s) { return diagnose::Evidence{"c.log", s, "line", 0, "", s * 1000000}; };
  std::vector<JobPhase> phases = diagnose::lay_out_phases(
      {{&train, at(100)}, {&save, at(300)}, {&save_end, at(310)}, {&save, at(310)}, {&save_end, at(320)}});
  std::vector<std::tuple<std::string, int64_t, int64_t>> got;
  for (const JobPhase& p : phases) got.emplace_back(p.phase, p.from_us / 1000000, p.to_us / 1000000);
  std::vector<std::tuple<std::string, int64_t, int64_t>> want = {
      {"training", 100, 300}, {"checkpoint save", 300, 320}, {"training", 320, 0}};
  EXPECT_EQ(got, want);
}

// Rank 0's Trainer logs an evaluation at 16:50; the other ranks' ALLREDUCE
// ran 600 s before its watchdog fired at 17:05:38, so it began at 16:55:37.
std::map<std::string, std::string> trainer_job(const std::string& after_eval) {
  std::string console =
      "[rank0]:[INFO|trainer.py:2182] 2025-07-09 16:00:00,000 >> ***** Running training *****\n"
      "[rank0]:[INFO|trainer.py:3955] 2025-07-09 16:50:00,000 >> ***** Running Evaluation *****\n" + after_eval;
  for (int r = 1; r < 4; ++r) console += testing::watchdog_line(r, 811);
  return {{"console.log", console}};
}

TEST(JobPhases, TheMainProcessesMarkersSayWhatTheJobWasDoingWhenTheHangBegan) {
  diagnose::Diagnosis d = testing::diagnose_files(trainer_job(""));
  ASSERT_EQ(d.phases.size(), 2u);
  EXPECT_EQ(d.phases[0].phase, "training");
  ASSERT_TRUE(d.phase_at_hang);
  EXPECT_EQ(d.phase_at_hang->phase, "evaluation");
  EXPECT_EQ(d.phase_at_hang->marker.line, 2);
  EXPECT_EQ(d.phase_at_hang->to_us, 0);
}

TEST(JobPhases, AnEvaluationThatEndedBeforeTheHangIsNotThePhase) {
  diagnose::Diagnosis d = testing::diagnose_files(
      trainer_job("[rank0]:[INFO|trainer.py:3639] 2025-07-09 16:52:00,000 >> Saving model checkpoint to out/c-500\n"
                  "[rank0]:[INFO|modeling_utils.py:2798] 2025-07-09 16:53:00,000 >> Model weights saved in "
                  "out/c-500/model.safetensors\n"));
  ASSERT_TRUE(d.phase_at_hang);
  EXPECT_EQ(d.phase_at_hang->phase, "training");  // the save ended at 16:53, training went on
  EXPECT_EQ(d.phases.size(), 4u);
}

TEST(JobPhases, DiagnoseSaysAndStoresThePhase) {
  testing::TempDir t;
  for (const auto& [name, text] : trainer_job("")) testing::write_file(t / "logs" / name, text);
  std::string db = (t / "j.db").string();
  ASSERT_EQ(testing::run_ncclpm({"ingest", (t / "logs").string(), "--db", db, "--quiet"}).exit_code, 0);
  auto r = testing::run_ncclpm({"diagnose", "--db", db});
  EXPECT_NE(r.out.find("When the collective began to hang (2025-07-09 16:55:37), the job was in evaluation: rank 0 "
                       "printed '***** Running Evaluation *****' at 2025-07-09 16:50:00 (console.log:2)."),
            std::string::npos)
      << r.out;
  auto q = testing::run_ncclpm({"query", "--db", db, "--format", "csv",
                                "SELECT phase, to_us IS NULL, line_no, at_hang FROM job_phases ORDER BY from_us"});
  EXPECT_EQ(q.out, "phase,to_us IS NULL,line_no,at_hang\ntraining,0,1,0\nevaluation,1,2,1\n") << q.err;
  auto j = testing::run_ncclpm({"diagnose", "--db", db, "--format", "json"});
  EXPECT_NE(j.out.find("\"phase_at_hang\": {\n    \"phase\": \"evaluation\",\n    \"from\": \"2025-07-09 16:50:00\",\n"
                       "    \"to\": null,"),
            std::string::npos)
      << j.out;
}

}  // namespace
}  // namespace ncclpm
