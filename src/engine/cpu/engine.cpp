// Forward pass on the CPU backend. Buffers are sized once for Limits::max_tokens; a batch larger
// than the limits is a programming error caught here, never a reallocation in the layer loop.
#include "abl/engine/cpu/engine.h"
#include "abl/engine/rope_freqs.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "abl/core/error.h"

namespace abl::engine {

KvCache::KvCache(const model::ModelSpec& spec, int64_t rows, int64_t state_slots)
    : rows_(rows), state_slots_(state_slots) {
  const size_t L = static_cast<size_t>(spec.num_layers);
  k_.resize(L);
  v_.resize(L);
  conv_.resize(L);
  S_.resize(L);
  const int64_t P = spec.linear_conv_kernel - 1;
  const int64_t S = spec.linear_num_value_heads * spec.linear_key_head_dim * spec.linear_value_head_dim;
  for (size_t l = 0; l < L; ++l) {
    if (spec.is_linear_layer(static_cast<int64_t>(l))) {
      conv_[l].assign(static_cast<size_t>(state_slots * spec.linear_conv_dim() * P), 0.0f);
      S_[l].assign(static_cast<size_t>(state_slots * S), 0.0f);
    } else if (spec.is_attention_layer(static_cast<int64_t>(l)) && !spec.is_kv_shared_layer(static_cast<int64_t>(l))) {
      k_[l].resize(static_cast<size_t>(rows * spec.kv_dim_of(static_cast<int64_t>(l))));
      v_[l].resize(static_cast<size_t>(rows * spec.v_dim_of(static_cast<int64_t>(l))));
    }
  }
}

int64_t KvCache::bytes_for(const model::ModelSpec& spec, int64_t rows) {
  return rows * spec.kv_cache_row_floats() * 4;
}

int64_t KvCache::state_bytes_for(const model::ModelSpec& spec, int64_t slots) {
  return slots * spec.linear_state_floats() * 4;
}

namespace {

// Width of the gate/up buffers: the widest dense MLP, expert or shared expert.
int64_t widest_mlp(const model::ModelSpec& m) {
  return std::max({m.dense_mlp_width(), m.moe_intermediate_size, m.shared_expert_intermediate_size});
}

}  // namespace

BufferPlan Engine::plan_for(const model::ModelSpec& spec, const Limits& limits) {
  const int64_t T = limits.max_tokens, B = limits.max_seqs;
  const int64_t H = spec.hidden_size, F = widest_mlp(spec);
  BufferPlan p;
  p.add("residual x (T,H)", T * H * 4);
  p.add("normed h (T,H)", T * H * 4);
  p.add("q (T,NH*HD)", T * spec.q_dim() * 4);
  p.add("k, v (T,NKV*HD)", T * (spec.kv_dim() + spec.v_dim()) * 4);
  p.add("attention out (T,NH*HD)", T * std::max(spec.o_dim(), spec.linear_value_dim()) * 4);
  if (spec.mla) {
    const int64_t C = spec.kv_lora_rank, R = spec.partial_rotary_dim;
    p.add("q_a_proj out (T,q_lora_rank)", T * spec.q_lora_rank * 4);
    p.add("latent attention kv_a (T,C+R), latent (T,C)", T * (2 * C + R) * 4);
    p.add("kv_b_proj out (T,NH*(nope+HDv))", T * spec.num_heads * (spec.qk_nope_head_dim + spec.v_head()) * 4);
  }
  if (spec.attn_output_gate) p.add("attention output gate (T,NH*HD)", T * spec.q_dim() * 4);
  if (!spec.linear_layers.empty()) {
    p.add("linear attention q|k|v (T,C), z (T,NV*DV), b|a (T,2*NV)",
          T * (spec.linear_in_dim() + spec.linear_value_dim() + 2 * spec.linear_num_value_heads) * 4);
  }
  p.add("projection out y (T,H)", T * H * 4);
  if (!model::gated_activation(spec.activation)) {
    p.add("up (T,F)", T * F * 4);  // ungated MLPs (Nemotron-H, Arcee, Apertus): no gate rows
  } else {
    p.add("gate, up (T,F)", 2 * T * F * 4);
  }
  p.add("last tokens (B,H)", B * H * 4);
  if (spec.num_experts > 0) {
    const int64_t E = spec.num_experts, k = spec.experts_per_token;
    p.add("router logits (T,E)", T * E * 4);
    p.add("top-k weights and ids (T,k)", T * k * 8);
    p.add("one expert's tokens in, out (T,H)", 2 * T * H * 4);
    p.add("expert outputs of every token (T*k,H)", T * k * H * 4);
    p.add("expert token lists (T*k)", 2 * T * k * 8);
    if (spec.moe_latent_size > 0) p.add("LatentMoE latent (T,D)", T * spec.moe_latent_size * 4);
    if (spec.moe_beside_dense) p.add("experts' branch beside the dense MLP (T,H)", T * H * 4);
  }
  if (spec.ple_dim > 0) p.add("per-layer embeddings x0 (T,H), (T,2P)", T * (H + 2 * spec.ple_dim) * 4);
  return p;
}

Engine::Engine(WeightSource& weights, Limits limits)
    : weights_(weights), spec_(weights.spec()), limits_(limits), plan_(plan_for(spec_, limits)),
      inv_freq_(rope_inv_freq(spec_)), inv_freq_local_(rope_inv_freq(spec_, true)) {
  const std::vector<float> long_freq = rope_long_inv_freq(spec_);  // LongRoPE: row 1 of the global table
  inv_freq_.insert(inv_freq_.end(), long_freq.begin(), long_freq.end());
  ABL_CHECK(limits.max_tokens > 0 && limits.max_seqs > 0, "engine limits must be positive");
  const size_t T = static_cast<size_t>(limits.max_tokens);
  const size_t H = static_cast<size_t>(spec_.hidden_size), F = static_cast<size_t>(widest_mlp(spec_));
  x_.resize(T * H);
  h_.resize(T * H);
  q_.resize(T * static_cast<size_t>(spec_.q_dim()));
  k_.resize(T * static_cast<size_t>(spec_.kv_dim()));
  v_.resize(T * static_cast<size_t>(spec_.v_dim()));
  att_.resize(T * static_cast<size_t>(std::max(spec_.o_dim(), spec_.linear_value_dim())));
  if (spec_.attn_output_gate) q_gate_.resize(T * static_cast<size_t>(spec_.q_dim()));
  if (!spec_.linear_layers.empty()) {
    lin_x_.resize(T * static_cast<size_t>(spec_.linear_in_dim()));
    lin_z_.resize(T * static_cast<size_t>(spec_.linear_value_dim()));
    lin_ba_.resize(T * static_cast<size_t>(2 * spec_.linear_num_value_heads));
  }
  if (spec_.mla) {
    const size_t C = static_cast<size_t>(spec_.kv_lora_rank), R = static_cast<size_t>(spec_.partial_rotary_dim);
    q_a_.resize(T * static_cast<size_t>(spec_.q_lora_rank));
    kv_a_.resize(T * (C + R));
    latent_.resize(T * C);
    kv_b_.resize(T * static_cast<size_t>(spec_.num_heads * (spec_.qk_nope_head_dim + spec_.v_head())));
  }
  y_.resize(T * H);
  gate_.resize(model::gated_activation(spec_.activation) ? T * F : 0);
  up_.resize(T * F);
  last_.resize(static_cast<size_t>(limits.max_seqs) * H);
  if (spec_.num_experts > 0) {
    const size_t E = static_cast<size_t>(spec_.num_experts), k = static_cast<size_t>(spec_.experts_per_token);
    router_.resize(T * E);
    topk_w_.resize(T * k);
    topk_id_.resize(T * k);
    const size_t X = std::max(H, static_cast<size_t>(spec_.expert_width()));  // (a LatentMoE's D is at most H)
    expert_in_.resize(T * X);
    expert_out_.resize(T * X);
    slots_.resize(T * k * X);
    expert_tokens_.reserve(T * k);
    expert_slots_.reserve(T * k);
    moe_latent_.resize(T * static_cast<size_t>(spec_.moe_latent_size));
    if (spec_.moe_beside_dense) moe_out_.resize(T * H);
  }
  if (spec_.ple_dim > 0) {
    ple_x0_.resize(T * H);
    ple_a_.resize(T * static_cast<size_t>(spec_.ple_dim));
    ple_b_.resize(T * static_cast<size_t>(spec_.ple_dim));
  }
}

// The residual stream's norms (the layers' input norms, the final norm): RMSNorm, Gemma's (1 + w) one,
// or a LayerNorm — Cohere's without bias, Phi-3.5-MoE's with (b); OLMo 2's layers have no input norm
// (w null): y = x.
void Engine::residual_norm(const float* x, const float* w, const float* b, float* y, int64_t rows) const {
  const float eps = static_cast<float>(spec_.rms_norm_eps);
  if (!w) {
    std::memcpy(y, x, sizeof(float) * static_cast<size_t>(rows * spec_.hidden_size));
  } else if (spec_.norm_centered) {
    cpu::layernorm(x, w, y, rows, spec_.hidden_size, eps);
    if (b) cpu::add_rows(y, b, rows, spec_.hidden_size);
  } else {
    cpu::rmsnorm(x, w, y, rows, spec_.hidden_size, eps, spec_.norm_plus_one ? 1.0f : 0.0f);
  }
}

// The q/k norm of every head of x(T, heads, HD) in place: an RMSNorm (Qwen3; Gemma's (1 + w)), or
// with centered norms Cohere's LayerNorm, one weight row per head where the model has them; OLMo 2's
// is one RMSNorm over all heads of a token.
void Engine::head_norm(float* x, const float* w, int64_t T, int64_t heads, int64_t HD) const {
  const float eps = static_cast<float>(spec_.rms_norm_eps);
  if (spec_.qk_norm_full) {
    cpu::rmsnorm(x, w, x, T, heads * HD, eps);
  } else if (spec_.norm_centered) {
    ABL_CHECK(!spec_.norm_plus_one, "a (1 + w) LayerNorm");
    cpu::layernorm(x, w, x, T * heads, HD, eps, spec_.qk_norm_per_head ? heads : 1);
  } else {
    ABL_CHECK(!spec_.qk_norm_per_head, "a per-head q/k RMSNorm");
    cpu::rmsnorm(x, w, x, T * heads, HD, eps, spec_.norm_plus_one ? 1.0f : 0.0f);
  }
}

void Engine::capture(const Batch& batch, int64_t depth, const float* rows, float* residuals) const {
  const int64_t H = spec_.hidden_size, D = spec_.num_layers + 1;
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    std::memcpy(residuals + (s * D + depth) * H, rows + batch.last_row(s) * H, sizeof(float) * H);
  }
}

