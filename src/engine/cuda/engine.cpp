// The CUDA forward pass (engine.h): the device twin of engine::Engine, host code over the
// committed launchers. Buffers come from one plan carved out of one allocation; the batch's
// index arrays travel in one copy from pinned staging; every op is enqueued on the engine's
// stream and forward() synchronises once, after the results are copied to the host.
#include "abl/engine/cuda/engine.h"
#include "abl/engine/rope_freqs.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/grouped_gemm.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/error.h"
#include "abl/core/log.h"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

// Ids of caches and ablations, unique within the process (decode-graph keys).
uint64_t next_id() {
  static std::atomic<uint64_t> n{0};
  return ++n;
}

// dst(rows, width) at a row pitch of dst_stride = the first width values of src's rows of src_stride
// values, device to device: heads zero-padded for attention at HDp (HD → HDp), the attention output
// cut back (HDp → HDv), latent attention's latent c taken from kv_a's rows (C + R → C).
void copy_rows(const bf16* src, int64_t src_stride, bf16* dst, int64_t dst_stride, int64_t rows, int64_t width,
               cudaStream_t s) {
  if (rows == 0) return;
  CUDA_CHECK(cudaMemcpy2DAsync(dst, static_cast<size_t>(dst_stride) * sizeof(bf16), src,
                               static_cast<size_t>(src_stride) * sizeof(bf16), static_cast<size_t>(width) * sizeof(bf16),
                               static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, s));
}

// The elements between one expert's tensors and the next's in an MoE layer's views: the device unit
// layout puts each expert's gate, up and down after the previous expert's, all experts the same
// size, so the grouped GEMMs step through the experts from expert 0's tensors.
int64_t expert_stride(const DeviceLayer& w) {
  const std::vector<DeviceExpert>& x = w.experts;
  ABL_CHECK(!x.empty(), "an MoE layer's views without experts");
  const int64_t stride = x.size() > 1 ? x[1].w_up - x[0].w_up : 0;  // (up: Nemotron-H's experts have no gate)
  for (size_t e = 0; e < x.size(); ++e) {
    const int64_t o = static_cast<int64_t>(e) * stride;
    const auto same = [o](const bf16* a, const bf16* first) { return a == (first ? first + o : nullptr); };
    ABL_CHECK(same(x[e].w_gate, x[0].w_gate) && same(x[e].w_up, x[0].w_up) && same(x[e].w_down, x[0].w_down) &&
                  same(x[e].b_gate, x[0].b_gate) && same(x[e].b_up, x[0].b_up) && same(x[e].b_down, x[0].b_down),
              "expert {}'s weights are not {} elements after expert {}'s (the grouped GEMMs need one stride)", e,
              stride, e == 0 ? 0 : e - 1);
  }
  return stride;
}

}  // namespace

// ---- DeviceKvCache --------------------------------------------------------------------------

