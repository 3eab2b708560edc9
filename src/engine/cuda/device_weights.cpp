// The device unit layout, the host-side bf16 image of unit ranges, and the resident DeviceWeights
// (device_weights.h).
#include "abl/engine/cuda/device_weights.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

#include "abl/backend/cuda/attention.h"
#include "abl/backend/cuda/check.h"
#include "abl/backend/cuda/ops.h"
#include "abl/core/dtype.h"
#include "abl/core/error.h"
#include "abl/core/log.h"
#include "abl/engine/cuda/plan.h"
#include "abl/io/safetensors.h"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr int64_t kStagingFloats = int64_t{16} << 20;  // 64 MiB of fp32 per weight-upload chunk
constexpr int64_t kReadFloats = int64_t{4} << 20;      // 16 MiB of fp32 per host read in build_unit_range
constexpr int64_t kSupportedHeadDims[] = {64, 80, 96, 128, 256};

int64_t align_up(int64_t n, int64_t a) { return (n + a - 1) / a * a; }

// Host fp32 tensor of a layer unit's tensor (the source's views): every role device_slot has, and
// the experts' by their index.
const float* host_tensor(const engine::LayerWeights& w, const DeviceUnitTensor& t) {
  using R = model::WeightRole;
  const auto expert = [&]() -> const engine::ExpertWeights& {
    const int32_t e = t.weight.expert;
    ABL_CHECK(e >= 0 && static_cast<size_t>(e) < w.experts.size(), "{}: expert {} of a layer with {} experts",
              t.weight.name, e, w.experts.size());
    return w.experts[static_cast<size_t>(e)];
  };
  switch (t.role) {
    case R::attn_norm: return w.attn_norm;
    case R::attn_norm_bias: return w.attn_norm_bias;
    case R::mlp_norm_bias: return w.mlp_norm_bias;
    case R::q_proj: return w.wq;
    case R::k_proj: return w.wk;
    case R::v_proj: return w.wv;
    case R::q_bias: return w.bq;
    case R::k_bias: return w.bk;
    case R::v_bias: return w.bv;
    case R::q_norm: return w.q_norm;
    case R::k_norm: return w.k_norm;
    case R::o_proj: return w.wo;
    case R::q_gate_proj: return w.wq_gate;
    case R::q_a_proj: return w.wq_a;
    case R::q_a_norm: return w.q_a_norm;
    case R::q_b_proj: return w.wq_b;
    case R::kv_a_proj: return w.wkv_a;
    case R::kv_a_norm: return w.kv_a_norm;
    case R::kv_b_proj: return w.wkv_b;
    case R::linear_q: return w.lin_q;
    case R::linear_k: return w.lin_k;
    case R::linear_v: return w.lin_v;
    case R::linear_z: return w.lin_z;
    case R::linear_b: return w.lin_b;
    case R::linear_a: return w.lin_a;
    case R::linear_conv: return w.lin_conv;
    case R::linear_a_log: return w.lin_a_log;
    case R::linear_dt_bias: return w.lin_dt_bias;
    case R::linear_norm: return w.lin_norm;
    case R::mamba_xbc: return w.mamba_xbc;
    case R::mamba_dt: return w.mamba_dt;
    case R::linear_conv_bias: return w.lin_conv_bias;
    case R::mamba_d: return w.mamba_d;
    case R::xielu_alpha_p: return w.xielu.alpha_p;
    case R::xielu_alpha_n: return w.xielu.alpha_n;
    case R::xielu_beta: return w.xielu.beta;
    case R::xielu_eps: return w.xielu.eps;
    case R::short_conv_in: return w.short_conv_in;
    case R::post_attn_norm: return w.post_attn_norm;
    case R::mlp_norm: return w.mlp_norm;
    case R::post_mlp_norm: return w.post_mlp_norm;
    case R::gate_proj: return w.w_gate;
    case R::up_proj: return w.w_up;
    case R::down_proj: return w.w_down;
    case R::gate_bias: return w.b_gate;
    case R::up_bias: return w.b_up;
    case R::down_bias: return w.b_down;
    case R::router: return w.router;
    case R::router_bias: return w.router_bias;
    case R::shared_gate_proj: return w.shared.w_gate;
    case R::shared_up_proj: return w.shared.w_up;
    case R::shared_down_proj: return w.shared.w_down;
    case R::shared_expert_gate: return w.shared_expert_gate;
    case R::latent_in_proj: return w.latent_in;
    case R::latent_out_proj: return w.latent_out;
    case R::expert_gate_proj: return expert().w_gate;
    case R::expert_up_proj: return expert().w_up;
    case R::expert_down_proj: return expert().w_down;
    case R::o_bias: return w.bo;
    case R::attn_sinks: return w.sinks;
    case R::router_logit_bias: return w.router_logit_bias;
    case R::expert_gate_bias: return expert().b_gate;
    case R::expert_up_bias: return expert().b_up;
    case R::expert_down_bias: return expert().b_down;
    default: fail("weight role {} is not a layer tensor", model::role_name(t.role));
  }
}

