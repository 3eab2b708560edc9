// RAII owners of device memory, pinned host memory, streams and events. Buffers are planned and
// allocated once (CONVENTIONS 3); nothing here is meant to be called inside the layer loop.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace abl::cuda {

// Bytes of device memory this process holds in DeviceBuffers now, and the most it held since the
// last reset_device_memory_peak() (what the phase logs report next to `abliterate plan`). Memory that
// cuBLASLt, NCCL or the CUDA context allocate for themselves is not in it.
struct DeviceMemoryUse {
  int64_t current = 0;
  int64_t peak = 0;
};
DeviceMemoryUse device_memory_use();
void reset_device_memory_peak();  // the peak restarts from the current bytes

// Throws what a user needs when `what` (its `bytes`) does not fit: the GPU's free and total memory,
// what this process holds, and the options that shrink a run.
[[noreturn]] void raise_out_of_device_memory(size_t bytes, const std::string& what);

// Device memory of a fixed size; moves, never copies. An allocation the device cannot hold throws
// raise_out_of_device_memory's message naming `what` (and leaves the device usable).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes, const char* what = "a device buffer");
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Page-locked host memory (asynchronous copies, offloaded weight shards).
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  explicit PinnedBuffer(size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(PinnedBuffer&& o) noexcept;
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const { return static_cast<T*>(ptr_); }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// A non-blocking stream (nothing runs on the default stream).
class Stream {
 public:
  Stream();
  // Borrows `existing` (not destroyed here), or creates a stream as Stream() does when it is null.
  explicit Stream(cudaStream_t existing);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const;

 private:
  cudaStream_t s_ = nullptr;
  bool owned_ = true;
};

class Event {
 public:
  explicit Event(bool timing = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s) const;
  void wait_on(cudaStream_t s) const;  // s waits for this event
  float elapsed_ms(const Event& start) const;  // since `start` (both recorded, timing events)

 private:
  cudaEvent_t e_ = nullptr;
};

// Host ↔ device copies for tests and set-up (synchronous on the stream).
void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t s);
void copy_to_host(void* dst, const void* src, size_t bytes, cudaStream_t s);

}  // namespace abl::cuda