DeviceKvCache::DeviceKvCache(const model::ModelSpec& spec, int64_t rows, cudaStream_t stream, int64_t state_slots)
    : rows_(rows),
      kv_dim_(spec.num_kv_heads * attention_head_dim(spec)),
      id_(next_id()),
      buffer_(static_cast<size_t>(bytes_for(spec, rows)), "the KV cache"),  // bytes_for checks rows > 0
      state_slots_(state_slots) {
  for (int64_t l = 0, n = 0; l < spec.num_layers; ++l) {
    kv_layer_.push_back(spec.is_attention_layer(l) ? n++ : -1);
  }
  if (buffer_.bytes() > 0) CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, buffer_.bytes(), stream));  // none: no attention
  const int64_t n = state_slots + 1, P = spec.linear_conv_kernel - 1;
  const int64_t S = spec.linear_num_value_heads * spec.linear_key_head_dim * spec.linear_value_head_dim;
  int64_t at = 0;
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    const bool linear = spec.is_linear_layer(l);
    state_at_.push_back(at);
    at += linear ? n * spec.linear_conv_dim() * P : 0;
    state_at_.push_back(at);
    at += linear ? n * S : 0;
  }
  if (at > 0) {
    states_ = DeviceBuffer(static_cast<size_t>(at) * sizeof(float), "the recurrent states");
    CUDA_CHECK(cudaMemsetAsync(states_.get(), 0, states_.bytes(), stream));
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

int64_t DeviceKvCache::kv_layer(int64_t layer) const {
  ABL_CHECK(layer >= 0 && layer < static_cast<int64_t>(kv_layer_.size()) && kv_layer_[static_cast<size_t>(layer)] >= 0,
            "the KV cache has no rows for layer {} (not an attention layer)", layer);
  return kv_layer_[static_cast<size_t>(layer)];
}

int64_t DeviceKvCache::state_bytes_for(const model::ModelSpec& spec, int64_t slots) {
  return (slots + 1) * spec.linear_state_floats() * static_cast<int64_t>(sizeof(float));
}

int64_t DeviceKvCache::bytes_for(const model::ModelSpec& spec, int64_t rows) {
  return device_kv_cache_bytes(spec, rows);
}

// ---- CudaEngine -----------------------------------------------------------------------------

struct CudaEngine::Buffers {
  float* x = nullptr;      // (T, H) residual stream
  bf16* h = nullptr;       // (T, H) normed input of the next GEMMs
  bf16* q = nullptr;       // (T, NH*HD)
  bf16* k = nullptr;       // (T, NKV*HD)
  bf16* v = nullptr;       // (T, NKV*HD)
  bf16* att = nullptr;     // (T, NH*HD) attention output
  float* y = nullptr;      // (T, H) o_proj / down_proj output
  bf16* gate = nullptr;    // (T, F), then swiglu(gate, up)
  bf16* up = nullptr;      // (T, F)
  bf16* qp = nullptr;      // (T, NH*HDp)  padded head dim only, padding columns zero
  bf16* kp = nullptr;      // (T, NKV*HDp)
  bf16* vp = nullptr;      // (T, NKV*HDp)
  bf16* attp = nullptr;    // (T, NH*HDp)
  bf16* q_gate = nullptr;  // (T, NH*HD) attn_output_gate
  bf16* lin_x = nullptr;   // (T, C) linear attention's conv channels
  bf16* lin_z = nullptr;   // (T, NV*DV)
  bf16* lin_ba = nullptr;  // (T, 2*NV)
  bf16* q_a = nullptr;     // (T, q_lora_rank) latent attention (plan.h)
  bf16* kv_a = nullptr;    // (T, C+R)
  bf16* latent = nullptr;  // (T, C)
  bf16* kv_b = nullptr;    // (T, NH*(nope+HDv))
  float* rows = nullptr;   // (B, H) the last token of each sequence
  bf16* last = nullptr;    // (B, H) final-normed last rows
  float* logits = nullptr;     // (B, V)
  float* kl_ref = nullptr;     // (B, V) the KL reference rows of the batch's sequences
  double* kl = nullptr;        // (B)
  int32_t* next_ids = nullptr;  // (B) argmax of the logits
  float* captures = nullptr;   // (B, L+1, H)
  float* inv_freq = nullptr;   // (HD/2), LongRoPE: (2, HD/2), short then long factors
  float* inv_freq_local = nullptr;  // (HD/2) of the sliding layers (Gemma 3), else as inv_freq
  const int32_t* rope_table = nullptr;  // (T) row of inv_freq of each token (LongRoPE), else null
  // MoE layers (plan.h): router logits, the top-k, the slots sorted by expert, the rows in that order.
  float* router = nullptr;          // (T, E)
  int32_t* topk_ids = nullptr;      // (T, k)
  float* topk_w = nullptr;          // (T, k)
  int64_t* expert_order = nullptr;  // (T*k) slot of each sorted row
  int64_t* slot_pos = nullptr;      // (T*k) sorted row of each slot
  int64_t* expert_row_seq = nullptr;  // (T*k) sequence of each sorted row
  int64_t* expert_offsets = nullptr;  // (E+1)
  int32_t* expert_counts = nullptr;   // (E)
  int32_t* expert_tiles = nullptr;    // (E+1) first row tile of each expert (grouped_gemm.h)
  bf16* expert_in = nullptr;        // (T*k, H)
  bf16* expert_gate = nullptr;      // (T*k, Fm)
  bf16* expert_up = nullptr;        // (T*k, Fm)
  float* expert_out = nullptr;      // (T*k, H)
  bf16* moe_latent = nullptr;       // (T, D) LatentMoE: fc1_latent_proj's output, then the experts' sum
  float* moe_latent_sum = nullptr;  // (T, D)
  void* attn_scratch = nullptr;
  size_t attn_scratch_bytes = 0;
  void* gemm_workspace = nullptr;
  size_t gemm_workspace_bytes = 0;
  char* batch = nullptr;  // device mirror of the staging
  // Views of this batch's arrays inside `batch`.
  const int32_t* tokens = nullptr;        // (T)
  const int64_t* positions = nullptr;     // (T)
  const int64_t* cache_rows = nullptr;    // (T)
  const int64_t* row_seq = nullptr;       // (T)
  const int64_t* last_rows = nullptr;     // (B) row of each sequence's last token
  const int64_t* kl_rows = nullptr;       // (B) KL reference row of each sequence (0 when no KL)
  const AttnSeq* seqs = nullptr;          // (B)
  const int64_t* state_slots = nullptr;   // (B) recurrent-state slot of each sequence
  const int32_t* trial = nullptr;         // (B)
};

CudaEngine::CudaEngine(DeviceWeightSource& weights, engine::Limits limits)
    : weights_(weights),
      spec_(weights.spec()),
      limits_(limits),
      stream_(weights.compute_stream()),
      buf_(std::make_unique<Buffers>()) {
  ABL_CHECK(limits.max_tokens > 0 && limits.max_seqs > 0, "engine limits must be positive");
  const model::ModelSpec& m = spec_;
  ABL_CHECK(m.num_heads % m.num_kv_heads == 0, "NH = {} is not a multiple of NKV = {}", m.num_heads,
            m.num_kv_heads);
  check_cuda_engine_runs(m);
  max_kv_len_ = std::max(m.max_position_embeddings, limits.max_tokens);
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, dev));
  plan_ = plan_cuda_engine(m, limits, sm_count_);
  arena_ = DeviceBuffer(plan_.total, "the CUDA engine's buffers");
  staging_ = PinnedBuffer(batch_layout(limits.max_tokens, limits.max_seqs).total);
  log::debug("CUDA engine buffers:\n{}", plan_.table.table());

  char* base = arena_.as<char>();
  auto at = [base](const Slice& s) { return s.bytes > 0 ? static_cast<void*>(base + s.offset) : nullptr; };
  const CudaEnginePlan& p = plan_;
  Buffers& b = *buf_;
  b.x = static_cast<float*>(at(p.x));
  b.h = static_cast<bf16*>(at(p.h));
  b.q = static_cast<bf16*>(at(p.q));
  b.k = static_cast<bf16*>(at(p.k));
  b.v = static_cast<bf16*>(at(p.v));
  b.att = static_cast<bf16*>(at(p.att));
  b.y = static_cast<float*>(at(p.y));
  b.gate = static_cast<bf16*>(at(p.gate));
  b.up = static_cast<bf16*>(at(p.up));
  b.q_gate = static_cast<bf16*>(at(p.q_gate));
  b.lin_x = static_cast<bf16*>(at(p.lin_x));
  b.lin_z = static_cast<bf16*>(at(p.lin_z));
  b.lin_ba = static_cast<bf16*>(at(p.lin_ba));
  b.q_a = static_cast<bf16*>(at(p.q_a));
  b.kv_a = static_cast<bf16*>(at(p.kv_a));
  b.latent = static_cast<bf16*>(at(p.latent));
  b.kv_b = static_cast<bf16*>(at(p.kv_b));
  const cudaStream_t s = stream_.get();
  ABL_CHECK(weights_.attention_head_dim() == attention_head_dim(m), "the weights' attention head dim {} is not {}",
            weights_.attention_head_dim(), attention_head_dim(m));
  if (attention_padded(m)) {
    b.qp = static_cast<bf16*>(at(p.qp));
    b.kp = static_cast<bf16*>(at(p.kp));
    b.vp = static_cast<bf16*>(at(p.vp));
    b.attp = static_cast<bf16*>(at(p.attp));
    // The padding columns are never written after this: they stay zero.
    for (const Slice* padded : {&p.qp, &p.kp, &p.vp}) {
      CUDA_CHECK(cudaMemsetAsync(at(*padded), 0, padded->bytes, s));
    }
  }
  b.rows = static_cast<float*>(at(p.rows));
  b.last = static_cast<bf16*>(at(p.last));
  b.logits = static_cast<float*>(at(p.logits));
  b.next_ids = static_cast<int32_t*>(at(p.next_ids));
  b.kl_ref = static_cast<float*>(at(p.kl_ref));
  b.kl = static_cast<double*>(at(p.kl));
  b.captures = static_cast<float*>(at(p.captures));
  b.inv_freq = static_cast<float*>(at(p.inv_freq));
  b.attn_scratch_bytes = p.attn_scratch.bytes;
  b.attn_scratch = at(p.attn_scratch);
  b.gemm_workspace = at(p.gemm_workspace);
  b.gemm_workspace_bytes = p.gemm_workspace.bytes;
  b.batch = static_cast<char*>(at(p.batch));
  if (m.num_experts > 0) {
    const int64_t Tk = limits.max_tokens * m.experts_per_token, E = m.num_experts;
    b.router = static_cast<float*>(at(p.router));
    b.topk_ids = static_cast<int32_t*>(at(p.topk));
    b.topk_w = reinterpret_cast<float*>(b.topk_ids + Tk);
    b.expert_order = static_cast<int64_t*>(at(p.expert_order));
    b.slot_pos = b.expert_order + Tk;
    b.expert_row_seq = b.slot_pos + Tk;
    b.expert_offsets = b.expert_row_seq + Tk;
    b.expert_counts = reinterpret_cast<int32_t*>(b.expert_offsets + E + 1);
    b.expert_tiles = b.expert_counts + E;
    b.expert_in = static_cast<bf16*>(at(p.expert_in));
    // gate rows first, then up; ungated relu² experts have only the up rows
    const bool gated = model::gated_activation(m.activation);
    b.expert_gate = gated ? static_cast<bf16*>(at(p.expert_gate_up)) : nullptr;
    b.expert_up = static_cast<bf16*>(at(p.expert_gate_up)) + (gated ? Tk * m.moe_intermediate_size : 0);
    b.expert_out = static_cast<float*>(at(p.expert_out));
    b.moe_latent = static_cast<bf16*>(at(p.moe_latent));
    b.moe_latent_sum = static_cast<float*>(at(p.moe_latent_sum));
  }
  gemm_ = std::make_unique<Gemm>(b.gemm_workspace, b.gemm_workspace_bytes);

  // The global RoPE (LongRoPE: its short and long rows), then the sliding layers' (the same unless
  // rope_local_theta is set).
  std::vector<float> inv_freq = engine::rope_inv_freq(m);
  const std::vector<float> long_freq = engine::rope_long_inv_freq(m);
  inv_freq.insert(inv_freq.end(), long_freq.begin(), long_freq.end());
  const std::vector<float> local = engine::rope_inv_freq(m, true);
  b.inv_freq_local = b.inv_freq + inv_freq.size();
  inv_freq.insert(inv_freq.end(), local.begin(), local.end());
  copy_to_device(b.inv_freq, inv_freq.data(), inv_freq.size() * sizeof(float), s);  // synchronises

  graphs_ = std::make_unique<DecodeGraphs>();
  const char* env = std::getenv("ABL_CUDA_GRAPHS");
  graphs_on_ = !(env && std::string(env) == "0");
}

