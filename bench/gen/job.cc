// bench/gen/job.cc
#include "gen/job.h"

#include <algorithm>

namespace ncclpm::bench {
namespace {

// Llama-3-8B: 32 decoder layers of 218,112,000 parameters; the root unit holds
// the embeddings, the final norm and the LM head (2 x 128256 x 4096 + 4096).
constexpr uint64_t kLayerNumel = 218112000;
constexpr uint64_t kRootNumel = 1050677248;
const char* const kBusIds[] = {"18000", "2a000", "3a000", "5d000",
                               "9a000", "ab000", "ba000", "db000"};

uint64_t round_up(uint64_t v, uint64_t m) { return (v + m - 1) / m * m; }

// A user-space address as CUDA's caching allocator hands them out: 0x7f...,
// 2 MiB aligned.
uint64_t device_address(Rng& rng) {
  return (0x7f0000000000ULL | (rng.next() & 0xffffffffffULL)) & ~0x1fffffULL;
}
// A host heap address (communicator, stream objects): 0x55...
uint64_t heap_address(Rng& rng) {
  return (0x550000000000ULL | (rng.next() & 0xffffffffffULL)) & ~0xfULL;
}

std::string host_name(int i, int n) {
  std::string digits = std::to_string(i + 1);
  size_t width = n >= 1000 ? 4 : 3;
  if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
  return "hgx-" + digits;
}

}  // namespace

Job Job::make(const Options& opt) {
  Job j;
  j.opt = opt;
  j.nccl_new = opt.nccl_version != "2.21.5";
  j.nccl_version = opt.nccl_version;
  j.cuda_version = j.nccl_new ? "12.8" : "12.4";
  j.run_id = "llama3-8b-fsdp-0612";
  j.slurm_job = "48213";
  j.python = "/opt/conda/envs/train/bin/python3.11";
  j.site = "/opt/conda/envs/train/lib/python3.11/site-packages";
  j.out_dir = "/checkpoints/llama3-8b-fsdp";
  j.script = "train.py";
  j.t0 = make_time(2025, 6, 12, 9, 14, 2);
  j.t_train = j.t0.plus_s(118.4);

  Rng rng = Rng::for_part(opt.seed, 0x10b);
  j.comm_id = rng.next();
  j.step_s = 2.2 + rng.unit() * 0.4;
  int nhosts = (opt.ranks + opt.ranks_per_host - 1) / opt.ranks_per_host;
  for (int h = 0; h < nhosts; ++h) {
    HostInfo host;
    host.name = host_name(h, nhosts);
    host.fqdn = host.name + ".cluster.internal";
    host.ip = "10.42." + std::to_string(h / 250) + "." + std::to_string(h % 250 + 4);
    host.agent_pid = static_cast<int>(rng.range(2800, 61000));
    host.agent_tid = 139900000000000ULL + (rng.next() % 200000000000ULL) / 4096 * 4096;
    j.hosts.push_back(std::move(host));
  }
  for (int r = 0; r < opt.ranks; ++r) {
    RankInfo ri;
    ri.rank = r;
    ri.host = r / opt.ranks_per_host;
    ri.local = r % opt.ranks_per_host;
    ri.pid = j.hosts[static_cast<size_t>(ri.host)].agent_pid + 17 + ri.local;
    ri.tid_init = ri.pid + 60 + static_cast<int>(rng.range(0, 40));
    ri.tid_progress = ri.tid_init + 3 + static_cast<int>(rng.range(0, 5));
    ri.comm = heap_address(rng);
    ri.stream = heap_address(rng);
    ri.busid = kBusIds[ri.local % 8];
    ri.shard_base = device_address(rng);
    ri.full_base = device_address(rng);
    ri.grad_base = device_address(rng);
    ri.grad_shard_base = device_address(rng);
    ri.small_base = device_address(rng) | 0x1200;
    j.ranks.push_back(std::move(ri));
  }

  // FSDP units: the root, then the decoder layers; flat parameters are padded
  // to a multiple of the world size.
  uint64_t n = static_cast<uint64_t>(opt.ranks);
  j.unit_numel.push_back(round_up(kRootNumel, n));
  for (int l = 0; l < opt.layers; ++l) j.unit_numel.push_back(round_up(kLayerNumel, n));
  uint64_t off = 0;
  for (uint64_t numel : j.unit_numel) {
    j.shard_offset.push_back(off);
    off += round_up(numel / n * 2, 512);
  }
  auto ag = [&](int u) {
    return CollSpec{CollOp::kAllGather, u, 9, 0, j.unit_numel[u] / n, false};
  };
  auto rs = [&](int u) {
    return CollSpec{CollOp::kReduceScatter, u, 9, 4, j.unit_numel[u] / n, false};
  };
  // forward: gather every unit; backward: gather again (resharded after
  // forward), then reduce-scatter its gradients, last layer first.
  for (int u = 0; u <= opt.layers; ++u) j.step_colls.push_back(ag(u));
  for (int u = opt.layers; u >= 1; --u) {
    j.step_colls.push_back(ag(u));
    j.step_colls.push_back(rs(u));
  }
  j.step_colls.push_back(rs(0));
  j.step_colls.push_back(CollSpec{CollOp::kAllReduce, -1, 7, 0, 1, true});  // clip_grad_norm_
  j.loss_allreduce = CollSpec{CollOp::kAllReduce, -1, 7, 4, 1, true};
  j.barrier = CollSpec{CollOp::kAllReduce, -1, 7, 0, 1, true};

  // The planted failure.
  Rng frng = Rng::for_part(opt.seed, 0xfa11);
  j.t_end = j.step_time(opt.steps);
  int first_bwd_rs = opt.layers + 2;  // index of the first reduce-scatter
  switch (opt.fail) {
    case Failure::kNone:
    case Failure::kSaveStall:
      j.culprit = 0;
      j.hang_index = 0;  // evaluate(): the first forward all-gather
      j.t_hang = j.t_end.plus_s(12.6);
      break;
    case Failure::kOom:
      j.culprit = opt.ranks > 1 ? static_cast<int>(frng.range(1, opt.ranks - 1)) : 0;
      j.hang_unit_oom = static_cast<int>(frng.range(2, std::max(2, opt.layers)));
      j.hang_index = j.hang_unit_oom;  // forward all-gather of that unit
      j.t_hang = j.step_time(opt.steps).plus_s(0.9);
      break;
    case Failure::kHang:
      j.culprit = -1;
      j.hang_index = first_bwd_rs;  // the first backward reduce-scatter
      j.t_hang = j.step_time(opt.steps).plus_s(1.1);
      break;
    case Failure::kIb: {
      int h = nhosts > 1 ? static_cast<int>(frng.range(0, nhosts - 2)) : 0;
      j.culprit =
          std::min(opt.ranks - 1, (h + 1) * opt.ranks_per_host - 1);  // sends to the next host
      j.ib_peer = (j.culprit + 1) % opt.ranks;
      int k = static_cast<int>(frng.range(0, opt.layers - 1));
      j.hang_index = first_bwd_rs + 2 * k;  // a backward reduce-scatter
      j.t_hang = j.step_time(opt.steps).plus_s(1.6);
      break;
    }
  }
  j.t_watchdog = j.t_hang.plus_ms(j.timeout_ms).plus_ms(frng.range(60, 140));
  return j;
}

Time Job::step_time(int step) const {
  int saves = step > 0 ? (step - 1) / opt.save_every : 0;
  return t_train.plus_s(step_s * step + kSaveSeconds * saves);
}

int Job::colls_in_step(int step) const {
  return static_cast<int>(step_colls.size()) + (is_log_step(step) ? 1 : 0);
}

uint64_t Job::first_seq_of_step(int step) const {
  uint64_t s = static_cast<uint64_t>(step - 1);
  return 2 + s * step_colls.size() + s / static_cast<uint64_t>(opt.log_every);
}

const char* Job::op_type(CollOp op) {
  switch (op) {
    case CollOp::kAllGather:
      return "_ALLGATHER_BASE";
    case CollOp::kReduceScatter:
      return "_REDUCE_SCATTER_BASE";
    case CollOp::kAllReduce:
      break;
  }
  return "ALLREDUCE";
}

const char* Job::nccl_name(CollOp op) {
  switch (op) {
    case CollOp::kAllGather:
      return "AllGather";
    case CollOp::kReduceScatter:
      return "ReduceScatter";
    case CollOp::kAllReduce:
      break;
  }
  return "AllReduce";
}

uint64_t Job::numel_in(const CollSpec& c) const {
  return c.op == CollOp::kReduceScatter ? c.count * static_cast<uint64_t>(opt.ranks) : c.count;
}

uint64_t Job::numel_out(const CollSpec& c) const {
  return c.op == CollOp::kAllGather ? c.count * static_cast<uint64_t>(opt.ranks) : c.count;
}

void Job::buffers(const RankInfo& r, const CollSpec& c, int step, uint64_t* send,
                  uint64_t* recv) const {
  if (c.unit < 0) {
    *send = *recv = r.small_base + static_cast<uint64_t>(step % 4) * 0x200;
    return;
  }
  // Shards sit one after another; the unsharded buffers alternate between two
  // slots (the next unit is prefetched while this one computes).
  uint64_t shard_off = shard_offset[static_cast<size_t>(c.unit)];
  uint64_t slot = static_cast<uint64_t>(c.unit % 2) * round_up(unit_numel[0] * 2, 1 << 21);
  if (c.op == CollOp::kAllGather) {
    *send = r.shard_base + shard_off;
    *recv = r.full_base + slot;
  } else {
    *send = r.grad_base + slot;
    *recv = r.grad_shard_base + shard_off;
  }
}

}  // namespace ncclpm::bench
