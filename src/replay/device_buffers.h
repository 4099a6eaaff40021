// src/replay/device_buffers.h
//
// Send and receive buffers on each local GPU, sized by the plan, plus a small
// pair for exchanging RankWire results. With --check the send buffers get the
// pattern of plan/data_pattern.h and the receive buffers zeros (never an
// expected value), and check() copies the results back in chunks and counts
// wrong elements; without it both are zeroed, which costs no host time.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "deadline.h"
#include "ncclpm/plan/collective_plan.h"

namespace ncclpm::replay {

class DeviceBuffers {
 public:
  struct Local {
    int device = -1;
    void* send = nullptr;
    void* recv = nullptr;
    void* wire_in = nullptr;   ///< one RankWire
    void* wire_out = nullptr;  ///< nranks RankWires
  };

  DeviceBuffers() = default;
  DeviceBuffers(const DeviceBuffers&) = delete;
  DeviceBuffers& operator=(const DeviceBuffers&) = delete;
  ~DeviceBuffers();

  /// Allocates every buffer on `devices` (local rank i is rank first_rank + i).
  std::optional<CallError> allocate(const plan::CollectivePlan& p, const std::vector<int>& devices);
  /// Writes the send pattern (check) or zeros, and zeros the receive buffers.
  std::optional<CallError> fill(const plan::CollectivePlan& p, int first_rank, bool check);
  /// Counts wrong result elements on each local rank.
  std::optional<CallError> check(const plan::CollectivePlan& p, int first_rank,
                                 std::vector<int64_t>* wrong);

  /// After a hang: cudaFree would wait for the stuck kernels, so the memory is
  /// left to process exit.
  void leak() { locals_.clear(); }

  Local& local(size_t i) { return locals_[i]; }

 private:
  std::vector<Local> locals_;
  int64_t send_bytes_ = 0, recv_bytes_ = 0;
};

}  // namespace ncclpm::replay