CudaEngine::~CudaEngine() = default;

void CudaEngine::set_decode_graphs(bool on) { graphs_on_ = on; }

void CudaEngine::upload_batch(const engine::Batch& batch, const DeviceKvCache& cache, const DeviceAblation* ablation,
                              int64_t visible_rows, const int32_t* kl_rows, int64_t kl_reference_rows) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs();
  ABL_CHECK(T <= limits_.max_tokens && B <= limits_.max_seqs,
            "batch of {} tokens in {} sequences exceeds the engine limits ({} tokens, {} sequences)", T, B,
            limits_.max_tokens, limits_.max_seqs);
  ABL_CHECK(static_cast<int64_t>(batch.positions.size()) == T && static_cast<int64_t>(batch.cache_rows.size()) == T &&
                static_cast<int64_t>(batch.row_seq.size()) == T && static_cast<int64_t>(batch.trial.size()) == B,
            "inconsistent batch arrays ({} tokens, {} sequences)", T, B);
  ABL_CHECK(cache.kv_dim() == m.num_kv_heads * weights_.attention_head_dim(),
            "KV cache rows of {} values for a model with {} (NKV·HDp)", cache.kv_dim(),
            m.num_kv_heads * weights_.attention_head_dim());
  for (int32_t t : batch.tokens) {
    ABL_CHECK(t >= 0 && t < m.vocab_size, "token id {} outside the vocabulary (V = {})", t, m.vocab_size);
  }
  for (int64_t r : batch.cache_rows) {
    ABL_CHECK(r >= 0 && r < visible_rows, "KV cache row {} outside the cache ({} rows)", r, cache.rows());
  }
  bounds_ = AttnBounds{};
  bounds_.B = B;
  for (int64_t s = 0; s < B; ++s) {
    const AttnSeq& q = batch.seqs[static_cast<size_t>(s)];
    ABL_CHECK(q.q_len >= 1 && q.q_len <= q.kv_len && q.kv_begin >= 0 && q.kv_begin + q.kv_len <= visible_rows &&
                  q.kv_len <= max_kv_len_,
              "sequence {}: q_len {}, kv rows [{}, {}) outside the cache ({} rows) or longer than {}", s, q.q_len,
              q.kv_begin, q.kv_begin + q.kv_len, cache.rows(), max_kv_len_);
    bounds_.max_q_len = std::max(bounds_.max_q_len, q.q_len);
    bounds_.max_kv_len = std::max(bounds_.max_kv_len, q.kv_len);
  }
  if (!m.linear_layers.empty()) {
    ABL_CHECK(static_cast<int64_t>(batch.state_slots.size()) == B, "{} state slots for {} sequences",
              batch.state_slots.size(), B);
    for (int64_t slot : batch.state_slots) {
      ABL_CHECK(slot >= 0 && slot <= cache.state_slots(), "recurrent state slot {} outside the cache ({} slots)", slot,
                cache.state_slots());
    }
  }
  if (ablation) {
    for (int32_t t : batch.trial) {
      ABL_CHECK(t >= -1 && t < ablation->num_trials(), "sequence with trial id {} but only {} trials", t,
                ablation->num_trials());
    }
  }

  const BatchLayout lay = batch_layout(T, B);
  char* h = staging_.as<char>();
  auto put = [h](size_t at, const void* src, size_t bytes) {
    if (bytes > 0) std::memcpy(h + at, src, bytes);
  };
  const auto t8 = static_cast<size_t>(T) * sizeof(int64_t);
  put(lay.positions, batch.positions.data(), t8);
  put(lay.cache_rows, batch.cache_rows.data(), t8);
  put(lay.row_seq, batch.row_seq.data(), t8);
  auto* kl_at = reinterpret_cast<int64_t*>(h + lay.kl_rows);
  for (int64_t s = 0; s < B; ++s) {
    const int64_t r = kl_rows ? kl_rows[s] : 0;
    ABL_CHECK(!kl_rows || (r >= 0 && r < kl_reference_rows), "sequence {} asks for KL reference row {} of {}", s, r,
              kl_reference_rows);
    kl_at[s] = r;
  }
  auto* last = reinterpret_cast<int64_t*>(h + lay.last_rows);
  for (int64_t s = 0; s < B; ++s) last[s] = batch.last_row(s);
  put(lay.seqs, batch.seqs.data(), static_cast<size_t>(B) * sizeof(AttnSeq));
  put(lay.state_slots, batch.state_slots.data(), batch.state_slots.size() * sizeof(int64_t));
  put(lay.tokens, batch.tokens.data(), static_cast<size_t>(T) * sizeof(int32_t));
  put(lay.trial, batch.trial.data(), static_cast<size_t>(B) * sizeof(int32_t));
  const std::vector<int32_t> rope_table = engine::rope_tables(m, batch);
  put(lay.rope_table, rope_table.data(), rope_table.size() * sizeof(int32_t));
  CUDA_CHECK(cudaMemcpyAsync(buf_->batch, h, lay.total, cudaMemcpyHostToDevice, stream_.get()));

  Buffers& b = *buf_;
  b.positions = reinterpret_cast<const int64_t*>(b.batch + lay.positions);
  b.cache_rows = reinterpret_cast<const int64_t*>(b.batch + lay.cache_rows);
  b.row_seq = reinterpret_cast<const int64_t*>(b.batch + lay.row_seq);
  b.last_rows = reinterpret_cast<const int64_t*>(b.batch + lay.last_rows);
  b.kl_rows = reinterpret_cast<const int64_t*>(b.batch + lay.kl_rows);
  b.seqs = reinterpret_cast<const AttnSeq*>(b.batch + lay.seqs);
  b.state_slots = reinterpret_cast<const int64_t*>(b.batch + lay.state_slots);
  b.tokens = reinterpret_cast<const int32_t*>(b.batch + lay.tokens);
  b.trial = reinterpret_cast<const int32_t*>(b.batch + lay.trial);
  b.rope_table = rope_table.empty() ? nullptr : reinterpret_cast<const int32_t*>(b.batch + lay.rope_table);
}

