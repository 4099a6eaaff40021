// bench/gen/layout.cc
#include "gen/layout.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "gen/nccl_lines.h"
#include "gen/story.h"

namespace fs = std::filesystem;

namespace ncclpm::bench {
namespace {

Launcher launcher_of(LayoutKind k) {
  return k == LayoutKind::kSlurm || k == LayoutKind::kNcclDebugFile ? Launcher::kSrun
                                                                    : Launcher::kTorchrun;
}

Story story_of(const Job& job) {
  return Story(job, launcher_of(job.opt.layout), job.opt.layout == LayoutKind::kNcclDebugFile);
}

std::unique_ptr<Sink> open_sink(const fs::path& p, const Job& job) {
  return std::make_unique<Sink>(p, job.opt.compress, job.opt.level);
}

uint64_t newlines(const std::string& s) {
  return static_cast<uint64_t>(std::count(s.begin(), s.end(), '\n'));
}

// ---- per-file layouts: one rank at a time -----------------------------------

void write_per_file(const Job& job, const Story& story, const fs::path& dir, SinkCounts& counts) {
  const bool torchrun = job.opt.layout == LayoutKind::kTorchrunLogdir;
  RankText text;
  for (int h = 0; h < job.host_count(); ++h) {
    const HostInfo& host = job.hosts[static_cast<size_t>(h)];
    int first = h * job.opt.ranks_per_host,
        last = std::min(job.rank_count(), first + job.opt.ranks_per_host);
    for (int rank = first; rank < last; ++rank) {
      const RankInfo& r = job.ranks[static_cast<size_t>(rank)];
      std::unique_ptr<Sink> out, err, nccl;
      if (torchrun) {
        fs::path d = dir / host.name / job.run_id / "attempt_0" / std::to_string(r.local);
        out = open_sink(d / "stdout.log", job);
        err = open_sink(d / "stderr.log", job);
      } else {
        out = open_sink(dir / ("train-rank" + std::to_string(rank) + ".log"), job);
        nccl = open_sink(
            dir / "nccl" / ("nccl." + host.name + "." + std::to_string(r.pid) + ".log"), job);
      }
      for (int phase = 0; phase < story.phase_count(); ++phase) {
        text.clear();
        story.emit(rank, phase, text);
        out->write(text.out);
        (err ? *err : *out).write(text.err);
        if (nccl) nccl->write(text.nccl);
      }
      for (auto* s : {&out, &err, &nccl})
        if (*s) (*s)->close(counts);
    }
    if (torchrun) {
      std::string agent;
      story.agent_start(h, agent);
      story.agent_end(h, agent);
      auto s = open_sink(dir / host.name / "torchrun.log", job);
      s->write(agent);
      s->close(counts);
    }
  }
  if (!torchrun) {
    std::string slurm;
    story.slurm_header(slurm);
    story.srun_end(slurm);
    auto s = open_sink(dir / ("slurm-" + job.slurm_job + ".out"), job);
    s->write(slurm);
    s->close(counts);
  }
}

// ---- merged layouts: one phase at a time, ranks interleaved ------------------

// One stream of one rank on its way into the merged file; `buf` keeps an
// unfinished last line (a tqdm redraw) for the next phase.
struct Channel {
  std::string prefix;
  std::string buf;
  size_t pos = 0;
};

std::string label(const Job& job, int rank) {
  std::string p;
  if (job.opt.layout == LayoutKind::kSlurm) {
    int width = static_cast<int>(std::to_string(std::max(0, job.rank_count() - 1)).size());
    cat(p, Pad{rank, width}, ": ");
  } else {
    const RankInfo& r = job.ranks[static_cast<size_t>(rank)];
    if (job.host_count() > 1 && job.opt.layout == LayoutKind::kConsole)
      cat(p, job.hosts[static_cast<size_t>(r.host)].name, ": ");
    cat(p, "[default", r.local, "]:");
  }
  return p;
}

// Writes every complete line of `text` behind `prefix`.
void write_prefixed(Sink& sink, const std::string& prefix, const std::string& text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const char* nl =
        static_cast<const char*>(std::memchr(text.data() + pos, '\n', text.size() - pos));
    size_t end = nl ? static_cast<size_t>(nl - text.data()) + 1 : text.size();
    sink.write(prefix);
    sink.write(std::string_view(text).substr(pos, end - pos));
    pos = end;
  }
}

// Round robin over the channels that still hold complete lines, a few lines
// each turn; what is written leaves the channels' buffers.
void interleave(Sink& sink, std::vector<Channel>& ch, Rng& rng) {
  std::vector<size_t> active;
  for (size_t c = 0; c < ch.size(); ++c)
    if (ch[c].buf.find('\n') != std::string::npos) active.push_back(c);
  while (!active.empty()) {
    size_t kept = 0;
    for (size_t c : active) {
      Channel& k = ch[c];
      int take = static_cast<int>(rng.range(1, 6));
      while (take-- > 0) {
        const char* nl = static_cast<const char*>(
            std::memchr(k.buf.data() + k.pos, '\n', k.buf.size() - k.pos));
        if (nl == nullptr) break;
        size_t end = static_cast<size_t>(nl - k.buf.data()) + 1;
        sink.write(k.prefix);
        sink.write(std::string_view(k.buf).substr(k.pos, end - k.pos));
        k.pos = end;
      }
      if (std::memchr(k.buf.data() + k.pos, '\n', k.buf.size() - k.pos) != nullptr)
        active[kept++] = c;
    }
    active.resize(kept);
  }
  for (Channel& k : ch) {
    k.buf.erase(0, k.pos);
    k.pos = 0;
  }
}

// One console: the agents of hosts [h0, h1) and their ranks' streams,
// interleaved phase by phase as processes that share a terminal write.
void write_console(const Job& job, const Story& story, Sink& sink, int h0, int h1) {
  const bool slurm = job.opt.layout == LayoutKind::kSlurm;
  auto agent_prefix = [&](int h) {
    return job.opt.layout == LayoutKind::kConsole && job.host_count() > 1 ? job.hosts[static_cast<size_t>(h)].name + ": "
                                                                          : std::string();
  };
  std::string head;
  if (slurm) {
    story.slurm_header(head);
    sink.write(head);
  } else {
    for (int h = h0; h < h1; ++h) {
      head.clear();
      story.agent_start(h, head);
      write_prefixed(sink, agent_prefix(h), head);
    }
  }
  std::vector<int> ranks;
  for (const RankInfo& r : job.ranks)
    if (r.host >= h0 && r.host < h1) ranks.push_back(r.rank);
  std::vector<Channel> ch(2 * ranks.size());  // [2i] stdout, [2i+1] stderr of ranks[i]
  for (size_t i = 0; i < ranks.size(); ++i) ch[2 * i].prefix = ch[2 * i + 1].prefix = label(job, ranks[i]);
  RankText text;
  for (int phase = 0; phase < story.phase_count(); ++phase) {
    for (size_t i = 0; i < ranks.size(); ++i) {
      text.clear();
      story.emit(ranks[i], phase, text);
      ch[2 * i].buf += text.out;
      ch[2 * i + 1].buf += text.err;
    }
    Rng rng = Rng::for_part(job.opt.seed, 0x1a7, static_cast<uint64_t>(phase), static_cast<uint64_t>(h0));
    interleave(sink, ch, rng);
  }
  // Unfinished last lines (a process killed mid-redraw) still reach the file.
  for (Channel& k : ch)
    if (!k.buf.empty()) write_prefixed(sink, k.prefix, k.buf + "\n");
  std::string tail;
  if (slurm) {
    story.srun_end(tail);
    sink.write(tail);
  } else {
    for (int h = h0; h < h1; ++h) {
      tail.clear();
      story.agent_end(h, tail);
      write_prefixed(sink, agent_prefix(h), tail);
    }
  }
}

void write_merged(const Job& job, const Story& story, const fs::path& dir, SinkCounts& counts) {
  if (job.opt.layout == LayoutKind::kNodeConsole) {
    for (int h = 0; h < job.host_count(); ++h) {
      auto sink = open_sink(dir / (job.hosts[static_cast<size_t>(h)].name + ".log"), job);
      write_console(job, story, *sink, h, h + 1);
      sink->close(counts);
    }
    return;
  }
  const bool slurm = job.opt.layout == LayoutKind::kSlurm;
  auto sink = open_sink(dir / (slurm ? "slurm-" + job.slurm_job + ".out" : std::string("console.log")), job);
  write_console(job, story, *sink, 0, job.host_count());
  sink->close(counts);
}

// One node's NCCL INFO output when the job creates many communicators (tensor,
// pipeline and data-parallel groups, one after another): each rank's INIT
// block again and again with new comm pointers and ids, the lines NCCL prints
// once per process only in the first.
void write_nccl_info_node(const Job& job, const fs::path& dir, SinkCounts& counts) {
  auto sink = open_sink(dir / (job.hosts.front().name + ".log"), job);
  Job comm_job = job;
  const int local = std::min(job.rank_count(), job.opt.ranks_per_host);
  std::vector<Channel> ch(static_cast<size_t>(local));
  std::string banner_on_stdout;  // NCCL_DEBUG_FILE-less: the 2.21 banner is on stdout, not here
  uint64_t written = 0;
  for (int comm = 0; job.opt.target_bytes > 0 ? written < job.opt.target_bytes : comm < job.opt.steps; ++comm) {
    Rng rng = Rng::for_part(job.opt.seed, 0x1bf, static_cast<uint64_t>(comm));
    comm_job.comm_id = rng.next();
    for (int r = 0; r < local; ++r) {
      RankInfo& info = comm_job.ranks[static_cast<size_t>(r)];
      info.comm = job.ranks[static_cast<size_t>(r)].comm + static_cast<uint64_t>(comm) * 0x200000;
      nccl::init_block(ch[static_cast<size_t>(r)].buf, banner_on_stdout, comm_job, info, rng, false, comm == 0);
      written += ch[static_cast<size_t>(r)].buf.size();
    }
    banner_on_stdout.clear();
    interleave(*sink, ch, rng);
  }
  sink->close(counts);
}

}  // namespace

