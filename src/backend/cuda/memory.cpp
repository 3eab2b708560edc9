// RAII device and host resources (memory.h). Destructors ignore errors: they run during
// unwinding, when the job is already ending with the first error's message.
#include "abl/backend/cuda/memory.h"

#include <atomic>
#include <utility>

#include "abl/backend/cuda/check.h"

namespace abl::cuda {
namespace {

std::atomic<int64_t> g_held{0}, g_peak{0};

void count_alloc(size_t bytes) {
  const int64_t now = g_held.fetch_add(static_cast<int64_t>(bytes)) + static_cast<int64_t>(bytes);
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}

void release(void* ptr, size_t bytes) {
  if (!ptr) return;
  cudaFree(ptr);
  g_held.fetch_sub(static_cast<int64_t>(bytes));
}

}  // namespace

DeviceMemoryUse device_memory_use() { return {g_held.load(), g_peak.load()}; }
void reset_device_memory_peak() { g_peak.store(g_held.load()); }

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) {
    CUDA_CHECK(cudaMalloc(&ptr_, bytes));
    count_alloc(bytes);
  }
}
DeviceBuffer::~DeviceBuffer() { release(ptr_, bytes_); }
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    release(ptr_, bytes_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

PinnedBuffer::PinnedBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CUDA_CHECK(cudaMallocHost(&ptr_, bytes));
}
PinnedBuffer::~PinnedBuffer() {
  if (ptr_) cudaFreeHost(ptr_);
}
PinnedBuffer::PinnedBuffer(PinnedBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
PinnedBuffer& PinnedBuffer::operator=(PinnedBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFreeHost(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

Stream::Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::Stream(cudaStream_t existing) : s_(existing), owned_(existing == nullptr) {
  if (owned_) CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
}
Stream::~Stream() {
  if (s_ && owned_) cudaStreamDestroy(s_);
}
void Stream::synchronize() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

Event::Event(bool timing) {
  CUDA_CHECK(cudaEventCreateWithFlags(&e_, timing ? cudaEventDefault : cudaEventDisableTiming));
}
Event::~Event() {
  if (e_) cudaEventDestroy(e_);
}
void Event::record(cudaStream_t s) const { CUDA_CHECK(cudaEventRecord(e_, s)); }
void Event::wait_on(cudaStream_t s) const { CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }
float Event::elapsed_ms(const Event& start) const {
  CUDA_CHECK(cudaEventSynchronize(e_));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
  return ms;
}

void copy_to_device(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}
void copy_to_host(void* dst, const void* src, size_t bytes, cudaStream_t s) {
  CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace abl::cuda
