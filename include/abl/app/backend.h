// Which engine a process runs (--backend) and how its weights are built: the app picks the kind,
// the parallel runtime loads the weights (resident, or this rank's shards of its shard group), and
// the engine's backend (engine/backend.h: CpuBackend or cuda::CudaBackend) runs the passes. auto
// means cuda when the binary was built with the CUDA backend and a device is visible, else cpu.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "abl/engine/backend.h"
#include "abl/engine/buffer_plan.h"
#include "abl/parallel/runtime.h"

namespace abl::app {

// The interface and its kinds are the engine's (engine/backend.h); the app names them here.
using engine::AblationScope;
using engine::Backend;
using engine::BackendKind;
using engine::backend_kind_name;

// "auto", "cpu", "cuda" (or "gpu"); cuda without the CUDA backend compiled in, or without a
// visible device, is an error that says which and names the option.
BackendKind resolve_backend(std::string_view option);
// Whether this binary has the CUDA backend (ABL_WITH_CUDA) and sees at least one device.
bool cuda_backend_available(std::string* why = nullptr);

// How the weights of a shard group travel on the GPU: NCCL on device memory, or MPI through
// pinned host memory (several ranks sharing one GPU, which NCCL refuses). automatic: mpi when
// a node has more ranks than GPUs, else nccl.
enum class GpuComm { automatic, nccl, mpi };
GpuComm parse_gpu_comm(std::string_view name);  // "auto" | "nccl" | "mpi"; errors name the value

struct BackendSetup {
  std::string model;     // folder or synthetic:<preset>
  engine::Limits limits;
  GpuComm comm = GpuComm::automatic;
  bool offload_params = false;  // cuda: weight shards in pinned host memory
};

// Loads the weights (collective over the runtime's shard group) and builds the engine.
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendSetup& setup, parallel::Runtime& rt);

// What the engine of `kind` allocates besides its weights, for the memory planner: the CPU
// engine's, the CUDA engine's (planned for kPlanSmCount multiprocessors), or empty when this
// binary has no CUDA engine (the planner then estimates it).
engine::EngineFootprint engine_footprint(BackendKind kind);

}  // namespace abl::app
