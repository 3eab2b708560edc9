// The CUDA engine's buffer plan (plan.h): host arithmetic only, so `plan` runs without a GPU.
#include "abl/engine/cuda/plan.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <string>

#include "abl/backend/cuda/attention.h"
#include "abl/engine/cuda/device_weights.h"
#include "abl/backend/cuda/gemm.h"
#include "abl/core/error.h"

namespace abl::cuda {
namespace {

constexpr size_t kAlign = 256;  // every carved buffer starts on this boundary

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Appends named slices back to back, each rounded up to kAlign, to the plan's arena and table.
class Carver {
 public:
  explicit Carver(CudaEnginePlan& p) : p_(p) {}
  Slice operator()(const std::string& name, int64_t bytes) {
    const Slice s{p_.total, align_up(static_cast<size_t>(bytes), kAlign)};
    p_.total += s.bytes;
    p_.table.add(name, static_cast<int64_t>(s.bytes));
    return s;
  }

 private:
  CudaEnginePlan& p_;
};

}  // namespace

BatchLayout batch_layout(int64_t T, int64_t B) {
  BatchLayout l;
  size_t off = 0;
  auto take = [&off](size_t bytes) {
    const size_t o = off;
    off = align_up(off + bytes, size_t{16});
    return o;
  };
  const auto t = static_cast<size_t>(T), b = static_cast<size_t>(B);
  l.positions = take(t * sizeof(int64_t));
  l.cache_rows = take(t * sizeof(int64_t));
  l.row_seq = take(t * sizeof(int64_t));
  l.last_rows = take(b * sizeof(int64_t));
  l.kl_rows = take(b * sizeof(int64_t));
  l.seqs = take(b * sizeof(AttnSeq));
  l.state_slots = take(b * sizeof(int64_t));
  l.tokens = take(t * sizeof(int32_t));
  l.trial = take(b * sizeof(int32_t));
  l.rope_table = take(t * sizeof(int32_t));
  l.total = off;
  return l;
}

void check_cuda_engine_runs(const model::ModelSpec& m) {
  if (m.per_layer_geometry() || m.k_eq_v || m.v_norm || m.layer_scalar || m.ple_dim > 0 || m.kv_shared_layers > 0 ||
      m.moe_beside_dense) {
    // docs/gemma4.md §6 step 8: per-layer head sizes (512-wide heads), value norms and layer scalars
    fail("{}: {} runs on the CPU backend only so far (per-layer head sizes, value norms, layer scalars, per-layer "
         "embeddings, KV sharing and the MoE beside the dense MLP are not in the CUDA engine yet); run it with "
         "--backend cpu",
         m.source, m.architecture);
  }
  if (m.num_experts > 0 && !(m.expert_width() % 8 == 0 && m.moe_intermediate_size % 8 == 0 &&
                             m.num_experts <= 1024 && m.experts_per_token <= 32 && m.expert_groups <= 64)) {
    fail("{}: the CUDA engine routes each token in one thread (at most 64 expert groups) and runs the experts as "
         "grouped GEMMs over 16-byte rows after a counting sort: the experts' width ({}: hidden_size, or "
         "moe_latent_size) and moe_intermediate_size ({}) must be multiples of 8, num_experts ({}) at most 1024, "
         "num_experts_per_tok ({}) at most 32 and n_group ({}) at most 64 (run this model with --backend cpu)",
         m.source, m.expert_width(), m.moe_intermediate_size, m.num_experts, m.experts_per_token, m.expert_groups);
  }
}

bool attention_padded(const model::ModelSpec& m) {
  const int64_t HDp = attention_head_dim(m);
  return HDp != m.head_dim || HDp != m.v_head();
}

CudaEnginePlan plan_cuda_engine(const model::ModelSpec& m, const engine::Limits& limits, int sm_count) {
  ABL_CHECK(limits.max_tokens > 0 && limits.max_seqs > 0, "engine limits must be positive");
  check_cuda_engine_runs(m);
  const int64_t T = limits.max_tokens, B = limits.max_seqs;
  const int64_t H = m.hidden_size, V = m.vocab_size, L = m.num_layers;
  const int64_t F = std::max(m.dense_mlp_width(), m.shared_expert_intermediate_size);  // dense or shared MLP
  const int64_t HDp = attention_head_dim(m);
  const bool gated = model::gated_activation(m.activation);  // Nemotron-H's, Arcee's, Apertus' MLPs: no gate
  const int64_t bf = sizeof(__nv_bfloat16), f4 = sizeof(float);
  CudaEnginePlan p;
  Carver carve(p);
  p.x = carve("residual x (T,H) f32", T * H * f4);
  p.h = carve("normed h (T,H)", T * H * bf);
  p.q = carve("q (T,NH*HD)", T * m.q_dim() * bf);
  if (!(m.mla && attention_padded(m))) {  // (padded latent attention builds its keys and values in kp, vp)
    p.k = carve("k (T,NKV*HD)", T * m.kv_dim() * bf);
    p.v = carve("v (T,NKV*HDv)", T * m.v_dim() * bf);
  }
  p.att = carve("attention out (T,NH*HDv)", T * std::max(m.o_dim(), m.linear_value_dim()) * bf);
  if (m.mla) {
    const int64_t C = m.kv_lora_rank, R = m.partial_rotary_dim;
    if (m.q_lora_rank > 0) p.q_a = carve("q_a_proj out (T,q_lora_rank)", T * m.q_lora_rank * bf);
    p.kv_a = carve("latent attention kv_a (T,C+R)", T * (C + R) * bf);
    p.latent = carve("latent (T,C)", T * C * bf);
    p.kv_b = carve("kv_b_proj out (T,NH*(nope+HDv))", T * m.num_heads * (m.qk_nope_head_dim + m.v_head()) * bf);
  }
  if (m.attn_output_gate) p.q_gate = carve("attention output gate (T,NH*HD)", T * m.q_dim() * bf);
  if (!m.linear_layers.empty()) {
    p.lin_x = carve("linear attention q|k|v (T,C)", T * m.linear_in_dim() * bf);
    p.lin_z = carve("linear attention z (T,NV*DV)", T * m.linear_value_dim() * bf);
    p.lin_ba = carve("linear attention b|a (T,2*NV)", T * 2 * m.linear_num_value_heads * bf);
  }
  p.y = carve("projection out y (T,H) f32", T * H * f4);
  if (F > 0) {  // an all-MoE model (Mixtral, Qwen3-MoE) runs its experts in the expert buffers below
    if (gated) p.gate = carve("gate (T,F)", T * F * bf);
    p.up = carve("up (T,F)", T * F * bf);
  }
  if (attention_padded(m)) {
    p.qp = carve("padded q (T,NH*HDp)", T * m.num_heads * HDp * bf);
    p.kp = carve("padded k (T,NKV*HDp)", T * m.num_kv_heads * HDp * bf);
    p.vp = carve("padded v (T,NKV*HDp)", T * m.num_kv_heads * HDp * bf);
    p.attp = carve("padded attention (T,NH*HDp)", T * m.num_heads * HDp * bf);
  }
  p.rows = carve("last rows (B,H) f32", B * H * f4);
  p.last = carve("last normed (B,H)", B * H * bf);
  p.logits = carve("logits (B,V) f32", B * V * f4);
  p.next_ids = carve("greedy ids (B) i32", B * static_cast<int64_t>(sizeof(int32_t)));
  p.kl_ref = carve("KL reference rows (B,V) f32", B * V * f4);
  p.kl = carve("KL (B) f64", B * static_cast<int64_t>(sizeof(double)));
  if (m.num_experts > 0) {
    const int64_t E = m.num_experts, k = m.experts_per_token, Tk = T * m.experts_per_token;
    p.router = carve("router logits (T,E) f32", T * E * f4);
    p.topk = carve("top-k ids, weights (T,k)", T * k * 8);
    // Slot order, positions and sequences (3,T*k) and offsets (E+1) i64; counts (E) and first
    // tiles (E+1) i32.
    p.expert_order = carve("expert routing (3,T*k)+(E+1) i64, (2E+1) i32", (3 * Tk + E + 1) * 8 + (2 * E + 1) * 4);
    const int64_t D = m.expert_width();  // H, or a LatentMoE's latent
    p.expert_in = carve("expert inputs by expert (T*k,D)", Tk * D * bf);
    p.expert_gate_up = gated ? carve("expert gate|up (T*k,2*Fm)", Tk * 2 * m.moe_intermediate_size * bf)
                             : carve("expert up (T*k,Fm)", Tk * m.moe_intermediate_size * bf);
    p.expert_out = carve("expert outputs (T*k,H) f32", Tk * std::max(H, D) * f4);  // (the shared expert's too)
    if (m.moe_latent_size > 0) {
      p.moe_latent = carve("LatentMoE latent (T,D)", T * D * bf);
      p.moe_latent_sum = carve("LatentMoE experts' sum (T,D) f32", T * D * f4);
    }
  }
  p.captures = carve("captures (B,L+1,H) f32", B * (L + 1) * H * f4);
  // Global (LongRoPE: short then long factors) and local (sliding layers) tables.
  const int64_t rope_rows = m.long_rope_after() > 0 ? 3 : 2;
  p.inv_freq = carve("rope inv_freq (2 or 3,R/2) f32", rope_rows * (m.rotary_dim() / 2) * f4);
  AttnBounds bounds;
  bounds.B = B;
  bounds.max_q_len = T;
  bounds.max_kv_len = std::max(m.max_position_embeddings, T);
  p.attn_scratch = carve("attention scratch", static_cast<int64_t>(attention_scratch_bytes(
                                                 bounds, m.num_heads, m.num_kv_heads, HDp, 0, sm_count)));
  p.gemm_workspace = carve("cuBLASLt workspace", static_cast<int64_t>(Gemm::kDefaultWorkspaceBytes));
  p.batch = carve("batch arrays", static_cast<int64_t>(batch_layout(T, B).total));
  return p;
}

int64_t device_kv_cache_bytes(const model::ModelSpec& spec, int64_t rows) {
  ABL_CHECK(rows > 0, "KV cache of {} rows", rows);
  check_cuda_engine_runs(spec);  // (a model the engine refuses: the refusal, not a kernel's limit)
  return 2 * spec.attention_layers() * (rows + 1) * spec.num_kv_heads * attention_head_dim(spec) *
         static_cast<int64_t>(sizeof(__nv_bfloat16));
}

engine::EngineFootprint cuda_engine_footprint(int sm_count) {
  engine::EngineFootprint f;
  f.name = "cuda";
  f.weights = DType::bf16;
  f.pass_buffers = [sm_count](const model::ModelSpec& spec, const engine::Limits& limits) {
    return plan_cuda_engine(spec, limits, sm_count).table;
  };
  f.kv_cache_bytes = &device_kv_cache_bytes;
  f.kv_cache_label = "KV cache (2,L,rows+1,NKV*HDp) bf16";
  return f;
}

}  // namespace abl::cuda
