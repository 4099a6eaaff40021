// bench/gen_corpus.cc
//
// `gen_corpus --out DIR [options]`: writes the log directory of a synthetic
// crashed multi-GPU job at scale, byte for byte the same for the same options
// and --seed. The formats follow shared/log-formats.md; the job is described
// in gen/job.h, the content in gen/story.h, the file layouts in gen/layout.h.
// See bench/README.md for the corpora the benchmark uses.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gen/job.h"
#include "gen/layout.h"

namespace fs = std::filesystem;
using namespace ncclpm::bench;

namespace {

constexpr const char* kUsage = R"(usage: gen_corpus --out DIR [options]

Writes the log directory of a synthetic multi-GPU training job (HF Trainer +
FSDP on PyTorch 2.4.1, NCCL_DEBUG=INFO) that ends in a planted failure.
Deterministic: the same options and --seed give the same bytes.

Job:
  --ranks N              ranks (default 64)
  --ranks-per-host N     ranks per host (default 8)
  --steps N              training steps (default 100)
  --target-bytes N       instead of --steps: add steps until the corpus holds
                         about N bytes of text (suffixes K, M, G: powers of 1024)
  --coll                 NCCL_DEBUG_SUBSYS with COLL: every rank logs every
                         collective (about 100 per step)
  --fail KIND            save-stall (default), oom, ib, hang (every rank waits in
                         one collective, none says why) or none
  --nccl VERSION         2.26.2 (default) or 2.21.5: which NCCL spellings
  --layers N             decoder layers, one FSDP unit each (default 32)
  --channels N           NCCL channels (default 16)
  --log-every N          loss log every N steps (default 10)
  --save-every N         checkpoint every N steps (default 500)
  --app-lines N          lines of the training loop's own output every rank
                         prints per step (default 0): Megatron iteration lines,
                         loss dicts, per-rank progress bars, throughput prints
  --seed N               random seed (default 1)

Output:
  --out DIR              folder to create; written as DIR.partial, then renamed
  --force                replace DIR if it exists
  --layout KIND          torchrun-logdir (default), console, node-console (one
                         tee'd console per host), slurm, nccl-debug-file,
                         nccl-info-node (one host's NCCL INFO of many communicators;
                         --target-bytes its size, else --steps communicators)
  --compress KIND        none (default), gzip or zstd (each file compressed)
  --level N              compression level (default: gzip 1, zstd 3)

Examples:
  gen_corpus --out /tmp/c --ranks 512 --coll --layout nccl-debug-file --target-bytes 2G
  gen_corpus --out /tmp/c --ranks 4096 --steps 300 --fail oom --compress zstd
)";

[[noreturn]] void usage_error(const std::string& msg) {
  std::fprintf(stderr, "gen_corpus: error: %s\n  hint: gen_corpus --help lists the options\n",
               msg.c_str());
  std::exit(2);
}

long long parse_int(std::string_view flag, const std::string& v, long long min) {
  char* end = nullptr;
  errno = 0;
  long long n = std::strtoll(v.c_str(), &end, 10);
  long long mult = 1;
  if (end != nullptr && *end != '\0' && flag == "--target-bytes") {
    std::string suf(end);
    if (suf == "K" || suf == "k")
      mult = 1LL << 10;
    else if (suf == "M" || suf == "m")
      mult = 1LL << 20;
    else if (suf == "G" || suf == "g")
      mult = 1LL << 30;
    else
      end = nullptr;
    if (end != nullptr) end += suf.size();
  }
  if (v.empty() || end == nullptr || *end != '\0' || errno != 0 || n < min)
    usage_error(std::string(flag) + " wants a whole number >= " + std::to_string(min) + ", not '" +
                v + "'");
  return n * mult;
}

Options parse(int argc, char** argv) {
  Options o;
  bool steps_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--ranks")
      o.ranks = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--ranks-per-host")
      o.ranks_per_host = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--steps") {
      o.steps = static_cast<int>(parse_int(a, value(), 1));
      steps_given = true;
    } else if (a == "--target-bytes")
      o.target_bytes = static_cast<uint64_t>(parse_int(a, value(), 1));
    else if (a == "--coll")
      o.coll = true;
    else if (a == "--layers")
      o.layers = static_cast<int>(parse_int(a, value(), 2));
    else if (a == "--channels")
      o.channels = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--log-every")
      o.log_every = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--app-lines")
      o.app_lines = static_cast<int>(parse_int(a, value(), 0));
    else if (a == "--save-every")
      o.save_every = static_cast<int>(parse_int(a, value(), 1));
    else if (a == "--seed")
      o.seed = static_cast<uint64_t>(parse_int(a, value(), 0));
    else if (a == "--level")
      o.level = static_cast<int>(parse_int(a, value(), 0));
    else if (a == "--out")
      o.out = value();
    else if (a == "--force")
      o.force = true;
    else if (a == "--nccl") {
      o.nccl_version = value();
      if (o.nccl_version != "2.26.2" && o.nccl_version != "2.21.5")
        usage_error("--nccl must be 2.26.2 or 2.21.5, not '" + o.nccl_version + "'");
    } else if (a == "--fail") {
      std::string v = value();
      if (v == "save-stall")
        o.fail = Failure::kSaveStall;
      else if (v == "oom")
        o.fail = Failure::kOom;
      else if (v == "ib")
        o.fail = Failure::kIb;
      else if (v == "hang")
        o.fail = Failure::kHang;
      else if (v == "none")
        o.fail = Failure::kNone;
      else
        usage_error("--fail must be save-stall, oom, ib, hang or none, not '" + v + "'");
    } else if (a == "--layout") {
      std::string v = value();
      if (v == "torchrun-logdir")
        o.layout = LayoutKind::kTorchrunLogdir;
      else if (v == "console")
        o.layout = LayoutKind::kConsole;
      else if (v == "node-console")
        o.layout = LayoutKind::kNodeConsole;
      else if (v == "slurm")
        o.layout = LayoutKind::kSlurm;
      else if (v == "nccl-debug-file")
        o.layout = LayoutKind::kNcclDebugFile;
      else if (v == "nccl-info-node")
        o.layout = LayoutKind::kNcclInfoNode;
      else
        usage_error("--layout must be torchrun-logdir, console, node-console, slurm, nccl-debug-file or nccl-info-node, not '" +
                    v + "'");
    } else if (a == "--compress") {
      std::string v = value();
      if (v == "none")
        o.compress = Compress::kNone;
      else if (v == "gzip")
        o.compress = Compress::kGzip;
      else if (v == "zstd")
        o.compress = Compress::kZstd;
      else
        usage_error("--compress must be none, gzip or zstd, not '" + v + "'");
    } else {
      usage_error("unknown option '" + a + "'");
    }
  }
  if (o.out.empty()) usage_error("give the folder to write with --out DIR");
  if (o.target_bytes > 0 && steps_given) usage_error("give --steps or --target-bytes, not both");
  if (o.fail == Failure::kIb && o.ranks < 2) usage_error("--fail ib needs at least 2 ranks");
  return o;
}

