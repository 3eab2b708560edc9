// Shared by the CUDA tests: skip visibly without a device; upload/download helpers; comparison
// with |a − b| ≤ atol + rtol·|b| that reports the first mismatches and the largest error.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_bf16.h>

#include "abl/backend/cuda/device.h"
#include "abl/backend/cuda/memory.h"

#define ABL_REQUIRE_GPU()                                                                       \
  do {                                                                                          \
    if (::abl::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << ::abl::cuda::device_summary(); \
  } while (0)

namespace abl::testing {

template <typename T>
cuda::DeviceBuffer upload(const std::vector<T>& host, cudaStream_t s) {
  cuda::DeviceBuffer d(host.size() * sizeof(T));
  if (!host.empty()) cuda::copy_to_device(d.get(), host.data(), host.size() * sizeof(T), s);
  return d;
}

template <typename T>
std::vector<T> download(const cuda::DeviceBuffer& d, size_t n, cudaStream_t s) {
  std::vector<T> host(n);
  if (n > 0) cuda::copy_to_host(host.data(), d.get(), n * sizeof(T), s);
  return host;
}

// bf16 round trip of host values (what the device sees) and back to f32.
inline std::vector<__nv_bfloat16> to_bf16(const std::vector<float>& x) {
  std::vector<__nv_bfloat16> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = __float2bfloat16(x[i]);
  return y;
}
inline std::vector<float> to_f32(const std::vector<__nv_bfloat16>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = __bfloat162float(x[i]);
  return y;
}

// EXPECTs every element close; prints up to 5 mismatches and the max abs/rel error.
inline void expect_close(const std::vector<float>& got, const std::vector<float>& want, double atol, double rtol,
                         const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  size_t bad = 0;
  double max_abs = 0, max_rel = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double d = std::fabs(static_cast<double>(got[i]) - want[i]);
    max_abs = std::max(max_abs, d);
    if (want[i] != 0) max_rel = std::max(max_rel, d / std::fabs(static_cast<double>(want[i])));
    if (!(d <= atol + rtol * std::fabs(static_cast<double>(want[i])))) {
      if (bad < 5) first += "  [" + std::to_string(i) + "] got " + std::to_string(got[i]) + " want " + std::to_string(want[i]) + "\n";
      ++bad;
    }
  }
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << got.size() << " mismatches (max abs " << max_abs
                     << ", max rel " << max_rel << ")\n" << first;
}

}  // namespace abl::testing
