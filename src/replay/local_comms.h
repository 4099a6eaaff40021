// src/replay/local_comms.h
//
// The NCCL communicators of this process's GPUs (one rank per GPU), created
// non-blocking (ncclConfig_t.blocking = 0) so that no NCCL call can hang the
// process: calls return ncclInProgress and wait_ready() polls
// ncclCommGetAsyncError against a deadline. Destruction aborts whatever is
// still alive; finalize() is the orderly end after a successful replay.
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <optional>
#include <vector>

#include "deadline.h"

namespace ncclpm::replay {

/// "unhandled system error: <ncclGetLastError>"; NCCL's "(run with
/// NCCL_DEBUG=INFO for details)" is left to the hint.
std::string nccl_message(ncclResult_t r, ncclComm_t comm);

class LocalComms {
 public:
  LocalComms() = default;
  LocalComms(const LocalComms&) = delete;
  LocalComms& operator=(const LocalComms&) = delete;
  ~LocalComms() { abort_all(); }

  /// Creates a non-blocking stream per device and starts the init of every
  /// local rank in one NCCL group; wait_ready() tells when they are done.
  std::optional<CallError> start_init(const std::vector<int>& devices, int nranks, int first_rank,
                                      const ncclUniqueId& id);
  /// Polls every communicator until none is in progress. `call` names what
  /// is being waited for, for the error message.
  Wait wait_ready(const Deadline& deadline, const std::atomic<bool>* stop, const char* call,
                  CallError* err);
  /// Reports an asynchronous error on any communicator (ncclSuccess and
  /// ncclInProgress are fine); used while CUDA events are polled.
  std::optional<CallError> async_error(const char* call);

  /// ncclCommFinalize then ncclCommDestroy, within the deadline; aborts on failure.
  std::optional<CallError> finalize(const Deadline& deadline, const std::atomic<bool>* stop);
  /// ncclCommAbort on every live communicator: kernels stop, peers see an error.
  void abort_all();

  size_t size() const { return comms_.size(); }
  ncclComm_t comm(size_t i) const { return comms_[i]; }
  cudaStream_t stream(size_t i) const { return streams_[i]; }
  int device(size_t i) const { return devices_[i]; }

 private:
  std::vector<int> devices_;
  std::vector<ncclComm_t> comms_;
  std::vector<cudaStream_t> streams_;
};

}  // namespace ncclpm::replay