// captures[s, depth] = x[last_row(s)], the HF hidden_states of depth `depth` < L.
void CudaEngine::capture(int64_t depth, int64_t B) {
  const int64_t H = spec_.hidden_size, D = spec_.num_layers + 1;
  gather_rows(buf_->x, buf_->last_rows, B, H, buf_->captures + depth * H, D * H, stream_.get());
}

void CudaEngine::layer(int64_t l, const engine::Batch& batch, DeviceKvCache& cache, const DeviceAblation* ablation) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, F = m.intermediate_size;
  const float eps = static_cast<float>(m.rms_norm_eps);
  const float w1 = m.norm_plus_one ? 1.0f : 0.0f;  // Gemma's norms scale by (1 + w)
  const cudaStream_t s = stream_.get();
  const DeviceLayer& w = weights_.layer(l);
  Buffers& b = *buf_;
  Gemm& gemm = *gemm_;
  // x += y, the branch output times Granite's residual_multiplier (1 elsewhere).
  const auto add_branch = [&] {
    if (m.residual_multiplier != 1.0) scale(b.y, static_cast<float>(m.residual_multiplier), T * H, s);
    add(b.x, b.y, T * H, s);
  };
  auto epilogue = [&](engine::Component c) {
    if (!ablation) return;
    const AblationVectors& vec = ablation->vectors(c, l);
    if (vec.v == nullptr) return;  // no trial ablates this layer
    ablation_apply(b.y, T, H, b.row_seq, b.trial, ablation->trials(), static_cast<int32_t>(c),
                   static_cast<int32_t>(l), vec, s);
  };

  // Attention block (or a linear-attention layer's token mixing, engine::Engine::linear_attention's twin);
  // Nemotron-H's MLP blocks have none.
  if (m.has_mixer(l)) {
    residual_norm(b.x, w.attn_norm, w.attn_norm_bias, b.h, T);
    if (m.is_linear_layer(l) && m.mamba2()) {
      mamba_mixer(l, w, batch, cache);
    } else if (m.is_linear_layer(l) && m.linear_mixer == model::ModelSpec::LinearMixer::short_conv) {
      short_conv_mixer(l, w, batch, cache);
    } else if (m.is_linear_layer(l)) {
      linear_attention(l, w, batch, cache);
    } else {
      self_attention(l, w, batch, cache);
    }
    gemm.linear(b.att, w.wo, static_cast<const float*>(nullptr), b.y, T, m.o_in(l), H, s);
    epilogue(engine::Component::attn_o);
    if (w.bo) add_bias_rows(b.y, w.bo, T, H, s);  // after the epilogue: the ablation rewrites weights only
    if (m.sandwich_norms) rmsnorm(b.y, w.post_attn_norm, b.y, T, H, eps, w1, s);
    add_branch();
  }
  if (!m.has_mlp(l)) return;  // Nemotron-H's mixer blocks

  // MLP block; Cohere's parallel block runs it on b.h as the attention had it (input_layernorm of the
  // layer's input: the attention left b.h as it was).
  if (!m.parallel_block) residual_norm(b.x, w.mlp_norm, w.mlp_norm_bias, b.h, T);
  if (m.is_moe_layer(l)) {
    moe_mlp(l, w, T, ablation);
  } else {
    gated_mlp(b.h, DeviceExpert{w.w_gate, w.w_up, w.w_down, w.b_gate, w.b_up, w.b_down, w.xielu}, T, F, b.y);
    epilogue(engine::Component::mlp_down);
    if (w.b_down) add_bias_rows(b.y, w.b_down, T, H, s);  // after the epilogue, as o_proj's
  }
  if (m.sandwich_norms) rmsnorm(b.y, w.post_mlp_norm, b.y, T, H, eps, w1, s);
  add_branch();
}

// Softmax attention of layer l on buf_->h into buf_->att (T, NH*HDv), engine::Engine::self_attention's twin.
void CudaEngine::self_attention(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size;
  const int64_t NH = m.num_heads, NKV = m.num_kv_heads, HD = m.head_dim, HDp = weights_.attention_head_dim();
  const int64_t QD = m.q_dim(), KVD = m.kv_dim();
  const int64_t window = m.uses_sliding_window(l) ? m.sliding_window : 0;
  const float w1 = m.norm_plus_one ? 1.0f : 0.0f;  // Gemma's norms scale by (1 + w)
  // The kernel takes the model's score scale (from the real head dim, padded or not). YaRN's and
  // LongRoPE's attention factor scales cos and sin in the rope kernel, as on the CPU: only the rotated
  // dims of q and k, and only in layers that rotate (folding its square into the score scale would be
  // wrong for a partial rotary dim and for NoPE layers).
  const bool local = m.uses_local_rope(l);
  const float rope_factor = engine::rope_attention_factor(m, local);
  const float* inv_freq = local ? buf_->inv_freq_local : buf_->inv_freq;
  const cudaStream_t s = stream_.get();
  const AttnScores scores{static_cast<float>(m.attention_scale()),
                          static_cast<float>(m.attn_softcap), w.sinks};
  Buffers& b = *buf_;
  Gemm& gemm = *gemm_;
  const bool padded = HDp != HD || HDp != m.v_head();
  bf16* q_att = padded ? b.qp : b.q;
  bf16* k_att = padded ? b.kp : b.k;
  bf16* v_att = padded ? b.vp : b.v;
  bf16* out_att = padded ? b.attp : b.att;
  if (m.mla) {
    latent_qkv(w, batch, k_att, v_att, HDp);  // the keys and values straight into their (padded) rows
    if (padded) copy_rows(b.q, HD, b.qp, HDp, T * NH, HD, s);
  } else {
    gemm.linear(b.h, w.wq, w.bq, b.q, T, H, QD, s);
    gemm.linear(b.h, w.wk, w.bk, b.k, T, H, KVD, s);
    gemm.linear(b.h, w.wv, w.bv, b.v, T, H, KVD, s);
    const auto qk_norm = [&] {
      head_norm(b.q, w.q_norm, T, NH, w1);
      head_norm(b.k, w.k_norm, T, NKV, w1);
    };
    if (m.qk_norm && !m.qk_norm_after_rope) qk_norm();
    const int32_t* rope_table = local ? nullptr : b.rope_table;
    if (m.uses_rope(l)) {
      rope(b.q, b.positions, T, NH, HD, inv_freq, rope_table, s, m.rotary_dim(), m.rope_interleaved, rope_factor);
      rope(b.k, b.positions, T, NKV, HD, inv_freq, rope_table, s, m.rotary_dim(), m.rope_interleaved, rope_factor);
    }
    if (m.qk_norm && m.qk_norm_after_rope) qk_norm();  // HunYuanDenseV1Attention
    if (m.qk_l2_norm && m.uses_rope(l)) {  // Llama4TextL2Norm after RoPE, on the rotary layers only
      const float eps = static_cast<float>(m.rms_norm_eps);
      rmsnorm(b.q, nullptr, b.q, T * NH, HD, eps, 0.0f, s);
      rmsnorm(b.k, nullptr, b.k, T * NKV, HD, eps, 0.0f, s);
    }
    if (m.query_scaled_in(l)) {  // Ministral3Attention, Llama 4's NoPE layers: the queries only, after RoPE
      scale_by_position(b.q, b.positions, T, QD, static_cast<float>(m.query_log_scale_beta), m.query_log_scale_period,
                        m.query_log_scale_offset, m.query_log_scale_in_dtype, s);
    }
    if (padded) {
      copy_rows(b.q, HD, b.qp, HDp, T * NH, HD, s);
      copy_rows(b.k, HD, b.kp, HDp, T * NKV, HD, s);
      copy_rows(b.v, HD, b.vp, HDp, T * NKV, HD, s);
    }
  }
  kv_append(k_att, v_att, b.cache_rows, T, cache.kv_dim(), cache.k(l), cache.v(l), s);
  attention(q_att, cache.k(l), cache.v(l), out_att, b.seqs, bounds_, NH, NKV, HDp, window, scores, b.attn_scratch,
            b.attn_scratch_bytes, s);
  if (padded) copy_rows(b.attp, HDp, b.att, m.v_head(), T * NH, m.v_head(), s);
  if (w.wq_gate) {  // Qwen3NextAttention: attn_output * sigmoid(gate)
    gemm.linear(b.h, w.wq_gate, static_cast<const bf16*>(nullptr), b.q_gate, T, H, QD, s);
    mul_sigmoid(b.att, b.q_gate, T * QD, s);
  }
}

