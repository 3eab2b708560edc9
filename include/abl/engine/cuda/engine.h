// The forward pass on one GPU: the device twin of engine::Engine, built only from the committed
// launchers (ops.h, attention.h, gemm.h, ablation_epilogue.h), over a DeviceWeightSource
// (device_weights.h: every weight resident, or this rank's shards gathered unit by unit). Weights and
// activations bf16 with fp32 accumulation; the residual stream, o_proj/down_proj outputs and
// logits fp32. One non-default stream, one buffer plan allocated at construction, nothing
// allocated in forward(); results land in host memory when forward() returns.
//
// One non-obvious decision: head dims without a compiled attention kernel (the tiny fixtures'
// 8, 12, 16, 32) run attention padded to the next supported head dim HDp. q/k/v are copied into
// zero-padded rows (the zeros change neither q·k nor the first HD output columns), and the kernel
// takes the model's score scale explicitly (ModelSpec::attention_scale(), from the real head dim),
// so nothing else changes. Supported head dims (64, 80, 96, 128, 256: every real checkpoint we
// target) run unpadded.
//
// Dimensions: B sequences, T tokens, H hidden, NH/NKV heads, HD head dim, F ffn, V vocab, L layers,
// C cache rows, S direction slots.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "abl/backend/cuda/attention.h"
#include "abl/backend/cuda/gemm.h"
#include "abl/backend/cuda/memory.h"
#include "abl/backend/cuda/ops.h"
#include "abl/engine/batch.h"
#include "abl/engine/buffer_plan.h"
#include "abl/engine/cuda/ablation_epilogue.h"
#include "abl/engine/cuda/decode_graph.h"
#include "abl/engine/cuda/device_weights.h"
#include "abl/engine/cuda/plan.h"
#include "abl/engine/forward_pass.h"
#include "abl/engine/rope_freqs.h"
#include "abl/engine/weights.h"

namespace abl::cuda {

// KV cache: per layer, K and V rows (C, NKV*HDp) bf16, zero-initialised (the padding columns of a
// padded head dim stay zero). Sequences own disjoint row ranges, as in engine::KvCache. One more
// row, scratch_row() = C, belongs to no sequence: the dummy sequences that pad a decode-step graph
// write and read it (decode_graph.h).
// A hybrid model's linear-attention layers keep fp32 recurrent states instead (engine::KvCache's): per
// such layer, the conv's last inputs (slots+1, C, K−1) and S (slots+1, NV, DK, DV); slot `state_slots`
// is the dummy sequences' scratch, as the scratch row.
class DeviceKvCache {
 public:
  // Zeroed on `stream` before this returns.
  DeviceKvCache(const model::ModelSpec& spec, int64_t rows, cudaStream_t stream, int64_t state_slots = 0);
  int64_t rows() const { return rows_; }
  int64_t scratch_row() const { return rows_; }
  int64_t state_slots() const { return state_slots_; }
  int64_t scratch_state_slot() const { return state_slots_; }
  float* conv_state(int64_t layer) const { return states_.as<float>() + state_at_[static_cast<size_t>(2 * layer)]; }
  float* delta_state(int64_t layer) const { return states_.as<float>() + state_at_[static_cast<size_t>(2 * layer + 1)]; }
  // The states of `slots` sequences and the scratch slot.
  static int64_t state_bytes_for(const model::ModelSpec& spec, int64_t slots);
  int64_t kv_dim() const { return kv_dim_; }  // NKV*HDp
  // (rows of the attention layers only: a linear-attention layer has none)
  __nv_bfloat16* k(int64_t layer) const { return base() + (2 * kv_layer(layer)) * (rows_ + 1) * kv_dim_; }
  __nv_bfloat16* v(int64_t layer) const { return base() + (2 * kv_layer(layer) + 1) * (rows_ + 1) * kv_dim_; }
  // Unique per cache of this process (a decode graph bakes the cache's pointers in).
  uint64_t id() const { return id_; }
  static int64_t bytes_for(const model::ModelSpec& spec, int64_t rows);  // scratch row included

 private:
  __nv_bfloat16* base() const { return buffer_.as<__nv_bfloat16>(); }
  int64_t kv_layer(int64_t layer) const;  // checked: a layer without attention has no rows
  int64_t rows_ = 0;
  int64_t kv_dim_ = 0;
  uint64_t id_ = 0;
  std::vector<int64_t> kv_layer_;  // (L) each layer's index among the attention layers, -1 if none
  DeviceBuffer buffer_;
  int64_t state_slots_ = 0;
  std::vector<int64_t> state_at_;  // (2L) float offsets of each layer's conv and S states
  DeviceBuffer states_;
};

class CudaEngine {
 public:
  // Plans and allocates every activation buffer for `limits` on the current device. Runs on the
  // source's compute stream when it has one (sharded weights), else on a stream of its own.
  CudaEngine(DeviceWeightSource& weights, engine::Limits limits);
  ~CudaEngine();
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;
  const model::ModelSpec& spec() const { return spec_; }
  const engine::Limits& limits() const { return limits_; }
  cudaStream_t stream() const { return stream_.get(); }
  // The device buffers this engine holds (weights and the KV cache are planned by their owners);
  // sm_count sizes the attention scratch (cudaDevAttrMultiProcessorCount), so `plan` can print it
  // without a GPU.
  const engine::BufferPlan& plan() const { return plan_.table; }
  // Longest kv length a sequence may have (attention scratch bound): max_position_embeddings.
  int64_t max_kv_len() const { return max_kv_len_; }

