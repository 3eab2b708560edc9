// Device discovery through the CUDA runtime. A missing driver is an ordinary answer
// ("no device"), because the same binary runs CPU-only on login and test nodes.
#include <cuda_runtime.h>

#include <string>

#include <fmt/format.h>

#include "abl/backend/cuda/device.h"

namespace abl::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error so later calls start clean
    return 0;
  }
  return n;
}

std::string device_summary() {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fmt::format("none usable ({})", cudaGetErrorString(err));
  }
  if (n == 0) return "none";
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) return fmt::format("{} (properties unavailable)", n);
  return fmt::format("{} x {} (sm_{}{}, {:.1f} GiB)", n, prop.name, prop.major, prop.minor,
                     static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0));
}

int64_t device_memory_bytes(int device) {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return static_cast<int64_t>(prop.totalGlobalMem);
}

std::string device_pci_bus_id(int device) {
  char id[32] = {};
  if (cudaDeviceGetPCIBusId(id, sizeof id, device) != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return id;
}

int select_device(int local_rank) {
  const int n = device_count();
  if (n == 0) return -1;
  const int dev = local_rank % n;
  if (cudaSetDevice(dev) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return dev;
}

}  // namespace abl::cuda