void Engine::layer(int64_t l, const Batch& batch, KvCache& cache, Epilogue* epilogue) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size;
  const float eps = static_cast<float>(m.rms_norm_eps);
  const float w1 = m.norm_plus_one ? 1.0f : 0.0f;  // Gemma's norms scale by (1 + w)
  const LayerWeights w = weights_.layer(l);
  if (epilogue) epilogue->begin_layer(l, w);
  // x += y, the branch output times Granite's residual_multiplier (1 elsewhere).
  const auto add_branch = [&] {
    if (m.residual_multiplier != 1.0) cpu::scale(y_.data(), static_cast<float>(m.residual_multiplier), T * H);
    cpu::add(x_.data(), y_.data(), T * H);
  };

  // Attention block (or a linear-attention layer's token mixing); Nemotron-H's MLP blocks have none.
  if (m.has_mixer(l)) {
    residual_norm(x_.data(), w.attn_norm, w.attn_norm_bias, h_.data(), T);
    if (m.is_linear_layer(l) && m.mamba2()) {
      mamba_mixer(l, w, batch, cache);
    } else if (m.is_linear_layer(l) && m.linear_mixer == model::ModelSpec::LinearMixer::short_conv) {
      short_conv_mixer(l, w, batch, cache);
    } else if (m.is_linear_layer(l)) {
      linear_attention(l, w, batch, cache);
    } else {
      self_attention(l, w, batch, cache);
    }
    cpu::linear(att_.data(), w.wo, nullptr, y_.data(), T, m.o_in(l), H);
    if (epilogue) epilogue->apply(Component::attn_o, l, y_.data(), batch);
    if (w.bo) cpu::add_rows(y_.data(), w.bo, T, H);  // after the epilogue: the ablation rewrites weights only
    if (m.sandwich_norms) cpu::rmsnorm(y_.data(), w.post_attn_norm, y_.data(), T, H, eps, w1);
    add_branch();
  }
  if (!m.has_mlp(l)) return;  // Nemotron-H's mixer blocks

  // MLP block; Cohere's parallel block runs it on h_ as the attention had it (input_layernorm of the
  // layer's input: attention left h_ as it was).
  if (!m.parallel_block) residual_norm(x_.data(), w.mlp_norm, w.mlp_norm_bias, h_.data(), T);
  if (m.is_moe_layer(l) && m.moe_beside_dense) {
    moe_beside_dense_mlp(l, w, batch, epilogue);
  } else if (m.is_moe_layer(l)) {
    route(w, h_.data(), T);
    moe_mlp(l, w, batch, epilogue, y_.data());
  } else {
    gated_mlp(h_.data(), ExpertWeights{w.w_gate, w.w_up, w.w_down, w.b_gate, w.b_up, w.b_down, w.xielu}, T, H,
              m.mlp_width(l), y_.data());
    if (epilogue) epilogue->apply(Component::mlp_down, l, y_.data(), batch);
    if (w.b_down) cpu::add_rows(y_.data(), w.b_down, T, H);  // after the epilogue, as o_proj's
  }
  if (m.sandwich_norms) cpu::rmsnorm(y_.data(), w.post_mlp_norm, y_.data(), T, H, eps, w1);
  add_branch();
  if (m.ple_dim > 0) per_layer_input(w, batch);
  if (w.layer_scalar) cpu::scale(x_.data(), *w.layer_scalar, T * H);  // Gemma4TextDecoderLayer: the whole stream
}

