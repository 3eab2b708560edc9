// RAII device and host resources (memory.h). Destructors ignore errors: they run during
// unwinding, when the job is already ending with the first error's message.
#include "abl/backend/cuda/memory.h"

#include <utility>

#include "abl/backend/cuda/check.h"

namespace abl::cuda {

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) {
  if (bytes > 0) CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
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
