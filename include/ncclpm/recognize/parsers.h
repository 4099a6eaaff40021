// include/ncclpm/recognize/parsers.h
//
// One parser per message family, each a pure function of a framed line's
// body (prefixes already peeled). Each is guarded by a cheap literal check so
// that the common case, a line it does not know, costs a substring search.
// The formats and their version history are in shared/log-formats.md; the
// section is named beside each parser.
#pragma once

#include <optional>
#include <string_view>

#include "ncclpm/recognize/events.h"

namespace ncclpm::recognize {

// --- NCCL (log-formats A) ---------------------------------------------------
std::optional<NcclVersion> parse_nccl_version(std::string_view body);      // A.2
/// The version PyTorch names at the end of an NCCL error it raises (B.6).
std::optional<NcclVersion> parse_embedded_nccl_version(std::string_view text);
/// The version vLLM's or SGLang's own NCCL wrapper (pynccl) says it loaded.
std::optional<NcclVersion> parse_framework_nccl_version(std::string_view text);
std::optional<EnvSetting> parse_nccl_env(std::string_view body);           // A.3 ENV
std::optional<CommInfo> parse_nccl_comm(std::string_view body);            // A.3 init/summary
std::optional<CollectiveCall> parse_nccl_coll(std::string_view body);      // A.5
/// The same, into `out`, whose strings then point into `body` (the hot path:
/// no copy); false leaves `out` partly set.
bool parse_nccl_coll(std::string_view body, CollectiveLine& out);
std::optional<NcclWarning> parse_nccl_warn(std::string_view body);         // A.8
std::optional<ErrorTrace> parse_nccl_error_trace(std::string_view body);   // A.4
/// NCCL's INFO lines that report a failure (error traces, RAS, IB recovery,
/// connects it retries) carry one of these words, in any case; most INFO
/// lines are start-up chatter that carries none.
inline constexpr std::string_view kNcclInfoFailureWords[] = {"fail", "timeout", "closed", "error", "retrying"};
bool reports_failure(std::string_view nccl_info_body);
/// A transport or bootstrap choice ("Using network IB", "NET/IB : Using
/// [0]mlx5_0:1/IB"), not one that reports a failure ("NET/IB: mlx5_0: Port
/// recovery failed ...", which NCCL also prints at INFO).
bool is_nccl_network_line(std::string_view body);                          // A.3 transports
bool is_nccl_channel_line(std::string_view body);                          // A.3 rings/trees

// --- PyTorch ProcessGroupNCCL (log-formats B) --------------------------------
std::optional<WorkRecord> parse_work_record(std::string_view body);        // B.3, B.4
/// A watchdog's timeout whose line was cut inside its WorkNCCL(...) (a search
/// excerpt, a terminal's width) and never rejoined: the fields before the cut;
/// cut before WorkNCCL( ("Watchdog caught collective oper"), none of them.
/// `from_process_group_nccl`: the line is ProcessGroupNCCL.cpp's with its
/// [Rank N] prefix, where a cut down to "Watchdog c" is still the sentence.
std::optional<WorkRecord> parse_cut_watchdog_timeout(std::string_view body, bool from_process_group_nccl = false);
std::optional<PgStatus> parse_pg_status(std::string_view body);            // B.4
std::optional<DesyncReport> parse_desync_line(std::string_view body);      // B.8
std::optional<Mismatch> parse_collective_mismatch(std::string_view body);  // B.8 DETAIL
/// The rank that says it waited in vain for rank 0's ncclUniqueId through the
/// store ("[3] is setting up NCCL communicator and retrieving ncclUniqueId from
/// [0] via c10d key-value store ...", PyTorch 1.11+, "communicators ... from
/// roots" 2.8+): the rank in its process group. -1 for any other text.
int rank_awaiting_unique_id(std::string_view text);

/// The index of the process torch.multiprocessing.spawn names in its report
/// of a worker's death (spawn.py: "-- Process 3 terminated with the following
/// error:" above the worker's own traceback; "process 3 terminated with exit
/// code 1", "process 0 terminated with signal SIGKILL"): the worker's local
/// rank. -1 when the text is no such report.
int spawned_process_index(std::string_view text);

/// A frame line of a Python traceback as the interpreter prints it
/// (traceback.c: `  File "%U", line %d, in %U`), at any indentation.
/// faulthandler's and py-spy's dumps of a live process have no comma before "in".
bool is_python_frame(std::string_view line);
/// Other ProcessGroupNCCL / c10d messages that matter to a diagnosis:
/// kWatchdogStuck, kPgTerminate, kDumpSignal, kNcclErrorSurfaced, kStoreError,
/// kCppException. nullopt for anything else.
std::optional<EventKind> classify_pytorch_message(std::string_view body);

// --- training loops: how far each rank got ------------------------------------
/// A tqdm bar (`Epoch 0:  45%|####5     | 450/1000 [10:00<12:13,  1.33s/it]`),
/// a Transformers Trainer metrics dict (`{'loss': 1.2, ..., 'epoch': 0.5}`) or
/// a Megatron-LM iteration line (` iteration  100/ 500 | ... elapsed time per
/// iteration (ms): 1234.5 | ... lm loss: 2.1E+00 |`). nullopt for anything else.
std::optional<TrainingProgress> parse_training_progress(std::string_view body);

/// The first line of a Megatron-LM timer report (megatron/core/timers.py):
/// "times across ranks (ms):" -> "all", "(min, max) time across ranks (ms):"
/// -> "minmax", "max time across ranks (ms):" -> "max"; nullopt otherwise.
std::optional<std::string> parse_rank_timers_header(std::string_view body);
/// A following line of the report: a timer's name ("  forward-compute:",
/// becomes `timer`), a rank's time under it ("     rank  3: 1234.56"), or a
/// timer with its range or maximum ("    forward-compute ....: (12.30, 45.60)").
/// Adds what it reads to `report`; false when the line is not of the report.
bool parse_rank_timer_line(std::string_view body, std::string& timer, RankTimers& report);

// --- launchers (log-formats C, D) -------------------------------------------
std::optional<ProcessExit> parse_process_exit(std::string_view body);      // C.2, D
std::optional<SignalSent> parse_signal_sent(std::string_view body);        // C.2

/// The machine a process says it runs on, in a line of its own about itself:
/// a banner ("Hostname: cn-251", RETURNN's "Torch: Hostname cn-229, pid
/// 116429, using GPU 2."), or nccl-tests' lines, which start with the host
/// ("node1: Test CUDA failure common.cu:891 '...'", " .. node1 pid 5434: Test
/// failure common.cu:891", "#  Rank  3 Group  0 Pid  54340 on node1 device  3
/// [0x18] NVIDIA H100"). The pid and the rank where the line gives them (else -1).
struct DeclaredHost {
  std::string host;
  int64_t pid = -1;
  int rank = -1;
};
std::optional<DeclaredHost> parse_declared_host(std::string_view body);

}  // namespace ncclpm::recognize
