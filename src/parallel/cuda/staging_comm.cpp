// DeviceComm through pinned host staging and MPI (staging_comm.h).
#include "abl/parallel/cuda/staging_comm.h"

#include <utility>
#include <vector>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

namespace abl::cuda {

// The second half of a gather: the MPI exchange, then the gathered bytes into `recv` on the
// communication stream, behind the compute stream's event recorded at start.
class StagingComm::GatherPending final : public parallel::Pending {
 public:
  GatherPending(StagingComm& c, std::unique_ptr<parallel::Pending> host, void* recv, size_t total)
      : c_(c), host_(std::move(host)), recv_(recv), total_(total) {}
  ~GatherPending() override { finish_quietly(*this); }
  void wait() override {
    if (done_) return;
    done_ = true;
    host_->wait();
    const cudaStream_t s = c_.stream_.get();
    c_.recv_free_.wait_on(s);
    if (total_ > 0) CUDA_CHECK(cudaMemcpyAsync(recv_, c_.recv_.get(), total_, cudaMemcpyHostToDevice, s));
    c_.landed_.record(s);
    c_.landed_.wait_on(c_.compute_);
    c_.in_flight_ = false;
  }

 private:
  StagingComm& c_;
  std::unique_ptr<parallel::Pending> host_;
  void* recv_;
  size_t total_;
  bool done_ = false;
};

namespace {

MPI_Comm duplicate(MPI_Comm group) {
  MPI_Comm dup = MPI_COMM_NULL;
  parallel::mpi_check(MPI_Comm_dup(group, &dup), "MPI_Comm_dup");
  return dup;
}

}  // namespace

StagingComm::StagingComm(MPI_Comm group, cudaStream_t compute)
    : host_(std::make_unique<parallel::MpiComm>(duplicate(group))), compute_(compute) {}

StagingComm::~StagingComm() {
  // The pinned staging is freed next: no copy may still read or write it (errors ignored here).
  cudaStreamSynchronize(stream_.get());
}

std::unique_ptr<parallel::Pending> StagingComm::start_all_gather(const void* send, void* recv, size_t bytes) {
  ABL_CHECK(!in_flight_, "a gather started on the staging communicator while another is in flight");
  const size_t total = bytes * static_cast<size_t>(size());
  const cudaStream_t s = stream_.get();
  if (send_.bytes() < bytes || recv_.bytes() < total) {
    stream_.synchronize();  // a copy out of the old staging may still be in flight
    if (send_.bytes() < bytes) send_ = PinnedBuffer(bytes);
    if (recv_.bytes() < total) recv_ = PinnedBuffer(total);
  }
  // recv may still be read by the compute stream's work so far: the upload into it waits for this.
  recv_free_.record(compute_);
  if (bytes > 0) CUDA_CHECK(cudaMemcpyAsync(send_.get(), send, bytes, cudaMemcpyDeviceToHost, s));
  staged_.record(s);
  // In stream order this also covers the previous gather's upload out of recv_, which MPI refills.
  CUDA_CHECK(cudaEventSynchronize(staged_.get()));
  std::unique_ptr<parallel::Pending> host = host_->start_all_gather(send_.get(), recv_.get(), bytes);
  in_flight_ = true;
  return std::make_unique<GatherPending>(*this, std::move(host), recv, total);
}

void StagingComm::all_gather(const void* send, void* recv, size_t bytes) {
  // `send` may come from the compute stream (as NcclComm reads it, after that stream's work).
  small_.record(compute_);
  small_.wait_on(stream_.get());
  start_all_gather(send, recv, bytes)->wait();
  CUDA_CHECK(cudaStreamSynchronize(compute_));
}

template <typename T, typename Op>
void StagingComm::staged(T* data, size_t n, Op op) {
  std::vector<T> host(n);
  const cudaStream_t s = stream_.get();
  small_.record(compute_);
  small_.wait_on(s);
  if (n > 0) CUDA_CHECK(cudaMemcpyAsync(host.data(), data, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  stream_.synchronize();
  op(host.data());
  if (n > 0) CUDA_CHECK(cudaMemcpyAsync(data, host.data(), n * sizeof(T), cudaMemcpyHostToDevice, s));
  stream_.synchronize();
}

void StagingComm::all_reduce_sum(double* data, size_t n) {
  staged(data, n, [&](double* h) { host_->all_reduce_sum(h, n); });
}

void StagingComm::all_reduce_sum(int64_t* data, size_t n) {
  staged(data, n, [&](int64_t* h) { host_->all_reduce_sum(h, n); });
}

void StagingComm::all_reduce_max(int64_t* data, size_t n) {
  staged(data, n, [&](int64_t* h) { host_->all_reduce_max(h, n); });
}

void StagingComm::broadcast(void* data, size_t bytes, int root) {
  staged(static_cast<unsigned char*>(data), bytes, [&](unsigned char* h) { host_->broadcast(h, bytes, root); });
}

void StagingComm::barrier() { host_->barrier(); }

}  // namespace abl::cuda