const bf16** device_slot(DeviceLayer& w, model::WeightRole role) {
  using R = model::WeightRole;
  switch (role) {
    case R::attn_norm: return &w.attn_norm;
    case R::attn_norm_bias: return &w.attn_norm_bias;
    case R::mlp_norm_bias: return &w.mlp_norm_bias;
    case R::q_proj: return &w.wq;
    case R::k_proj: return &w.wk;
    case R::v_proj: return &w.wv;
    case R::q_bias: return &w.bq;
    case R::k_bias: return &w.bk;
    case R::v_bias: return &w.bv;
    case R::q_norm: return &w.q_norm;
    case R::k_norm: return &w.k_norm;
    case R::o_proj: return &w.wo;
    case R::q_gate_proj: return &w.wq_gate;
    case R::q_a_proj: return &w.wq_a;
    case R::q_a_norm: return &w.q_a_norm;
    case R::q_b_proj: return &w.wq_b;
    case R::kv_a_proj: return &w.wkv_a;
    case R::kv_a_norm: return &w.kv_a_norm;
    case R::kv_b_proj: return &w.wkv_b;
    case R::linear_q: return &w.lin_q;
    case R::linear_k: return &w.lin_k;
    case R::linear_v: return &w.lin_v;
    case R::linear_z: return &w.lin_z;
    case R::linear_b: return &w.lin_b;
    case R::linear_a: return &w.lin_a;
    case R::linear_conv: return &w.lin_conv;
    case R::linear_norm: return &w.lin_norm;
    case R::mamba_xbc: return &w.mamba_xbc;
    case R::mamba_dt: return &w.mamba_dt;
    case R::linear_conv_bias: return &w.lin_conv_bias;
    case R::short_conv_in: return &w.short_conv_in;
    case R::o_bias: return &w.bo;
    case R::post_attn_norm: return &w.post_attn_norm;
    case R::mlp_norm: return &w.mlp_norm;
    case R::post_mlp_norm: return &w.post_mlp_norm;
    case R::router: return &w.router;
    case R::shared_gate_proj: return &w.shared.w_gate;
    case R::shared_up_proj: return &w.shared.w_up;
    case R::shared_down_proj: return &w.shared.w_down;
    case R::shared_expert_gate: return &w.shared_expert_gate;
    case R::latent_in_proj: return &w.latent_in;
    case R::latent_out_proj: return &w.latent_out;
    case R::gate_proj: return &w.w_gate;
    case R::up_proj: return &w.w_up;
    case R::down_proj: return &w.w_down;
    case R::gate_bias: return &w.b_gate;
    case R::up_bias: return &w.b_up;
    case R::down_bias: return &w.b_down;
    default: fail("weight role {} is not a layer tensor", model::role_name(role));
  }
}

// The tensors held in fp32 on the device (DeviceUnitTensor::f32).
bool is_f32(model::WeightRole role) {
  using R = model::WeightRole;
  return role == R::router_bias || role == R::router_logit_bias || role == R::attn_sinks || role == R::linear_a_log ||
         role == R::linear_dt_bias || role == R::mamba_d || role == R::xielu_alpha_p || role == R::xielu_alpha_n ||
         role == R::xielu_beta || role == R::xielu_eps;
}

// fp32 host → bf16 device in chunks through pinned staging.
class Uploader {
 public:
  Uploader(int64_t largest, cudaStream_t s)
      : chunk_(std::min(largest, kStagingFloats)),
        pinned_(static_cast<size_t>(chunk_) * sizeof(float)),
        device_(static_cast<size_t>(chunk_) * sizeof(float)),
        s_(s) {}