// Gemma 4's per-layer embeddings in one layer: ple = (rms_w(x0·W_lᵀ·H^-0.5; per_layer_projection_norm) +
// E_l[token]·√P)·2^-0.5 (Gemma4TextModel.project_per_layer_inputs, get_per_layer_inputs, for this layer's slice), then
// (Gemma4TextDecoderLayer.forward) x += rms_w(per_layer_projection(gelu_tanh(per_layer_input_gate(x)) ⊙ ple)).
void Engine::per_layer_input(const LayerWeights& w, const Batch& batch) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, P = m.ple_dim;
  const float eps = static_cast<float>(m.rms_norm_eps);
  cpu::linear(ple_x0_.data(), w.ple_model_proj, nullptr, ple_a_.data(), T, H, P);
  cpu::scale(ple_a_.data(), static_cast<float>(1.0 / std::sqrt(static_cast<double>(H))), T * P);
  cpu::rmsnorm(ple_a_.data(), w.ple_proj_norm, ple_a_.data(), T, P, eps);
  cpu::embedding(batch.tokens.data(), T, w.ple_embed, m.vocab_size, P, ple_b_.data());
  cpu::scale(ple_b_.data(), static_cast<float>(m.ple_embed_scale), T * P);
  cpu::add(ple_a_.data(), ple_b_.data(), T * P);
  cpu::scale(ple_a_.data(), static_cast<float>(1.0 / std::sqrt(2.0)), T * P);
  cpu::linear(x_.data(), w.ple_gate, nullptr, ple_b_.data(), T, H, P);
  cpu::geglu(ple_b_.data(), ple_a_.data(), ple_b_.data(), T * P);
  cpu::linear(ple_b_.data(), w.ple_proj, nullptr, y_.data(), T, P, H);
  cpu::rmsnorm(y_.data(), w.ple_post_norm, y_.data(), T, H, eps);
  cpu::add(x_.data(), y_.data(), T * H);
}

