// A rank on its GPU: the local rank picks its device, and the shard group's gathers get the device
// communicator that can run them (NCCL needs one GPU per rank; ranks sharing a GPU stage through MPI).
#pragma once
#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>

#include "abl/parallel/cuda/device_comm.h"
#include "abl/parallel/mpi_comm.h"
#include "abl/parallel/topology.h"

namespace abl::cuda {

// Selects the GPU of `topo.local_rank` before any other CUDA call of this process creates a
// context; returns its index. Errors say why no GPU could be selected.
int bind_device(const parallel::Topology& topo);

// Whether two ranks of `group` run on the same GPU (same host, same PCI bus id: device indices
// depend on each rank's CUDA_VISIBLE_DEVICES). Collective over `group`.
bool group_shares_a_gpu(parallel::Comm& group, const std::string& host, int device);

// The device communicator of a shard group of more than one rank: `requested`, or when none is
// requested, MPI staging if ranks of the group share a GPU, else NCCL. NCCL requested on a shared
// GPU is an error naming --comm. Collective over `group`.
std::unique_ptr<DeviceComm> make_group_device_comm(parallel::MpiComm& group, const std::string& host, int device,
                                                   std::optional<DeviceCommKind> requested, cudaStream_t compute);

}  // namespace abl::cuda