  // engine::Engine::forward on the device; `out` holds HOST pointers, filled when this returns.
  // Batch sequences with trial ≥ 0 are ablated when `ablation` is given (ids checked against it).
  // An empty batch computes nothing, but with a collective source it still requests every unit, so
  // the rank joins the group's gathers (lockstep passes).
  //
  // A pure decode step that asks only for next_ids runs as a CUDA graph (decode_graph.h) when the
  // weight views are fixed (resident weights, no gathers): padded to its bucket, captured on first
  // use, replayed after. Graphs are on by default; ABL_CUDA_GRAPHS=0 in the environment or
  // set_decode_graphs(false) turns them off (benchmarks measure both).
  // Outputs::kl needs `kl`: the reference log-probabilities in device memory.
  void forward(const engine::Batch& batch, DeviceKvCache& cache, const engine::Outputs& out,
               const DeviceAblation* ablation = nullptr, const engine::DeviceKlReference* kl = nullptr);

  void set_decode_graphs(bool on);
  bool decode_graphs() const { return graphs_on_; }
  const DecodeGraphs& graphs() const { return *graphs_; }

 private:
  struct Buffers;
  // Checks the batch against the limits and `visible_rows` cache rows (the scratch row is visible
  // to padded decode steps only), uploads its arrays and sets bounds_.
  void upload_batch(const engine::Batch& batch, const DeviceKvCache& cache, const DeviceAblation* ablation,
                    int64_t visible_rows, const int32_t* kl_rows, int64_t kl_reference_rows);
  void forward_decode_graph(const engine::Batch& batch, DeviceKvCache& cache, const engine::Outputs& out,
                            const DeviceAblation* ablation);
  // buf_->last = the final-normed rows of each sequence's last token (B); the head's weights.
  const DeviceHead& final_norm_last_rows(int64_t B);
  // The greedy pick at each sequence's last token into buf_->next_ids (B rows).
  void greedy_ids(int64_t B);
  // buf_->x (T, H) = the scaled embeddings of buf_->tokens.
  void embed(int64_t T);
  // logits (rows, V) f32 = lm_head · normed rows, soft-capped when the model caps its logits.
  void head_logits(const __nv_bfloat16* normed, const DeviceHead& g, int64_t rows, float* logits);
  void layer(int64_t l, const engine::Batch& batch, DeviceKvCache& cache, const DeviceAblation* ablation);
  // Softmax attention / a linear-attention layer's token mixing on buf_->h into buf_->att.
  void self_attention(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache);
  // Latent attention's q into buf_->q and its keys and values into k and v at rows of `stride` values.
  void latent_qkv(const DeviceLayer& w, const engine::Batch& batch, __nv_bfloat16* k, __nv_bfloat16* v,
                  int64_t stride);
  void linear_attention(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache);
  void mamba_mixer(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache);
  void short_conv_mixer(int64_t l, const DeviceLayer& w, const engine::Batch& batch, DeviceKvCache& cache);
  void gated_mlp(const __nv_bfloat16* x, const DeviceExpert& w, int64_t rows, int64_t F, float* out);
  // The spec's q/k norm of x(T, heads, HD), in place.
  void head_norm(__nv_bfloat16* x, const __nv_bfloat16* w, int64_t T, int64_t heads, float w_offset);
  void moe_mlp(int64_t l, const DeviceLayer& w, int64_t T, const DeviceAblation* ablation);
  // y(rows, H) = the spec's residual-stream norm of x(rows, H) (rmsnorm or a layernorm; b: its bias or null).
  void residual_norm(const float* x, const __nv_bfloat16* w, const __nv_bfloat16* b, __nv_bfloat16* y, int64_t rows);
  // gate = act(gate, up) in place over (rows, F); the clamped SwiGLU adds each row's group's biases first.
  void activation(__nv_bfloat16* gate, const __nv_bfloat16* up, int64_t rows, int64_t F, const GroupBias& gate_bias,
                  const GroupBias& up_bias);
  void capture(int64_t depth, int64_t B);
  void all_logits(int64_t T, float* host_out);
  void request_all_weights();

  DeviceWeightSource& weights_;
  model::ModelSpec spec_;
  engine::Limits limits_;
  int64_t max_kv_len_ = 0;
  int sm_count_ = 0;
  CudaEnginePlan plan_;  // the arena's slices (plan.h)
  Stream stream_;
  DeviceBuffer arena_;
  PinnedBuffer staging_;  // the batch's index arrays, uploaded in one copy
  std::unique_ptr<Buffers> buf_;
  std::unique_ptr<Gemm> gemm_;
  AttnBounds bounds_;  // of the batch in flight
  bool graphs_on_ = true;
  std::unique_ptr<DecodeGraphs> graphs_;  // destroyed before the buffers they launch into
};

}  // namespace abl::cuda