void Engine::self_attention(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size;
  // the layer's own head size and kv heads (Gemma 4's full-attention layers differ from its sliding ones)
  const int64_t NH = m.num_heads, NKV = m.kv_heads_of(l), HD = m.head_dim_of(l);
  const int64_t QD = m.q_dim_of(l), KVD = m.kv_dim_of(l);
  // Gemma 4's KV-shared layers compute their queries only: they attend over the keys and values of kv_source(l)
  const bool shared = m.is_kv_shared_layer(l);
  if (m.mla) {
    latent_qkv(w, batch);
  } else {
    cpu::linear(h_.data(), w.wq, w.bq, q_.data(), T, H, QD);
    if (!shared) {
      cpu::linear(h_.data(), w.wk, w.bk, k_.data(), T, H, KVD);
      if (m.values_are_keys(l)) {  // Gemma 4's attention_k_eq_v: k_proj's raw output, before k_norm and RoPE
        std::memcpy(v_.data(), k_.data(), sizeof(float) * static_cast<size_t>(T * KVD));
      } else {
        cpu::linear(h_.data(), w.wv, w.bv, v_.data(), T, H, KVD);
      }
      if (m.v_norm) cpu::rmsnorm(v_.data(), nullptr, v_.data(), T * NKV, HD, static_cast<float>(m.rms_norm_eps));
    }
    const auto qk_norm = [&] {
      head_norm(q_.data(), w.q_norm, T, NH, HD);
      if (!shared) head_norm(k_.data(), w.k_norm, T, NKV, HD);
    };
    if (m.qk_norm && !m.qk_norm_after_rope) qk_norm();
    const bool local = m.uses_local_rope(l);
    const float* inv_freq = local ? inv_freq_local_.data() : inv_freq_.data();
    const int32_t* table = local || rope_table_.empty() ? nullptr : rope_table_.data();
    const float rope_factor = rope_attention_factor(m, local);
    if (m.uses_rope(l)) {
      const int64_t R = m.rotary_dim_of(l);
      cpu::rope(q_.data(), batch.positions.data(), T, NH, HD, inv_freq, rope_factor, table, R, m.rope_interleaved);
      if (!shared) {
        cpu::rope(k_.data(), batch.positions.data(), T, NKV, HD, inv_freq, rope_factor, table, R, m.rope_interleaved);
      }
    }
    if (m.qk_norm && m.qk_norm_after_rope) qk_norm();  // HunYuanDenseV1Attention
    if (m.qk_l2_norm && m.uses_rope(l)) {  // Llama4TextL2Norm after RoPE, on the rotary layers only
      const float eps = static_cast<float>(m.rms_norm_eps);
      cpu::rmsnorm(q_.data(), nullptr, q_.data(), T * NH, HD, eps);
      cpu::rmsnorm(k_.data(), nullptr, k_.data(), T * NKV, HD, eps);
    }
    if (m.query_scaled_in(l)) {  // Ministral3Attention, Llama 4's NoPE layers: the queries only, after RoPE
      cpu::scale_by_position(q_.data(), batch.positions.data(), T, QD, static_cast<float>(m.query_log_scale_beta),
                             m.query_log_scale_period, m.query_log_scale_offset);
    }
  }
  const int64_t kv = m.kv_source(l);  // (l itself but in a KV-shared layer)
  if (!shared) {
    cpu::kv_append(k_.data(), v_.data(), batch.cache_rows.data(), T, KVD, cache.k(l), cache.v(l), m.v_dim_of(l));
  }
  const int64_t window = m.uses_sliding_window(l) ? m.sliding_window : 0;
  const cpu::AttnScores scores{static_cast<float>(m.attention_scale()), static_cast<float>(m.attn_softcap), w.sinks};
  cpu::attention(q_.data(), cache.k(kv), cache.v(kv), att_.data(), batch.seqs.data(), batch.num_seqs(),
                 NH, NKV, HD, window, scores, m.v_head_of(l));
  if (w.wq_gate) {  // Qwen3NextAttention: attn_output * sigmoid(gate)
    cpu::linear(h_.data(), w.wq_gate, nullptr, q_gate_.data(), T, H, QD);
    cpu::mul_sigmoid(att_.data(), q_gate_.data(), T * QD);
  }
}

