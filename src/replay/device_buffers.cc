// src/replay/device_buffers.cc
#include "device_buffers.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <string>

#include "ncclpm/plan/data_pattern.h"
#include "ncclpm/plan/rank_wire.h"
#include "ncclpm/vocab/nccl_enums.h"

namespace ncclpm::replay {
namespace {

constexpr int64_t kChunkBytes = int64_t{64} << 20;  // host staging for fill and check

CallError cuda_error(size_t local, const char* call, cudaError_t e, const std::string& what = {}) {
  return CallError{static_cast<int>(local), call + what, cudaGetErrorString(e)};
}

}  // namespace

DeviceBuffers::~DeviceBuffers() {
  for (Local& l : locals_) {
    cudaSetDevice(l.device);
    for (void* p : {l.send, l.recv, l.wire_in, l.wire_out})
      if (p != nullptr) cudaFree(p);
  }
}

std::optional<CallError> DeviceBuffers::allocate(const plan::CollectivePlan& p,
                                                 const std::vector<int>& devices) {
  int size = vocab::datatype_size(p.datatype);
  send_bytes_ = plan::send_elements(p) * size;
  recv_bytes_ = plan::recv_elements(p) * size;
  locals_.assign(devices.size(), Local{});
  for (size_t i = 0; i < devices.size(); ++i) {
    Local& l = locals_[i];
    l.device = devices[i];
    if (cudaError_t e = cudaSetDevice(l.device); e != cudaSuccess)
      return cuda_error(i, "cudaSetDevice", e);
    auto alloc = [&](void** ptr, int64_t bytes) -> std::optional<CallError> {
      cudaError_t e = cudaMalloc(ptr, static_cast<size_t>(std::max<int64_t>(bytes, 1)));
      if (e != cudaSuccess)
        return cuda_error(i, "cudaMalloc", e, "(" + std::to_string(bytes) + " bytes)");
      return std::nullopt;
    };
    if (auto e = alloc(&l.send, send_bytes_)) return e;
    if (auto e = alloc(&l.recv, recv_bytes_)) return e;
    if (auto e = alloc(&l.wire_in, sizeof(plan::RankWire))) return e;
    if (auto e = alloc(&l.wire_out,
                       static_cast<int64_t>(sizeof(plan::RankWire)) * std::max(1, p.nranks)))
      return e;
  }
  return std::nullopt;
}

std::optional<CallError> DeviceBuffers::fill(const plan::CollectivePlan& p, int first_rank,
                                             bool check) {
  int size = vocab::datatype_size(p.datatype);
  std::vector<std::byte> host;
  if (check) host.resize(static_cast<size_t>(std::min(send_bytes_, kChunkBytes / size * size)));
  for (size_t i = 0; i < locals_.size(); ++i) {
    Local& l = locals_[i];
    cudaSetDevice(l.device);
    if (cudaError_t e = cudaMemset(l.recv, 0, static_cast<size_t>(recv_bytes_)); e != cudaSuccess)
      return cuda_error(i, "cudaMemset", e);
    if (!check) {
      if (cudaError_t e = cudaMemset(l.send, 0, static_cast<size_t>(send_bytes_)); e != cudaSuccess)
        return cuda_error(i, "cudaMemset", e);
      continue;
    }
    int rank = first_rank + static_cast<int>(i);
    for (int64_t off = 0; off < send_bytes_; off += static_cast<int64_t>(host.size())) {
      int64_t n = std::min<int64_t>(static_cast<int64_t>(host.size()), send_bytes_ - off);
      std::span<std::byte> chunk(host.data(), static_cast<size_t>(n));
      plan::fill_send(p, rank, off / size, chunk);
      cudaError_t e = cudaMemcpy(static_cast<char*>(l.send) + off, host.data(),
                                 static_cast<size_t>(n), cudaMemcpyHostToDevice);
      if (e != cudaSuccess) return cuda_error(i, "cudaMemcpy", e);
    }
  }
  // The memsets run on the legacy stream; finish them before NCCL's streams start.
  for (size_t i = 0; i < locals_.size(); ++i) {
    cudaSetDevice(locals_[i].device);
    if (cudaError_t e = cudaDeviceSynchronize(); e != cudaSuccess)
      return cuda_error(i, "cudaDeviceSynchronize", e);
  }
  return std::nullopt;
}

std::optional<CallError> DeviceBuffers::check(const plan::CollectivePlan& p, int first_rank,
                                              std::vector<int64_t>* wrong) {
  int size = vocab::datatype_size(p.datatype);
  wrong->assign(locals_.size(), 0);
  std::vector<std::byte> host(
      static_cast<size_t>(std::min(recv_bytes_, kChunkBytes / size * size)));
  for (size_t i = 0; i < locals_.size(); ++i) {
    int rank = first_rank + static_cast<int>(i);
    if (!plan::receives_result(p, rank)) continue;
    Local& l = locals_[i];
    cudaSetDevice(l.device);
    for (int64_t off = 0; off < recv_bytes_; off += static_cast<int64_t>(host.size())) {
      int64_t n = std::min<int64_t>(static_cast<int64_t>(host.size()), recv_bytes_ - off);
      cudaError_t e = cudaMemcpy(host.data(), static_cast<const char*>(l.recv) + off,
                                 static_cast<size_t>(n), cudaMemcpyDeviceToHost);
      if (e != cudaSuccess) return cuda_error(i, "cudaMemcpy", e);
      (*wrong)[i] += plan::count_wrong(
          p, rank, off / size, std::span<const std::byte>(host.data(), static_cast<size_t>(n)));
    }
  }
  return std::nullopt;
}

}  // namespace ncclpm::replay