// DeepseekV3Attention.forward up to the attention (engine::Engine::latent_qkv's twin): q = q_b(norm(q_a(h)))
// (or q_proj(h)) into buf_->q (T, NH*HD); kv_a_proj_with_mqa gives the latent c, normed and expanded by
// kv_b_proj into every head's k_nope and value, and one k_pe that every head's key ends with. The rotated
// dims are the tail [nope, nope + R) of each q/k head. Keys (T, NH, ·) and values land in k and v at rows of
// `stride` values (HDp: the padded buffers, whose padding stays zero).
void CudaEngine::latent_qkv(const DeviceLayer& w, const engine::Batch& batch, bf16* k, bf16* v, int64_t stride) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, NH = m.num_heads, HD = m.head_dim;
  const int64_t C = m.kv_lora_rank, R = m.partial_rotary_dim, nope = m.qk_nope_head_dim, HDv = m.v_head();
  const float eps = static_cast<float>(m.latent_norm_eps);
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  Gemm& gemm = *gemm_;
  const bf16* no_bias = nullptr;
  if (m.q_lora_rank > 0) {
    const int64_t ql = m.q_lora_rank;
    gemm.linear(b.h, w.wq_a, no_bias, b.q_a, T, H, ql, s);
    rmsnorm(b.q_a, w.q_a_norm, b.q_a, T, ql, eps, 0.0f, s);
    gemm.linear(b.q_a, w.wq_b, no_bias, b.q, T, ql, m.q_dim(), s);
  } else {
    gemm.linear(b.h, w.wq, no_bias, b.q, T, H, m.q_dim(), s);
  }
  gemm.linear(b.h, w.wkv_a, no_bias, b.kv_a, T, H, C + R, s);
  copy_rows(b.kv_a, C + R, b.latent, C, T, C, s);
  rmsnorm(b.latent, w.kv_a_norm, b.latent, T, C, eps, 0.0f, s);
  gemm.linear(b.latent, w.wkv_b, no_bias, b.kv_b, T, C, NH * (nope + HDv), s);
  const float factor = engine::rope_attention_factor(m, false);
  // q's tail in each head, and k_pe (one head, the tail of each kv_a row)
  rope(b.q + nope, b.positions, T, NH, HD, b.inv_freq, b.rope_table, s, R, m.rope_interleaved, factor);
  rope(b.kv_a + C, b.positions, T, 1, C + R, b.inv_freq, b.rope_table, s, R, m.rope_interleaved, factor);
  mla_split_kv(b.kv_b, b.kv_a + C, C + R, T, NH, nope, R, HDv, k, stride, v, stride, s);
}

// A linear-attention layer's token mixing on buf_->h into buf_->att (T, NV*DV): the conv channels, z and
// b|a as three GEMMs (q, k, v and b, a are adjacent in the unit), the conv, the delta rule with each
// sequence's state, the gated norm (engine::Engine::linear_attention's twin).
void CudaEngine::linear_attention(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs(), H = m.hidden_size;
  const int64_t NK = m.linear_num_key_heads, NV = m.linear_num_value_heads, DK = m.linear_key_head_dim;
  const int64_t DV = m.linear_value_head_dim, KD = m.linear_key_dim(), C = m.linear_conv_dim();
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  ABL_CHECK(w.lin_k == w.lin_q + KD * H && w.lin_v == w.lin_k + KD * H && w.lin_a == w.lin_b + NV * H,
            "layer {}: linear attention's q, k, v (and b, a) projections are not adjacent on the device", l);
  const bf16* no_bias = nullptr;
  gemm_->linear(b.h, w.lin_q, no_bias, b.lin_x, T, H, C, s);
  gemm_->linear(b.h, w.lin_z, no_bias, b.lin_z, T, H, NV * DV, s);
  gemm_->linear(b.h, w.lin_b, no_bias, b.lin_ba, T, H, 2 * NV, s);
  causal_conv_silu(b.lin_x, w.lin_conv, no_bias, b.seqs, b.state_slots, B, C, m.linear_conv_kernel, cache.conv_state(l),
                   s);
  gated_delta_rule(b.lin_x, b.lin_ba, w.lin_a_log, w.lin_dt_bias, b.seqs, b.state_slots, B, NK, NV, DK, DV,
                   cache.delta_state(l), b.att, s);
  rmsnorm_gated(b.att, w.lin_norm, b.lin_z, T * NV, DV, static_cast<float>(m.rms_norm_eps), s);
}

