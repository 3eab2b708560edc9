// Forward pass on the CPU backend. Buffers are sized once for Limits::max_tokens; a batch larger
// than the limits is a programming error caught here, never a reallocation in the layer loop.
#include "abl/engine/cpu/engine.h"
#include "abl/engine/rope_freqs.h"

#include <cstring>

#include "abl/core/error.h"

namespace abl::engine {

KvCache::KvCache(const model::ModelSpec& spec, int64_t rows) : rows_(rows) {
  const size_t n = static_cast<size_t>(rows * spec.kv_dim());
  k_.assign(static_cast<size_t>(spec.num_layers), std::vector<float>(n));
  v_.assign(static_cast<size_t>(spec.num_layers), std::vector<float>(n));
}

int64_t KvCache::bytes_for(const model::ModelSpec& spec, int64_t rows) {
  return 2 * spec.num_layers * rows * spec.kv_dim() * 4;
}

BufferPlan Engine::plan_for(const model::ModelSpec& spec, const Limits& limits) {
  const int64_t T = limits.max_tokens, B = limits.max_seqs;
  const int64_t H = spec.hidden_size, F = spec.intermediate_size;
  BufferPlan p;
  p.add("residual x (T,H)", T * H * 4);
  p.add("normed h (T,H)", T * H * 4);
  p.add("q (T,NH*HD)", T * spec.q_dim() * 4);
  p.add("k, v (T,NKV*HD)", 2 * T * spec.kv_dim() * 4);
  p.add("attention out (T,NH*HD)", T * spec.q_dim() * 4);
  p.add("projection out y (T,H)", T * H * 4);
  p.add("gate, up (T,F)", 2 * T * F * 4);
  p.add("last tokens (B,H)", B * H * 4);
  return p;
}

Engine::Engine(WeightSource& weights, Limits limits)
    : weights_(weights), spec_(weights.spec()), limits_(limits), plan_(plan_for(spec_, limits)),
      inv_freq_(rope_inv_freq(spec_)), inv_freq_local_(rope_inv_freq(spec_, true)) {
  ABL_CHECK(limits.max_tokens > 0 && limits.max_seqs > 0, "engine limits must be positive");
  const size_t T = static_cast<size_t>(limits.max_tokens);
  const size_t H = static_cast<size_t>(spec_.hidden_size), F = static_cast<size_t>(spec_.intermediate_size);
  x_.resize(T * H);
  h_.resize(T * H);
  q_.resize(T * static_cast<size_t>(spec_.q_dim()));
  k_.resize(T * static_cast<size_t>(spec_.kv_dim()));
  v_.resize(T * static_cast<size_t>(spec_.kv_dim()));
  att_.resize(T * static_cast<size_t>(spec_.q_dim()));
  y_.resize(T * H);
  gate_.resize(T * F);
  up_.resize(T * F);
  last_.resize(static_cast<size_t>(limits.max_seqs) * H);
}

void Engine::capture(const Batch& batch, int64_t depth, const float* rows, float* residuals) const {
  const int64_t H = spec_.hidden_size, D = spec_.num_layers + 1;
  for (int64_t s = 0; s < batch.num_seqs(); ++s) {
    std::memcpy(residuals + (s * D + depth) * H, rows + batch.last_row(s) * H, sizeof(float) * H);
  }
}

void Engine::layer(int64_t l, const Batch& batch, KvCache& cache, Epilogue* epilogue) {
  const model::ModelSpec& m = spec_;
  const int64_t T = batch.num_tokens(), H = m.hidden_size, F = m.intermediate_size;
  const int64_t NH = m.num_heads, NKV = m.num_kv_heads, HD = m.head_dim;
  const int64_t QD = m.q_dim(), KVD = m.kv_dim();
  const float eps = static_cast<float>(m.rms_norm_eps);
  const float w1 = m.norm_plus_one ? 1.0f : 0.0f;  // Gemma's norms scale by (1 + w)
  const LayerWeights w = weights_.layer(l);
  if (epilogue) epilogue->begin_layer(l, w);

  // Attention block.
  cpu::rmsnorm(x_.data(), w.attn_norm, h_.data(), T, H, eps, w1);
  cpu::linear(h_.data(), w.wq, w.bq, q_.data(), T, H, QD);
  cpu::linear(h_.data(), w.wk, w.bk, k_.data(), T, H, KVD);
  cpu::linear(h_.data(), w.wv, w.bv, v_.data(), T, H, KVD);
  if (m.qk_norm) {
    cpu::rmsnorm(q_.data(), w.q_norm, q_.data(), T * NH, HD, eps, w1);
    cpu::rmsnorm(k_.data(), w.k_norm, k_.data(), T * NKV, HD, eps, w1);
  }
  const bool local = m.uses_local_rope(l);
  const float* inv_freq = local ? inv_freq_local_.data() : inv_freq_.data();
  const float rope_factor = rope_attention_factor(m, local);
  cpu::rope(q_.data(), batch.positions.data(), T, NH, HD, inv_freq, rope_factor);
  cpu::rope(k_.data(), batch.positions.data(), T, NKV, HD, inv_freq, rope_factor);
  cpu::kv_append(k_.data(), v_.data(), batch.cache_rows.data(), T, KVD, cache.k(l), cache.v(l));
  const int64_t window = m.uses_sliding_window(l) ? m.sliding_window : 0;
  const cpu::AttnScores scores{static_cast<float>(m.attention_scale()), static_cast<float>(m.attn_softcap)};
  cpu::attention(q_.data(), cache.k(l), cache.v(l), att_.data(), batch.seqs.data(), batch.num_seqs(),
                 NH, NKV, HD, window, scores);
  cpu::linear(att_.data(), w.wo, nullptr, y_.data(), T, QD, H);
  if (epilogue) epilogue->apply(Component::attn_o, l, y_.data(), batch);
  if (m.sandwich_norms) cpu::rmsnorm(y_.data(), w.post_attn_norm, y_.data(), T, H, eps, w1);
  cpu::add(x_.data(), y_.data(), T * H);

  // MLP block.
  cpu::rmsnorm(x_.data(), w.mlp_norm, h_.data(), T, H, eps, w1);
  cpu::linear(h_.data(), w.w_gate, nullptr, gate_.data(), T, H, F);
  cpu::linear(h_.data(), w.w_up, nullptr, up_.data(), T, H, F);
  if (m.activation == model::Activation::gelu_tanh) {
    cpu::geglu(gate_.data(), up_.data(), gate_.data(), T * F);
  } else {
    cpu::swiglu(gate_.data(), up_.data(), gate_.data(), T * F);
  }
  cpu::linear(gate_.data(), w.w_down, nullptr, y_.data(), T, F, H);
  if (epilogue) epilogue->apply(Component::mlp_down, l, y_.data(), batch);
  if (m.sandwich_norms) cpu::rmsnorm(y_.data(), w.post_mlp_norm, y_.data(), T, H, eps, w1);
  cpu::add(x_.data(), y_.data(), T * H);
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
  check_positions(m, batch);
  cpu::embedding(batch.tokens.data(), T, weights_.embedding(), V, H, x_.data());
  if (m.embed_scale != 1.0) cpu::scale(x_.data(), static_cast<float>(m.embed_scale), T * H);
  if (out.residuals) capture(batch, 0, x_.data(), out.residuals);
  for (int64_t l = 0; l < L; ++l) {
    layer(l, batch, cache, epilogue);
    // hidden_states[l+1] is layer l's output, except the last, which is taken after the final norm.
    if (out.residuals && l + 1 < L) capture(batch, l + 1, x_.data(), out.residuals);
  }
  const float eps = static_cast<float>(m.rms_norm_eps);
  const float w1 = m.norm_plus_one ? 1.0f : 0.0f;
  const float cap = static_cast<float>(m.final_softcap);
  const HeadWeights g = weights_.head();
  if (out.all_logits) {
    cpu::rmsnorm(x_.data(), g.final_norm, h_.data(), T, H, eps, w1);
    cpu::linear(h_.data(), g.lm_head, nullptr, out.all_logits, T, H, V);
    if (cap > 0) cpu::softcap(out.all_logits, cap, T * V);
  }
  if (out.logits || out.residuals || out.next_ids) {
    for (int64_t s = 0; s < B; ++s) {
      std::memcpy(last_.data() + s * H, x_.data() + batch.last_row(s) * H, sizeof(float) * H);
    }
    cpu::rmsnorm(last_.data(), g.final_norm, last_.data(), B, H, eps, w1);
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
      cpu::linear(last_.data(), g.lm_head, nullptr, logits, B, H, V);
      if (cap > 0) cpu::softcap(logits, cap, B * V);
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
