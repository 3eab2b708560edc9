// Model weights as the CUDA forward pass reads them: bf16 device views of one unit at a time
// behind DeviceWeightSource, so the sharded runtime can put its all-gathers behind the requests.
// DeviceWeights holds the whole model on one GPU; DeviceShardedWeights (sharded_device_weights.h)
// holds this rank's shard of every unit and gathers units on demand.
//
// Both share one device unit layout, computed on the host (device_unit_layout): units are the
// embedding, each decoder layer (its tensors in model::layer_slots() order) and the head (final
// norm, then lm_head — the embedding again when tied); every tensor starts on a 256-byte boundary.
// Every tensor is bf16 but the router's biases, the attention sinks, the linear layers' decay parameters
// and the xIELU scalars, kept in fp32 (DeviceUnitTensor::f32).
#pragma once
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "abl/backend/cuda/memory.h"
#include "abl/engine/weights.h"
#include "abl/model/weights.h"

namespace abl::io {
class SafetensorsReader;
}

namespace abl::cuda {

// The head dim attention runs at: HD itself when a kernel exists, else the smallest supported
// head dim above it. An HD above every kernel is an error naming it.
int64_t attention_head_dim(int64_t HD);
// A model's: the wider of its q/k and value heads (latent attention's differ: DeepSeek-V3's 192 and
// 128 both run at 256, the value rows zero-padded like the keys').
int64_t attention_head_dim(const model::ModelSpec& spec);

// Device views of one decoder layer (bf16). Optional tensors are nullptr when absent.
// One expert of an MoE layer (or the shared expert): a SwiGLU MLP of width Fm (Fs).
struct DeviceExpert {
  const __nv_bfloat16* w_gate = nullptr;  // (Fm, H)
  const __nv_bfloat16* w_up = nullptr;    // (Fm, H)
  const __nv_bfloat16* w_down = nullptr;  // (H, Fm)
  const __nv_bfloat16* b_gate = nullptr;  // (Fm) expert_bias (gpt-oss)
  const __nv_bfloat16* b_up = nullptr;    // (Fm)
  const __nv_bfloat16* b_down = nullptr;  // (H)
  XieluParams xielu;                      // the dense MLP's xIELU scalars (fp32), else null
};

struct DeviceLayer {
  const __nv_bfloat16* attn_norm = nullptr;  // (H)
  const __nv_bfloat16* attn_norm_bias = nullptr;  // (H) norm_bias
  const __nv_bfloat16* wq = nullptr;         // (NH*HD, H)
  const __nv_bfloat16* wk = nullptr;         // (NKV*HD, H)
  const __nv_bfloat16* wv = nullptr;         // (NKV*HD, H)
  const __nv_bfloat16* bq = nullptr;         // (NH*HD)
  const __nv_bfloat16* bk = nullptr;         // (NKV*HD)
  const __nv_bfloat16* bv = nullptr;         // (NKV*HD)
  const __nv_bfloat16* q_norm = nullptr;     // (HD) or (NH, HD) qk_norm_per_head
  const __nv_bfloat16* k_norm = nullptr;     // (HD) or (NKV, HD)
  const __nv_bfloat16* wq_gate = nullptr;    // (NH*HD, H) attn_output_gate
  // Latent attention (engine::LayerWeights' wq_a … wkv_b; wq is its q_proj without a q_lora_rank):
  const __nv_bfloat16* wq_a = nullptr;       // (q_lora_rank, H)
  const __nv_bfloat16* q_a_norm = nullptr;   // (q_lora_rank)
  const __nv_bfloat16* wq_b = nullptr;       // (NH*HD, q_lora_rank)
  const __nv_bfloat16* wkv_a = nullptr;      // (C + R, H) kv_a_proj_with_mqa
  const __nv_bfloat16* kv_a_norm = nullptr;  // (C)
  const __nv_bfloat16* wkv_b = nullptr;      // (NH*(nope + HDv), C)
  // Linear attention (engine::LayerWeights' lin_*): q, k, v adjacent (the conv's channels), b then a.
  const __nv_bfloat16* lin_q = nullptr;      // (NK*DK, H)
  const __nv_bfloat16* lin_k = nullptr;      // (NK*DK, H)
  const __nv_bfloat16* lin_v = nullptr;      // (NV*DV, H)
  const __nv_bfloat16* lin_z = nullptr;      // (NV*DV, H)
  const __nv_bfloat16* lin_b = nullptr;      // (NV, H)
  const __nv_bfloat16* lin_a = nullptr;      // (NV, H)
  const __nv_bfloat16* lin_conv = nullptr;   // (C, K)
  const float* lin_a_log = nullptr;          // (NV) fp32
  const float* lin_dt_bias = nullptr;        // (NV) fp32
  const __nv_bfloat16* lin_norm = nullptr;   // (DV); Mamba-2: (NV*DV)
  // Mamba-2 (engine::LayerWeights' mamba_*): lin_z, mamba_xbc, mamba_dt are in_proj's row blocks, each its own
  // device tensor (three GEMMs).
  const __nv_bfloat16* mamba_xbc = nullptr;      // (NV*DV + 2*NK*DK, H)
  const __nv_bfloat16* mamba_dt = nullptr;       // (NV, H)
  const __nv_bfloat16* lin_conv_bias = nullptr;  // (C) or null
  const float* mamba_d = nullptr;                // (NV) fp32
  const __nv_bfloat16* short_conv_in = nullptr;  // (3*H, H) LFM2's conv.in_proj
  const __nv_bfloat16* wo = nullptr;         // (H, NH*HD); out_proj (H, NV*DV)
  const __nv_bfloat16* bo = nullptr;         // (H) o_bias
  const float* sinks = nullptr;              // (NH) fp32, attn_sinks
  const __nv_bfloat16* post_attn_norm = nullptr;  // (H) sandwich_norms
  const __nv_bfloat16* mlp_norm = nullptr;   // (H)
  const __nv_bfloat16* mlp_norm_bias = nullptr;  // (H) norm_bias
  const __nv_bfloat16* w_gate = nullptr;     // (F, H)
  const __nv_bfloat16* w_up = nullptr;       // (F, H)
  const __nv_bfloat16* w_down = nullptr;     // (H, F)
  const __nv_bfloat16* b_gate = nullptr;     // (F) mlp_bias
  const __nv_bfloat16* b_up = nullptr;       // (F)
  const __nv_bfloat16* b_down = nullptr;     // (H)
  const __nv_bfloat16* post_mlp_norm = nullptr;   // (H) sandwich_norms
  XieluParams xielu;                         // one value each, fp32: Activation::xielu's mlp.act_fn.*
  // MoE layers (w_gate/w_up/w_down are then null):
  const __nv_bfloat16* router = nullptr;              // (E, H)
  const float* router_bias = nullptr;                 // (E) fp32 (router_bias)
  const float* router_logit_bias = nullptr;           // (E) fp32 (router_logit_bias)
  std::vector<DeviceExpert> experts;                  // (E)
  DeviceExpert shared;                                // null without a shared expert
  const __nv_bfloat16* shared_expert_gate = nullptr;  // (1, H)
  const __nv_bfloat16* latent_in = nullptr;           // (D, H) LatentMoE: fc1_latent_proj (the experts then over D)
  const __nv_bfloat16* latent_out = nullptr;          // (H, D) fc2_latent_proj
};

struct DeviceHead {
  const __nv_bfloat16* final_norm = nullptr;  // (H)
  const __nv_bfloat16* final_norm_bias = nullptr;  // (H) norm_bias
  const __nv_bfloat16* lm_head_bias = nullptr;     // (V) lm_head_bias
  const __nv_bfloat16* lm_head = nullptr;     // (V, H); the embedding when tied
};

// ---- the device unit layout (host side) -------------------------------------------------------

constexpr int64_t kDeviceTensorAlign = 128;  // elements: every tensor on a 256-byte boundary

struct DeviceUnitTensor {
  model::ExpectedWeight weight;  // the tensor read from the files (the embedding for a tied lm_head)
  model::WeightRole role;        // its role in the unit (lm_head for the tied copy)
  int64_t offset = 0;            // elements from the unit's start, a multiple of kDeviceTensorAlign
  int64_t size = 0;              // elements
  // Held as fp32 (the router's correction bias, which transformers keeps in fp32 and whose rounding
  // would move the choice of experts; gpt-oss's router bias and sinks, which the fp32 ops take as
  // they are; the xIELU scalars, which the activation kernel reads from here): each value's 4 bytes fill
  // two of the unit's bf16 elements.
  bool f32 = false;
  bool tied_copy() const { return role != weight.role; }
};

struct DeviceUnit {
  std::vector<DeviceUnitTensor> tensors;  // in offset order
  int64_t elements = 0;                   // end of the last tensor (no padding after it)
};

// The L + 2 units of a model: 0 the embedding, 1..L the layers, L+1 the head.
struct DeviceUnitLayout {
  int64_t attention_head_dim = 0;  // HDp
  std::vector<DeviceUnit> units;
  size_t layer_unit(int64_t l) const { return static_cast<size_t>(l + 1); }
  size_t head_unit() const { return units.size() - 1; }
  // Where DeviceWeights places each layer unit in its one allocation (elements): back to back,
  // each aligned; L + 1 entries, the last the layers' end (where the embedding goes). Layers differ
  // in size where dense layers sit among MoE ones (mlp_only_layers, decoder_sparse_step).
  std::vector<int64_t> resident_layer_offsets() const;
};
DeviceUnitLayout device_unit_layout(const model::ModelSpec& spec);


// bf16 bits of the unit's elements [first, first + count) — its device image, rounded to nearest
// even as the device conversion does; zero in the alignment gaps and
// past the unit's end. Reads only the overlapping element ranges: from the safetensors files
// through `reader`, or the synthetic values (model::synthetic_weight_values) when it is null.
void build_unit_range(const DeviceUnit& unit, const io::SafetensorsReader* reader, int64_t first, int64_t count,
                      uint16_t* out);

// Views of a layer or head unit whose image starts at `base` (device memory).
DeviceLayer device_layer_views(const DeviceUnit& unit, const __nv_bfloat16* base);
DeviceHead device_head_views(const DeviceUnit& unit, const __nv_bfloat16* base);

// ---- weight sources ---------------------------------------------------------------------------

// What CudaEngine and DeviceAblation read. A pass requests embedding(), layer(0) … layer(L-1),
// head(), in that order; a view may be used (kernels reading it enqueued) only until the next
// request, since a sharded source reuses its gather buffers. Kernels reading the views must run on
// compute_stream() when it is set.
class DeviceWeightSource {
 public:
  virtual ~DeviceWeightSource() = default;
  virtual const model::ModelSpec& spec() const = 0;
  virtual int64_t attention_head_dim() const = 0;  // HDp
  virtual const __nv_bfloat16* embedding() = 0;    // (V, H)
  virtual const DeviceLayer& layer(int64_t l) = 0;
  virtual const DeviceHead& head() = 0;
  // The stream whose work the source orders its buffer reuse against (null: any stream may read,
  // the views never change). CudaEngine runs on it when set.
  virtual cudaStream_t compute_stream() const { return nullptr; }
  // Whether requests are collective: every rank of the group must make the same requests in the
  // same order, so an empty pass still makes them all (CudaEngine::forward with T = 0).
  virtual bool collective() const { return false; }
  // Whether every view stays at one address and is ready without any stream ordering (weights
  // held whole on the device): a captured decode-step graph may then bake the pointers in.
  virtual bool views_fixed() const { return true; }
  virtual size_t bytes() const = 0;  // device memory held
};

// Every tensor of a model in bf16 device memory, converted on the device (f32_to_bf16) from the
// source's fp32 views through a pinned staging buffer. One allocation: the L layer units follow
// each other, then the embedding, the final norm and, when untied, lm_head (the units of
// device_unit_layout, the tied copy left out: lm_head views the embedding).
class DeviceWeights final : public DeviceWeightSource {
 public:
  // Reads embedding(), layer(0..L-1), head() from `source` once, in that order.
  DeviceWeights(engine::WeightSource& source, cudaStream_t stream);

  const model::ModelSpec& spec() const override { return spec_; }
  int64_t attention_head_dim() const override { return attn_hd_; }
  const __nv_bfloat16* embedding() override { return embed_; }
  const DeviceLayer& layer(int64_t l) override;
  const DeviceHead& head() override { return head_; }
  size_t bytes() const override { return buffer_.bytes(); }

 private:
  model::ModelSpec spec_;
  int64_t attn_hd_ = 0;
  DeviceBuffer buffer_;
  std::vector<DeviceLayer> layers_;  // (L)
  const __nv_bfloat16* embed_ = nullptr;
  DeviceHead head_;
};

}  // namespace abl::cuda