  void put(const float* src, int64_t n, bf16* dst) {
    ABL_CHECK(src != nullptr, "weight source returned no data for a required tensor");
    for (int64_t done = 0; done < n; done += chunk_) {
      const int64_t m = std::min(chunk_, n - done);
      float* p = pinned_.as<float>();
      std::memcpy(p, src + done, static_cast<size_t>(m) * sizeof(float));
      CUDA_CHECK(cudaMemcpyAsync(device_.get(), p, static_cast<size_t>(m) * sizeof(float), cudaMemcpyHostToDevice, s_));
      f32_to_bf16(device_.as<float>(), dst + done, m, s_);
      CUDA_CHECK(cudaStreamSynchronize(s_));  // the staging is refilled next
    }
  }

  // n fp32 values kept as they are (DeviceUnitTensor::f32), into the 2n bf16 elements at dst.
  void put_f32(const float* src, int64_t n, bf16* dst) {
    ABL_CHECK(src != nullptr, "weight source returned no data for a required tensor");
    for (int64_t done = 0; done < n; done += chunk_) {
      const int64_t m = std::min(chunk_, n - done);
      float* p = pinned_.as<float>();
      std::memcpy(p, src + done, static_cast<size_t>(m) * sizeof(float));
      CUDA_CHECK(cudaMemcpyAsync(reinterpret_cast<float*>(dst) + done, p, static_cast<size_t>(m) * sizeof(float),
                                 cudaMemcpyHostToDevice, s_));
      CUDA_CHECK(cudaStreamSynchronize(s_));
    }
  }

 private:
  int64_t chunk_;
  PinnedBuffer pinned_;
  DeviceBuffer device_;
  cudaStream_t s_;
};

}  // namespace

int64_t attention_head_dim(int64_t HD) {
  for (int64_t d : kSupportedHeadDims) {
    if (d >= HD && attention_supports_head_dim(d)) return d;
  }
  fail("no attention kernel for head dim {} (largest supported: 256)", HD);
}

int64_t attention_head_dim(const model::ModelSpec& spec) {
  return attention_head_dim(std::max(spec.head_dim, spec.v_head()));
}

// ---- layout -----------------------------------------------------------------------------------

DeviceUnitLayout device_unit_layout(const model::ModelSpec& spec) {
  check_cuda_engine_runs(spec);  // (a model the engine refuses: that refusal first, before any kernel's limits)
  DeviceUnitLayout lay;
  lay.attention_head_dim = attention_head_dim(spec);
  const int64_t L = spec.num_layers;
  lay.units.resize(static_cast<size_t>(L + 2));
  auto put = [&](DeviceUnit& u, const model::ExpectedWeight& w, model::WeightRole role) {
    const bool f32 = is_f32(role);
    DeviceUnitTensor t{w, role, align_up(u.elements, kDeviceTensorAlign),
                       model::element_count(w.shape) * (f32 ? 2 : 1), f32};
    u.elements = t.offset + t.size;
    u.tensors.push_back(std::move(t));
  };
  // expected_weights: the embedding, each layer's tensors in layer_slots() order, final norm, lm_head.
  const std::vector<model::ExpectedWeight> expected = model::expected_weights(spec);
  const model::ExpectedWeight* embed = nullptr;
  for (const auto& w : expected) {
    if (w.role == model::WeightRole::embed) embed = &w;
  }
  ABL_CHECK(embed != nullptr, "the weight table of {} has no embedding", spec.source);
  for (const auto& w : expected) {
    if (w.layer >= 0) {
      put(lay.units[lay.layer_unit(w.layer)], w, w.role);
    } else if (w.role == model::WeightRole::embed) {
      put(lay.units.front(), w, w.role);
    } else if (w.role == model::WeightRole::lm_head) {
      put(lay.units.back(), spec.tied_embeddings ? *embed : w, w.role);
    } else {  // the final norm (and its bias, lm_head's bias): expected_weights puts lm_head last
      put(lay.units.back(), w, w.role);
    }
  }
  const DeviceUnit& head = lay.units.back();
  ABL_CHECK(head.tensors.size() >= 2 && head.tensors.front().role == model::WeightRole::final_norm &&
                head.tensors.back().role == model::WeightRole::lm_head,
            "the head unit of {} is not (final norm, ..., lm_head)", spec.source);
  return lay;
}

