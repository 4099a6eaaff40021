// src/recognize/events.cc
#include "ncclpm/recognize/events.h"

namespace ncclpm::recognize {

const char* event_kind_name(EventKind k) {
  switch (k) {
    case EventKind::kNcclVersion: return "nccl_version";
    case EventKind::kNcclEnv: return "nccl_env";
    case EventKind::kNcclNetwork: return "nccl_network";
    case EventKind::kNcclComm: return "nccl_comm";
    case EventKind::kNcclChannel: return "nccl_channel";
    case EventKind::kNcclWarn: return "nccl_warn";
    case EventKind::kNcclErrorTrace: return "nccl_error_trace";
    case EventKind::kWorkRecord: return "work_record";
    case EventKind::kPgStatus: return "pg_status";
    case EventKind::kDesyncReport: return "desync_report";
    case EventKind::kCollectiveMismatch: return "collective_mismatch";
    case EventKind::kWatchdogStuck: return "watchdog_stuck";
    case EventKind::kNcclErrorSurfaced: return "nccl_error_surfaced";
    case EventKind::kPgTerminate: return "pg_terminate";
    case EventKind::kDumpSignal: return "dump_signal";
    case EventKind::kCppException: return "cpp_exception";
    case EventKind::kTraceback: return "traceback";
    case EventKind::kProcessExit: return "process_exit";
    case EventKind::kSignalSent: return "signal_sent";
    case EventKind::kStoreError: return "store_error";
    case EventKind::kFlightRecorder: return "flight_recorder";
    case EventKind::kTrainingProgress: return "training_progress";
    case EventKind::kRankTimers: return "rank_timers";
    case EventKind::kCount_: break;
  }
  return "unknown";
}

}  // namespace ncclpm::recognize
