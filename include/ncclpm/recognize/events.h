// include/ncclpm/recognize/events.h
//
// The typed events that recognizers produce from framed lines, before they
// are stored. Every event keeps who said it (host, pid, ranks, device), when,
// and where (file line range); its payload is one of the typed records below.
// High-volume NCCL COLL lines are not events: they become CollectiveCall rows.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace ncclpm::recognize {

/// Stable names, stored in events.kind and documented in docs/schema.md.
enum class EventKind : uint8_t {
  kNcclVersion,        ///< NCCL version 2.21.5+cuda12.4
  kNcclEnv,            ///< NCCL_SOCKET_IFNAME set by environment to ib0
  kNcclNetwork,        ///< Using network IB / NET/IB : Using ... / Bootstrap : Using ...
  kNcclComm,           ///< Init START / Init COMPLETE / comm summary / Destroy / Abort
  kNcclChannel,        ///< Channel 00/32 : ..., Trees ..., Channel xx via P2P/NET/SHM
  kNcclWarn,           ///< NCCL WARN line, error decoded
  kNcclErrorTrace,     ///< NCCL INFO file.cc:123 -> 6
  kWorkRecord,         ///< ProcessGroupNCCL WorkNCCL(...) record (watchdog timeout, ...)
  kPgStatus,           ///< last enqueued / last completed status lines
  kDesyncReport,       ///< TORCH_NCCL_DESYNC_DEBUG report
  kCollectiveMismatch, ///< TORCH_DISTRIBUTED_DEBUG=DETAIL mismatch
  kWatchdogStuck,      ///< heartbeat monitor: watchdog got stuck / terminating process
  kNcclErrorSurfaced,  ///< NCCL error surfaced by PyTorch: NCCL error in: ..., ncclRemoteError
  kPgTerminate,        ///< watchdog thread terminated / taking the entire process down
  kDumpSignal,         ///< flight recorder dump coordination messages
  kCppException,       ///< terminate called after throwing ... / Exception raised from ...
  kTraceback,          ///< Python traceback, one event for the whole block
  kProcessExit,        ///< a process ended: elastic summary, failed (exitcode), srun, DeepSpeed
  kSignalSent,         ///< Sending process N closing signal SIGTERM
  kStoreError,         ///< TCPStore / rendezvous errors (a cascade symptom)
  kFlightRecorder,     ///< a Flight Recorder dump file (its entries go to their own table)
  kTrainingProgress,   ///< a progress bar, a Trainer metrics dict, a Megatron iteration line
  kRankTimers,         ///< Megatron's timers across ranks: "times across ranks (ms):" and its lines
  kCount_
};
const char* event_kind_name(EventKind k);

struct NcclVersion {
  std::string version;  ///< "2.21.5"
  std::string cuda;     ///< "12.4"
};

struct EnvSetting {
  std::string name, value;
};

struct CommInfo {
  std::string event;  ///< "init_start", "init_complete", "summary", "destroy", "abort", "revoke"
  std::string api;    ///< ncclCommInitRank, ncclCommSplit, ...
  std::string comm;   ///< 0x55d5a8b3c2d0
  std::string comm_id, bus_id, parent;
  int rank = -1, nranks = -1, nnodes = -1, local_ranks = -1, local_rank = -1;
  int cuda_dev = -1, nvml_dev = -1;
};

struct NcclWarning {
  std::string category;      ///< ib_completion, ib_async, socket, cuda, duplicate_gpu, ...
  int64_t ib_status = -1;    ///< ibv_wc_status
  std::string ib_status_name;
  std::string peer;          ///< ip<port> or host<port>
  std::string hca;           ///< mlx5_2
  std::string detail;        ///< strerror text, CUDA error string, ...
};

struct ErrorTrace {
  std::string src_file;
  int src_line = -1;
  int result = -1;            ///< ncclResult_t
};

/// A WorkNCCL(...) record in any PyTorch era (log-formats B.3).
struct WorkRecord {
  std::string context;      ///< watchdog_timeout, terminate_exception, blocking_wait,
                            ///< async_exception, mention
  int64_t seq = -1;
  std::string op_type;      ///< _ALLGATHER_BASE, ALLREDUCE, ...
  int64_t numel_in = -1, numel_out = -1;
  std::string tensor_shape; ///< 1.x eras
  int64_t timeout_ms = -1;
  int64_t ran_for_ms = -1;
};

/// "last enqueued / last completed" status lines (log-formats B.4).
struct PgStatus {
  std::string wording;      ///< timeout_at, exception_detected, failure_detected, dump_signal, periodic
  int64_t seq = -1;         ///< the failing work's seq, when the line names one
  int64_t last_enqueued = -1, last_completed = -1;
  std::string source_rank;  ///< dump signal: "this local rank" or "rank 7"
};

struct DesyncReport {
  int64_t seq = -1;
  std::string op_type;
  int reporter_rank = -1;
  std::string lagging_ranks;  ///< "[1, 5]" as printed
  std::string kind;           ///< never_joined, joined_not_finished, finished_not_joined
};

struct Mismatch {
  int rank_a = -1, rank_b = -1;
  int64_t seq = -1;
  std::string op_a, op_b;
};

struct Traceback {
  std::string exc_type;     ///< torch.OutOfMemoryError
  std::string exc_message;  ///< first line of the message (+ following lines, capped)
  std::string last_file, last_func;
  int last_line = -1;
  int frames = 0;
};

struct ProcessExit {
  std::string source;   ///< elastic_summary, elastic_failed, error_json, srun, mpirun, deepspeed, ...
  int rank = -1, local_rank = -1;
  int64_t pid = -1;
  int64_t exit_code = INT64_MIN;  ///< INT64_MIN: not known
  std::string signal;   ///< SIGABRT, SIGTERM, ...
  std::string host;
  std::string time;     ///< as printed
  std::string message;  ///< error.json message / traceback summary
  bool root_cause_block = false;  ///< listed under "Root Cause (first observed failure)"
};