const char* layout_name(LayoutKind k) {
  switch (k) {
    case LayoutKind::kTorchrunLogdir:
      return "torchrun-logdir";
    case LayoutKind::kConsole:
      return "console";
    case LayoutKind::kNodeConsole:
      return "node-console";
    case LayoutKind::kSlurm:
      return "slurm";
    case LayoutKind::kNcclDebugFile:
      return "nccl-debug-file";
    case LayoutKind::kNcclInfoNode:
      return "nccl-info-node";
  }
  return "?";
}

SinkCounts write_corpus(const Job& job, const fs::path& dir) {
  Story story = story_of(job);
  SinkCounts counts;
  if (job.opt.layout == LayoutKind::kNcclInfoNode)
    write_nccl_info_node(job, dir, counts);
  else if (job.opt.layout == LayoutKind::kTorchrunLogdir || job.opt.layout == LayoutKind::kNcclDebugFile)
    write_per_file(job, story, dir, counts);
  else
    write_merged(job, story, dir, counts);
  return counts;
}

SizeEstimate estimate_size(const Job& job) {
  Story story = story_of(job);
  const bool merged =
      job.opt.layout == LayoutKind::kConsole || job.opt.layout == LayoutKind::kNodeConsole ||
      job.opt.layout == LayoutKind::kSlurm;
  SizeEstimate e;
  RankText text;
  int sample = std::min(job.opt.steps, std::max(1, job.opt.log_every));
  auto bytes = [&](int rank, int phase) {
    text.clear();
    story.emit(rank, phase, text);
    double b = static_cast<double>(text.out.size() + text.err.size() + text.nccl.size());
    if (merged)
      b += static_cast<double>(newlines(text.out) + newlines(text.err)) * label(job, rank).size();
    return b;
  };
  for (int rank = 0; rank < job.rank_count(); ++rank) {
    e.fixed_bytes += bytes(rank, 0) + bytes(rank, story.phase_count() - 1);
    for (int s = 1; s <= sample; ++s) e.step_bytes += bytes(rank, s) / sample;
  }
  std::string launcher;
  for (int h = 0; h < job.host_count(); ++h) {
    story.agent_start(h, launcher);
    story.agent_end(h, launcher);
  }
  e.fixed_bytes += static_cast<double>(launcher.size());
  return e;
}

}  // namespace ncclpm::bench
