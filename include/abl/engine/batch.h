// What both engines' forward passes take and fill: a packed batch (sequences concatenated, no
// padding) with each token's cache row, the outputs asked of a pass, and the limits a pass is
// planned for. The CPU engine (engine/cpu/) and the CUDA engine (engine/cuda/) share these types.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "abl/backend/cpu/ops.h"
#include "abl/model/model_spec.h"

namespace abl::engine {

// One forward pass: for each sequence, the next tokens to run and where its cache rows are.
struct Batch {
  std::vector<int32_t> tokens;      // (T)
  std::vector<int64_t> positions;   // (T)
  std::vector<int64_t> cache_rows;  // (T) cache row of each token's k/v
  std::vector<int64_t> row_seq;     // (T) sequence index of each token
  std::vector<cpu::AttnSeq> seqs;   // (B)
  std::vector<int32_t> trial;       // (B) ablation trial of each sequence, -1 = none
  // (B) the recurrent-state slot of each sequence (hybrid linear-attention models; KvCache): a
  // sequence continued over several passes keeps its slot, one that starts (cached 0) resets it.
  std::vector<int64_t> state_slots;

  // Appends n tokens of a sequence whose cache rows start at kv_begin and already hold
  // `cached` tokens (0 for a prompt's prefill); its state slot is `state_slot`, or its index in
  // the pass when -1 (passes of whole prompts).
  void add(const int32_t* toks, int64_t n, int64_t kv_begin, int64_t cached, int32_t trial_id = -1,
           int64_t state_slot = -1);
  int64_t num_tokens() const { return static_cast<int64_t>(tokens.size()); }
  int64_t num_seqs() const { return static_cast<int64_t>(seqs.size()); }
  int64_t last_row(int64_t s) const { return seqs[static_cast<size_t>(s)].q_begin + seqs[static_cast<size_t>(s)].q_len - 1; }
};

// LongRoPE (spec.long_rope_after() > 0): the inverse-frequency table each token of the pass rotates
// with — 1, the long factors, for every token of a sequence whose last position in the pass is at
// or past long_rope_after() (the sequence is then longer than original_max_position_embeddings),
// else 0, the short factors. That is transformers' choice for a call on one sequence
// (dynamic_rope_update: max(position_ids) + 1 > original_max), taken per sequence here so that a
// result never depends on what it is batched with; generate() recomputes a sequence's KV cache when
// it crosses over, as Phi3ForCausalLM.prepare_inputs_for_generation does. Empty for other ropes
// (every token uses table 0). Both engines call it before a pass.
std::vector<int32_t> rope_tables(const model::ModelSpec& spec, const Batch& batch);

enum class Component { attn_o = 0, mlp_down = 1 };

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

}  // namespace abl::engine
