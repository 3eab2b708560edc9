// The forward pass on one GPU holding all weights: the device twin of engine::Engine, built only
// from the committed launchers (ops.h, attention.h, gemm.h, ablation_epilogue.h). Weights and
// activations bf16 with fp32 accumulation; the residual stream, o_proj/down_proj outputs and
// logits fp32. One non-default stream, one buffer plan allocated at construction, nothing
// allocated in forward(); results land in host memory when forward() returns.
//
// One non-obvious decision: head dims without a compiled attention kernel (the tiny fixtures'
// 8, 12, 16, 32) run attention padded to the next supported head dim HDp. q/k/v are copied into
// zero-padded rows (the zeros change neither q·k nor the first HD output columns); the softmax
// scale 1/sqrt(HDp) the kernel applies is corrected by scaling q by sqrt(HDp/HD) at load — folded
// into q_proj (and its bias), or into q_norm's weight for qk_norm models. Supported head dims
// (64, 80, 96, 128, 256: every real checkpoint we target) run unpadded and unscaled.
//
// Dimensions: B sequences, T tokens, H hidden, NH/NKV heads, HD head dim, F ffn, V vocab, L layers,
// C cache rows, S direction slots.
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "abl/ablation/epilogue.h"
#include "abl/ablation/trial.h"
#include "abl/backend/cuda/ablation_epilogue.h"
#include "abl/backend/cuda/attention.h"
#include "abl/backend/cuda/gemm.h"
#include "abl/backend/cuda/memory.h"
#include "abl/engine/engine.h"
#include "abl/engine/weights.h"

namespace abl::cuda {

// The head dim attention runs at: HD itself when a kernel exists, else the smallest supported
// head dim above it. An HD above every kernel is an error naming it.
int64_t attention_head_dim(int64_t HD);

// Device views of one decoder layer (bf16). Optional tensors are nullptr when absent.
struct DeviceLayer {
  const __nv_bfloat16* attn_norm = nullptr;  // (H)
  const __nv_bfloat16* wq = nullptr;         // (NH*HD, H), × q_scale
  const __nv_bfloat16* wk = nullptr;         // (NKV*HD, H)
  const __nv_bfloat16* wv = nullptr;         // (NKV*HD, H)
  const __nv_bfloat16* bq = nullptr;         // (NH*HD), × q_scale
  const __nv_bfloat16* bk = nullptr;         // (NKV*HD)
  const __nv_bfloat16* bv = nullptr;         // (NKV*HD)
  const __nv_bfloat16* q_norm = nullptr;     // (HD), × q_scale
  const __nv_bfloat16* k_norm = nullptr;     // (HD)
  const __nv_bfloat16* wo = nullptr;         // (H, NH*HD)
  const __nv_bfloat16* mlp_norm = nullptr;   // (H)
  const __nv_bfloat16* w_gate = nullptr;     // (F, H)
  const __nv_bfloat16* w_up = nullptr;       // (F, H)
  const __nv_bfloat16* w_down = nullptr;     // (H, F)
};

struct DeviceHead {
  const __nv_bfloat16* final_norm = nullptr;  // (H)
  const __nv_bfloat16* lm_head = nullptr;     // (V, H); the embedding when tied
};

// Every tensor of a model in bf16 device memory, converted on the device (f32_to_bf16) from the
// source's fp32 views through a pinned staging buffer. Layout: one allocation; the L layer units
// follow each other, each holding its tensors in model::layer_slots() order (the layout the sharded
// runtime splits), every tensor starting on a 256-byte boundary; then the embedding, the final norm
// and, when untied, lm_head. Norm weights are bf16 too (the ops take bf16 weights).
class DeviceWeights {
 public:
  // Reads embedding(), layer(0..L-1), head() from `source` once, in that order.
  DeviceWeights(engine::WeightSource& source, cudaStream_t stream);

  const model::ModelSpec& spec() const { return spec_; }
  int64_t attention_head_dim() const { return attn_hd_; }  // HDp
  float q_scale() const { return q_scale_; }                // sqrt(HDp/HD), 1 when unpadded
  const __nv_bfloat16* embedding() const { return embed_; }  // (V, H)
  const DeviceLayer& layer(int64_t l) const;
  const DeviceHead& head() const { return head_; }
  size_t bytes() const { return buffer_.bytes(); }

