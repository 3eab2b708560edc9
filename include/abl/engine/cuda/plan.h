// The CUDA engine's buffer plan, computed on the host from the model and the pass limits alone (no
// GPU): CudaEngine's constructor allocates one arena of `total` bytes and carves every buffer from
// the typed slices below, and `abliterate plan --backend cuda` prints the same table. Each slice
// starts on a 256-byte boundary; the padded-head buffers are empty unless the head dim is padded.
// The twin of the CPU engine's Engine::plan_for (engine/cpu/engine.h).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "abl/engine/batch.h"
#include "abl/engine/buffer_plan.h"
#include "abl/model/model_spec.h"

namespace abl::cuda {

// One buffer carved from the engine's arena.
struct Slice {
  size_t offset = 0;
  size_t bytes = 0;
};

// The batch's index arrays in the pinned staging and in the arena's `batch` slice, back to back for
// T tokens and B sequences (16-byte aligned sections).
struct BatchLayout {
  size_t positions = 0, cache_rows = 0, row_seq = 0, last_rows = 0, kl_rows = 0, seqs = 0, state_slots = 0,
         tokens = 0, trial = 0, rope_table = 0, total = 0;
};
BatchLayout batch_layout(int64_t T, int64_t B);

struct CudaEnginePlan {
  // (T, ·) per pass: residual stream f32, normed h, q/k/v, attention out, projection out y f32, gate, up.
  Slice x, h, q, k, v, att, y, gate, up;
  // (T, ·) at the padded head dim HDp: q, k, v and attention (empty when HD and HDv have a kernel).
  Slice qp, kp, vp, attp;
  // attn_output_gate's gate (T,NH*HD); linear attention's conv channels (T,C), z (T,NV*DV), b|a (T,2NV).
  Slice q_gate, lin_x, lin_z, lin_ba;
  // Latent attention (ModelSpec::mla): q_a_proj's output (T,q_lora_rank), kv_a_proj_with_mqa's (T,C+R), the
  // latent c (T,C) normed in place, kv_b_proj's per-head k_nope | v (T,NH*(nope+HDv)).
  Slice q_a, kv_a, latent, kv_b;
  // (B, ·) per pass: last rows f32, their final norm, logits f32, greedy ids, KL reference rows and KL.
  Slice rows, last, logits, next_ids, kl_ref, kl;
  // MoE layers (empty for dense models; docs/families.md §5, the grouped-GEMM design): router
  // logits (T,E) f32, top-k ids and weights (T,k), the slots sorted by expert (their order, each
  // slot's position, each row's sequence, the experts' offsets, counts and first row tiles), the tokens in that order
  // (T·k,H), their experts' gate and up (T·k,2Fm) and down outputs (T·k,H) f32.
  Slice router, topk, expert_order, expert_in, expert_gate_up, expert_out;
  // A LatentMoE's latent (T,D): fc1_latent_proj's output, then the experts' sum rounded for fc2_latent_proj; the
  // sum itself (T,D) f32.
  Slice moe_latent, moe_latent_sum;
  Slice captures;        // (B, L+1, H) f32
  Slice inv_freq;        // (HD/2) f32
  Slice attn_scratch;    // split-KV decode partials (attention_scratch_bytes)
  Slice gemm_workspace;  // cuBLASLt
  Slice batch;           // the batch's index arrays (batch_layout)
  size_t total = 0;      // the arena
  engine::BufferPlan table;  // the same slices by name, in arena order: printed, summed by `plan`
};

// Throws abl::Error naming the model and --backend cpu for one the CUDA engine cannot run: MoE shapes its
// router and grouped GEMMs do not take (the engine's constructor and plan_cuda_engine call it; no GPU needed).
void check_cuda_engine_runs(const model::ModelSpec& spec);

// Whether attention runs at a padded head dim HDp: a q/k or value head without a kernel of its own
// width (the tiny fixtures' heads; latent attention's 192 / 128).
bool attention_padded(const model::ModelSpec& spec);

// sm_count: the GPU's multiprocessors (the split-KV scratch grows with them); kPlanSmCount when
// planning without a GPU.
CudaEnginePlan plan_cuda_engine(const model::ModelSpec& spec, const engine::Limits& limits, int sm_count);

inline constexpr int kPlanSmCount = 132;  // H100 SXM (an H200 has the same)

// Bytes of a DeviceKvCache of `rows` rows: bf16 K and V per layer at the padded head dim, plus the
// scratch row the padded decode graphs use.
int64_t device_kv_cache_bytes(const model::ModelSpec& spec, int64_t rows);

// What the CUDA engine allocates besides its weights (pass buffers and KV cache), for the planner.
engine::EngineFootprint cuda_engine_footprint(int sm_count = kPlanSmCount);

}  // namespace abl::cuda
