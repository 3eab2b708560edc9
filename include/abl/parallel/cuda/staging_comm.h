// DeviceComm through host MPI (`--comm mpi`): device buffers are staged through pinned host memory
// and exchanged with MPI on a duplicate of the group's communicator, so several ranks may share
// one GPU (NCCL refuses two ranks on one device) and no NCCL is needed. Slower than NcclComm: every
// gathered byte crosses the host bus twice.
//
// A gather: start_all_gather copies `send` to pinned staging on stream() (after the uploads
// enqueued there), waits on the host for that copy, records on the compute stream the event the
// upload into `recv` will wait for, and starts MPI_Iallgather on the staging buffers. wait()
// finishes the MPI exchange (host), enqueues the copy of the gathered bytes into `recv` on
// stream() behind that event, and makes the compute stream wait for the copy. The host therefore
// blocks in start (for the device-to-host copy) and in wait (for MPI), never for compute kernels.
// The staging grows to the largest gather seen (pinned: G + 1 times the largest shard).
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>

#include <memory>

#include "abl/parallel/cuda/device_comm.h"
#include "abl/backend/cuda/memory.h"
#include "abl/parallel/mpi_comm.h"

namespace abl::cuda {

class StagingComm final : public DeviceComm {
 public:
  // `group`: the ranks of the group (duplicated here; the caller keeps its own). `compute`: the
  // stream that consumes gathered data. Collective over `group`.
  StagingComm(MPI_Comm group, cudaStream_t compute);
  ~StagingComm() override;
  StagingComm(const StagingComm&) = delete;
  StagingComm& operator=(const StagingComm&) = delete;

  int rank() const override { return host_->rank(); }
  int size() const override { return host_->size(); }
  cudaStream_t stream() const override { return stream_.get(); }
  cudaStream_t compute_stream() const override { return compute_; }
  // Buffers are device memory, as for NcclComm; each call but start_all_gather has finished
  // (its result in device memory) when it returns. all_gather, the reductions and the broadcast
  // read their data after the compute stream's work so far.
  void all_gather(const void* send, void* recv, size_t bytes) override;
  // The Pending refers to this communicator: wait for it (or destroy it) before destroying this.
  std::unique_ptr<parallel::Pending> start_all_gather(const void* send, void* recv, size_t bytes) override;
  void all_reduce_sum(double* data, size_t n) override;
  void all_reduce_sum(int64_t* data, size_t n) override;
  void all_reduce_max(int64_t* data, size_t n) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;

 private:
  class GatherPending;
  // n elements of device data → host, `op` on the host copy, → device; after the compute stream.
  template <typename T, typename Op>
  void staged(T* data, size_t n, Op op);

  std::unique_ptr<parallel::MpiComm> host_;  // on the duplicated communicator
  cudaStream_t compute_ = nullptr;
  Stream stream_;
  PinnedBuffer send_, recv_;  // gather staging (bytes, G·bytes)
  Event staged_;              // the device-to-host copy of a gather's send
  Event recv_free_;           // compute stream at start: the gather may write recv after it
  Event landed_;              // the gathered bytes are in recv
  Event small_;               // compute stream before a small collective
  bool in_flight_ = false;
};

}  // namespace abl::cuda
