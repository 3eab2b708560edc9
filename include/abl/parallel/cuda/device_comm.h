// A parallel::Comm on device memory, tied to one compute stream: what the sharded device weights
// gather through. Two implementations: NcclComm (one GPU per rank) and StagingComm (MPI through
// pinned host memory; several ranks may share a GPU).
//
// Contract of start_all_gather(send, recv, bytes), which both implement:
//  - `send` is read after the work enqueued on stream() before the call (an upload into it
//    enqueued there first is seen), not necessarily after the compute stream's work;
//  - `recv` is written only after the work enqueued on compute_stream() before the call has
//    finished (an event recorded there at the call): a buffer the compute stream still reads may
//    be gathered into as soon as its last reader has been enqueued;
//  - Pending::wait() orders compute_stream() after the gather (work enqueued there afterwards sees
//    `recv`); it does not wait on the host for the GPU.
// One gather at a time: wait() for one before starting the next. Every other collective takes
// device memory too, starts after the work enqueued on compute_stream() before the call (so it
// sees data a compute kernel wrote), and has finished when it returns.
#pragma once
#include <cuda_runtime.h>
#include <mpi.h>

#include <memory>

#include "abl/parallel/comm.h"

namespace abl::cuda {

class DeviceComm : public parallel::Comm {
 public:
  virtual cudaStream_t stream() const = 0;          // where the collectives run
  virtual cudaStream_t compute_stream() const = 0;  // the consumer of gathered data
};

// `--comm`: nccl (NcclComm; one GPU per rank of the group) or mpi (StagingComm; ranks may share a GPU).
enum class DeviceCommKind { nccl, mpi };
// The group's device communicator over the MPI communicator `group` (not owned; NcclComm uses it
// for the bootstrap, StagingComm duplicates it). Collective over `group`.
std::unique_ptr<DeviceComm> make_device_comm(DeviceCommKind kind, MPI_Comm group, cudaStream_t compute);

// Completes `p` from a destructor: an error is dropped (the job is unwinding from the first one).
void finish_quietly(parallel::Pending& p) noexcept;

}  // namespace abl::cuda
