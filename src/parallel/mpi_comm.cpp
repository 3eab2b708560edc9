// MPI collectives on host buffers. Byte counts above INT_MAX are sent as a derived contiguous
// type so that gathers of large units (GiBs) stay within MPI's int counts.
#include "abl/parallel/mpi_comm.h"

#include "abl/io/mpi_collectives.h"

#include <climits>

#include "abl/core/error.h"
#include "abl/core/watchdog.h"

namespace abl::parallel {

void mpi_check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, msg, &len);
  fail("{} failed: {}", what, std::string(msg, static_cast<size_t>(len)));
}

namespace {

// A datatype and count describing `bytes` bytes (bytes must be a multiple of the block when large).
struct ByteType {
  MPI_Datatype type = MPI_BYTE;
  int count = 0;
  bool owned = false;
  explicit ByteType(size_t bytes) {
    if (bytes <= static_cast<size_t>(INT_MAX)) {
      count = static_cast<int>(bytes);
      return;
    }
    // Blocks of 1 MiB; units are padded so large sizes divide evenly.
    const size_t block = size_t{1} << 20;
    ABL_CHECK(bytes % block == 0, "collective of {} bytes is not a multiple of 1 MiB", bytes);
    mpi_check(MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &type), "MPI_Type_contiguous");
    mpi_check(MPI_Type_commit(&type), "MPI_Type_commit");
    count = static_cast<int>(bytes / block);
    owned = true;
  }
  ~ByteType() {
    if (owned) MPI_Type_free(&type);
  }
  ByteType(const ByteType&) = delete;
  ByteType& operator=(const ByteType&) = delete;
};

class MpiPending final : public Pending {
 public:
  MpiPending(size_t bytes) : type(bytes) {}
  ~MpiPending() override {
    if (!done) MPI_Wait(&req, MPI_STATUS_IGNORE);
  }
  void wait() override {
    if (done) return;
    done = true;
    watchdog::Scope at("MPI_Wait (all-gather)");
    mpi_check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait (all-gather)");
  }
  ByteType type;
  MPI_Request req = MPI_REQUEST_NULL;
  bool done = false;
};

}  // namespace

MpiComm::MpiComm(MPI_Comm comm) : comm_(comm) {
  mpi_check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiComm::~MpiComm() {
  if (comm_ != MPI_COMM_WORLD && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void MpiComm::all_gather(const void* send, void* recv, size_t bytes) { start_all_gather(send, recv, bytes)->wait(); }

std::unique_ptr<Pending> MpiComm::start_all_gather(const void* send, void* recv, size_t bytes) {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Iallgather");
  auto p = std::make_unique<MpiPending>(bytes);
  mpi_check(MPI_Iallgather(send, p->type.count, p->type.type, recv, p->type.count, p->type.type, comm_, &p->req),
            "MPI_Iallgather");
  return p;
}

void MpiComm::all_reduce_sum(double* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Allreduce (sum)");
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_DOUBLE, MPI_SUM, comm_), "MPI_Allreduce");
}

void MpiComm::all_reduce_sum(int64_t* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Allreduce (sum)");
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_INT64_T, MPI_SUM, comm_), "MPI_Allreduce");
}

void MpiComm::all_reduce_max(int64_t* data, size_t n) {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Allreduce (max)");
  mpi_check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), MPI_INT64_T, MPI_MAX, comm_), "MPI_Allreduce");
}

void MpiComm::broadcast(void* data, size_t bytes, int root) {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Bcast");
  ByteType t(bytes);
  mpi_check(MPI_Bcast(data, t.count, t.type, root, comm_), "MPI_Bcast");
}

void MpiComm::barrier() {
  watchdog::fault_delay();
  watchdog::Scope at("MPI_Barrier");
  mpi_check(MPI_Barrier(comm_), "MPI_Barrier");
}

std::vector<std::string> MpiComm::gather_strings(const std::vector<std::string>& local, int root) {
  return io::mpi::gather_strings(comm_, local, root);
}

}  // namespace abl::parallel