 private:
  model::ModelSpec spec_;
  int64_t attn_hd_ = 0;
  float q_scale_ = 1.0f;
  DeviceBuffer buffer_;
  std::vector<DeviceLayer> layers_;  // (L)
  const __nv_bfloat16* embed_ = nullptr;
  DeviceHead head_;
};

// KV cache: per layer, K and V rows (C, NKV*HDp) bf16, zero-initialised (the padding columns of a
// padded head dim stay zero). Sequences own disjoint row ranges, as in engine::KvCache.
class DeviceKvCache {
 public:
  // Zeroed on `stream` before this returns.
  DeviceKvCache(const model::ModelSpec& spec, int64_t rows, cudaStream_t stream);
  int64_t rows() const { return rows_; }
  int64_t kv_dim() const { return kv_dim_; }  // NKV*HDp
  __nv_bfloat16* k(int64_t layer) const { return base() + (2 * layer) * rows_ * kv_dim_; }
  __nv_bfloat16* v(int64_t layer) const { return base() + (2 * layer + 1) * rows_ * kv_dim_; }
  static int64_t bytes_for(const model::ModelSpec& spec, int64_t rows);

 private:
  __nv_bfloat16* base() const { return buffer_.as<__nv_bfloat16>(); }
  int64_t rows_ = 0;
  int64_t kv_dim_ = 0;
  DeviceBuffer buffer_;
};

// The ablation epilogue's device inputs for one batch of trials: the per-trial tables
// (AblationTrials) and, per (layer, component), the direction-dependent vectors (AblationVectors)
// computed on the device from the bf16 weights with ablation_row_norms / ablation_direction_vectors.
// Each layer keeps only the directions some trial uses there (its slots are renumbered per layer),
// n only where a pre/full trial ablates, Ŵa and ‖a‖² only where a full trial does. Everything is
// computed once at construction (weights and directions do not change during a sweep).
class DeviceAblation {
 public:
  DeviceAblation(const DeviceWeights& weights, const ablation::TrialTable& table, cudaStream_t stream);
  DeviceAblation(const DeviceWeights& weights, const std::vector<std::vector<float>>& directions,
                 const std::vector<ablation::TrialAblation>& trials, cudaStream_t stream);

  int32_t num_trials() const { return trials_.num_trials; }
  const AblationTrials& trials() const { return trials_; }
  const AblationVectors& vectors(engine::Component c, int64_t layer) const;
  size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  AblationTrials trials_;
  std::vector<AblationVectors> vectors_;  // (L, 2)
};

class CudaEngine {
 public:
  // Plans and allocates every activation buffer for `limits` on the current device.
  CudaEngine(DeviceWeights& weights, engine::Limits limits);
  ~CudaEngine();
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;
  const model::ModelSpec& spec() const { return spec_; }
  const engine::Limits& limits() const { return limits_; }
  cudaStream_t stream() const { return stream_.get(); }
  // The device buffers this engine holds (weights and the KV cache are planned by their owners);
  // sm_count sizes the attention scratch (cudaDevAttrMultiProcessorCount), so `plan` can print it
  // without a GPU.
  const engine::BufferPlan& plan() const { return plan_; }
  static engine::BufferPlan plan_for(const model::ModelSpec& spec, const engine::Limits& limits, int sm_count);
  // Longest kv length a sequence may have (attention scratch bound): max_position_embeddings.
  int64_t max_kv_len() const { return max_kv_len_; }

  // engine::Engine::forward on the device; `out` holds HOST pointers, filled when this returns.
  // Batch sequences with trial ≥ 0 are ablated when `ablation` is given (ids checked against it).
  void forward(const engine::Batch& batch, DeviceKvCache& cache, const engine::Outputs& out,
               const DeviceAblation* ablation = nullptr);

 private:
  struct Buffers;
  void upload_batch(const engine::Batch& batch, const DeviceKvCache& cache, const DeviceAblation* ablation);
  void layer(int64_t l, const engine::Batch& batch, DeviceKvCache& cache, const DeviceAblation* ablation);
  void capture(int64_t depth, int64_t B);
  void all_logits(int64_t T, float* host_out);

  DeviceWeights& weights_;
  model::ModelSpec spec_;
  engine::Limits limits_;
  int64_t max_kv_len_ = 0;
  int sm_count_ = 0;
  engine::BufferPlan plan_;
  Stream stream_;
  DeviceBuffer arena_;
  PinnedBuffer staging_;  // the batch's index arrays, uploaded in one copy
  std::unique_ptr<Buffers> buf_;
  std::unique_ptr<Gemm> gemm_;
  AttnBounds bounds_;  // of the batch in flight
};

}  // namespace abl::cuda
