// Collective communication within one group of ranks. Two implementations share this interface:
// MPI on host memory (CPU backend, tests) and NCCL on device memory (CUDA backend). Every rank of
// the group must make the same calls in the same order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace abl::parallel {

// A collective in flight; wait() completes it (idempotent). Destroying an unfinished one waits.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual void wait() = 0;
};

class Comm {
 public:
  virtual ~Comm() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // recv (size() * bytes) = concatenation of every rank's send (bytes), in rank order.
  virtual void all_gather(const void* send, void* recv, size_t bytes) = 0;
  virtual std::unique_ptr<Pending> start_all_gather(const void* send, void* recv, size_t bytes) = 0;
  virtual void all_reduce_sum(double* data, size_t n) = 0;
  virtual void all_reduce_sum(int64_t* data, size_t n) = 0;
  virtual void all_reduce_max(int64_t* data, size_t n) = 0;
  virtual void broadcast(void* data, size_t bytes, int root) = 0;
  virtual void barrier() = 0;
};

}  // namespace abl::parallel
