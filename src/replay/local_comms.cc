// src/replay/local_comms.cc
#include "local_comms.h"

#include <string>

namespace ncclpm::replay {

std::string nccl_message(ncclResult_t r, ncclComm_t comm) {
  std::string s = ncclGetErrorString(r);
  if (size_t cut = s.find(" (run with"); cut != std::string::npos) s.resize(cut);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') s += ": " + std::string(last);
  return s;
}

std::optional<CallError> LocalComms::start_init(const std::vector<int>& devices, int nranks,
                                                int first_rank, const ncclUniqueId& id) {
  devices_ = devices;
  comms_.assign(devices.size(), nullptr);
  streams_.assign(devices.size(), nullptr);
  for (size_t i = 0; i < devices.size(); ++i) {
    cudaError_t e = cudaSetDevice(devices[i]);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&streams_[i], cudaStreamNonBlocking);
    if (e != cudaSuccess)
      return CallError{static_cast<int>(i), "cudaStreamCreateWithFlags", cudaGetErrorString(e)};
  }
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // every NCCL call returns at once; we poll
  config.commName = "ncclpm-replay";
  ncclResult_t r = ncclGroupStart();
  if (r != ncclSuccess) return CallError{0, "ncclGroupStart", nccl_message(r, nullptr)};
  for (size_t i = 0; i < devices.size(); ++i) {
    cudaSetDevice(devices[i]);  // NCCL takes the communicator's GPU from the current device
    r = ncclCommInitRankConfig(&comms_[i], nranks, id, first_rank + static_cast<int>(i), &config);
    if (r != ncclSuccess && r != ncclInProgress) {
      ncclGroupEnd();
      return CallError{static_cast<int>(i), "ncclCommInitRankConfig", nccl_message(r, comms_[i])};
    }
  }
  r = ncclGroupEnd();
  if (r != ncclSuccess && r != ncclInProgress)
    return CallError{0, "ncclCommInitRankConfig", nccl_message(r, nullptr)};
  return std::nullopt;
}

std::optional<CallError> LocalComms::async_error(const char* call) {
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i] == nullptr) continue;
    ncclResult_t state = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comms_[i], &state);
    if (r != ncclSuccess)
      return CallError{static_cast<int>(i), "ncclCommGetAsyncError", nccl_message(r, comms_[i])};
    if (state != ncclSuccess && state != ncclInProgress)
      return CallError{static_cast<int>(i), call, nccl_message(state, comms_[i])};
  }
  return std::nullopt;
}

Wait LocalComms::wait_ready(const Deadline& deadline, const std::atomic<bool>* stop,
                            const char* call, CallError* err) {
  Backoff backoff;
  for (;;) {
    bool pending = false;
    for (size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i] == nullptr) continue;
      ncclResult_t state = ncclSuccess;
      ncclResult_t r = ncclCommGetAsyncError(comms_[i], &state);
      if (r != ncclSuccess) {
        *err = CallError{static_cast<int>(i), "ncclCommGetAsyncError", nccl_message(r, comms_[i])};
        return Wait::kFailed;
      }
      if (state == ncclInProgress) {
        pending = true;
      } else if (state != ncclSuccess) {
        *err = CallError{static_cast<int>(i), call, nccl_message(state, comms_[i])};
        return Wait::kFailed;
      }
    }
    if (!pending) return Wait::kDone;
    if (stop_requested(stop)) return Wait::kInterrupted;
    if (deadline.passed()) return Wait::kTimedOut;
    backoff.pause();
  }
}

std::optional<CallError> LocalComms::finalize(const Deadline& deadline,
                                              const std::atomic<bool>* stop) {
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i] == nullptr) continue;
    ncclResult_t r = ncclCommFinalize(comms_[i]);
    if (r != ncclSuccess && r != ncclInProgress) {
      CallError e{static_cast<int>(i), "ncclCommFinalize", nccl_message(r, comms_[i])};
      abort_all();
      return e;
    }
  }
  CallError err;
  if (Wait w = wait_ready(deadline, stop, "ncclCommFinalize", &err); w != Wait::kDone) {
    if (w != Wait::kFailed)
      err = CallError{0, "ncclCommFinalize", "did not finish before the deadline"};
    abort_all();
    return err;
  }
  for (size_t i = 0; i < comms_.size(); ++i) {
    if (comms_[i] == nullptr) continue;
    ncclCommDestroy(comms_[i]);
    comms_[i] = nullptr;
  }
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (streams_[i] == nullptr) continue;
    cudaSetDevice(devices_[i]);
    cudaStreamDestroy(streams_[i]);
    streams_[i] = nullptr;
  }
  return std::nullopt;
}

void LocalComms::abort_all() {
  // Streams are left to process exit: their work may be what never finished.
  for (ncclComm_t& c : comms_) {
    if (c == nullptr) continue;
    ncclCommAbort(c);
    c = nullptr;
  }
}

}  // namespace ncclpm::replay