// Qwen3NextGatedDeltaNet.forward (Qwen3_5GatedDeltaNet.forward): the conv's channels q|k|v, z, b|a from
// h_; the conv and SiLU, the gated delta rule with each sequence's state, the gated RMSNorm per value head.
void Engine::linear_attention(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, NV = m.linear_num_value_heads;
  const cpu::DeltaRuleDims d{m.linear_num_key_heads, NV, m.linear_key_head_dim, m.linear_value_head_dim,
                             m.linear_conv_kernel};
  const cpu::DeltaRuleState state{cache.conv_state(l), cache.delta_state(l), batch.state_slots.data()};
  // q|k|v and b|a are each one matrix: their slots are adjacent in the unit (layer_slots' order)
  const int64_t KD = m.linear_key_dim();
  ABL_CHECK(w.lin_k == w.lin_q + KD * H && w.lin_v == w.lin_k + KD * H && w.lin_a == w.lin_b + NV * H,
            "layer {}: linear attention's q, k, v (and b, a) projections are not adjacent", l);
  cpu::linear(h_.data(), w.lin_q, nullptr, lin_x_.data(), T, H, d.channels());
  cpu::linear(h_.data(), w.lin_z, nullptr, lin_z_.data(), T, H, NV * d.DV);
  cpu::linear(h_.data(), w.lin_b, nullptr, lin_ba_.data(), T, H, 2 * NV);
  cpu::causal_conv_silu(lin_x_.data(), w.lin_conv, nullptr, batch.seqs.data(), batch.num_seqs(), d, state);
  cpu::gated_delta_rule(lin_x_.data(), lin_ba_.data(), w.lin_a_log, w.lin_dt_bias, batch.seqs.data(), batch.num_seqs(),
                        d, state, att_.data());
  cpu::rmsnorm_gated(att_.data(), w.lin_norm, lin_z_.data(), T * NV, d.DV, static_cast<float>(m.rms_norm_eps));
}

// GraniteMoeHybridMambaLayer.torch_forward (Bamba's mixer): in_proj's z, x|B|C and dt from h_ (three GEMMs
// over its row blocks); the conv (plus its bias) and SiLU, the selective scan with each sequence's state, the
// RMSNorm of y·SiLU(z).
void Engine::mamba_mixer(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, NV = m.linear_num_value_heads, I = m.linear_value_dim();
  const cpu::DeltaRuleDims d{m.linear_num_key_heads, NV, m.linear_key_head_dim, m.linear_value_head_dim,
                             m.linear_conv_kernel};
  const cpu::DeltaRuleState state{cache.conv_state(l), cache.delta_state(l), batch.state_slots.data()};
  const cpu::DtRange range{static_cast<float>(m.mamba_dt_min), static_cast<float>(m.mamba_dt_max)};
  cpu::linear(h_.data(), w.lin_z, nullptr, lin_z_.data(), T, H, I);
  cpu::linear(h_.data(), w.mamba_xbc, nullptr, lin_x_.data(), T, H, d.channels());
  cpu::linear(h_.data(), w.mamba_dt, nullptr, lin_ba_.data(), T, H, NV);
  cpu::causal_conv_silu(lin_x_.data(), w.lin_conv, w.lin_conv_bias, batch.seqs.data(), batch.num_seqs(), d, state);
  cpu::mamba2_scan(lin_x_.data(), lin_ba_.data(), w.lin_a_log, w.lin_dt_bias, w.mamba_d, batch.seqs.data(),
                   batch.num_seqs(), d, range, state, att_.data());
  const int64_t groups = m.mamba_norm_per_group ? d.NK : 1;  // Zamba2RMSNormGated: per group of I / NK
  cpu::rmsnorm_of_gated(att_.data(), w.lin_norm, lin_z_.data(), T, I, groups, static_cast<float>(m.rms_norm_eps));
}

