// The forward pass of a decoder-only model over a packed batch (sequences concatenated, no
// padding) with a KV cache, on the CPU backend. One function per layer reads like the math:
// rmsnorm → qkv (+bias) → q/k norm → rope → cache append → attention → o_proj → epilogue → add
// → rmsnorm → gate/up → swiglu → down_proj → epilogue → add → capture. Family differences are
// flags of the ModelSpec. All buffers are sized once from the Limits and reused.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "abl/backend/ops.h"
#include "abl/engine/weights.h"

namespace abl::engine {

// Named buffers and their sizes: printed before a run, summed for `plan`, never exceeded.
struct BufferPlan {
  struct Entry {
    std::string name;
    int64_t bytes = 0;
  };
  std::vector<Entry> entries;
  void add(std::string name, int64_t bytes) { entries.push_back({std::move(name), bytes}); }
  int64_t total() const;
  std::string table() const;  // one line per buffer, MiB
};

// KV cache: per layer, K and V rows (C, NKV*HD). Sequences own disjoint row ranges.
class KvCache {
 public:
  KvCache(const model::ModelSpec& spec, int64_t rows);
  int64_t rows() const { return rows_; }
  float* k(int64_t layer) { return k_[static_cast<size_t>(layer)].data(); }
  float* v(int64_t layer) { return v_[static_cast<size_t>(layer)].data(); }
  static int64_t bytes_for(const model::ModelSpec& spec, int64_t rows);

 private:
  int64_t rows_;
  std::vector<std::vector<float>> k_, v_;
};

// One forward pass: for each sequence, the next tokens to run and where its cache rows are.
struct Batch {
  std::vector<int32_t> tokens;      // (T)
  std::vector<int64_t> positions;   // (T)
  std::vector<int64_t> cache_rows;  // (T) cache row of each token's k/v
  std::vector<int64_t> row_seq;     // (T) sequence index of each token
  std::vector<cpu::AttnSeq> seqs;   // (B)
  std::vector<int32_t> trial;       // (B) ablation trial of each sequence, -1 = none

  // Appends n tokens of a sequence whose cache rows start at kv_begin and already hold
  // `cached` tokens (0 for a prompt's prefill).
  void add(const int32_t* toks, int64_t n, int64_t kv_begin, int64_t cached, int32_t trial_id = -1);
  int64_t num_tokens() const { return static_cast<int64_t>(tokens.size()); }
  int64_t num_seqs() const { return static_cast<int64_t>(seqs.size()); }
  int64_t last_row(int64_t s) const { return seqs[static_cast<size_t>(s)].q_begin + seqs[static_cast<size_t>(s)].q_len - 1; }
};

enum class Component { attn_o = 0, mlp_down = 1 };

// A hook on the outputs of o_proj and down_proj (the ablation epilogue, DESIGN.md §2).
class Epilogue {
 public:
  virtual ~Epilogue() = default;
  // Once per layer and pass, with that layer's weights (to derive per-layer vectors).
  virtual void begin_layer(int64_t layer, const LayerWeights& w) = 0;
  // y(T,H): the component's output for every token of the batch.
  virtual void apply(Component c, int64_t layer, float* y, const Batch& batch) = 0;
};

// Where the results of a pass go (each may be null).
struct Outputs {
  float* logits = nullptr;      // (B, V) at each sequence's last token
  float* residuals = nullptr;   // (B, L+1, H) at each sequence's last token, HF hidden_states
  float* all_logits = nullptr;  // (T, V) at every token (tests)
  int32_t* next_ids = nullptr;  // (B) greedy pick at each sequence's last token: argmax, first on ties
  // KL(p_ref ‖ p) of each sequence's next-token distribution p, against row kl_rows[s] of the KL
  // reference of the ForwardPass (log-probabilities): Σ_v exp(ref_v)·(ref_v − log p_v), in fp64.
  // ForwardPass only (the sweep's KL term, computed where the logits are).
  const int32_t* kl_rows = nullptr;  // (B)
  double* kl = nullptr;              // (B)
};

struct Limits {
  int64_t max_tokens = 2048;  // T per pass
  int64_t max_seqs = 256;     // B per pass
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
  void capture(const Batch& batch, int64_t depth, const float* rows, float* residuals) const;

  WeightSource& weights_;
  model::ModelSpec spec_;
  Limits limits_;
  BufferPlan plan_;
  std::vector<float> inv_freq_;  // (HD/2)
  // Activations, (T, ·) each, sized for limits_.max_tokens.
  std::vector<float> x_, h_, q_, k_, v_, att_, y_, gate_, up_;
  std::vector<float> last_;  // (B, H) final-norm input/output of the last tokens
  std::vector<float> logits_;  // (B, V) only when greedy ids are asked for without logits
};

// RoPE inverse frequencies (HD/2) with the spec's rope scaling, as transformers computes them.
std::vector<float> rope_inv_freq(const model::ModelSpec& spec);

}  // namespace abl::engine
