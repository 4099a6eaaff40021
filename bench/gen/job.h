// bench/gen/job.h
//
// The synthetic job a corpus describes: options from the command line, and
// everything derived from them and the seed before a line is written: hosts
// (names, addresses, agent pids), ranks (pid, threads, GPU, communicator and
// buffer addresses), the FSDP units and the collectives of one training step,
// the clock, and where the planted failure happens.
//
// The model is an HF Trainer + FSDP fine-tune of a Llama-3-8B-sized model
// (32 decoder layers + one root unit) on PyTorch 2.4.1 under torchrun, with
// NCCL_DEBUG=INFO; `--coll` adds NCCL_DEBUG_SUBSYS=...,COLL.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gen/sink.h"
#include "gen/text.h"

namespace ncclpm::bench {

// kNodeConsole: one tee'd torchrun console per host (`<host>.log`, lines behind
// `[default<L>]:`), the layout of a job launched node by node.
enum class LayoutKind { kTorchrunLogdir, kConsole, kNodeConsole, kSlurm, kNcclDebugFile, kNcclInfoNode };
// kHang: every rank waits in one collective and none says why (a network or
// driver hang): no culprit, the cross-rank analysis reads every rank's tail.
enum class Failure { kNone, kSaveStall, kOom, kIb, kHang };

struct Options {
  int ranks = 64;
  int ranks_per_host = 8;
  int steps = 100;
  bool coll = false;
  LayoutKind layout = LayoutKind::kTorchrunLogdir;
  Compress compress = Compress::kNone;
  int level = -1;
  uint64_t target_bytes = 0;  ///< 0: use `steps`
  std::filesystem::path out;
  Failure fail = Failure::kSaveStall;
  uint64_t seed = 1;
  std::string nccl_version = "2.26.2";  ///< "2.21.5" or "2.26.2"
  int layers = 32;
  int channels = 16;
  int log_every = 10;
  int save_every = 500;
  int app_lines = 0;  ///< the training loop's own lines per rank and step (issue 15's app-heavy job)
  bool force = false;
};

struct HostInfo {
  std::string name;  ///< short hostname, as NCCL prints it
  std::string fqdn;  ///< as torchelastic prints it
  std::string ip;
  int agent_pid = 0;
  uint64_t agent_tid = 0;  ///< 2.4 torchrun logs a thread ident in this column
};

struct RankInfo {
  int rank = 0, host = 0, local = 0;
  int pid = 0, tid_init = 0, tid_progress = 0;
  uint64_t comm = 0, stream = 0;
  std::string busid;
  uint64_t shard_base = 0, full_base = 0, grad_base = 0, grad_shard_base = 0, small_base = 0;
};

enum class CollOp { kAllReduce, kAllGather, kReduceScatter };

/// One collective of a training step, identical on every rank.
struct CollSpec {
  CollOp op;
  int unit;   ///< FSDP unit (0 = root); -1 for the small all-reduces
  int dtype;  ///< ncclDataType_t: 7 float32, 9 bfloat16
  int redop;  ///< ncclRedOp_t: 0 sum, 4 avg
  uint64_t count;
  bool in_place;
};

struct Job {
  Options opt;
  std::vector<HostInfo> hosts;
  std::vector<RankInfo> ranks;
  std::vector<uint64_t> unit_numel;  ///< parameters per FSDP unit, padded to a multiple of ranks
  std::vector<uint64_t>
      shard_offset;  ///< byte offset of each unit's shard in a rank's shard region
  std::vector<CollSpec>
      step_colls;  ///< one training step (the loss all-reduce of log steps excluded)
  CollSpec loss_allreduce{};
  CollSpec barrier{};
  uint64_t comm_id = 0;
  bool nccl_new = true;  ///< NCCL >= 2.23 spellings (see log-formats A.2, A.3)
  std::string nccl_version, cuda_version;
  std::string run_id, slurm_job, python, site, out_dir, script;
  Time t0;       ///< torchrun agents start
  Time t_train;  ///< first training step starts
  double step_s = 2.37;
  int64_t timeout_ms = 1800000;

  // The planted failure (see story.cc): the ending phase replays step
  // `steps + 1` up to collective `hang_index`, which never completes.
  int culprit = 0;        ///< oom/ib: the failing rank; save-stall: the saving rank 0
  int ib_peer = -1;       ///< ib: the rank on the other end of the failed QP
  int hang_index = 0;     ///< index into step_colls of the collective that hangs
  int hang_unit_oom = 0;  ///< oom: the culprit stops before this unit's all-gather
  Time t_end;             ///< last step done
  Time t_hang;            ///< the hanging collective was enqueued / the error happened
  Time t_watchdog;        ///< the 30-minute watchdog fires on the waiting ranks

  static Job make(const Options& opt);
  int host_count() const { return static_cast<int>(hosts.size()); }
  int rank_count() const { return static_cast<int>(ranks.size()); }
  bool is_log_step(int step) const { return step % opt.log_every == 0; }
  /// Collectives of step `step` (1-based), loss all-reduce included.
  int colls_in_step(int step) const;
  /// PyTorch SeqNum of the first collective of `step` (1-based; the start-up
  /// barrier is SeqNum 1). NCCL's opCount is SeqNum - 1 on the default PG.
  uint64_t first_seq_of_step(int step) const;
  /// When training step `step` ends (checkpoint saves pause training).
  Time step_time(int step) const;
  static constexpr double kSaveSeconds = 44.0;
  /// Bytes of one element of `dtype`.
  static int dtype_bytes(int dtype) { return dtype == 7 ? 4 : 2; }
  /// PyTorch OpType name of a collective spec: _ALLGATHER_BASE, ...
  static const char* op_type(CollOp op);
  /// NCCL name: AllGather, ...
  static const char* nccl_name(CollOp op);
  /// Element counts PyTorch prints as NumelIn / NumelOut.
  uint64_t numel_in(const CollSpec& c) const;
  uint64_t numel_out(const CollSpec& c) const;
  /// This rank's send and receive buffers for `c` in step `step`.
  void buffers(const RankInfo& r, const CollSpec& c, int step, uint64_t* send,
               uint64_t* recv) const;
};

}  // namespace ncclpm::bench