// Lfm2ShortConv.slow_forward: in_proj's B | C | x from h_ (one GEMM), the causal conv over B·x with each
// sequence's state, times C.
void Engine::short_conv_mixer(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size;
  const cpu::DeltaRuleDims d{0, 1, 0, H, m.linear_conv_kernel};
  const cpu::DeltaRuleState state{cache.conv_state(l), cache.delta_state(l), batch.state_slots.data()};
  cpu::linear(h_.data(), w.short_conv_in, nullptr, lin_x_.data(), T, H, 3 * H);
  cpu::short_conv(lin_x_.data(), w.lin_conv, batch.seqs.data(), batch.num_seqs(), d, state, att_.data());
}

// DeepseekV3Attention.forward up to the attention: q = q_b(norm(q_a(h))) (or q_proj(h)); kv_a_proj_with_mqa
// gives the latent c, normed and expanded by kv_b_proj into every head's k_nope and value, and one k_pe
// that every head's key ends with. The rotated dims are the tail [nope, nope + R) of each q/k head.
void Engine::latent_qkv(const LayerWeights& w, const Batch& batch) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, NH = m.num_heads, HD = m.head_dim;
  const int64_t C = m.kv_lora_rank, R = m.partial_rotary_dim, nope = m.qk_nope_head_dim, HDv = m.v_head();
  const float eps = static_cast<float>(m.latent_norm_eps);
  if (m.q_lora_rank > 0) {
    const int64_t ql = m.q_lora_rank;
    cpu::linear(h_.data(), w.wq_a, nullptr, q_a_.data(), T, H, ql);
    cpu::rmsnorm(q_a_.data(), w.q_a_norm, q_a_.data(), T, ql, eps);
    cpu::linear(q_a_.data(), w.wq_b, nullptr, q_.data(), T, ql, m.q_dim());
  } else {
    cpu::linear(h_.data(), w.wq, nullptr, q_.data(), T, H, m.q_dim());
  }
  cpu::linear(h_.data(), w.wkv_a, nullptr, kv_a_.data(), T, H, C + R);
  cpu::copy_columns(kv_a_.data(), C + R, T, C, latent_.data());
  cpu::rmsnorm(latent_.data(), w.kv_a_norm, latent_.data(), T, C, eps);
  cpu::linear(latent_.data(), w.wkv_b, nullptr, kv_b_.data(), T, C, NH * (nope + HDv));
  const int32_t* table = rope_table_.empty() ? nullptr : rope_table_.data();
  const float factor = rope_attention_factor(m, false);
  // q's tail in each head, and k_pe (one head, the tail of each kv_a row)
  cpu::rope(q_.data() + nope, batch.positions.data(), T, NH, HD, inv_freq_.data(), factor, table, R,
            m.rope_interleaved);
  cpu::rope(kv_a_.data() + C, batch.positions.data(), T, 1, C + R, inv_freq_.data(), factor, table, R,
            m.rope_interleaved);
  cpu::mla_split_kv(kv_b_.data(), kv_a_.data() + C, C + R, T, NH, nope, R, HDv, k_.data(), v_.data());
}

// down(act(gate(x)) · up(x)) without the down projection's bias (added after the epilogue); the ungated
// down(relu(up(x))²) of Nemotron-H and Arcee, down(xIELU(up(x))) of Apertus.
void Engine::gated_mlp(const float* x, const ExpertWeights& w, int64_t rows, int64_t D, int64_t F, float* out) {
  if (!model::gated_activation(spec_.activation)) {
    cpu::linear(x, w.w_up, w.b_up, up_.data(), rows, D, F);
    if (spec_.activation == model::Activation::xielu) {
      cpu::xielu(up_.data(), rows * F, w.xielu);
    } else {
      cpu::relu_squared(up_.data(), rows * F);
    }
    cpu::linear(up_.data(), w.w_down, nullptr, out, rows, F, D);
    return;
  }
  cpu::linear(x, w.w_gate, w.b_gate, gate_.data(), rows, D, F);
  cpu::linear(x, w.w_up, w.b_up, up_.data(), rows, D, F);
  switch (spec_.activation) {
    case model::Activation::silu: cpu::swiglu(gate_.data(), up_.data(), gate_.data(), rows * F); break;
    case model::Activation::gelu_tanh: cpu::geglu(gate_.data(), up_.data(), gate_.data(), rows * F); break;
    case model::Activation::swiglu_clamped:
      cpu::swiglu_clamped(gate_.data(), up_.data(), gate_.data(), rows * F, static_cast<float>(spec_.swiglu_alpha),
                          static_cast<float>(spec_.swiglu_limit));
      break;
    case model::Activation::relu2:
    case model::Activation::xielu: break;  // ungated: above
  }
  cpu::linear(gate_.data(), w.w_down, nullptr, out, rows, F, D);
}