// A Mamba-2 layer's token mixing on buf_->h into buf_->att (T, NV*DV): z, x|B|C and dt as three GEMMs over
// in_proj's row blocks, the conv (plus its bias), the scan with each sequence's state, the norm of y·SiLU(z)
// (engine::Engine::mamba_mixer's twin).
void CudaEngine::mamba_mixer(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs(), H = m.hidden_size;
  const int64_t NK = m.linear_num_key_heads, NV = m.linear_num_value_heads, DK = m.linear_key_head_dim;
  const int64_t DV = m.linear_value_head_dim, I = m.linear_value_dim(), C = m.linear_conv_dim();
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  const bf16* no_bias = nullptr;
  gemm_->linear(b.h, w.lin_z, no_bias, b.lin_z, T, H, I, s);
  gemm_->linear(b.h, w.mamba_xbc, no_bias, b.lin_x, T, H, C, s);
  gemm_->linear(b.h, w.mamba_dt, no_bias, b.lin_ba, T, H, NV, s);
  causal_conv_silu(b.lin_x, w.lin_conv, w.lin_conv_bias, b.seqs, b.state_slots, B, C, m.linear_conv_kernel,
                   cache.conv_state(l), s);
  mamba2_scan(b.lin_x, b.lin_ba, w.lin_a_log, w.lin_dt_bias, w.mamba_d, b.seqs, b.state_slots, B, NK, NV, DK, DV,
              static_cast<float>(m.mamba_dt_min), static_cast<float>(m.mamba_dt_max), cache.delta_state(l), b.att, s);
  const int64_t groups = m.mamba_norm_per_group ? NK : 1;  // Zamba2RMSNormGated: per group of I / NK
  rmsnorm_of_gated(b.att, w.lin_norm, b.lin_z, T, I, groups, static_cast<float>(m.rms_norm_eps), s);
}

// An LFM2 short-conv layer's token mixing on buf_->h into buf_->att (T, H): in_proj's B | C | x as one GEMM, the
// conv over B·x with each sequence's state, times C (engine::Engine::short_conv_mixer's twin).
void CudaEngine::short_conv_mixer(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs(), H = m.hidden_size;
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  gemm_->linear(b.h, w.short_conv_in, static_cast<const bf16*>(nullptr), b.lin_x, T, H, 3 * H, s);
  short_conv(b.lin_x, w.lin_conv, b.seqs, b.state_slots, B, H, m.linear_conv_kernel, cache.conv_state(l), b.att, s);
}

// out(rows, H) f32 = down(act(gate(x) + b_gate) · (up(x) + b_up)) for x(rows, H) bf16, through
// buf_->gate/up (width F), or the ungated down(relu(up(x))²) of Nemotron-H and Arcee, down(xIELU(up(x))) of
// Apertus; the down projection's bias is the caller's, after the epilogue.
void CudaEngine::gated_mlp(const bf16* x, const DeviceExpert& w, int64_t rows, int64_t F, float* out) {
  const int64_t H = spec_.hidden_size;
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  if (!model::gated_activation(spec_.activation)) {
    gemm_->linear(x, w.w_up, w.b_up, b.up, rows, H, F, s);
    if (spec_.activation == model::Activation::xielu) {
      xielu(b.up, rows * F, w.xielu, s);
    } else {
      relu_squared(b.up, rows * F, s);
    }
    gemm_->linear(b.up, w.w_down, static_cast<const float*>(nullptr), out, rows, F, H, s);
    return;
  }
  gemm_->linear(x, w.w_gate, w.b_gate, b.gate, rows, H, F, s);
  gemm_->linear(x, w.w_up, w.b_up, b.up, rows, H, F, s);
  activation(b.gate, b.up, rows, F, GroupBias{}, GroupBias{});
  gemm_->linear(b.gate, w.w_down, static_cast<const float*>(nullptr), out, rows, F, H, s);
}

// The q/k norm of every head of x(T, heads, HD) in place (engine::Engine::head_norm); w_offset is
// 1 for Gemma's (1 + w) norms.
void CudaEngine::head_norm(bf16* x, const bf16* w, int64_t T, int64_t heads, float w_offset) {
  const int64_t HD = spec_.head_dim;
  const float eps = static_cast<float>(spec_.rms_norm_eps);
  if (spec_.qk_norm_full) {  // OLMo 2: one RMSNorm over all heads of a token
    rmsnorm(x, w, x, T, heads * HD, eps, w_offset, stream_.get());
  } else if (spec_.norm_centered) {
    ABL_CHECK(!spec_.norm_plus_one, "a (1 + w) LayerNorm");
    layernorm(x, w, x, T * heads, HD, eps, spec_.qk_norm_per_head ? heads : 1, stream_.get());
  } else {
    ABL_CHECK(!spec_.qk_norm_per_head, "a per-head q/k RMSNorm");
    rmsnorm(x, w, x, T * heads, HD, eps, w_offset, stream_.get());
  }
}

// gate = act(gate (+ its bias), up (+ its bias)) in place, (rows, F): the spec's activation; only the
// clamped SwiGLU (gpt-oss's experts) takes biases.
void CudaEngine::activation(bf16* gate, const bf16* up, int64_t rows, int64_t F, const GroupBias& gate_bias,
                            const GroupBias& up_bias) {
  const cudaStream_t s = stream_.get();
  switch (spec_.activation) {
    case model::Activation::silu: swiglu(gate, up, gate, rows * F, s); break;
    case model::Activation::gelu_tanh: geglu(gate, up, gate, rows * F, s); break;
    case model::Activation::swiglu_clamped:
      swiglu_clamped(gate, up, gate, rows, F, static_cast<float>(spec_.swiglu_alpha),
                     static_cast<float>(spec_.swiglu_limit), gate_bias, up_bias, s);
      return;
    case model::Activation::relu2:
    case model::Activation::xielu: ABL_CHECK(false, "an ungated activation: gated_mlp runs it"); return;
  }
  ABL_CHECK(gate_bias.bias0 == nullptr && up_bias.bias0 == nullptr, "biases before an activation that takes none");
}

