// src/diagnose/job_facts.h
//
// The facts of one job that the analyses need, read from the store with a
// handful of queries. Bulk line text is not loaded here: rule matching
// streams it (see rule_eval.cc).
#pragma once

#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <string>
#include <vector>

#include "ncclpm/diagnose/finding.h"
#include "ncclpm/store/sqlite.h"

namespace ncclpm::diagnose {

struct Located {
  std::string file;
  int64_t line = 0;
  int rank = -1;
  std::string host;
  int64_t ts_us = 0;
  std::string text;
  int64_t pid = 0;  ///< 0: not read (only the rule scan reads it)
  Evidence evidence() const { return Evidence{file, line, text, rank, host, ts_us, pid}; }
};

struct TimeoutRecord {
  Located at;
  std::string pg;
  int pg_rank = -1;
  int64_t seq = -1;
  std::string op_type;
  int64_t numel_in = -1, numel_out = -1, timeout_ms = -1, ran_for_ms = -1;

  /// The global rank that timed out: its line's, else its rank in the group.
  int rank() const { return at.rank >= 0 ? at.rank : pg_rank; }
};

struct StatusRecord {
  Located at;
  std::string pg;
  int64_t seq = -1, last_enqueued = -1, last_completed = -1;
  std::string wording;
};

/// A rank's first failure of its own: an exception, a crash, an NCCL error.
struct Failure {
  Located at;
  std::string what;  ///< "torch.OutOfMemoryError", "exit -9 (SIGKILL)", "NCCL WARN ..."
  std::string kind;  ///< event kind
  bool cascade = false;  ///< raised because another rank failed (DistBackendError, ...)
  bool first_observed = false;  ///< torchrun's "Root Cause (first observed failure)" entry
};

/// An NCCL_* setting the job set that its NCCL does not read.
struct IgnoredSetting {
  Located at;
  std::string name, reason;
};

struct CollStats {
  int rank = -1;
  int nranks = -1;
  int64_t calls = 0;
  int64_t max_op_count = -1;
};

/// A rank's last state of a training-loop progress bar (tqdm, counting steps).
struct ProgressBar {
  Located at;
  std::string label;             ///< the bar's description; bars compare within one label
  int64_t step = -1, total = -1;
  double seconds_per_step = -1;  ///< -1: no rate shown
};

/// Ranks whose bars counted fewer steps than the others' in the same loop,
/// and ran out of them while the others had steps left (progress.cc).
struct UnevenBatches {
  std::string label;
  std::vector<int> short_ranks;
  int64_t short_total = 0, long_total = 0;
  std::vector<Located> lines;    ///< the short ranks' bars, then one of the others'
};

/// A host (or, on one host, a rank) whose ranks stepped slower than the rest.
struct SlowHost {
  std::string host;              ///< empty: a single rank whose host no line names
  std::vector<int> ranks;
  double seconds = 0, others_seconds = 0;  ///< median seconds per step, theirs and the rest's
  std::vector<Located> lines;
  std::string timer;             ///< empty: from progress bars; else the Megatron timer compared
};

/// The job's step time rose and stayed up before it failed: from one rank's
/// own stream of progress lines (a tqdm bar's rate, Megatron's elapsed time
/// per iteration), the one with the most timed lines.
struct Slowdown {
  std::string label;               ///< the bar's description, or "iteration" for Megatron
  int rank = -1;                   ///< whose lines; -1 when no rank is known
  double before_seconds = 0;       ///< median seconds per step before
  double after_seconds = 0;        ///< median of the last steps
  int64_t from_step = -1;          ///< the first step of the slow stretch
  int64_t from_ts_us = 0;          ///< and its time (0: the line had none)
  std::vector<Located> lines;      ///< a line before, the first slow one, the last one
};

/// fr_trace's first verdict from the ranks' Flight Recorder dumps: the first
/// collective of a process group that not every rank enqueued.
struct FrMissingRanks {
  std::string pg_id;
  int64_t seq = -1;                ///< collective_seq_id
  std::string op;                  ///< its profiling name on the ranks that enqueued it
  std::vector<int> missing, joined;
  std::vector<Located> lines;      ///< the missing ranks' dumps, then one joined rank's
};

/// The first collective of a process group whose ranks' Flight Recorder
/// entries disagree: fr_trace's "Collective sequence number: N has errors",
/// each rank compared with the first dump's (fr_trace's culprits).
struct FrMismatch {
  std::string pg_id;
  int64_t seq = -1;
  int reference_rank = -1;
  std::string op;                  ///< the reference rank's profiling name
  std::string what;                ///< "collective type", "input sizes", "output sizes" or "dtypes"
  std::string expected, found;     ///< the reference rank's value, the first culprit's
  std::vector<int> culprits;
  std::vector<Located> lines;      ///< the culprits' entries, then the reference rank's
};

/// Two ranks of one communicator whose Init lines name one host and one GPU
/// (bus id), neither of which finished its init (duplicate_gpu.cc).
struct DuplicateGpu {
  std::string host, bus_id;
  std::vector<int> comm_ranks;     ///< their ranks in the communicator
  std::vector<int> ranks;          ///< their global ranks, where the lines have one
  std::vector<Located> lines;      ///< the two Init START lines
};

struct JobFacts {
  int64_t job_id = 0;
  std::string job;
  int world_size = 0;
  std::set<int> ranks;
  std::map<int, std::string> host_of_rank;
  std::vector<TimeoutRecord> timeouts;
  std::set<int> cut_timeout_ranks;               ///< reported a timeout in a line cut before its record
  std::vector<StatusRecord> statuses;
  std::vector<Failure> failures;                 ///< tracebacks and hard exits, in time order
  std::optional<Located> launcher_first_failed;  ///< the exit of the one rank the launcher says failed first
  std::map<std::string, std::string> nccl_env;   ///< NCCL_* set by environment
  std::map<std::string, std::vector<Located>> nccl_versions;  ///< version -> banners
  std::vector<CollStats> coll_stats;             ///< per rank, world-size communicator
  std::vector<std::string> interfaces;           ///< NCCL_SOCKET_IFNAME candidates seen
  std::vector<std::string> hcas;                 ///< IB devices seen
  std::map<int, int64_t> fr_last_enqueued;       ///< Flight Recorder, per rank
  std::set<int> reported_culprits;               ///< named by PyTorch's desync/mismatch reports
  std::set<int> awaited_rank0;                   ///< said they waited for rank 0's ncclUniqueId
  std::vector<ProgressBar> last_bars;            ///< each rank's last step-counting bar per loop
  std::optional<UnevenBatches> uneven_batches;   ///< from the ranks' progress bars
  std::optional<SlowHost> slow_host;
  std::optional<Slowdown> slowdown;              ///< the job stepped slower before it failed
  std::optional<FrMissingRanks> fr_missing;
  std::optional<FrMismatch> fr_mismatch;
  std::optional<DuplicateGpu> duplicate_gpu;     ///< from NCCL's Init lines
  bool mismatch_same_op = false;                 ///< mismatch reports name one op, differing in shape only
  std::vector<IgnoredSetting> ignored_settings;  ///< NCCL_* set but not read by this NCCL
  int64_t lines_total = 0;
};

Result<JobFacts> load_facts(store::Connection& db, int64_t job_id);

/// Fills `cut_timeout_ranks`: a rank whose watchdog report was cut before its
/// record ("[Rank 1] Watchdog caught colle", a paste clipped at the terminal's
/// width) timed out too, in a collective the cut hides. It scans every stored
/// line, so diagnose reads it only when the silence analysis needs it.
Status load_cut_timeout_ranks(store::Connection& db, JobFacts& f);

/// The columns every located query selects first, in read_located's order, of
/// an event `e` joined with its file `f`.
inline constexpr const char* kLocatedColumns =
    "f.rel_path, e.line_no, e.rank, e.host, coalesce(e.ts_us, 0), e.text";

/// A row whose first six columns are rel_path, line_no, rank, host, ts_us, text.
Located read_located(const store::Statement& row);

/// NCCL's setup chatter (channels, communicator lines, settings, transports,
/// banners): never what a rank was doing, never an error. An SQL list.
inline constexpr const char* kNcclChatterKinds =
    "('nccl_channel', 'nccl_comm', 'nccl_env', 'nccl_network', 'nccl_version')";

/// The rows no rule pattern reads, and the bulk of a big job's events: NCCL's
/// start-up chatter (the banners and settings, few and read by version gates,
/// are not among them) and the training loop's progress lines (a bar, a
/// metrics dict, an iteration line: its status, never an error; text glued
/// after a bar is split off as a line of its own by the framer). The progress
/// analyses read training_progress themselves.
inline constexpr const char* kUnscannedBulkKinds =
    "('nccl_channel', 'nccl_comm', 'nccl_network', 'training_progress')";

/// An SQL condition on `e` (events, job in ?1): the event is not of `kinds`.
/// It is spelled as the kinds that remain, so that SQLite seeks each of them
/// in the (job_id, kind) index: the rows of `kinds`, most of a big job's, are
/// never read (NOT IN walked the index over all of them: 0.7 s of app-4096's
/// 3.9 M rows). The rows come in event order all the same.
std::string event_kind_not_in(const char* kinds);

/// Earlier first; lines without a time after those with one, then by file and line.
inline bool earlier(const Located& x, const Located& y) {
  if ((x.ts_us == 0) != (y.ts_us == 0)) return x.ts_us != 0;
  return std::tie(x.ts_us, x.file, x.line) < std::tie(y.ts_us, y.file, y.line);
}

/// Of the NCCL_* variables the job's lines set (`NCCL_X=value`, each with
/// the first line that sets it: the line scan's), those that the job's NCCL
/// version does not read (settings_check.cc).
Result<std::vector<IgnoredSetting>> ignored_nccl_settings(const std::map<std::string, Located>& assignments,
                                                          const JobFacts& facts);

/// The last lines a rank wrote before its first failure line: what it was
/// doing when the others waited.
Result<std::vector<Located>> rank_tail(store::Connection& db, int64_t job_id, int rank, int max_lines);
/// The same for many ranks in one pass over the stored lines (every rank
/// gets an entry, empty when it wrote nothing).
Result<std::map<int, std::vector<Located>>> rank_tails(store::Connection& db, int64_t job_id,
                                                       const std::set<int>& ranks, int max_lines);

/// SQL (an expression) for a bound below which a file's last stored lines of
/// `kind` up to a line need not be looked for: the first line of the last
/// `blocks` blocks of that kind that hold a line at or before `upto` (0 when
/// none). With it, the virtual table decodes those blocks only. `file`,
/// `upto` and `blocks` are SQL expressions. Every block but a file's last of
/// a kind holds store::kMinLineBlockRows lines or more.
std::string last_blocks_bound_sql(const char* kind, const std::string& file, const std::string& upto,
                                  const std::string& blocks);

/// The last lines of `at`'s file up to it (not channel or init chatter):
/// what the job was doing just before a timeout, when no culprit is known.
/// `at` itself is included: a progress bar is often glued in front of it.
Result<std::vector<Located>> lines_before(store::Connection& db, int64_t job_id, const Located& at, int max_lines);

}  // namespace ncclpm::diagnose
