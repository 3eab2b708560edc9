// The per-rank memory plan: every buffer one rank holds (its weight shard, two gathered-layer
// slots, the embedding/head buffer, KV cache, activations, logits, workspace) as one named
// table, and the largest batch that fits a memory budget. It needs only the ModelSpec (config.json
// or a preset), never the weights, so `abliterate plan` answers without a GPU, and the runtime
// allocates exactly what the table lists.
//
// Dimensions: B sequences per rank, T tokens per pass, P prompt tokens, N new tokens, H hidden,
// F ffn, V vocab, L layers, NH heads, NKV kv heads, HD head dim, G shard group size, W world.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "abl/core/dtype.h"
#include "abl/parallel/topology.h"
#include "abl/engine/backend.h"
#include "abl/engine/batch.h"
#include "abl/engine/buffer_plan.h"
#include "abl/model/model_spec.h"

namespace abl::parallel {

// The engine a plan is for: "cuda" | "gpu" | "auto" (a plan is for GPU nodes) | "cpu"; errors
// name the value.
engine::BackendKind parse_backend(std::string_view name);

// Element types of a deployment. The residual stream, logits and log-softmax are always fp32.
struct Precision {
  DType weights = DType::bf16;      // shards and gathered units
  DType activations = DType::bf16;  // normed h, q/k/v, attention out, projections, gate/up
  DType kv_cache = DType::bf16;
};
// cuda: bf16 weights, activations and KV cache; cpu: fp32 everything (the CPU engine's types).
Precision precision_for(engine::BackendKind b);

// The sharding units of a model, in elements. Decoder layers have the same unit except in MoE
// models with dense layers among the MoE ones.
struct ShardUnits {
  int64_t layer = 0;       // the largest layer unit (its tensors flattened in layer_slots() order)
  std::vector<int64_t> layers;  // (L) each layer's unit
  int64_t num_layers = 0;  // L
  int64_t embed = 0;       // (V, H)
  int64_t head = 0;        // final norm (H) + lm_head (V, H); only the norm when tied
  bool tied = false;       // lm_head reuses the embedding unit
};
ShardUnits shard_units(const model::ModelSpec& spec);
// The one shard arithmetic (host and device sharded weights, the plan): elements each of the G
// ranks owns of a unit of `elements` of `element_bytes` each: an equal slice rounded up to whole
// blocks of `align_bytes` (at least one block), and to 1 MiB once a slice passes 2 GiB (so MPI can
// count it in whole blocks). Host shards use 64-byte blocks, device shards 256-byte ones.
int64_t shard_elements(int64_t elements, int G, int64_t element_bytes, int64_t align_bytes = 64);
// The unit padded to G equal slices of fp32 host shards: shard_elements(elements, G, 4) * G.
int64_t padded_elements(int64_t elements, int G);

struct PlanOptions {
  engine::BackendKind backend = engine::BackendKind::cuda;
  double budget_gib = 80.0;      // memory of one rank: the GPU's (cuda) or host memory per rank (cpu)
  int64_t prompt_tokens = 256;   // P: the longest prompt, chat template included
  int64_t max_new_tokens = 100;  // N
  int64_t batch_tokens = 0;      // T per pass; 0 = auto (see kAutoMaxBatchTokens)
  int64_t max_seqs = 0;          // cap on B; 0 = as many as fit
  int64_t min_seqs = 1;          // the smallest useful batch: below it a plan "does not fit"
  // The engine that will run: its pass buffers and KV cache are what its constructor allocates
  // (engine::cpu_engine_footprint, cuda::cuda_engine_footprint), so the table lists exactly them.
  // Empty only where the engine is not linked in (a binary without CUDA planning for GPUs, the
  // planner's own tests): then activation_buffers and kv_cache_bytes below estimate them.
  engine::EngineFootprint engine;
};

// With --batch-tokens auto, a pass carries T = max(B, P, min(B·P, kAutoMaxBatchTokens)) tokens:
// a whole wave of prompts in one pass while that is cheap, and at most this many tokens, which
// is past where GEMMs reach their peak and amortizes one gather of every unit over enough rows.
inline constexpr int64_t kAutoMaxBatchTokens = 16384;
// cuBLAS/cuBLASLt workspace on the GPU.
inline constexpr int64_t kCublasWorkspaceBytes = int64_t{64} << 20;
// Memory kept free for what the table cannot name: the CUDA context, NCCL's buffers and
// allocator fragmentation. reserve = kReserveFixedBytes + kReserveFraction × budget.
inline constexpr int64_t kReserveFixedBytes = int64_t{1} << 30;
inline constexpr double kReserveFraction = 0.05;

struct MemoryPlan {
  model::ModelSpec spec;
  PlanOptions options;
  Precision precision;
  Topology topology;          // resolved (automatic is decided here), for world rank 0
  Sharding requested = Sharding::automatic;
  bool fits_one_rank = false;  // all weights + working memory at min_seqs fit one rank
  int64_t one_rank_bytes = 0;  // what that needs (tables + reserve)

  bool fits = false;           // the chosen batch (or, when false, min_seqs) fits the budget
  int64_t batch_seqs = 0;      // B per rank (min_seqs when it does not fit)
  int64_t batch_tokens = 0;    // T per pass
  int64_t tokens_per_seq = 0;  // P + N cached tokens per sequence
  int64_t budget_bytes = 0;
  int64_t reserve_bytes = 0;
  engine::BufferPlan buffers;  // everything allocated, at (B, T); summed by total()

  // Received by one rank per forward pass: (G-1)/G of every unit gathered (each layer once, the
  // embedding, the head; a tied embedding twice). 0 when G == 1.
  int64_t gathered_bytes_per_pass = 0;
  // Of the buffers, the weight shard and the gathered units (independent of the batch).
  int64_t weight_bytes = 0;

  std::string problem;  // when !fits: what is too big, with sizes
  std::string advice;   // when !fits: a strategy (or other change) that would fit

  int64_t allocated() const { return buffers.total(); }
  int64_t needed() const { return allocated() + reserve_bytes; }
  int64_t free_bytes() const { return budget_bytes - needed(); }
  // Sequences in flight across the job: every rank runs its own B (data parallel).
  int64_t concurrent_seqs() const { return batch_seqs * topology.world_size; }
  // The buffer table in MiB and GiB, with the reserve, the budget and what is left.
  std::string table() const;
};

// Plans rank 0 of the layout in `req` (world size, ranks per node, strategy, group size). For
// Sharding::automatic, decides fits_one_rank first (a NO_SHARD plan at min_seqs) and resolves it.
// Throws abl::Error for an invalid topology or options; a plan that does not fit is returned
// with fits == false, a problem and advice.
MemoryPlan plan_memory(const model::ModelSpec& spec, const TopologyRequest& req,
                       const PlanOptions& opts);

// The buffers of one rank with shard group size G at B sequences and T tokens per pass.
engine::BufferPlan rank_buffers(const model::ModelSpec& spec, int G, int64_t B, int64_t T,
                                const PlanOptions& opts);
// Without an engine footprint: an estimate of one pass's activations (the CPU engine's buffers in
// the deployment's element types).
engine::BufferPlan activation_buffers(const model::ModelSpec& spec, int64_t B, int64_t T,
                                      const Precision& p);
// KV cache bytes for `rows` cached tokens: 2 × L × rows × NKV × HD × element size.
int64_t kv_cache_bytes(const model::ModelSpec& spec, int64_t rows, DType dtype);

// "12.34 GiB", "56.7 MiB", "512 B".
std::string format_bytes(int64_t bytes);

}  // namespace abl::parallel
