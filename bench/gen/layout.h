// bench/gen/layout.h
//
// How a job's output lands in files (shared/log-formats.md sections C.5 and D):
//
//   torchrun-logdir   <host>/torchrun.log (the agent's console) and
//                     <host>/<run_id>/attempt_0/<local_rank>/{stdout,stderr}.log
//   console           console.log: every worker line behind torchrun's
//                     `[default<local_rank>]:` tee prefix, lines of all ranks
//                     interleaved; with several hosts, behind pdsh's `<host>: `
//   slurm             slurm-<job>.out: srun --label, every line behind
//                     `%*d: ` (the task id right-aligned to the width of ntasks-1)
//   nccl-debug-file   nccl/nccl.<host>.<pid>.log (NCCL_DEBUG_FILE) plus
//                     train-rank<R>.log (srun --output, stdout and stderr
//                     together) and slurm-<job>.out
//   nccl-info-node    <host>.log: NCCL_DEBUG=INFO of the first host's ranks
//                     only, a job that creates communicator after communicator
//                     (each rank's INIT block again, new comm ids), the ranks'
//                     lines interleaved; --target-bytes sets its size, else
//                     --steps the number of communicators
//
// Per-file layouts are written rank after rank; merged ones phase after phase
// with the ranks' lines interleaved a few at a time, each rank's stdout and
// stderr kept apart (a tqdm redraw is glued only to the next line of the same
// stream).
#pragma once

#include <filesystem>
#include <string>

#include "gen/job.h"
#include "gen/sink.h"

namespace ncclpm::bench {

const char* layout_name(LayoutKind k);

/// Writes the corpus of `job` under `dir` (which must not exist yet).
/// Throws std::runtime_error on I/O errors.
SinkCounts write_corpus(const Job& job, const std::filesystem::path& dir);

/// Text bytes the corpus of `job` would have apart from its training steps,
/// and per training step (averaged over a few steps), for --target-bytes.
struct SizeEstimate {
  double fixed_bytes = 0;
  double step_bytes = 0;
};
SizeEstimate estimate_size(const Job& job);

}  // namespace ncclpm::bench
