// The device communicator of a shard group, by kind (device_comm.h).
#include "abl/backend/cuda/device_comm.h"

#include <exception>

#include "abl/backend/cuda/nccl_comm.h"
#include "abl/backend/cuda/staging_comm.h"

namespace abl::cuda {

std::unique_ptr<DeviceComm> make_device_comm(DeviceCommKind kind, MPI_Comm group, cudaStream_t compute) {
  if (kind == DeviceCommKind::nccl) return std::make_unique<NcclComm>(group, compute);
  return std::make_unique<StagingComm>(group, compute);
}

void finish_quietly(dist::Pending& p) noexcept {
  try {
    p.wait();
  } catch (const std::exception&) {
    // Unwinding already: the first error is the one reported.
  }
}

}  // namespace abl::cuda
