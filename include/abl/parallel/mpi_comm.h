// Comm over an MPI communicator (host memory). Owns the communicator it is given (frees it on
// destruction) unless it is MPI_COMM_WORLD. MPI errors become abl::Error naming the call.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "abl/parallel/comm.h"

namespace abl::parallel {

class MpiComm final : public Comm {
 public:
  explicit MpiComm(MPI_Comm comm);
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  MPI_Comm handle() const { return comm_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void all_gather(const void* send, void* recv, size_t bytes) override;
  std::unique_ptr<Pending> start_all_gather(const void* send, void* recv, size_t bytes) override;
  void all_reduce_sum(double* data, size_t n) override;
  void all_reduce_sum(int64_t* data, size_t n) override;
  void all_reduce_max(int64_t* data, size_t n) override;
  void broadcast(void* data, size_t bytes, int root) override;
  void barrier() override;
  // Every rank's `local` strings concatenated in rank order, on `root` only (others get {}).
  std::vector<std::string> gather_strings(const std::vector<std::string>& local, int root);

 private:
  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

// Throws abl::Error "<what> failed: <MPI error string>" when rc != MPI_SUCCESS.
void mpi_check(int rc, const char* what);

}  // namespace abl::parallel
