// bench/gen/story.h
//
// What every process of the job writes, phase by phase: phase 0 is start-up
// (Python warnings, NCCL init, the first barrier), phases 1..steps are
// training steps (COLL lines with --coll, rank 0's tqdm bar, loss logs and
// checkpoint saves), and the last phase is the ending: the planted failure and
// its cascade, or a clean finish. Each (rank, phase) draws from its own random
// stream, so a layout may visit them in any order and the bytes stay the same.
//
// The launcher's own text (torchrun agents, srun) comes from here too, since
// what it reports follows from how each rank ended.
#pragma once

#include <string>

#include "gen/job.h"

namespace ncclpm::bench {

/// One rank's output of one phase, per stream it writes to.
struct RankText {
  std::string out;   ///< stdout (and NCCL output unless it has its own file)
  std::string err;   ///< stderr
  std::string nccl;  ///< NCCL_DEBUG_FILE, when NCCL writes its own file
  void clear() {
    out.clear();
    err.clear();
    nccl.clear();
  }
};

/// Which launcher started the workers: decides who kills whom after the
/// first failure and what is printed about it.
enum class Launcher { kTorchrun, kSrun };

class Story {
 public:
  Story(const Job& job, Launcher launcher, bool nccl_own_file);
  int phase_count() const { return job_.opt.steps + 2; }
  /// Appends what rank `rank` writes in `phase`.
  void emit(int rank, int phase, RankText& t) const;

  /// torchrun's console on host `h`: the start banner and, at the end, the
  /// failure report (nothing when the job finished).
  void agent_start(int h, std::string& s) const;
  void agent_end(int h, std::string& s) const;
  /// The batch script's echo and srun's error lines in a Slurm output file.
  void slurm_header(std::string& s) const;
  void srun_end(std::string& s) const;

 private:
  enum class Fate { kFinished, kTimeout, kSaving, kOom, kIbError, kIbFlush, kKilled };
  Fate fate(int rank) const;
  /// When a failing rank's process ended (only for the failing fates).
  Time exit_time(int rank) const;
  int exit_code(int rank) const;
  std::string& nccl_out(RankText& t) const { return nccl_own_file_ ? t.nccl : t.out; }

  void startup(const RankInfo& r, RankText& t, Rng& rng) const;
  void step(const RankInfo& r, int step, RankText& t, Rng& rng) const;
  void app_line(const RankInfo& r, int step, int i, RankText& t, Rng& rng) const;
  void ending(const RankInfo& r, RankText& t, Rng& rng) const;
  void rank0_finish(RankText& t, Rng& rng, bool clean) const;

  const Job& job_;
  Launcher launcher_;
  bool nccl_own_file_;
};

}  // namespace ncclpm::bench
