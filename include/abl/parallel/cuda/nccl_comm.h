// Comm over NCCL on device memory, for the CUDA backend. The group's root makes the ncclUniqueId,
// MPI broadcasts its bytes within the group, every rank calls ncclCommInitRank. Collectives run
// on the communicator's own stream; start_all_gather returns at once and its Pending orders the
// caller's compute stream after the gather with an event (no host synchronisation); the gather
// itself starts after the compute stream's work so far (device_comm.h).
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include "abl/parallel/cuda/device_comm.h"

namespace abl::cuda {

class NcclComm final : public DeviceComm {
 public:
  // `group`: the MPI communicator of the ranks that form this NCCL communicator (not owned).
  // `compute`: the stream that consumes gathered data (waits on the gather's event).
  NcclComm(MPI_Comm group, cudaStream_t compute);
  ~NcclComm() override;
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  cudaStream_t stream() const override { return stream_; }
  cudaStream_t compute_stream() const override { return compute_; }
  // Buffers are device memory.
  void all_gather(const void* send, void* recv, size_t bytes) override;
  std::unique_ptr<parallel::Pending> start_all_gather(const void* send, void* recv, size_t bytes) override;
  void all_reduce_sum(double* data, size_t n) override;
  void all_reduce_sum(int64_t* data, size_t n) override;
  void all_reduce_max(int64_t* data, size_t n) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;

 private:
  void after_compute();

  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;   // communication stream
  cudaStream_t compute_ = nullptr;  // consumer stream
  int rank_ = 0, size_ = 1;
};

}  // namespace abl::cuda
