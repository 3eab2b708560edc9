// Backend selection and the CPU backend (backend.h); the CUDA backend is backend_cuda.cpp.
#include "abl/engine/cpu/forward_pass.h"
#include "abl/app/backend.h"

#include "abl/engine/cpu/ablation_epilogue.h"
#include "abl/core/error.h"
#include "abl/parallel/sharded_weights.h"
#ifdef ABL_WITH_CUDA
#include "abl/backend/cuda/device.h"
#endif

namespace abl::app {

#ifdef ABL_WITH_CUDA
std::unique_ptr<Backend> make_cuda_backend(const BackendSetup& setup, parallel::Runtime& rt);  // backend_cuda.cpp
#endif

std::string_view backend_kind_name(BackendKind k) { return k == BackendKind::cuda ? "cuda" : "cpu"; }

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

namespace {

// Engine over the shard group's host weights (a group of one holds a full copy); the ablation is
// the AblationEpilogue, which derives its per-layer vectors from the weights as they pass.
class CpuBackend final : public Backend {
 public:
  CpuBackend(const BackendSetup& setup, parallel::Runtime& rt)
      : weights_(parallel::ShardedWeights::load(setup.model, rt.shard_group_weights())),
        engine_(*weights_, setup.limits) {}

  BackendKind kind() const override { return BackendKind::cpu; }

  void set_ablation(const engine::AblationTable* table) override {
    pass_.reset();
    epilogue_.reset();
    if (table) epilogue_ = std::make_unique<engine::AblationEpilogue>(engine_.spec(), table->directions, table->ablations);
  }

  void set_kl_reference(const float* logprobs, int64_t rows) override {
    pass_.reset();
    kl_ = {logprobs, rows};
  }

  engine::ForwardPass& pass(int64_t cache_rows) override {
    if (!cache_ || cache_->rows() < cache_rows) {
      pass_.reset();
      cache_.reset();  // the old cache goes before the new one is allocated
      cache_ = std::make_unique<engine::KvCache>(engine_.spec(), cache_rows);
    }
    if (!pass_) pass_ = std::make_unique<engine::HostPass>(engine_, *cache_, epilogue_.get(), kl_);
    return *pass_;
  }

 private:
  std::unique_ptr<parallel::ShardedWeights> weights_;
  engine::Engine engine_;
  std::unique_ptr<engine::KvCache> cache_;
  std::unique_ptr<engine::AblationEpilogue> epilogue_;
  engine::KlReference kl_;
  std::unique_ptr<engine::HostPass> pass_;
};

}  // namespace

std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendSetup& setup, parallel::Runtime& rt) {
  if (kind == BackendKind::cpu) return std::make_unique<CpuBackend>(setup, rt);
#ifdef ABL_WITH_CUDA
  return make_cuda_backend(setup, rt);
#else
  fail("the CUDA backend is not compiled into this binary");
#endif
}

}  // namespace abl::app
