// NCCL communicator bootstrap and collectives. Failures of CUDA, NCCL or MPI calls throw
// abl::Error naming the call; the app turns that into one message and MPI_Abort.
#include "abl/parallel/cuda/nccl_comm.h"

#include <fmt/format.h>

#include <exception>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"

namespace abl::cuda {
namespace {

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) fail("{} failed: {}", what, cudaGetErrorString(e));
}
void nccl_check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) fail("{} failed: {}", what, ncclGetErrorString(r));
}

// Orders the consumer stream after the gather recorded on the communication stream.
class EventPending final : public parallel::Pending {
 public:
  EventPending(cudaStream_t comm, cudaStream_t compute) : compute_(compute) {
    cuda_check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    cuda_check(cudaEventRecord(event_, comm), "cudaEventRecord");
  }
  ~EventPending() override {
    finish_quietly(*this);
    cudaEventDestroy(event_);
  }
  void wait() override {
    if (done_) return;
    done_ = true;
    cuda_check(cudaStreamWaitEvent(compute_, event_, 0), "cudaStreamWaitEvent");
  }

 private:
  cudaStream_t compute_;
  cudaEvent_t event_ = nullptr;
  bool done_ = false;
};

}  // namespace

NcclComm::NcclComm(MPI_Comm group, cudaStream_t compute) : compute_(compute) {
  MPI_Comm_rank(group, &rank_);
  MPI_Comm_size(group, &size_);
  ncclUniqueId id;
  if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  watchdog::Scope at("ncclCommInitRank (MPI_Bcast of the unique id, then NCCL's bootstrap)");
  if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group) != MPI_SUCCESS) fail("MPI_Bcast of the ncclUniqueId failed");
  cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  nccl_check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
}

NcclComm::~NcclComm() {
  // ncclCommDestroy is collective within a node: unwinding from an error of this rank alone, the
  // others are not here, and MPI_Abort follows (Session's destructor leaves the engine for it too).
  if (std::uncaught_exceptions() > 0 && size_ > 1) return;
  if (comm_) ncclCommDestroy(comm_);
  if (stream_) cudaStreamDestroy(stream_);
}

// The communication stream waits for the compute stream's work so far: a collective may read data
// a compute kernel writes, or overwrite a buffer one still reads (device_comm.h).
void NcclComm::after_compute() {
  cudaEvent_t ready;
  cuda_check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "cudaEventCreate");
  cuda_check(cudaEventRecord(ready, compute_), "cudaEventRecord");
  cuda_check(cudaStreamWaitEvent(stream_, ready, 0), "cudaStreamWaitEvent");
  cudaEventDestroy(ready);
}

std::unique_ptr<parallel::Pending> NcclComm::start_all_gather(const void* send, void* recv, size_t bytes) {
  watchdog::fault_delay();
  watchdog::Scope at("ncclAllGather (enqueue)");
  after_compute();
  nccl_check(ncclAllGather(send, recv, bytes, ncclUint8, comm_, stream_), "ncclAllGather");
  return std::make_unique<EventPending>(stream_, compute_);
}

void NcclComm::all_gather(const void* send, void* recv, size_t bytes) {
  start_all_gather(send, recv, bytes)->wait();
  watchdog::Scope at("ncclAllGather (cudaStreamSynchronize)");
  cuda_check(cudaStreamSynchronize(compute_), "cudaStreamSynchronize");
}

// Each collective below marks its place for the hang watchdog until its stream synchronizes, so
// a peer that never arrives is named in the report, and takes ABL_FAULT_DELAY_MS's delay first.
void NcclComm::all_reduce_sum(double* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("ncclAllReduce (sum)");
  after_compute();
  nccl_check(ncclAllReduce(data, data, n, ncclFloat64, ncclSum, comm_, stream_), "ncclAllReduce");
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void NcclComm::all_reduce_sum(int64_t* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("ncclAllReduce (sum)");
  after_compute();
  nccl_check(ncclAllReduce(data, data, n, ncclInt64, ncclSum, comm_, stream_), "ncclAllReduce");
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void NcclComm::all_reduce_max(int64_t* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("ncclAllReduce (max)");
  after_compute();
  nccl_check(ncclAllReduce(data, data, n, ncclInt64, ncclMax, comm_, stream_), "ncclAllReduce");
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void NcclComm::broadcast(void* data, size_t bytes, int root) {
  watchdog::fault_delay();
  watchdog::Scope at("ncclBroadcast");
  after_compute();
  nccl_check(ncclBroadcast(data, data, bytes, ncclUint8, root, comm_, stream_), "ncclBroadcast");
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

void NcclComm::barrier() {
  watchdog::fault_delay();
  watchdog::Scope at("ncclAllReduce (barrier)");
  // A one-element all-reduce on device memory is NCCL's barrier.
  int64_t* d = nullptr;
  cuda_check(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(int64_t), stream_), "cudaMallocAsync");
  cuda_check(cudaMemsetAsync(d, 0, sizeof(int64_t), stream_), "cudaMemsetAsync");
  nccl_check(ncclAllReduce(d, d, 1, ncclInt64, ncclSum, comm_, stream_), "ncclAllReduce");
  cuda_check(cudaFreeAsync(d, stream_), "cudaFreeAsync");
  cuda_check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

}  // namespace abl::cuda
