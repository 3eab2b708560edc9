// DeviceAblation (ablation_epilogue.h): a trial batch's tables and the weight-derived vectors of the
// ablation epilogue, computed on the device once per batch.
#include "abl/engine/cuda/ablation_epilogue.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <set>
#include <vector>

#include "abl/backend/cuda/check.h"
#include "abl/core/error.h"

namespace abl::cuda {
namespace {

using bf16 = __nv_bfloat16;

constexpr size_t kAlign = 256;  // every table and vector starts on this boundary

size_t align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

// Unique per ablation of this process, never 0 (decode-graph keys).
uint64_t next_ablation_id() {
  static std::atomic<uint64_t> n{0};
  return ++n;
}

}  // namespace

DeviceAblation::DeviceAblation(DeviceWeightSource& weights, const engine::AblationTable& table, cudaStream_t stream)
    : DeviceAblation(weights, table.directions, table.ablations, stream) {}

DeviceAblation::DeviceAblation(DeviceWeightSource& weights, const std::vector<std::vector<float>>& directions,
                               const std::vector<engine::TrialAblation>& trials, cudaStream_t stream)
    : id_(next_ablation_id()) {
  const model::ModelSpec& m = weights.spec();
  ABL_CHECK(weights.compute_stream() == nullptr || weights.compute_stream() == stream,
            "the ablation vectors must be computed on the weight source's compute stream");
  const int64_t H = m.hidden_size, L = m.num_layers, K = static_cast<int64_t>(trials.size());
  const auto D = static_cast<int32_t>(directions.size());
  for (const auto& d : directions) {
    ABL_CHECK(static_cast<int64_t>(d.size()) == H, "direction of length {} for hidden size {}", d.size(), H);
  }
  for (int64_t k = 0; k < K; ++k) {
    const auto& t = trials[static_cast<size_t>(k)];
    ABL_CHECK(static_cast<int64_t>(t.direction.size()) == L && static_cast<int64_t>(t.lambda[0].size()) == L &&
                  static_cast<int64_t>(t.lambda[1].size()) == L,
              "trial {} does not give a direction and two weights for each of the {} layers", k, L);
    for (int32_t d : t.direction) ABL_CHECK(d >= 0 && d < D, "trial {} names direction {} of {}", k, d, D);
    ABL_CHECK(t.routed_experts == trials.front().routed_experts,
              "trial {} ablates the routed experts differently from trial 0 (one setting per batch)", k);
  }
  if (K > 0) routed_experts_ = trials.front().routed_experts;

  // Per layer: the directions some trial ablates with (renumbered 0..S_l-1), and per component
  // whether a pre/full trial (n) or a full trial (Ŵa, ‖a‖²) ablates there.
  std::vector<std::vector<int32_t>> used(static_cast<size_t>(L));
  std::vector<std::array<bool, 2>> need_n(static_cast<size_t>(L), {false, false});
  std::vector<std::array<bool, 2>> need_full(static_cast<size_t>(L), {false, false});
  for (int64_t l = 0; l < L; ++l) {
    std::set<int32_t> dirs;
    for (const auto& t : trials) {
      for (int c = 0; c < 2; ++c) {
        if (t.lambda[static_cast<size_t>(c)][static_cast<size_t>(l)] == 0.0f) continue;
        if (c == 0 ? !m.has_mixer(l) : !m.has_mlp(l)) continue;  // Nemotron-H's single-block layers
        dirs.insert(t.direction[static_cast<size_t>(l)]);
        if (t.mode != engine::RowNorm::none) need_n[static_cast<size_t>(l)][static_cast<size_t>(c)] = true;
        if (t.mode == engine::RowNorm::full) need_full[static_cast<size_t>(l)][static_cast<size_t>(c)] = true;
      }
    }
    used[static_cast<size_t>(l)].assign(dirs.begin(), dirs.end());
  }
  int32_t max_slots = 1;
  for (const auto& u : used) max_slots = std::max(max_slots, static_cast<int32_t>(u.size()));

  AblationTrialsHost host(static_cast<int32_t>(L));
  std::vector<int32_t> slots(static_cast<size_t>(L));
  for (const auto& t : trials) {
    for (int64_t l = 0; l < L; ++l) {
      const auto& u = used[static_cast<size_t>(l)];
      const auto it = std::find(u.begin(), u.end(), t.direction[static_cast<size_t>(l)]);
      slots[static_cast<size_t>(l)] = it == u.end() ? 0 : static_cast<int32_t>(it - u.begin());  // λ = 0 there
    }
    host.add_trial(static_cast<AblationMode>(t.mode), slots.data(), t.lambda[0].data(), t.lambda[1].data(),
                   max_slots);
  }

  // One allocation: the tables, then per layer v (S_l, H) and per component n, Ŵa, ‖a‖².
  size_t off = 0;
  auto take = [&off](size_t bytes) {
    const size_t o = off;
    off = align_up(off + bytes, kAlign);
    return o;
  };
  const size_t mode_at = take(host.mode.size() * sizeof(int32_t));
  const size_t slot_at = take(host.slot.size() * sizeof(int32_t));
  const size_t lambda_at = take(host.lambda.size() * sizeof(float));
  struct Vec {
    size_t n = 0, wa = 0, a2 = 0;
  };
  struct At {
    size_t v = 0;
    std::array<Vec, 2> c{};
    std::vector<Vec> experts;  // MoE layers: E experts, then the shared one
  };
  // MoE layers: every expert's down projection (a LatentMoE: fc2_latent_proj) and the shared expert's has its
  // own vectors.
  const int64_t E = m.num_experts, shared = m.shared_expert_intermediate_size > 0 ? 1 : 0;
  latent_ = m.moe_latent_size > 0;
  num_routed_ = latent_ ? 1 : E;
  std::vector<At> at(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    const auto S = static_cast<size_t>(used[static_cast<size_t>(l)].size());
    At& a = at[static_cast<size_t>(l)];
    a.v = take(S * static_cast<size_t>(H) * sizeof(float));
    auto place = [&](Vec& vec, size_t c) {
      if (need_n[static_cast<size_t>(l)][c]) vec.n = take(static_cast<size_t>(H) * sizeof(float));
      if (need_full[static_cast<size_t>(l)][c]) {
        vec.wa = take(S * static_cast<size_t>(H) * sizeof(float));
        vec.a2 = take(S * sizeof(float));
      }
    };
    place(a.c[0], 0);
    if (m.is_moe_layer(l)) {
      a.experts.resize(static_cast<size_t>(num_routed_ + shared));
      for (Vec& vec : a.experts) place(vec, 1);
    } else {
      place(a.c[1], 1);
    }
  }
  // Then the per-expert vector sets of each MoE layer as device arrays (E entries, layer order),
  // what the grouped apply step reads (not in a LatentMoE: its experts write the latent).
  int64_t moe_layers = 0;
  for (int64_t l = 0; l < L; ++l) moe_layers += m.is_moe_layer(l) && !latent_ ? 1 : 0;
  const size_t tables_at = take(static_cast<size_t>(moe_layers * E) * sizeof(AblationVectors));
  buffer_ = DeviceBuffer(std::max<size_t>(off, kAlign), "the trials' ablation vectors");
  char* base = buffer_.as<char>();

  // Host image of the tables and directions, uploaded in one copy.
  std::vector<char> image(off, 0);
  std::memcpy(image.data() + mode_at, host.mode.data(), host.mode.size() * sizeof(int32_t));
  std::memcpy(image.data() + slot_at, host.slot.data(), host.slot.size() * sizeof(int32_t));
  std::memcpy(image.data() + lambda_at, host.lambda.data(), host.lambda.size() * sizeof(float));
  for (int64_t l = 0; l < L; ++l) {
    const auto& u = used[static_cast<size_t>(l)];
    for (size_t i = 0; i < u.size(); ++i) {
      std::memcpy(image.data() + at[static_cast<size_t>(l)].v + i * static_cast<size_t>(H) * sizeof(float),
                  directions[static_cast<size_t>(u[i])].data(), static_cast<size_t>(H) * sizeof(float));
    }
  }
  if (off > 0) copy_to_device(base, image.data(), off, stream);

  trials_.num_trials = static_cast<int32_t>(K);
  trials_.num_layers = static_cast<int32_t>(L);
  trials_.mode = reinterpret_cast<const int32_t*>(base + mode_at);
  trials_.slot = reinterpret_cast<const int32_t*>(base + slot_at);
  trials_.lambda = reinterpret_cast<const float*>(base + lambda_at);

  // The weight-derived vectors, on the device from the bf16 weights.
  const int64_t in_max = std::max({m.o_dim(), m.linear_value_dim(), m.dense_mlp_width(), m.moe_intermediate_size,
                                   m.shared_expert_intermediate_size, m.moe_latent_size});
  DeviceBuffer a_scratch(static_cast<size_t>(max_slots) * static_cast<size_t>(in_max) * sizeof(float));
  vectors_.resize(static_cast<size_t>(2 * L));
  expert_vectors_.resize(static_cast<size_t>(L));
  for (int64_t l = 0; l < L; ++l) {
    const DeviceLayer& w = weights.layer(l);
    const auto S = static_cast<int64_t>(used[static_cast<size_t>(l)].size());
    if (S == 0) continue;  // no trial ablates this layer: the apply step is skipped
    const At& a = at[static_cast<size_t>(l)];
    const auto* v = reinterpret_cast<const float*>(base + a.v);
    // The vectors of W (H, in) for component c.
    auto derive = [&](const Vec& at_vec, size_t c, const bf16* W, int64_t in) {
      AblationVectors vec;
      vec.v = v;
      if (need_n[static_cast<size_t>(l)][c]) {
        auto* n = reinterpret_cast<float*>(base + at_vec.n);
        ablation_row_norms(W, H, in, n, stream);
        vec.n = n;
      }
      if (need_full[static_cast<size_t>(l)][c]) {
        auto* wa = reinterpret_cast<float*>(base + at_vec.wa);
        auto* a2 = reinterpret_cast<float*>(base + at_vec.a2);
        ablation_direction_vectors(W, H, in, vec.n, vec.v, S, a_scratch.as<float>(), wa, a2, stream);
        vec.wa = wa;
        vec.a2 = a2;
      }
      return vec;
    };
    vectors_[static_cast<size_t>(l) * 2] = derive(a.c[0], 0, w.wo, m.o_in(l));
    if (a.experts.empty()) {
      vectors_[static_cast<size_t>(l) * 2 + 1] = derive(a.c[1], 1, w.w_down, m.mlp_width(l));
      continue;
    }
    auto& ev = expert_vectors_[static_cast<size_t>(l)];
    if (latent_) {
      ev.push_back(derive(a.experts.front(), 1, w.latent_out, m.moe_latent_size));
    } else {
      for (int64_t e = 0; e < E; ++e) {
        ev.push_back(derive(a.experts[static_cast<size_t>(e)], 1, w.experts.at(static_cast<size_t>(e)).w_down,
                            m.moe_intermediate_size));
      }
    }
    if (shared) {
      ev.push_back(derive(a.experts.back(), 1, w.shared.w_down, m.shared_expert_intermediate_size));
    }
    vectors_[static_cast<size_t>(l) * 2 + 1].v = v;  // marks the layer as ablated; experts use their own
  }
  expert_tables_.assign(static_cast<size_t>(L), nullptr);
  if (moe_layers > 0) {
    std::vector<AblationVectors> tables(static_cast<size_t>(moe_layers * E));
    auto* device_tables = reinterpret_cast<AblationVectors*>(base + tables_at);
    size_t i = 0;
    for (int64_t l = 0; l < L; ++l) {
      if (!m.is_moe_layer(l) || latent_) continue;
      const auto& ev = expert_vectors_[static_cast<size_t>(l)];
      if (!ev.empty()) {
        std::copy(ev.begin(), ev.begin() + E, tables.begin() + static_cast<std::ptrdiff_t>(i));
        expert_tables_[static_cast<size_t>(l)] = device_tables + i;
      }
      i += static_cast<size_t>(E);
    }
    copy_to_device(device_tables, tables.data(), tables.size() * sizeof(AblationVectors), stream);
  }
  CUDA_CHECK(cudaStreamSynchronize(stream));  // a_scratch is freed on return
}

const AblationVectors& DeviceAblation::expert_vectors(int64_t layer, int32_t expert) const {
  ABL_CHECK(layer >= 0 && layer < trials_.num_layers, "ablation vectors of layer {} of {}", layer,
            trials_.num_layers);
  const auto& ev = expert_vectors_[static_cast<size_t>(layer)];
  ABL_CHECK(expert >= 0 ? !latent_ : expert == kSharedExpert || (expert == kLatentOut && latent_),
            "no ablation vectors for expert {} of layer {}", expert, layer);
  const size_t i = expert == kSharedExpert ? static_cast<size_t>(num_routed_)
                   : expert == kLatentOut  ? size_t{0}
                                           : static_cast<size_t>(expert);
  ABL_CHECK(i < ev.size(), "no ablation vectors for expert {} of layer {}", expert, layer);
  return ev[i];
}

const AblationVectors* DeviceAblation::expert_table(int64_t layer) const {
  ABL_CHECK(layer >= 0 && layer < trials_.num_layers, "expert ablation vectors of layer {} of {}", layer,
            trials_.num_layers);
  return expert_tables_[static_cast<size_t>(layer)];
}

const AblationVectors& DeviceAblation::vectors(engine::Component c, int64_t layer) const {
  ABL_CHECK(layer >= 0 && layer < trials_.num_layers, "ablation vectors of layer {} of {}", layer,
            trials_.num_layers);
  return vectors_[static_cast<size_t>(layer) * 2 + static_cast<size_t>(c)];
}

}  // namespace abl::cuda
