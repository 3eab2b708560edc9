// The engine of one process behind one interface: the CPU engine over (sharded) host weights, or
// the CUDA engine on the GPU this rank selected. The phases ask a Backend for a ForwardPass and
// never see which one runs (DESIGN.md §3). --backend picks it; auto means cuda when the binary
// was built with the CUDA backend and a device is visible, else cpu.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "abl/ablation/trial.h"
#include "abl/parallel/runtime.h"
#include "abl/engine/forward_pass.h"

namespace abl::app {

enum class BackendKind { cpu, cuda };
std::string_view backend_kind_name(BackendKind k);
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

class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  // Ablation of the passes that follow (null: none): per-trial tables and the weight-derived
  // vectors, computed once here for a batch of trials. Every rank of the shard group calls it.
  virtual void set_ablation(const engine::AblationTable* table) = 0;
  // The reference of Outputs::kl: `rows` rows of V log-probabilities (host memory; the caller
  // keeps it alive until it is cleared with null). The CUDA backend copies it to the device once.
  virtual void set_kl_reference(const float* logprobs, int64_t rows) = 0;
  // The forward pass over a KV cache of at least `cache_rows` rows (grown when smaller), with the
  // current ablation and KL reference. Valid until the next call of pass(), set_ablation() or
  // set_kl_reference().
  virtual engine::ForwardPass& pass(int64_t cache_rows) = 0;
};

// Loads the weights (collective over the runtime's shard group) and builds the engine.
std::unique_ptr<Backend> make_backend(BackendKind kind, const BackendSetup& setup, parallel::Runtime& rt);

// Clears the backend's ablation when it leaves scope (the phases that follow run unablated).
class AblationScope {
 public:
  AblationScope(Backend& b, const engine::AblationTable& table) : b_(b) { b_.set_ablation(&table); }
  ~AblationScope() { b_.set_ablation(nullptr); }
  AblationScope(const AblationScope&) = delete;
  AblationScope& operator=(const AblationScope&) = delete;

 private:
  Backend& b_;
};

}  // namespace abl::app
