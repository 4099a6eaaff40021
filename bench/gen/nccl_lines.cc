// bench/gen/nccl_lines.cc
#include "gen/nccl_lines.h"

#include <algorithm>

namespace ncclpm::bench::nccl {
namespace {

int local_count(const Job& job, int host) {
  int first = host * job.opt.ranks_per_host;
  return std::min(job.opt.ranks_per_host, job.opt.ranks - first);
}

int leader_of(const Job& job, int host) { return host * job.opt.ranks_per_host; }

// "[c] down0/down1/down2->rank->up": a chain inside the node, a binary tree
// over the node leaders, mirrored on odd channels (NCCL's double binary tree).
void put_tree(std::string& s, const Job& job, const RankInfo& r, int channel) {
  int nn = job.host_count();
  int lc = local_count(job, r.host);
  int d0 = r.local + 1 < lc ? r.rank + 1 : -1, d1 = -1, d2 = -1, up = r.local > 0 ? r.rank - 1 : -1;
  if (r.local == 0 && nn > 1) {
    bool mirror = channel % 2 == 1;
    auto pos_of = [&](int h) { return mirror ? nn - 1 - h : h; };
    auto host_of = [&](int p) { return mirror ? nn - 1 - p : p; };
    int pos = pos_of(r.host);
    if (pos > 0) up = leader_of(job, host_of((pos - 1) / 2));
    if (2 * pos + 1 < nn) d1 = leader_of(job, host_of(2 * pos + 1));
    if (2 * pos + 2 < nn) d2 = leader_of(job, host_of(2 * pos + 2));
  }
  cat(s, '[', channel, "] ", d0, '/', d1, '/', d2, "->", r.rank, "->", up);
}

// Channel ring lines printed by rank 0 only (graph/rings.cc dumpLine).
void put_ring_dump(std::string& s, const Job& job, const RankInfo& r, int channel) {
  int n = job.rank_count();
  std::string head;
  cat(head, "Channel ", Pad{channel, 2, '0'}, '/', Pad{job.opt.channels, 2, '0'}, " : ");
  std::string ranks;
  if (job.nccl_new) {
    // 2.23+: width of the largest rank, the line cut at 128 characters with "...".
    int w = static_cast<int>(std::to_string(std::max(0, n - 1)).size());
    for (int i = 0; i < n; ++i) {
      std::string one;
      cat(one, ' ', Pad{i, w});
      if (head.size() + ranks.size() + one.size() > 125) {
        ranks += "...";
        break;
      }
      ranks += one;
    }
  } else {
    // <= 2.22: " %3d" per rank, silently cut after 20 ranks.
    for (int i = 0; i < std::min(n, 20); ++i) cat(ranks, ' ', Pad{i, 3});
  }
  info_prefix(s, job, r, r.tid_init);
  line(s, head, ranks);
}

}  // namespace

void info_prefix(std::string& s, const Job& job, const RankInfo& r, int tid) {
  cat(s, job.hosts[static_cast<size_t>(r.host)].name, ':', r.pid, ':', tid, " [", r.local,
      "] NCCL INFO ");
}

bool env_lines_enabled(const Job& job) { return !(job.opt.coll && !job.nccl_new); }

void init_block(std::string& log, std::string& stdout_text, const Job& job, const RankInfo& r,
                Rng& rng, bool debug_file, bool first_in_process) {
  const HostInfo& h = job.hosts[static_cast<size_t>(r.host)];
  const bool v2 = job.nccl_new;
  const int n = job.rank_count();
  const int nch = job.opt.channels;
  auto info = [&](int tid) -> std::string& {
    info_prefix(log, job, r, tid);
    return log;
  };
  if (first_in_process) {
    if (env_lines_enabled(job)) {
      line(info(r.pid), "NCCL_SOCKET_IFNAME set by environment to eth0");
      line(info(r.pid), "NCCL_IB_HCA set by environment to mlx5");
    }
    line(info(r.pid), v2 ? "Bootstrap: Using eth0:" : "Bootstrap : Using eth0:", h.ip, "<0>");
    line(info(r.pid),
         v2 ? "NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."
            : "NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or "
              "directory No plugin found (libnccl-net.so), using internal implementation");
    line(info(r.pid), "cudaDriverVersion ", v2 ? "12080" : "12040");
    std::string banner = "NCCL version " + job.nccl_version + "+cuda" + job.cuda_version;
    if (v2) {
      line(info(r.tid_init), banner);
    } else if (r.rank == 0) {
      line(stdout_text, banner);
      if (debug_file) line(info(r.tid_init), banner);
    }
    std::string& nib = info(r.tid_init);
    nib += "NET/IB : Using";
    for (int i = 0; i < 8; ++i) cat(nib, " [", i, "]mlx5_", i, ":1/IB");
    line(nib, " [RO]; OOB eth0:", h.ip, "<0>");
  }
  if (!v2) line(info(r.tid_init), "Using non-device net plugin version 0");
  line(info(r.tid_init), "Using network IB");
  line(info(r.tid_init), "DMA-BUF is available on GPU device ", r.local);
  const char* api = v2 ? "ncclCommInitRankConfig " : "";
  line(info(r.tid_init), api, "comm ", Ptr{r.comm}, " rank ", r.rank, " nranks ", n, " cudaDev ",
       r.local, " nvmlDev ", r.local, " busId ", r.busid, " commId ", Ptr{job.comm_id},
       " - Init START");
  line(info(r.tid_init), "Setting affinity for GPU ", r.local, " to ",
       r.local < job.opt.ranks_per_host / 2 ? "ffffffff,00000000,ffffffff"
                                            : "00000000,ffffffff,00000000,ffffffff");
  line(info(r.tid_init), "comm ", Ptr{r.comm}, " rank ", r.rank, " nRanks ", n, " nNodes ",
       job.host_count(), " localRanks ", local_count(job, r.host), " localRank ", r.local,
       " MNNVL 0");
  line(info(r.tid_init), "CC Off, Multi-GPU CC Off, workFifoBytes 1048576");
  if (r.rank == 0)
    for (int c = 0; c < nch; ++c) put_ring_dump(log, job, r, c);
  std::string& trees = info(r.tid_init);
  trees += "Trees";
  for (int c = 0; c < nch; ++c) {
    trees += ' ';
    put_tree(trees, job, r, c);
  }
  trees += '\n';
  line(info(r.tid_init), "P2P Chunksize set to 131072");
  if (n > 1) {
    const RankInfo& prev = job.ranks[static_cast<size_t>((r.rank + n - 1) % n)];
    const RankInfo& next = job.ranks[static_cast<size_t>((r.rank + 1) % n)];
    for (int c = 0; c < nch; ++c) {
      if (prev.host != r.host)
        line(info(r.tid_init), "Channel ", Pad{c, 2, '0'}, "/0 : ", prev.rank, '[', prev.local,
             "] -> ", r.rank, '[', r.local, "] [receive] via NET/IB/", r.local % 8, "/GDRDMA");
      if (next.host != r.host)
        line(info(r.tid_init), "Channel ", Pad{c, 2, '0'}, "/0 : ", r.rank, '[', r.local, "] -> ",
             next.rank, '[', next.local, "] [send] via NET/IB/", r.local % 8, "/GDRDMA");
      else
        line(info(r.tid_init), "Channel ", Pad{c, 2, '0'}, "/0 : ", r.rank, '[', r.local, "] -> ",
             next.rank, '[', next.local, "] via P2P/CUMEM/read");
    }
  }
  line(info(r.tid_init), v2 ? "Connected all rings, use ring PXN 0 GDR 1" : "Connected all rings");
  line(info(r.tid_init), "Connected all trees");
  line(info(r.tid_init), "threadThresholds 8/8/64 | ", 8 * n, "/8/64 | 512 | 512");
  line(info(r.tid_init), nch, " coll channels, 0 collnet channels, 0 nvls channels, ", nch,
       " p2p channels, 2 p2p channels per peer");
  if (v2) {
    line(info(r.tid_init),
         "TUNER/Plugin: Could not find: libnccl-tuner.so. Using internal tuner plugin.");
  } else {
    line(info(r.tid_init),
         "TUNER/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: "
         "No such file or directory : when loading libnccl-tuner.so");
    line(info(r.tid_init), "TUNER/Plugin: Using internal tuner plugin.");
  }
  line(info(r.tid_init), v2 ? "ncclCommInitRankConfig" : "ncclCommInitRank", " comm ", Ptr{r.comm},
       " rank ", r.rank, " nranks ", n, " cudaDev ", r.local, " nvmlDev ", r.local, " busId ",
       r.busid, " commId ", Ptr{job.comm_id}, " - Init COMPLETE");
  if (v2) {
    double parts[7] = {
        0.14 + rng.unit() * 0.1, 0.01, 0.05 + rng.unit() * 0.4, 0.02 + rng.unit() * 0.05,
        0.21 + rng.unit() * 0.1, 0.02, 0.3 + rng.unit() * 0.5};
    double rest = 0.1 + rng.unit() * 0.3, total = rest;
    for (double p : parts) total += p;
    line(info(r.tid_init), "Init timings - ncclCommInitRankConfig: rank ", r.rank, " nranks ", n,
         " total ", Fixed{total, 2}, " (kernels ", Fixed{parts[0], 2}, ", alloc ",
         Fixed{parts[1], 2}, ", bootstrap ", Fixed{parts[2], 2}, ", allgathers ",
         Fixed{parts[3], 2}, ", topo ", Fixed{parts[4], 2}, ", graphs ", Fixed{parts[5], 2},
         ", connections ", Fixed{parts[6], 2}, ", rest ", Fixed{rest, 2}, ")");
  }
}

void coll_line(std::string& s, const Job& job, const RankInfo& r, const CollSpec& c, int step,
               uint64_t op_count) {
  uint64_t send = 0, recv = 0;
  job.buffers(r, c, step, &send, &recv);
  info_prefix(s, job, r, r.pid);
  line(s, Job::nccl_name(c.op), ": opCount ", Hex{op_count}, " sendbuff ", Ptr{send}, " recvbuff ",
       Ptr{recv}, " count ", c.count, " datatype ", c.dtype, " op ", c.redop, " root 0 comm ",
       Ptr{r.comm}, " [nranks=", job.rank_count(), "] stream ", Ptr{r.stream});
}

std::string ib_completion_text(const Job& job, const RankInfo& r, const RankInfo& peer, int status,
                               Rng& rng) {
  std::string s;
  const HostInfo& ph = job.hosts[static_cast<size_t>(peer.host)];
  int opcode = status == 5 ? 128 : 0;
  int vendor = status == 5 ? 244 : 129;
  cat(s, job.nccl_new ? "NET/IB: " : "NET/IB : ", "Got completion from peer ", ph.ip, '<',
      rng.range(33000, 60999), "> with status=", status, " opcode=", opcode,
      " len=", status == 5 ? 0 : 32, " vendor err ", vendor, status == 5 ? " (Recv)" : " (Send)");
  if (job.nccl_new) cat(s, " hca mlx5_", r.local % 8);
  return s;
}

void ib_completion_error(std::string& s, const Job& job, const RankInfo& r,
                         const std::string& warn_text, Time t) {
  const HostInfo& h = job.hosts[static_cast<size_t>(r.host)];
  s += '\n';
  if (job.nccl_new) {
    s += '[';
    put_date_time(s, t);
    s += "] ";
  }
  line(s, h.name, ':', r.pid, ':', r.tid_progress, " [", r.local, "] ",
       job.nccl_new ? "transport/net_ib.cc:2323" : "transport/net_ib.cc:1696", " NCCL WARN ",
       warn_text);
  const char* trace[] = {
      job.nccl_new ? "transport/net_ib.cc:2386 -> 6" : "transport/net_ib.cc:1784 -> 6",
      job.nccl_new ? "transport/net.cc:1347 -> 6" : "transport/net.cc:1283 -> 6",
      job.nccl_new ? "proxy.cc:729 -> 6" : "proxy.cc:694 -> 6",
      job.nccl_new ? "proxy.cc:898 -> 6 [Progress Thread]" : "proxy.cc:874 -> 6 [Progress Thread]"};
  for (const char* t_line : trace) {
    info_prefix(s, job, r, r.tid_progress);
    line(s, t_line);
  }
}

void destroy_line(std::string& s, const Job& job, const RankInfo& r) {
  info_prefix(s, job, r, r.pid);
  line(s, "comm ", Ptr{r.comm}, " rank ", r.rank, " nranks ", job.rank_count(), " cudaDev ",
       r.local, " busId ", r.busid, " - Destroy COMPLETE");
}

}  // namespace ncclpm::bench::nccl