// A LatentMoE (Nemotron 3 Super: NemotronHMoE.forward with moe_latent_size) routes on h_, runs the experts on
// fc1_latent_proj(h_) at width D, and brings their weighted sum back to H through fc2_latent_proj.
void Engine::route(const LayerWeights& w, const float* x, int64_t T) {
  const model::ModelSpec& m = spec_;
  const int64_t H = m.hidden_size, E = m.num_experts, k = m.experts_per_token;
  cpu::linear(x, w.router, w.router_logit_bias, router_.data(), T, H, E);
  cpu::router_topk(router_.data(), T, E, k, router_config(m, w.router_bias, w.router_expert_scale), topk_id_.data(),
                   topk_w_.data());
}

// Gemma4TextDecoderLayer.forward's feed-forward part: m = post_ffw_1(mlp(h)) with h = pre_feedforward_layernorm(x) (in
// h_), the router on rms(x)·router.scale·H^-0.5 (Gemma4TextRouter.forward), the experts on pre_feedforward_layernorm_2(x),
// m + post_ffw_2(Σ w·expert) in y_ (post_feedforward_layernorm follows in layer()).
void Engine::moe_beside_dense_mlp(int64_t l, const LayerWeights& w, const Batch& batch, Epilogue* epilogue) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size;
  const float eps = static_cast<float>(m.rms_norm_eps);
  gated_mlp(h_.data(), ExpertWeights{w.w_gate, w.w_up, w.w_down, nullptr, nullptr, nullptr, {}}, T, H, m.mlp_width(l),
            y_.data());
  if (epilogue) epilogue->apply(Component::mlp_down, l, y_.data(), batch);
  cpu::rmsnorm(y_.data(), w.dense_post_norm, y_.data(), T, H, eps);
  cpu::rmsnorm(x_.data(), w.router_scale, h_.data(), T, H, eps);  // (the weightless norm, then · router.scale)
  cpu::scale(h_.data(), static_cast<float>(1.0 / std::sqrt(static_cast<double>(H))), T * H);
  route(w, h_.data(), T);
  cpu::rmsnorm(x_.data(), w.moe_norm, h_.data(), T, H, eps);
  moe_mlp(l, w, batch, epilogue, moe_out_.data());
  cpu::rmsnorm(moe_out_.data(), w.moe_post_norm, moe_out_.data(), T, H, eps);
  cpu::add(y_.data(), moe_out_.data(), T * H);
}

void Engine::moe_mlp(int64_t l, const LayerWeights& w, const Batch& batch, Epilogue* epilogue, float* out) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, E = m.num_experts, k = m.experts_per_token;
  const int64_t Fm = m.moe_intermediate_size, D = m.expert_width();
  const bool latent = m.moe_latent_size > 0;
  const float* in = h_.data();
  if (latent) {
    cpu::linear(h_.data(), w.latent_in, nullptr, moe_latent_.data(), T, H, D);
    in = moe_latent_.data();
  }
  // Each expert over the tokens routed to it, in token order; its outputs land in their slots.
  for (int32_t e = 0; e < E; ++e) {
    expert_tokens_.clear();
    expert_slots_.clear();
    for (int64_t s = 0; s < T * k; ++s) {
      if (topk_id_[static_cast<size_t>(s)] != e) continue;
      expert_tokens_.push_back(s / k);
      expert_slots_.push_back(s);
    }
    const int64_t n = static_cast<int64_t>(expert_tokens_.size());
    if (n == 0) continue;
    const ExpertWeights& x = w.experts[static_cast<size_t>(e)];
    if (epilogue) epilogue->routed(l, e, expert_tokens_.data(), n);
    cpu::gather_rows(in, expert_tokens_.data(), n, D, expert_in_.data());
    if (m.moe_scale_input) {  // Llama4TextMoe: the router's weight scales the expert's input
      for (int64_t i = 0; i < n; ++i) {
        cpu::scale(expert_in_.data() + i * D, topk_w_[static_cast<size_t>(expert_slots_[static_cast<size_t>(i)])], D);
      }
    }
    gated_mlp(expert_in_.data(), x, n, D, Fm, expert_out_.data());
    if (epilogue && !latent) epilogue->apply_expert(l, e, expert_out_.data(), expert_tokens_.data(), n, batch);
    if (x.b_down) cpu::add_rows(expert_out_.data(), x.b_down, n, D);
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(slots_.data() + expert_slots_[static_cast<size_t>(i)] * D, expert_out_.data() + i * D,
                  sizeof(float) * D);
    }
  }
  // (with scaled inputs the outputs are summed as they are)
  if (m.moe_scale_input) std::fill(topk_w_.begin(), topk_w_.begin() + T * k, 1.0f);
  const auto every_token = [&] {
    expert_tokens_.resize(static_cast<size_t>(T));
    std::iota(expert_tokens_.begin(), expert_tokens_.end(), int64_t{0});
    return expert_tokens_.data();
  };
  if (latent) {  // fc1's output is no longer read: the buffer takes the sum
    cpu::combine_experts(slots_.data(), topk_w_.data(), T, k, D, moe_latent_.data());
    cpu::linear(moe_latent_.data(), w.latent_out, nullptr, out, T, D, H);
    if (epilogue) epilogue->apply_expert(l, Epilogue::kLatentOut, out, every_token(), T, batch);
  } else {
    cpu::combine_experts(slots_.data(), topk_w_.data(), T, k, H, out);
  }
  if (m.shared_expert_intermediate_size > 0) {
    gated_mlp(h_.data(), w.shared, T, H, m.shared_expert_intermediate_size, expert_out_.data());
    if (epilogue) epilogue->apply_expert(l, Epilogue::kSharedExpert, expert_out_.data(), every_token(), T, batch);
    if (m.shared_expert_gated) {
      cpu::add_gated(h_.data(), w.shared_expert_gate, expert_out_.data(), T, H, out);
    } else {
      cpu::add(out, expert_out_.data(), T * H);
    }
  }
}

