// Backend selection and the CPU backend's weights (backend.h); the CUDA one is backend_cuda.cpp.
#include "abl/app/backend.h"

#include "abl/core/error.h"
#include "abl/engine/cpu/backend.h"
#include "abl/parallel/sharded_weights.h"
#ifdef ABL_WITH_CUDA
#include "abl/backend/cuda/device.h"
#include "abl/engine/cuda/plan.h"
#endif

namespace abl::app {

#ifdef ABL_WITH_CUDA
std::unique_ptr<Backend> make_cuda_backend(const BackendSetup& setup, parallel::Runtime& rt);  // backend_cuda.cpp
#endif

bool cuda_backend_available(std::string* why) {
#ifdef ABL_WITH_CUDA
  if (cuda::device_count() > 0) return true;
  if (why) *why = cuda::device_summary();
  return false;
#else
  if (why) *why = "this binary was built without the CUDA backend (ABL_CUDA=OFF or no CUDA toolkit found)";
  return false;
#endif
}

BackendKind resolve_backend(std::string_view option) {
  if (option == "cpu") return BackendKind::cpu;
  std::string why;
  if (option == "auto") return cuda_backend_available() ? BackendKind::cuda : BackendKind::cpu;
  ABL_CHECK(option == "cuda" || option == "gpu", "--backend must be auto, cpu or cuda, got '{}'", option);
  ABL_CHECK(cuda_backend_available(&why), "--backend {}: {}", option, why);
  return BackendKind::cuda;
}

GpuComm parse_gpu_comm(std::string_view name) {
  if (name == "auto") return GpuComm::automatic;
  if (name == "nccl") return GpuComm::nccl;
  if (name == "mpi") return GpuComm::mpi;
  fail("--comm must be auto, nccl or mpi, got '{}'", name);
}

engine::EngineFootprint engine_footprint(BackendKind kind) {
  if (kind == BackendKind::cpu) return engine::cpu_engine_footprint();
#ifdef ABL_WITH_CUDA
  return cuda::cuda_engine_footprint();
#else
  return {};
#endif
}

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendSetup& setup, parallel::Runtime& rt) {
  if (kind == BackendKind::cpu) {
    // The shard group's host weights (a group of one holds a full copy).
    return std::make_unique<engine::CpuBackend>(parallel::ShardedWeights::load(setup.model, rt.shard_group_weights()),
                                                setup.limits);
  }
#ifdef ABL_WITH_CUDA
  return make_cuda_backend(setup, rt);
#else
  fail("the CUDA backend is not compiled into this binary");
#endif
}

}  // namespace abl::app
