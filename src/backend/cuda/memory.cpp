// RAII device and host resources (memory.h). Destructors ignore errors: they run during
// unwinding, when the job is already ending with the first error's message.
#include "abl/backend/cuda/memory.h"

#include <atomic>
#include <utility>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

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

void raise_out_of_device_memory(size_t bytes, const std::string& what) {
  size_t free = 0, total = 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
  const DeviceMemoryUse use = device_memory_use();
  fail("{} needs {:.2f} GiB of GPU memory, but {:.2f} of GPU {}'s {:.2f} GiB are free (this process holds {:.2f} GiB "
       "in its buffers); lower --batch-tokens, --max-seqs or --max-response-length, or shard the weights "
       "(--sharding; `abliterate plan` sizes a run)",
       what, static_cast<double>(bytes) / kGiB, static_cast<double>(free) / kGiB, device,
       static_cast<double>(total) / kGiB, static_cast<double>(use.current) / kGiB);
}

DeviceBuffer::DeviceBuffer(size_t bytes, const char* what) : bytes_(bytes) {
  if (bytes == 0) return;
  const cudaError_t e = cudaMalloc(&ptr_, bytes);
  if (e != cudaSuccess) {
    ptr_ = nullptr;
    bytes_ = 0;
    if (e != cudaErrorMemoryAllocation) raise_cuda(e, "cudaMalloc", __FILE__, __LINE__);
    (void)cudaGetLastError();  // an allocation failure is not sticky; clear it for the calls that follow
    raise_out_of_device_memory(bytes, what);
  }
  count_alloc(bytes);
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
