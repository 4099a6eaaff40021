// include/ncclpm/frame/framer.h
//
// The framer peels the wrappers off a physical line to learn who said it and
// when. One physical line is often several producers nested, outermost first:
//
//   node07: 3: [default3]:[rank11]:[E709 17:05:38.162814866 ProcessGroupNCCL.cpp:632] [Rank 3] ...
//   ^pdsh   ^srun ^torchrun   ^c10 logger                                           ^PG prefix
//
// Launcher prefixes that are ambiguous on their own (Slurm's `3: `, pdsh's
// `host: `) are peeled only when the file as a whole uses them, which the
// Framer learns from the file's first lines (see `learn_launcher`). Progress
// bars redrawn with '\r' keep their last segment; a log line glued to the end
// of a progress bar is found by its prefix. ANSI colour codes are removed.
//
// A Framer holds per-file state; one per file, not shared between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ncclpm/frame/timestamp.h"

namespace ncclpm::frame {

/// Which producer wrote the innermost part of the line.
enum class Producer : uint8_t {
  kUnknown,     ///< no producer prefix: plain output, print(), a continuation line
  kNccl,        ///< host:pid:tid [dev] NCCL INFO|WARN|TRACE|CALL
  kC10,         ///< PyTorch C++ logger: [E709 17:05:38.1 ProcessGroupNCCL.cpp:632]
  kGlog,        ///< glog or torch 2.4+ Python logging: E0709 17:05:38.162555 123 file:line]
  kPyLogging,   ///< [2024-02-01 09:14:29,497] logger: [LEVEL] or LEVEL:logger:
  kDeepSpeed,   ///< [2024-05-01 10:00:00,123] [INFO] [launch.py:256:main]
};
const char* producer_name(Producer p);

enum class LauncherFormat : uint8_t { kNone, kSlurmLabel, kPdsh };

struct Frame {
  std::string_view body;       ///< the message once every prefix is peeled
  std::string_view host;       ///< empty when unknown
  int64_t pid = -1;
  int64_t tid = -1;
  int rank = -1;               ///< global rank ([rankN]:, Slurm task id, OpenMPI rank)
  int local_rank = -1;         ///< torchrun tee prefix [default3]:
  int device = -1;             ///< NCCL [cudaDev]
  int pg_rank = -1;            ///< rank inside the process group ([Rank N], [PG ... Rank N])
  std::string_view pg_id;      ///< "PG ID" (2.5+) or "PG <uid>" (2.2-2.4)
  std::string_view pg_name;    ///< "PG GUID" (2.5+) / pg_name (2.4)
  std::string_view pg_desc;    ///< "default_pg", "mesh_tp", ...
  Producer producer = Producer::kUnknown;
  char severity = 0;           ///< 'F','E','W','I','V','D' ('W' for NCCL WARN, 'I' for INFO)
  std::string_view nccl_level; ///< "INFO", "WARN", "TRACE", "CALL"; "VERSION" for a timed banner
  std::string_view src_file;   ///< ProcessGroupNCCL.cpp, transport/net_ib.cc, launch.py
  int src_line = -1;
  Timestamp ts;
  int repeated = 0;            ///< Ray: "[repeated 14x across cluster]"
  bool had_prefix = false;     ///< any prefix was peeled (so it is not a bare continuation)
  bool progress_bar = false;   ///< text before a glued log line or '\r' redraws was dropped
  /// Where a log line glued to the end of another line's progress bar begins
  /// in the framed text ("...4866.01 examples/s][default2]:[E ..."); 0 when
  /// none. The text before it is a line of its own stream, with its own prefix.
  size_t glued_at = 0;
};

class Framer {
 public:
  /// Looks at a file's first lines and decides whether ambiguous launcher
  /// prefixes (Slurm labels, pdsh host names) are in use.
  void learn_launcher(const std::vector<std::string_view>& sample_lines);
  LauncherFormat launcher() const { return launcher_; }

  /// Frames one physical line. The views in the result stay valid until the
  /// next call (they may point into an internal copy with ANSI codes removed).
  Frame frame(std::string_view line);

  /// `line` without what a paste put around the job's own text: a Markdown
  /// quote, grep's file name (as learn_launcher found the file's lines).
  std::string_view unwrap_paste(std::string_view line) const;

 private:
  bool peel_launcher(std::string_view& rest, Frame& f, unsigned& peeled);
  bool frame_plain_nccl(std::string_view line, Frame& f) const;
  bool peel_bracket_prefixes(std::string_view& rest, Frame& f);
  void peel_producer(std::string_view& rest, Frame& f);
  void peel_pg_prefix(Frame& f);

  LauncherFormat launcher_ = LauncherFormat::kNone;
  bool slurm_after_pdsh_ = false;  // "node07: 3: ...": srun labels inside pdsh output
  bool name_tags_ = false;         // most lines start with a collector's name tag ("trainer-1  | ")
  bool quoted_ = false;            // most lines start with a Markdown quote ("> "): a pasted log
  bool grep_named_ = false;        // most lines start with a log file's name: grep's output over several files
  std::string scratch_;
};

// Producer prefix parsers, exposed for unit tests. Each returns true and
// advances `rest` past the prefix when it matches.
bool peel_nccl(std::string_view& rest, Frame& f);
bool peel_c10(std::string_view& rest, Frame& f);
bool peel_glog(std::string_view& rest, Frame& f);
bool peel_py_logging(std::string_view& rest, Frame& f);
bool peel_deepspeed(std::string_view& rest, Frame& f);
bool peel_hf_logging(std::string_view& rest, Frame& f);
bool peel_nemo(std::string_view& rest, Frame& f);
bool peel_vllm(std::string_view& rest, Frame& f);

}  // namespace ncclpm::frame
