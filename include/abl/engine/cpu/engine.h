// The forward pass of a decoder-only model over a packed batch (sequences concatenated, no
// padding) with a KV cache, on the CPU backend. One function per layer reads like the math:
// rmsnorm → qkv (+bias) → q/k norm → rope → cache append → attention → o_proj → epilogue →
// [post-norm] → add → rmsnorm → gate/up → swiglu|geglu → down_proj → epilogue → [post-norm] → add
// → capture (latent attention, DeepSeek-V3: q_a → norm → q_b, kv_a → norm → kv_b → per-head k/v, rope on
// the heads' tails, in latent_qkv; a hybrid model's linear-attention layers: q|k|v, z, b|a → causal conv →
// gated delta rule with each sequence's state → gated norm, in linear_attention; Mamba-2 layers: z, x|B|C, dt →
// causal conv + bias → selective scan with each sequence's state → norm of y·SiLU(z), in mamba_mixer; LFM2's
// conv layers: B|C|x → causal conv of B·x with its state → times C, in short_conv_mixer). Family differences are
// flags of the ModelSpec. All buffers are sized once from the Limits and reused.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "abl/engine/batch.h"
#include "abl/engine/buffer_plan.h"
#include "abl/engine/weights.h"

namespace abl::engine {

// KV cache: per attention layer, K rows (C, NKV*HD) and V rows (C, NKV*HDv). Sequences own disjoint row
// ranges. A hybrid model's linear-attention layers keep no rows but a recurrent state per sequence
// instead, in `state_slots` slots (Batch::state_slots): the conv's last inputs and the delta rule's S.
class KvCache {
 public:
  // state_slots: one per sequence a pass may hold (the engine's Limits::max_seqs; no memory without
  // linear-attention layers).
  KvCache(const model::ModelSpec& spec, int64_t rows, int64_t state_slots = Limits{}.max_seqs);
  int64_t rows() const { return rows_; }
  int64_t state_slots() const { return state_slots_; }
  float* k(int64_t layer) { return k_[static_cast<size_t>(layer)].data(); }
  float* v(int64_t layer) { return v_[static_cast<size_t>(layer)].data(); }
  float* conv_state(int64_t layer) { return conv_[static_cast<size_t>(layer)].data(); }  // (slots, C, K−1)
  float* delta_state(int64_t layer) { return S_[static_cast<size_t>(layer)].data(); }    // (slots, NV, DK, DV)
  static int64_t bytes_for(const model::ModelSpec& spec, int64_t rows);
  // The recurrent states of `slots` sequences (0 without linear-attention layers).
  static int64_t state_bytes_for(const model::ModelSpec& spec, int64_t slots);

 private:
  int64_t rows_;
  int64_t state_slots_;
  std::vector<std::vector<float>> k_, v_, conv_, S_;
};

// A hook on the outputs of o_proj and down_proj (the ablation epilogue, DESIGN.md §2). In an MoE
// layer, mlp.down_proj means every expert's down projection and the shared expert's: the hook
// sees each expert's output before it is weighted and summed (docs/families.md §4). In a LatentMoE
// the experts write the latent, and the hook sees fc2_latent_proj's output instead (kLatentOut: the
// routed experts' writer to the residual stream).
class Epilogue {
 public:
  static constexpr int32_t kSharedExpert = -2;
  static constexpr int32_t kLatentOut = -3;
  virtual ~Epilogue() = default;
  // Once per layer and pass, with that layer's weights (to derive per-layer vectors).
  virtual void begin_layer(int64_t layer, const LayerWeights& w) = 0;
  // y(T,H): the component's output for every token of the batch.
  virtual void apply(Component c, int64_t layer, float* y, const Batch& batch) = 0;
  // y(n,H): the down projection of expert `expert` (or kSharedExpert, kLatentOut) for the batch's tokens
  // tokens[0..n).
  virtual void apply_expert(int64_t layer, int32_t expert, float* y, const int64_t* tokens, int64_t n,
                            const Batch& batch) = 0;
  // Routed expert `expert` of `layer` runs on the batch's tokens tokens[0..n) (before its output, whatever the
  // layer's kind: a LatentMoE's experts write the latent, which apply_expert never sees). For observers of the
  // routing (tests); nothing by default.
  virtual void routed(int64_t layer, int32_t expert, const int64_t* tokens, int64_t n) {
    (void)layer, (void)expert, (void)tokens, (void)n;
  }
};

class Engine {
 public:
  Engine(WeightSource& weights, Limits limits);
  const model::ModelSpec& spec() const { return spec_; }
  const Limits& limits() const { return limits_; }
  // Activation buffers this engine holds (the KV cache and weights are planned by their owners).
  const BufferPlan& plan() const { return plan_; }
  static BufferPlan plan_for(const model::ModelSpec& spec, const Limits& limits);

  void forward(const Batch& batch, KvCache& cache, const Outputs& out, Epilogue* epilogue = nullptr);