std::vector<int64_t> DeviceUnitLayout::resident_layer_offsets() const {
  const size_t L = units.size() - 2;
  std::vector<int64_t> at(L + 1, 0);
  for (size_t l = 0; l < L; ++l) at[l + 1] = at[l] + align_up(units[l + 1].elements, kDeviceTensorAlign);
  return at;
}

void build_unit_range(const DeviceUnit& unit, const io::SafetensorsReader* reader, int64_t first, int64_t count,
                      uint16_t* out) {
  ABL_CHECK(first >= 0 && count >= 0, "unit range [{}, {}+{})", first, first, count);
  std::fill(out, out + count, uint16_t{0});
  const int64_t end = first + count;
  std::vector<float> buf;
  for (const DeviceUnitTensor& t : unit.tensors) {
    const int64_t lo = std::max(first, t.offset), hi = std::min(end, t.offset + t.size);
    if (lo >= hi) continue;
    if (t.f32) {
      // The whole fp32 tensor (E values), then the bf16-sized halves of its bytes in range.
      std::vector<float> values(static_cast<size_t>(t.size / 2));
      model::read_weight(reader, t.weight, 0, t.size / 2, values.data());
      std::memcpy(out + (lo - first), reinterpret_cast<const uint16_t*>(values.data()) + (lo - t.offset),
                  static_cast<size_t>(hi - lo) * sizeof(uint16_t));
      continue;
    }
    buf.resize(static_cast<size_t>(std::min(hi - lo, kReadFloats)));
    for (int64_t at = lo; at < hi; at += kReadFloats) {
      const int64_t n = std::min(kReadFloats, hi - at);
      model::read_weight(reader, t.weight, at - t.offset, n, buf.data());
      uint16_t* dst = out + (at - first);
      for (int64_t i = 0; i < n; ++i) dst[i] = ::abl::f32_to_bf16(buf[static_cast<size_t>(i)]);
    }
  }
}

DeviceLayer device_layer_views(const DeviceUnit& unit, const bf16* base) {
  DeviceLayer d;
  for (const DeviceUnitTensor& t : unit.tensors) {
    const int32_t e = t.weight.expert;
    if (t.f32) {
      const float* p = reinterpret_cast<const float*>(base + t.offset);  // 256-byte aligned
      switch (t.role) {
        case model::WeightRole::router_bias: d.router_bias = p; break;
        case model::WeightRole::router_logit_bias: d.router_logit_bias = p; break;
        case model::WeightRole::attn_sinks: d.sinks = p; break;
        case model::WeightRole::linear_a_log: d.lin_a_log = p; break;
        case model::WeightRole::linear_dt_bias: d.lin_dt_bias = p; break;
        case model::WeightRole::mamba_d: d.mamba_d = p; break;
        case model::WeightRole::xielu_alpha_p: d.xielu.alpha_p = p; break;
        case model::WeightRole::xielu_alpha_n: d.xielu.alpha_n = p; break;
        case model::WeightRole::xielu_beta: d.xielu.beta = p; break;
        case model::WeightRole::xielu_eps: d.xielu.eps = p; break;
        default:
          fail("{}: an fp32 tensor that is not a router bias, the sinks, a decay parameter or an xIELU scalar",
               t.weight.name);
      }
      continue;
    }
    if (e < 0) {
      *device_slot(d, t.role) = base + t.offset;
      continue;
    }
    if (d.experts.size() <= static_cast<size_t>(e)) d.experts.resize(static_cast<size_t>(e) + 1);
    DeviceExpert& x = d.experts[static_cast<size_t>(e)];
    switch (t.role) {
      case model::WeightRole::expert_gate_proj: x.w_gate = base + t.offset; break;
      case model::WeightRole::expert_up_proj: x.w_up = base + t.offset; break;
      case model::WeightRole::expert_down_proj: x.w_down = base + t.offset; break;
      case model::WeightRole::expert_gate_bias: x.b_gate = base + t.offset; break;
      case model::WeightRole::expert_up_bias: x.b_up = base + t.offset; break;
      case model::WeightRole::expert_down_bias: x.b_down = base + t.offset; break;
      default: fail("weight role {} is not an expert tensor", model::role_name(t.role));
    }
  }
  return d;
}

