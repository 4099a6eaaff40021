// src/replay/deadline.h
//
// Waiting without hanging: every wait in the replay engine polls against a
// Deadline and an interrupt flag (Ctrl-C) instead of blocking in NCCL or
// CUDA. A failed call is a CallError naming the local rank and the call.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

namespace ncclpm::replay {

class Deadline {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Deadline(int64_t ms) : at_(Clock::now() + std::chrono::milliseconds(ms)) {}
  bool passed() const { return Clock::now() >= at_; }
  int64_t remaining_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
  }

 private:
  Clock::time_point at_;
};

enum class Wait { kDone, kFailed, kTimedOut, kInterrupted };

/// A failed CUDA or NCCL call on one of this process's GPUs.
struct CallError {
  int local = 0;        ///< index of the local GPU (0 when it concerns all)
  std::string call;     ///< "ncclCommInitRankConfig"
  std::string message;  ///< "unhandled system error"
};

/// Sleeps a little longer each time, up to 1 ms: short collectives are seen
/// finishing within microseconds, long waits do not spin a core.
class Backoff {
 public:
  void pause() {
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = us_ < 1000 ? us_ * 2 : 1000;
  }

 private:
  int us_ = 10;
};

inline bool stop_requested(const std::atomic<bool>* flag) {
  return flag != nullptr && flag->load(std::memory_order_relaxed);
}

}  // namespace ncclpm::replay