// An MoE layer's MLP on buf_->h into buf_->y, all on the device (so a decode step with MoE layers
// can be a graph): the router and its top-k; the slots sorted by expert (counts, their offsets and
// row tiles, the stable dispatch) and the rows gathered in that order; the experts as grouped GEMMs
// over their blocks of rows (grouped_gemm.h); the epilogue on every expert row with its expert's
// vectors before the fixed-order combine; the shared expert last (gated or added as it is).
// A LatentMoE (engine::Engine::moe_mlp's twin) routes on b.h, runs the experts over fc1_latent_proj(b.h) at
// width D, sums them in fp32, rounds the sum to bf16 (transformers' bf16 model hands fc2 its dtype) and brings
// it back to H through fc2_latent_proj, whose output the epilogue ablates as the routed experts' writer.
void CudaEngine::moe_mlp(int64_t l, const DeviceLayer& w, int64_t T, const DeviceAblation* ablation) {
  const model::ModelSpec& m = spec_;
  const int64_t H = m.hidden_size, E = m.num_experts, k = m.experts_per_token, Fm = m.moe_intermediate_size;
  const int64_t D = m.expert_width();
  const bool latent = m.moe_latent_size > 0;
  const int64_t slots = T * k;
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  const bool ablate = ablation && ablation->vectors(engine::Component::mlp_down, l).v != nullptr;

  gemm_->linear(b.h, w.router, w.router_logit_bias, b.router, T, H, E, s);
  router_topk(b.router, T, E, k, engine::router_config(m, w.router_bias), b.topk_ids, b.topk_w, s);
  const RowGroups groups{b.expert_offsets, b.expert_tiles, E, slots, grouped_tile_rows(slots, E)};
  moe_expert_counts(b.topk_ids, slots, E, b.expert_counts, s);
  group_offsets(b.expert_counts, E, groups.tile_rows, b.expert_offsets, b.expert_tiles, s);
  moe_dispatch(b.topk_ids, slots, E, b.expert_offsets, b.expert_order, b.slot_pos, s);
  // Llama 4 scales each expert's input by its router weight, and then sums the outputs as they are
  const float* input_scale = m.moe_scale_input ? b.topk_w : nullptr;
  const bf16* in = b.h;
  if (latent) {
    gemm_->linear(b.h, w.latent_in, static_cast<const bf16*>(nullptr), b.moe_latent, T, H, D, s);
    in = b.moe_latent;
  }
  moe_gather(in, b.expert_order, slots, k, D, b.row_seq, input_scale, b.expert_in, b.expert_row_seq, s);

  const int64_t stride = expert_stride(w);
  const DeviceExpert& first = w.experts.front();
  // gpt-oss's experts carry biases: each row takes its expert's (rows in expert order, groups.offsets).
  const auto bias = [&](const bf16* first_bias) { return GroupBias{first_bias, stride, b.expert_offsets, E}; };
  grouped_linear(b.expert_in, first.w_up, stride, groups, D, Fm, b.expert_up, s);
  bf16* hidden = b.expert_up;  // act(gate)·up, or Nemotron-H's ungated relu(up)²
  if (!model::gated_activation(m.activation)) {
    ABL_CHECK(m.activation == model::Activation::relu2, "layer {}: only relu² experts are ungated", l);
    ABL_CHECK(first.b_gate == nullptr && first.b_up == nullptr, "layer {}: biases on ungated relu² experts", l);
    relu_squared(b.expert_up, slots * Fm, s);
  } else {
    grouped_linear(b.expert_in, first.w_gate, stride, groups, D, Fm, b.expert_gate, s);
    activation(b.expert_gate, b.expert_up, slots, Fm, bias(first.b_gate), bias(first.b_up));
    hidden = b.expert_gate;
  }
  grouped_linear(hidden, first.w_down, stride, groups, Fm, D, b.expert_out, s);
  if (ablate && ablation->routed_experts() && !latent) {
    ablation_apply_grouped(b.expert_out, slots, H, b.expert_row_seq, b.trial, ablation->trials(),
                           static_cast<int32_t>(l), b.expert_offsets, E, ablation->expert_table(l), s);
  }
  add_group_bias(b.expert_out, slots, D, bias(first.b_down), s);  // after the epilogue, as o_proj's
  const float* weights = m.moe_scale_input ? nullptr : b.topk_w;
  if (latent) {  // fc1's output is no longer read: the buffer takes the rounded sum
    moe_combine(b.expert_out, b.slot_pos, weights, T, k, D, b.moe_latent_sum, s);
    f32_to_bf16(b.moe_latent_sum, b.moe_latent, T * D, s);
    gemm_->linear(b.moe_latent, w.latent_out, static_cast<const float*>(nullptr), b.y, T, D, H, s);
    if (ablate && ablation->routed_experts()) {
      ablation_apply(b.y, T, H, b.row_seq, b.trial, ablation->trials(),
                     static_cast<int32_t>(engine::Component::mlp_down), static_cast<int32_t>(l),
                     ablation->expert_vectors(l, DeviceAblation::kLatentOut), s);
    }
  } else {
    moe_combine(b.expert_out, b.slot_pos, weights, T, k, H, b.y, s);
  }
  if (m.shared_expert_intermediate_size > 0) {
    // expert_out is free again (stream order): the shared expert's output goes there.
    gated_mlp(b.h, w.shared, T, m.shared_expert_intermediate_size, b.expert_out);
    if (ablate) {
      ablation_apply(b.expert_out, T, H, b.row_seq, b.trial, ablation->trials(),
                     static_cast<int32_t>(engine::Component::mlp_down), static_cast<int32_t>(l),
                     ablation->expert_vectors(l, DeviceAblation::kSharedExpert), s);
    }
    if (m.shared_expert_gated) {
      add_gated(b.h, w.shared_expert_gate, b.expert_out, T, H, b.y, s);
    } else {
      add(b.y, b.expert_out, T * H, s);
    }
  }
}

// An empty pass of a collective source: every weight request in pass order and no kernels, so this
// rank joins each of the group's gathers.
void CudaEngine::request_all_weights() {
  (void)weights_.embedding();
  for (int64_t l = 0; l < spec_.num_layers; ++l) (void)weights_.layer(l);
  (void)weights_.head();
}

// Logits at every token, B rows at a time through the logits buffer (tests).
void CudaEngine::all_logits(int64_t T, float* host_out) {
  const int64_t H = spec_.hidden_size, V = spec_.vocab_size, chunk = limits_.max_seqs;
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  residual_norm(b.x, weights_.head().final_norm, weights_.head().final_norm_bias, b.h, T);
  for (int64_t t0 = 0; t0 < T; t0 += chunk) {
    const int64_t n = std::min(chunk, T - t0);
    head_logits(b.h + t0 * H, weights_.head(), n, b.logits);
    // Stream order keeps the next chunk's GEMM behind this copy.
    CUDA_CHECK(cudaMemcpyAsync(host_out + t0 * V, b.logits, static_cast<size_t>(n * V) * sizeof(float),
                               cudaMemcpyDeviceToHost, s));
  }
}