 private:
  void layer(int64_t l, const Batch& batch, KvCache& cache, Epilogue* epilogue);
  // Softmax attention of layer l on h_ into att_ (T, o_dim): q, k, v, norms, RoPE, the cache, the
  // attention, the output gate.
  void self_attention(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache);
  // A linear-attention layer's token mixing on h_ into att_ (T, NV*DV) (ModelSpec::linear_layers).
  void linear_attention(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache);
  // A Mamba-2 layer's token mixing on h_ into att_ (T, NV*DV) (ModelSpec::mamba2).
  void mamba_mixer(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache);
  // An LFM2 short-conv layer's token mixing on h_ into att_ (T, H) (LinearMixer::short_conv).
  void short_conv_mixer(int64_t l, const LayerWeights& w, const Batch& batch, KvCache& cache);
  // Latent attention's q_ (T,NH,HD), k_ (T,NH,HD) and v_ (T,NH,HDv) from h_, rotated.
  void latent_qkv(const LayerWeights& w, const Batch& batch);
  // out(rows,D) = down(act(gate(x)) * up(x)) for x(rows,D), through gate_/up_ (width F); gate and up
  // with their biases where they have them (gpt-oss's experts), down without (added after the epilogue).
  // D: H, or a LatentMoE's latent for its routed experts.
  void gated_mlp(const float* x, const ExpertWeights& w, int64_t rows, int64_t D, int64_t F, float* out);
  // The router of an MoE layer on x (T,H): logits, then each token's k experts and weights (topk_id_, topk_w_).
  void route(const LayerWeights& w, const float* x, int64_t T);
  // The MLP of an MoE layer on h_ (T,H) into out (T,H), routed as route() left it: each expert over its tokens,
  // combine, the shared expert.
  void moe_mlp(int64_t l, const LayerWeights& w, const Batch& batch, Epilogue* epilogue, float* out);
  // Gemma 4's MoE layer (moe_beside_dense) into y_: the dense MLP on h_ beside the experts on the residual x_ through
  // their own norms, each branch post-normed, summed.
  void moe_beside_dense_mlp(int64_t l, const LayerWeights& w, const Batch& batch, Epilogue* epilogue);
  // Gemma 4's per-layer embeddings of one layer, added to x_ (ple_dim > 0).
  void per_layer_input(const LayerWeights& w, const Batch& batch);
  void capture(const Batch& batch, int64_t depth, const float* rows, float* residuals) const;
  // y(rows, H) = the spec's residual-stream norm of x(rows, H) with weight w (and bias b, or null); y may alias x.
  void residual_norm(const float* x, const float* w, const float* b, float* y, int64_t rows) const;
  // The spec's q/k norm of x(T, heads, HD), in place.
  void head_norm(float* x, const float* w, int64_t T, int64_t heads, int64_t HD) const;

  WeightSource& weights_;
  model::ModelSpec spec_;
  Limits limits_;
  BufferPlan plan_;
  std::vector<float> inv_freq_;        // (HD/2), LongRoPE: (2, HD/2), short then long factors
  std::vector<float> inv_freq_local_;  // (HD/2) of the sliding layers when they differ (Gemma 3)
  std::vector<int32_t> rope_table_;    // (T) row of inv_freq_ of each token of the pass (LongRoPE only)
  // Activations, (T, ·) each, sized for limits_.max_tokens.
  std::vector<float> x_, h_, q_, k_, v_, att_, y_, gate_, up_;
  // Latent attention: q_a_proj's output (T,q_lora_rank), kv_a_proj_with_mqa's (T,C+R), its normed
  // latent (T,C) and kv_b_proj's output (T,NH*(nope+HDv)).
  std::vector<float> q_a_, kv_a_, latent_, kv_b_;
  std::vector<float> q_gate_;  // (T,NH*HD) attn_output_gate's gate
  // Linear attention: the conv's channels (T,C), z (T,NV*DV), b and a (T,2*NV).
  std::vector<float> lin_x_, lin_z_, lin_ba_;
  // MoE layers: router logits (T,E), the top-k choice (T,k), one expert's tokens in and out
  // (T,H), every token's k expert outputs (T·k,H); the expert's token list and slot of each. A LatentMoE's
  // latent (T,D): fc1_latent_proj's output, then the experts' weighted sum.
  std::vector<float> router_, topk_w_, expert_in_, expert_out_, slots_, moe_latent_;
  std::vector<float> moe_out_;  // (T,H) Gemma 4: the experts' branch beside the dense MLP's
  // Gemma 4's per-layer embeddings: the scaled input embedding (T,H), the layer's input (T,P), the gate (T,P).
  std::vector<float> ple_x0_, ple_a_, ple_b_;
  std::vector<int32_t> topk_id_;
  std::vector<int64_t> expert_tokens_, expert_slots_;
  std::vector<float> last_;  // (B, H) final-norm input/output of the last tokens
  std::vector<float> logits_;  // (B, V) only when greedy ids are asked for without logits
};

// The CPU engine's footprint for the planner: Engine::plan_for and KvCache::bytes_for, fp32.
EngineFootprint cpu_engine_footprint();

}  // namespace abl::engine
