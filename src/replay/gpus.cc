// src/replay/gpus.cc
//
// What CUDA and NCCL say about this machine. Called only for real runs: a
// dry run makes no CUDA call, so it works where there is no driver.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "ncclpm/replay/engine.h"

namespace ncclpm::replay {

Result<std::vector<plan::GpuInfo>> visible_gpus() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::string why = e == cudaErrorInsufficientDriver
                          ? "no NVIDIA driver, or one older than this CUDA runtime: " +
                                std::string(cudaGetErrorString(e))
                      : e != cudaSuccess ? std::string(cudaGetErrorString(e))
                                         : "the CUDA runtime reports 0 devices";
    return Error::plain(
        "no CUDA device visible (" + why + ")",
        "replay runs on GPUs: check nvidia-smi and CUDA_VISIBLE_DEVICES; --dry-run needs no GPU");
  }
  std::vector<plan::GpuInfo> gpus;
  for (int d = 0; d < count; ++d) {
    plan::GpuInfo g;
    g.device = d;
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, d) == cudaSuccess) {
      g.name = prop.name;
      g.memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    }
    char bus[32] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) == cudaSuccess) g.bus_id = bus;
    gpus.push_back(std::move(g));
  }
  return gpus;
}

std::string nccl_version() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess || v <= 0) return {};
  // Since 2.9 the code is major * 10000 + minor * 100 + patch.
  if (v >= 20900)
    return std::to_string(v / 10000) + "." + std::to_string(v % 10000 / 100) + "." +
           std::to_string(v % 100);
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 100) + "." +
         std::to_string(v % 100);
}

}  // namespace ncclpm::replay