DeviceHead device_head_views(const DeviceUnit& unit, const bf16* base) {
  DeviceHead h;
  for (const DeviceUnitTensor& t : unit.tensors) {
    if (t.role == model::WeightRole::final_norm) h.final_norm = base + t.offset;
    if (t.role == model::WeightRole::final_norm_bias) h.final_norm_bias = base + t.offset;
    if (t.role == model::WeightRole::lm_head_bias) h.lm_head_bias = base + t.offset;
    if (t.role == model::WeightRole::lm_head) h.lm_head = base + t.offset;
  }
  ABL_CHECK(h.final_norm != nullptr && h.lm_head != nullptr, "head unit without final norm or lm_head");
  return h;
}

// ---- DeviceWeights ----------------------------------------------------------------------------

DeviceWeights::DeviceWeights(engine::WeightSource& source, cudaStream_t stream) : spec_(source.spec()) {
  const model::ModelSpec& m = spec_;
  const int64_t L = m.num_layers;
  const DeviceUnitLayout lay = device_unit_layout(m);
  attn_hd_ = lay.attention_head_dim;

  // Placement: the layer units back to back (of different sizes where dense layers sit among MoE
  // ones), then the embedding, then the head (norm only when tied).
  const DeviceUnit& embed_unit = lay.units.front();
  const DeviceUnit& head_unit = lay.units.back();
  const std::vector<int64_t> layer_at = lay.resident_layer_offsets();
  const int64_t embed_at = layer_at[static_cast<size_t>(L)];
  const int64_t head_at = embed_at + align_up(embed_unit.elements, kDeviceTensorAlign);
  // tied: the head without its last tensor, lm_head (which views the embedding)
  const int64_t total = head_at + (m.tied_embeddings ? head_unit.tensors.back().offset : head_unit.elements);
  int64_t largest = 0;
  for (const DeviceUnit& u : lay.units) {
    for (const DeviceUnitTensor& t : u.tensors) largest = std::max(largest, t.size);
  }
  buffer_ = DeviceBuffer(static_cast<size_t>(total) * sizeof(bf16),
                         "the model's weights (resident; --sharding holds a share of them)");
  bf16* base = buffer_.as<bf16>();
  // The alignment gaps between tensors stay zero: the image equals device_unit_layout's.
  CUDA_CHECK(cudaMemsetAsync(base, 0, buffer_.bytes(), stream));

  Uploader up(largest, stream);
  up.put(source.embedding(), embed_unit.tensors[0].size, base + embed_at);
  embed_ = base + embed_at;
  layers_.resize(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    const engine::LayerWeights w = source.layer(l);
    const DeviceUnit& unit = lay.units[lay.layer_unit(l)];
    bf16* at = base + layer_at[static_cast<size_t>(l)];
    for (const DeviceUnitTensor& t : unit.tensors) {
      const float* src = host_tensor(w, t);
      ABL_CHECK(src != nullptr, "{}: layer {} has no host tensor for it", t.weight.name, l);
      if (t.f32) {
        up.put_f32(src, t.size / 2, at + t.offset);
      } else {
        up.put(src, t.size, at + t.offset);
      }
    }
    layers_[static_cast<size_t>(l)] = device_layer_views(unit, at);
  }
  const engine::HeadWeights h = source.head();
  for (const DeviceUnitTensor& t : head_unit.tensors) {
    const float* src = t.role == model::WeightRole::final_norm        ? h.final_norm
                       : t.role == model::WeightRole::final_norm_bias ? h.final_norm_bias
                       : t.role == model::WeightRole::lm_head_bias    ? h.lm_head_bias
                                                                      : h.lm_head;
    if (t.role == model::WeightRole::lm_head && m.tied_embeddings) continue;
    up.put(src, t.size, base + head_at + t.offset);
  }
  head_ = device_head_views(head_unit, base + head_at);
  if (m.tied_embeddings) head_.lm_head = embed_;
  log::debug("device weights of {}: {} MiB bf16 (attention head dim {})", m.source, buffer_.bytes() >> 20,
             attn_hd_);
}

const DeviceLayer& DeviceWeights::layer(int64_t l) {
  ABL_CHECK(l >= 0 && l < spec_.num_layers, "layer {} out of range (L = {})", l, spec_.num_layers);
  return layers_[static_cast<size_t>(l)];
}

}  // namespace abl::cuda