// Steps that bring the corpus to about `target` bytes of text.
int steps_for_target(Options o) {
  o.steps = 100;
  Job probe = Job::make(o);
  SizeEstimate e = estimate_size(probe);
  double left = static_cast<double>(o.target_bytes) - e.fixed_bytes;
  if (left <= 0 || e.step_bytes <= 0) return 1;
  return std::max(1, static_cast<int>(std::lround(left / e.step_bytes)));
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse(argc, argv);
  auto started = std::chrono::steady_clock::now();
  try {
    // nccl-info-node writes communicators until the target is reached.
    if (opt.target_bytes > 0 && opt.layout != LayoutKind::kNcclInfoNode) opt.steps = steps_for_target(opt);
    Job job = Job::make(opt);
    fs::path out = opt.out;
    fs::path partial = out;
    partial += ".partial";
    if (fs::exists(out)) {
      if (!opt.force)
        throw std::runtime_error("'" + out.string() + "' exists; pass --force to replace it");
      fs::remove_all(out);
    }
    fs::remove_all(partial);
    fs::create_directories(partial);
    SinkCounts c = write_corpus(job, partial);
    fs::rename(partial, out);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::printf(
        "gen_corpus: %llu files, %llu bytes (%llu on disk), %llu lines, %d ranks on %d hosts, %d "
        "steps, "
        "layout %s%s, fail %s -> %s in %.1f s\n",
        static_cast<unsigned long long>(c.files), static_cast<unsigned long long>(c.text_bytes),
        static_cast<unsigned long long>(c.disk_bytes), static_cast<unsigned long long>(c.lines),
        job.rank_count(), job.host_count(), opt.steps, layout_name(opt.layout),
        opt.coll ? " +COLL" : "",
        opt.fail == Failure::kSaveStall ? "save-stall"
        : opt.fail == Failure::kOom     ? "oom"
        : opt.fail == Failure::kIb      ? "ib"
        : opt.fail == Failure::kHang    ? "hang"
                                        : "none",
        out.c_str(), secs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gen_corpus: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