struct SignalSent {
  int64_t pid = -1;
  std::string signal;
};

/// How far a training (or data preparation) loop got, as its own line says.
struct TrainingProgress {
  std::string source;            ///< tqdm, hf_metrics, megatron
  std::string label;             ///< a bar's description ("Epoch 0", "Map"); empty when it has none
  std::string unit;              ///< what a bar counts: "it" (steps), "examples", "ba"; empty: not said
  int64_t step = -1, total = -1; ///< n/total of a bar, iteration N/M; -1: not said
  double seconds_per_step = -1;  ///< s/it, 1/(it/s), Megatron's ms per iteration / 1000
  double epoch = -1, loss = -1;  ///< -1: not said
};

/// One value of a Megatron timer report (megatron/core/timers.py). With
/// `--timing-log-option all` each rank's time; with `minmax` the range over
/// ranks; with `max` the slowest rank's time.
struct RankTimerValue {
  std::string timer;   ///< forward-compute, backward-compute, batch-generator, ...
  int rank = -1;       ///< the rank it is of ("all"); -1 for min/max values
  double ms = -1;      ///< the rank's time ("all") or the max ("max")
  double min_ms = -1, max_ms = -1;  ///< "minmax"
};

struct RankTimers {
  std::string option;  ///< all, minmax, max: Megatron's --timing-log-option
  std::vector<RankTimerValue> values;
};

using Detail = std::variant<std::monostate, NcclVersion, EnvSetting, CommInfo, NcclWarning,
                            ErrorTrace, WorkRecord, PgStatus, DesyncReport, Mismatch, Traceback,
                            ProcessExit, SignalSent, TrainingProgress, RankTimers>;

struct Event {
  EventKind kind = EventKind::kNcclVersion;
  int64_t line_no = 0, end_line = 0, byte_offset = 0;
  std::string host;
  int64_t pid = -1, tid = -1;
  int rank = -1, local_rank = -1, device = -1, pg_rank = -1;
  std::string pg_id, pg_name, pg_desc;
  int64_t ts_us = 0;         ///< 0: no time on the line
  bool ts_has_year = false;
  char severity = 0;
  std::string text;          ///< the message (whole block for multi-line events)
  Detail detail;
};

/// One NCCL COLL line (log-formats A.5). Counts are per-rank elements.
/// `Text` is std::string for a call that is kept, std::string_view for one
/// that points into the line it was parsed from (the hot path: no copies).
template <typename Text>
struct BasicCollectiveCall {
  int64_t line_no = 0;
  Text host;
  int64_t pid = -1;
  int rank = -1, device = -1;
  int comm_rank = -1;    ///< the rank in `comm`, from the communicator's init line
  int64_t ts_us = 0;
  Text op;               ///< AllReduce, AllGather, ...
  uint64_t op_count = 0; ///< hex in the log
  int64_t count = 0;
  int datatype = -1, redop = -1, root = -1, nranks = -1;
  Text comm;

  /// The same call with its strings of another kind (copied or viewed).
  template <typename Other>
  BasicCollectiveCall<Other> as() const {
    return {line_no, Other(host), pid, rank, device, comm_rank, ts_us, Other(op), op_count,
            count, datatype, redop, root, nranks, Other(comm)};
  }
};
using CollectiveCall = BasicCollectiveCall<std::string>;
/// Valid only while the line it was parsed from is.
using CollectiveLine = BasicCollectiveCall<std::string_view>;

/// A line that no recognizer typed, kept with its attribution.
struct UnparsedLine {
  int64_t line_no = 0, byte_offset = 0;
  int64_t ts_us = 0;  ///< 0: no time on the line
  bool ts_has_year = false;
  std::string host;
  int rank = -1, local_rank = -1;
  int64_t pid = -1;
  std::string producer;
  char severity = 0;  ///< the producer's level letter ('E', 'W', ...), 0 when the line has none
  std::string text;   ///< clipped to kMaxUnparsedBytes
};

/// A line's global rank: `rank` when known, else its rank in the default
/// process group (PG 0, or a prefix that names no group), which is the global
/// one. Inference gives an event this rank; a stored line gets it at once.
inline int rank_or_default_pg(int rank, int pg_rank, std::string_view pg_id, std::string_view pg_desc) {
  bool default_pg = (pg_id.empty() || pg_id == "0") && (pg_desc.empty() || pg_desc == "default_pg");
  return rank < 0 && pg_rank >= 0 && default_pg ? pg_rank : rank;
}

/// One entry of a Flight Recorder dump (log-formats B.10).
struct FlightRecorderEntry {
  int rank = -1;
  std::string pg_id, pg_name, pg_desc;
  int64_t record_id = -1, collective_seq_id = -1, p2p_seq_id = -1, op_id = -1;
  std::string profiling_name, op, state;
  int is_p2p = 0, retired = 0;
  std::string input_sizes, output_sizes, input_dtypes, output_dtypes;
  int64_t numel_in = -1, numel_out = -1;
  int datatype = -1;
  int64_t timeout_ms = -1, time_created_ns = -1;
  double duration_ms = -1;
};

/// A Flight Recorder dump's per-process-group status.
struct FlightRecorderPgStatus {
  int rank = -1;
  std::string pg_id;
  int64_t last_enqueued = -1, last_started = -1, last_completed = -1;
};

inline constexpr size_t kMaxUnparsedBytes = 4096;
inline constexpr size_t kMaxEventTextBytes = 64 * 1024;

}  // namespace ncclpm::recognize