void CudaEngine::forward(const engine::Batch& batch, DeviceKvCache& cache, const engine::Outputs& out,
                         const DeviceAblation* ablation, const engine::DeviceKlReference* kl) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs(), H = m.hidden_size, V = m.vocab_size;
  const int64_t L = m.num_layers;
  const cudaStream_t s = stream_.get();
  Buffers& b = *buf_;
  if (T == 0) {
    if (weights_.collective()) request_all_weights();
    return;
  }
  if (graphs_on_ && out.next_ids && !out.logits && !out.residuals && !out.all_logits && !out.kl &&
      weights_.views_fixed() && is_decode_step(batch)) {
    forward_decode_graph(batch, cache, out, ablation);
    return;
  }
  ABL_CHECK(!out.kl || (out.kl_rows && kl && kl->logprobs), "KL asked of a pass without a KL reference or rows");
  upload_batch(batch, cache, ablation, cache.rows(), out.kl ? out.kl_rows : nullptr, kl ? kl->rows : 0);

  embed(T);
  if (out.residuals) capture(0, B);
  for (int64_t l = 0; l < L; ++l) {
    layer(l, batch, cache, ablation);
    // hidden_states[l+1] is layer l's output, except the last, which is taken after the final norm.
    if (out.residuals && l + 1 < L) capture(l + 1, B);
  }
  if (out.all_logits) all_logits(T, out.all_logits);
  if (out.logits || out.residuals || out.next_ids || out.kl) {
    const DeviceHead& g = final_norm_last_rows(B);
    if (out.residuals) {
      // The final-normed rows as the lm_head sees them (bf16), widened into depth L.
      bf16_to_f32(b.last, b.rows, B * H, s);
      CUDA_CHECK(cudaMemcpy2DAsync(b.captures + L * H, static_cast<size_t>((L + 1) * H) * sizeof(float), b.rows,
                                   static_cast<size_t>(H) * sizeof(float), static_cast<size_t>(H) * sizeof(float),
                                   static_cast<size_t>(B), cudaMemcpyDeviceToDevice, s));
      CUDA_CHECK(cudaMemcpyAsync(out.residuals, b.captures, static_cast<size_t>(B * (L + 1) * H) * sizeof(float),
                                 cudaMemcpyDeviceToHost, s));
    }
    if (out.logits || out.next_ids || out.kl) head_logits(b.last, g, B, b.logits);
    if (out.logits) {
      CUDA_CHECK(cudaMemcpyAsync(out.logits, b.logits, static_cast<size_t>(B * V) * sizeof(float),
                                 cudaMemcpyDeviceToHost, s));
    }
    if (out.next_ids) {
      // Greedy ids on the device: B ints cross the bus instead of B·V floats.
      argmax(b.logits, B, V, b.next_ids, s);
      CUDA_CHECK(cudaMemcpyAsync(out.next_ids, b.next_ids, static_cast<size_t>(B) * sizeof(int32_t),
                                 cudaMemcpyDeviceToHost, s));
    }
    if (out.kl) {
      // The sweep's KL term on the device: B doubles cross the bus instead of B·V floats. The
      // log-softmax overwrites the logits after their copy and argmax (stream order).
      gather_rows(kl->logprobs, b.kl_rows, B, V, b.kl_ref, V, s);
      log_softmax(b.logits, b.logits, B, V, s);
      kl_rows(b.kl_ref, b.logits, b.kl, B, V, s);
      CUDA_CHECK(cudaMemcpyAsync(out.kl, b.kl, static_cast<size_t>(B) * sizeof(double), cudaMemcpyDeviceToHost, s));
    }
  }
  stream_.synchronize();
}

// y(rows, H) bf16 = the spec's residual-stream norm of x(rows, H) fp32: RMSNorm, Gemma's (1 + w) one, or a
// LayerNorm — Cohere's without bias, Phi-3.5-MoE's with (b).
void CudaEngine::residual_norm(const float* x, const bf16* w, const bf16* b, bf16* y, int64_t rows) {
  const float eps = static_cast<float>(spec_.rms_norm_eps);
  if (!w) {  // OLMo 2's layers have no input norm: the residual itself, in bf16
    f32_to_bf16(x, y, rows * spec_.hidden_size, stream_.get());
  } else if (spec_.norm_centered) {
    layernorm(x, w, b, y, rows, spec_.hidden_size, eps, stream_.get());
  } else {
    rmsnorm(x, w, y, rows, spec_.hidden_size, eps, spec_.norm_plus_one ? 1.0f : 0.0f, stream_.get());
  }
}

// buf_->last (B, H) = final_norm(x at each sequence's last token); returns the head's weights.
const DeviceHead& CudaEngine::final_norm_last_rows(int64_t B) {
  const int64_t H = spec_.hidden_size;
  const cudaStream_t s = stream_.get();
  const DeviceHead& g = weights_.head();
  gather_rows(buf_->x, buf_->last_rows, B, H, buf_->rows, H, s);
  residual_norm(buf_->rows, g.final_norm, g.final_norm_bias, buf_->last, B);
  return g;
}

void CudaEngine::embed(int64_t T) {
  const cudaStream_t s = stream_.get();
  embedding(buf_->tokens, T, weights_.embedding(), spec_.vocab_size, spec_.hidden_size, buf_->x, s);
  if (spec_.embed_scale != 1.0) scale(buf_->x, static_cast<float>(spec_.embed_scale), T * spec_.hidden_size, s);
}

void CudaEngine::head_logits(const bf16* normed, const DeviceHead& g, int64_t rows, float* logits) {
  const int64_t H = spec_.hidden_size, V = spec_.vocab_size;
  const cudaStream_t s = stream_.get();
  gemm_->linear(normed, g.lm_head, static_cast<const float*>(nullptr), logits, rows, H, V, s);
  if (g.lm_head_bias) add_bias_rows(logits, g.lm_head_bias, rows, V, s);
  if (spec_.logits_scaling != 1.0) scale(logits, static_cast<float>(1.0 / spec_.logits_scaling), rows * V, s);
  if (spec_.final_softcap > 0) softcap(logits, static_cast<float>(spec_.final_softcap), rows * V, s);
}

// The final norm, lm_head and argmax at each sequence's last token: buf_->next_ids (B).
void CudaEngine::greedy_ids(int64_t B) {
  const int64_t V = spec_.vocab_size;
  const cudaStream_t s = stream_.get();
  const DeviceHead& g = final_norm_last_rows(B);
  head_logits(buf_->last, g, B, buf_->logits);
  argmax(buf_->logits, B, V, buf_->next_ids, s);
}

// A decode step through its graph (decode_graph.h). The padded batch's arrays are uploaded before
// the launch, into the same places for every step of the bucket (batch_layout of (S, S) tokens and
// sequences); the attention plan is made for the kv bucket, so the graph serves every step whose
// lengths stay under it.
void CudaEngine::forward_decode_graph(const engine::Batch& batch, DeviceKvCache& cache, const engine::Outputs& out,
                                      const DeviceAblation* ablation) {
  const int64_t B = batch.num_seqs(), L = spec_.num_layers;
  const cudaStream_t s = stream_.get();
  // The real sequences stay off the scratch row; the padded step is checked as a whole below.
  for (const AttnSeq& q : batch.seqs) {
    ABL_CHECK(q.kv_begin >= 0 && q.kv_begin + q.kv_len <= cache.rows(),
              "decode step over KV cache rows [{}, {}) outside the cache ({} rows)", q.kv_begin,
              q.kv_begin + q.kv_len, cache.rows());
  }
  // A padded step has as many tokens as sequences: both limits bound the bucket.
  const int64_t S = decode_bucket(B, std::min(limits_.max_seqs, limits_.max_tokens));
  const engine::Batch padded = pad_decode_step(batch, S, cache.scratch_row(), cache.scratch_state_slot());
  upload_batch(padded, cache, ablation, cache.rows() + 1, nullptr, 0);
  bounds_.max_kv_len = kv_bucket(bounds_.max_kv_len, max_kv_len_);
  const DecodeGraphKey key{S, bounds_.max_kv_len, cache.id(), ablation ? ablation->id() : 0};
  graphs_->run(key, s, [&] {
    embed(S);
    for (int64_t l = 0; l < L; ++l) layer(l, padded, cache, ablation);
    greedy_ids(S);
  });
  CUDA_CHECK(cudaMemcpyAsync(out.next_ids, buf_->next_ids, static_cast<size_t>(B) * sizeof(int32_t),
                             cudaMemcpyDeviceToHost, s));
  stream_.synchronize();
}

}  // namespace abl::cuda