void Engine::forward(const Batch& batch, KvCache& cache, const Outputs& out, Epilogue* epilogue) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), B = batch.num_seqs(), H = m.hidden_size, V = m.vocab_size;
  const int64_t L = m.num_layers;
  ABL_CHECK(T <= limits_.max_tokens && B <= limits_.max_seqs,
            "batch of {} tokens in {} sequences exceeds the engine limits ({} tokens, {} sequences)", T,
            B, limits_.max_tokens, limits_.max_seqs);
  for (int64_t r : batch.cache_rows) {
    ABL_CHECK(r >= 0 && r < cache.rows(), "KV cache row {} outside the cache ({} rows)", r, cache.rows());
  }
  if (!m.linear_layers.empty()) {
    ABL_CHECK(static_cast<int64_t>(batch.state_slots.size()) == B, "{} state slots for {} sequences",
              batch.state_slots.size(), B);
    for (int64_t slot : batch.state_slots) {
      ABL_CHECK(slot >= 0 && slot < cache.state_slots(), "recurrent state slot {} outside the cache ({} slots)", slot,
                cache.state_slots());
    }
  }
  rope_table_ = rope_tables(m, batch);
  cpu::embedding(batch.tokens.data(), T, weights_.embedding(), V, H, x_.data());
  if (m.embed_scale != 1.0) cpu::scale(x_.data(), static_cast<float>(m.embed_scale), T * H);
  if (m.ple_dim > 0) std::copy(x_.begin(), x_.begin() + T * H, ple_x0_.begin());  // the per-layer inputs' x0
  if (out.residuals) capture(batch, 0, x_.data(), out.residuals);
  for (int64_t l = 0; l < L; ++l) {
    layer(l, batch, cache, epilogue);
    // hidden_states[l+1] is layer l's output, except the last, which is taken after the final norm.
    if (out.residuals && l + 1 < L) capture(batch, l + 1, x_.data(), out.residuals);
  }
  const HeadWeights g = weights_.head();
  // lm_head's output, divided by Granite's logits_scaling, soft-capped as Gemma 2 does.
  const auto finish_logits = [&](float* logits, int64_t rows) {
    if (m.logits_scaling != 1.0) cpu::scale(logits, static_cast<float>(1.0 / m.logits_scaling), rows * V);
    if (m.final_softcap > 0) cpu::softcap(logits, static_cast<float>(m.final_softcap), rows * V);
  };
  if (out.all_logits) {
    residual_norm(x_.data(), g.final_norm, g.final_norm_bias, h_.data(), T);
    cpu::linear(h_.data(), g.lm_head, g.lm_head_bias, out.all_logits, T, H, V);
    finish_logits(out.all_logits, T);
  }
  if (out.logits || out.residuals || out.next_ids) {
    for (int64_t s = 0; s < B; ++s) {
      std::memcpy(last_.data() + s * H, x_.data() + batch.last_row(s) * H, sizeof(float) * H);
    }
    residual_norm(last_.data(), g.final_norm, g.final_norm_bias, last_.data(), B);
    if (out.residuals) {
      for (int64_t s = 0; s < B; ++s) {
        std::memcpy(out.residuals + (s * (L + 1) + L) * H, last_.data() + s * H, sizeof(float) * H);
      }
    }
    float* logits = out.logits;
    if (!logits && out.next_ids) {
      logits_.resize(static_cast<size_t>(B * V));  // greedy ids without the caller's logits
      logits = logits_.data();
    }
    if (logits) {
      cpu::linear(last_.data(), g.lm_head, g.lm_head_bias, logits, B, H, V);
      finish_logits(logits, B);
    }
    if (out.next_ids) cpu::argmax(logits, B, V, out.next_ids);
  }
}

EngineFootprint cpu_engine_footprint() {
  EngineFootprint f;
  f.name = "cpu";
  f.weights = DType::f32;
  f.pass_buffers = &Engine::plan_for;
  f.kv_cache_bytes = &KvCache::bytes_for;
  f.kv_cache_label = "KV cache (2,L,rows,NKV*HD) f32";
  return f;
}

}  // namespace abl::engine
