// The process's count of device bytes held in DeviceBuffers (memory.h), which the phase logs
// report: allocations, moves and frees keep it exact, and the peak restarts on request; an
// allocation the device cannot hold fails with a message that says what to change.
#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "abl/backend/cuda/memory.h"
#include "abl/core/error.h"
#include "common/cuda_test.h"

namespace abl {
namespace {

TEST(CudaMemory, DeviceBuffersAreCountedAndThePeakRestarts) {
  ABL_REQUIRE_GPU();
  const int64_t base = cuda::device_memory_use().current;
  cuda::reset_device_memory_peak();
  {
    cuda::DeviceBuffer a(1 << 20);
    EXPECT_EQ(cuda::device_memory_use().current, base + (1 << 20));
    {
      cuda::DeviceBuffer b(3 << 20);
      cuda::DeviceBuffer c(std::move(b));  // a move holds no new memory
      EXPECT_EQ(cuda::device_memory_use().current, base + (4 << 20));
      c = cuda::DeviceBuffer(1 << 10);  // the old 3 MiB are freed by the assignment
      EXPECT_EQ(cuda::device_memory_use().current, base + (1 << 20) + (1 << 10));
    }
    EXPECT_EQ(cuda::device_memory_use().current, base + (1 << 20));
    EXPECT_EQ(cuda::device_memory_use().peak, base + (4 << 20) + (1 << 10));  // b, then c's new buffer before the old one went
  }
  EXPECT_EQ(cuda::device_memory_use().current, base);
  cuda::reset_device_memory_peak();
  EXPECT_EQ(cuda::device_memory_use().peak, base);
}

TEST(CudaMemory, AnAllocationTooLargeSaysWhatAndLeavesTheDeviceUsable) {
  ABL_REQUIRE_GPU();
  const int64_t base = cuda::device_memory_use().current;
  std::string msg;
  try {
    cuda::DeviceBuffer huge(size_t{1} << 50, "the test's petabyte");  // 1 PiB: no GPU has it
  } catch (const Error& e) {
    msg = e.what();
  }
  for (const char* part : {"the test's petabyte needs 1048576.00 GiB of GPU memory", "GiB are free", "--batch-tokens",
                           "--sharding"}) {
    EXPECT_NE(msg.find(part), std::string::npos) << part << " not in: " << msg;
  }
  EXPECT_EQ(cuda::device_memory_use().current, base);  // nothing counted for the failed allocation
  cuda::DeviceBuffer after(1 << 20);                    // the failure did not stick to the context
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_EQ(cuda::device_memory_use().current, base + (1 << 20));
}

}  // namespace
}  // namespace abl
