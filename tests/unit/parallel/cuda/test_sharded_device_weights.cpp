// The device weight layout and the sharded device weights (device_weights.h,
// sharded_device_weights.h). On the host: the unit layout, shard sizes, and that the G rank shards
// of every unit, built on the host by range, concatenate to the unit's device image for G = 1..4.
// On the device: DeviceWeights holds that image, and the one-rank DeviceShardedWeights (resident
// or offloaded) gives the resident engine's results bit for bit, ablation included. Gathers over
// several ranks are tested under mpirun (tests/mpi/test_cuda_sharding.cpp).
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "abl/engine/cpu/weights.h"
#include "abl/ablation/trial.h"
#include "abl/engine/cuda/engine.h"
#include "abl/parallel/cuda/sharded_device_weights.h"
#include "abl/core/dtype.h"
#include "abl/core/error.h"
#include "abl/engine/weights.h"
#include "abl/io/safetensors.h"
#include "abl/model/model_spec.h"
#include "common/fixtures.h"
#include "common/cuda_test.h"
#include "common/sharded_engine_check.h"

using namespace abl;

namespace {

using abl::testing::fixture_dir;

// Folders (model files) and synthetic presets (no files: synthetic values), with padded head
// dims (q/k/v biases, q/k norms), tied heads and a model split over several files.
std::vector<std::string> layout_models() {
  const std::string f = fixture_dir();
  return {f + "/organism",           f + "/golden/qwen2-qkv-bias",   f + "/golden/qwen3-qk-norm",
          f + "/golden/llama-tied",  f + "/tiny-llama-sharded",      "synthetic:tiny-llama",
          f + "/golden/gemma2-softcap", f + "/golden/gemma3-mm", f + "/golden/mistral3-mm",     f + "/golden/phi3-longrope",
          f + "/golden/mixtral-moe", f + "/golden/qwen2-moe-shared", f + "/golden/qwen3-moe",
          f + "/golden/glm4-interleaved-rope", f + "/golden/glm4-moe",
          f + "/golden/granite-moe-shared", f + "/golden/gpt-oss", f + "/golden/cohere2",
          f + "/golden/cohere-qknorm", f + "/golden/llama-bias", f + "/golden/seed-oss",
          f + "/golden/phimoe",      f + "/golden/llama4-mm",        f + "/golden/granite4-micro",
          f + "/golden/qwen3-next",  f + "/golden/granite4-h",
          f + "/golden/granite4-h-moe", f + "/golden/lfm2", f + "/golden/lfm2-moe",
          f + "/golden/nemotron-h",  f + "/golden/nemotron-h-moe", f + "/golden/nemotron-h-latent-moe",
          f + "/golden/arcee",
          f + "/golden/dots1",       f + "/golden/hunyuan-moe", f + "/golden/apertus",
          f + "/golden/llava-mm",    f + "/golden/internvl-mm", f + "/golden/deepseek-v3-mla",
          f + "/golden/deepseek-v2-lite", f + "/golden/glm4-moe-lite"};
}

model::ModelSpec spec_of(const std::string& m) {
  return m.rfind("synthetic:", 0) == 0 ? model::synthetic_model_spec(m) : model::load_model_spec(m);
}

// The device image of unit u, written here from the whole fp32 host weights: each tensor's values
// rounded to bf16 at its offset (padded head dims change no weight), zeros elsewhere.
std::vector<uint16_t> unit_image(engine::HostWeights& hw, const cuda::DeviceUnitLayout& lay, size_t u) {
  const cuda::DeviceUnit& unit = lay.units[u];
  std::vector<uint16_t> image(static_cast<size_t>(unit.elements), 0);
  for (const cuda::DeviceUnitTensor& t : unit.tensors) {
    const float* src = nullptr;
    if (u == 0) {
      src = hw.embedding();
    } else if (u == lay.head_unit()) {
      const engine::HeadWeights& head = hw.head();
      src = t.role == model::WeightRole::final_norm        ? head.final_norm
            : t.role == model::WeightRole::final_norm_bias ? head.final_norm_bias
            : t.role == model::WeightRole::lm_head_bias    ? head.lm_head_bias
                                                           : head.lm_head;
    } else {
      src = hw.layer_tensor(static_cast<int64_t>(u) - 1, t.role, t.weight.expert);
    }
    if (t.f32) {  // a router bias or the sinks: their fp32 bytes as they are
      std::memcpy(image.data() + t.offset, src, static_cast<size_t>(t.size) * sizeof(uint16_t));
      continue;
    }
    for (int64_t i = 0; i < t.size; ++i) image[static_cast<size_t>(t.offset + i)] = f32_to_bf16(src[i]);
  }
  return image;
}

}  // namespace

// ---- host only: no device needed ------------------------------------------------------------

TEST(DeviceUnitLayoutHost, TensorsInSlotOrderOnAlignedOffsets) {
  std::vector<model::ModelSpec> specs;
  for (const auto& m : layout_models()) specs.push_back(spec_of(m));
  specs.push_back(model::synthetic_model_spec("llama-3.1-8b"));
  specs.push_back(model::synthetic_model_spec("qwen2.5-7b"));
  for (const model::ModelSpec& spec : specs) {
    SCOPED_TRACE(spec.source);
    const cuda::DeviceUnitLayout lay = cuda::device_unit_layout(spec);
    const int64_t L = spec.num_layers, H = spec.hidden_size, V = spec.vocab_size;
    ASSERT_EQ(lay.units.size(), static_cast<size_t>(L + 2));
    EXPECT_EQ(lay.attention_head_dim, cuda::attention_head_dim(spec));
    for (size_t u = 0; u < lay.units.size(); ++u) {
      const cuda::DeviceUnit& unit = lay.units[u];
      int64_t end = 0;
      for (const auto& t : unit.tensors) {
        EXPECT_EQ(t.offset % cuda::kDeviceTensorAlign, 0) << model::role_name(t.role);
        EXPECT_GE(t.offset, end);
        EXPECT_LT(t.offset - end, cuda::kDeviceTensorAlign);
        // fp32 (two bf16 elements per value) exactly for the router's biases, the attention sinks, the
        // linear layers' per-head decay parameters (A_log, dt_bias, Mamba-2's D) and the xIELU scalars
        using R = model::WeightRole;
        EXPECT_EQ(t.f32, t.role == R::router_bias || t.role == R::router_logit_bias || t.role == R::attn_sinks ||
                             t.role == R::linear_a_log || t.role == R::linear_dt_bias || t.role == R::mamba_d ||
                             t.role == R::xielu_alpha_p || t.role == R::xielu_alpha_n || t.role == R::xielu_beta ||
                             t.role == R::xielu_eps)
            << model::role_name(t.role);
        EXPECT_EQ(t.size, model::element_count(t.weight.shape) * (t.f32 ? 2 : 1));
        end = t.offset + t.size;
      }
      EXPECT_EQ(unit.elements, end);
      if (u >= 1 && u <= static_cast<size_t>(L)) {
        // Each layer's own slots: a dense layer among MoE ones has fewer.
        const std::vector<model::WeightSlot> slots = model::layer_slots(spec, static_cast<int64_t>(u) - 1);
        ASSERT_EQ(unit.tensors.size(), slots.size());
        for (size_t i = 0; i < slots.size(); ++i) {
          EXPECT_EQ(unit.tensors[i].role, slots[i].role);
          EXPECT_EQ(unit.tensors[i].weight.layer, static_cast<int64_t>(u) - 1);
        }
      }
    }
    ASSERT_EQ(lay.units[0].tensors.size(), 1u);
    EXPECT_EQ(lay.units[0].tensors[0].role, model::WeightRole::embed);
    EXPECT_EQ(lay.units[0].elements, V * H);
    // The head: the final norm, its bias and lm_head's where the model has them (Phi-3.5-MoE), lm_head last.
    const cuda::DeviceUnit& head = lay.units[lay.head_unit()];
    std::vector<model::WeightRole> want = {model::WeightRole::final_norm};
    if (spec.norm_bias) want.push_back(model::WeightRole::final_norm_bias);
    if (spec.lm_head_bias) want.push_back(model::WeightRole::lm_head_bias);
    want.push_back(model::WeightRole::lm_head);
    ASSERT_EQ(head.tensors.size(), want.size());
    int64_t before_lm = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_EQ(head.tensors[i].role, want[i]) << i;
      if (i + 1 < want.size()) {
        before_lm += (head.tensors[i].size + cuda::kDeviceTensorAlign - 1) / cuda::kDeviceTensorAlign *
                     cuda::kDeviceTensorAlign;
      }
    }
    const cuda::DeviceUnitTensor& lm = head.tensors.back();
    EXPECT_EQ(lm.tied_copy(), spec.tied_embeddings);
    EXPECT_EQ(lm.weight.role, spec.tied_embeddings ? model::WeightRole::embed : model::WeightRole::lm_head);
    EXPECT_EQ(lm.offset, before_lm);
    EXPECT_EQ(head.elements, before_lm + V * H);
  }
}

TEST(DeviceUnitLayoutHost, ShardElements) {
  for (int64_t e : {int64_t{0}, int64_t{1}, int64_t{127}, int64_t{128}, int64_t{129}, int64_t{1000003}}) {
    for (int G = 1; G <= 5; ++G) {
      const int64_t S = cuda::device_shard_elements(e, G);
      EXPECT_EQ(S % cuda::kDeviceTensorAlign, 0) << e << " / " << G;
      EXPECT_GE(S * G, e);
      EXPECT_GT(S, 0);
      if (e > 0) {
        EXPECT_LT(S - (e + G - 1) / G, cuda::kDeviceTensorAlign) << e << " / " << G;
      }
    }
  }
  // Past INT_MAX bytes a shard is whole MiBs (MPI's byte counts go in 1 MiB blocks).
  const int64_t big = int64_t{3} << 30;
  for (int G = 1; G <= 2; ++G) {
    const int64_t S = cuda::device_shard_elements(big, G);
    EXPECT_GT(S * 2, int64_t{INT_MAX});
    EXPECT_EQ((S * 2) % (int64_t{1} << 20), 0);
  }
  EXPECT_THROW(cuda::device_shard_elements(10, 0), Error);
}

TEST(DeviceUnitLayoutHost, RankShardsConcatenateToTheDeviceImage) {
  for (const auto& m : layout_models()) {
    SCOPED_TRACE(m);
    const bool synthetic = m.rfind("synthetic:", 0) == 0;
    auto hw = engine::HostWeights::load(m);
    std::unique_ptr<io::SafetensorsReader> reader;
    if (!synthetic) reader = std::make_unique<io::SafetensorsReader>(m);
    const cuda::DeviceUnitLayout lay = cuda::device_unit_layout(hw->spec());
    for (size_t u = 0; u < lay.units.size(); ++u) {
      const std::vector<uint16_t> image = unit_image(*hw, lay, u);
      for (int G = 1; G <= 4; ++G) {
        const int64_t S = cuda::device_shard_elements(lay.units[u].elements, G);
        std::vector<uint16_t> all(static_cast<size_t>(S * G), 0xFFFF);
        for (int j = 0; j < G; ++j) {
          cuda::build_unit_range(lay.units[u], reader.get(), j * S, S, all.data() + static_cast<size_t>(j * S));
        }
        const std::vector<uint16_t> head(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(image.size()));
        EXPECT_EQ(head, image) << "unit " << u << ", G = " << G;
        for (size_t i = image.size(); i < all.size(); ++i) {
          ASSERT_EQ(all[i], 0) << "padding element " << i << " of unit " << u << ", G = " << G;
        }
      }
    }
  }
}

// Resident placement: every layer unit ends before the next begins, also where a dense layer 0
// (Qwen2-MoE's mlp_only_layers) is far smaller than the MoE layers after it.
TEST(DeviceUnitLayoutHost, ResidentLayersDoNotOverlapWhenTheirSizesDiffer) {
  model::ModelSpec spec = model::synthetic_model_spec("qwen3-30b-a3b");
  spec.num_layers = 4;
  spec.moe_layers = {0, 1, 0, 1};  // dense, MoE, dense, MoE
  ASSERT_FALSE(spec.is_moe_layer(0));
  ASSERT_TRUE(spec.is_moe_layer(1));
  const cuda::DeviceUnitLayout lay = cuda::device_unit_layout(spec);
  const std::vector<int64_t> at = lay.resident_layer_offsets();
  ASSERT_EQ(at.size(), 5u);
  EXPECT_EQ(at[0], 0);
  EXPECT_LT(lay.units[lay.layer_unit(0)].elements, lay.units[lay.layer_unit(1)].elements / 10);
  for (int64_t l = 0; l < spec.num_layers; ++l) {
    const int64_t elements = lay.units[lay.layer_unit(l)].elements;
    EXPECT_EQ(at[static_cast<size_t>(l)] % cuda::kDeviceTensorAlign, 0);
    EXPECT_GE(at[static_cast<size_t>(l) + 1] - at[static_cast<size_t>(l)], elements) << "layer " << l;
    EXPECT_LT(at[static_cast<size_t>(l) + 1] - at[static_cast<size_t>(l)], elements + cuda::kDeviceTensorAlign);
  }
}

// ---- on the device --------------------------------------------------------------------------

// The resident weights hold the same image, converted on the device.
TEST(DeviceWeights, HoldTheDeviceImageOfEveryUnit) {
  ABL_REQUIRE_GPU();
  // Dense, padded head dims, the four norms of Gemma 2, and MoE layers (routed experts, a shared
  // expert, a dense layer among MoE ones).
  for (const char* name : {"/organism", "/golden/qwen2-qkv-bias", "/golden/qwen3-qk-norm", "/golden/gemma2-softcap",
                           "/golden/mixtral-moe", "/golden/qwen2-moe-shared", "/golden/phimoe"}) {
    const std::string dir = fixture_dir() + name;
    SCOPED_TRACE(dir);
    auto hw = engine::HostWeights::load(dir);
    cuda::Stream s;
    cuda::DeviceWeights dev(*hw, s.get());
    const cuda::DeviceUnitLayout lay = cuda::device_unit_layout(hw->spec());
    auto download = [&](const __nv_bfloat16* p, int64_t n) {
      std::vector<uint16_t> out(static_cast<size_t>(n));
      cuda::copy_to_host(out.data(), p, out.size() * sizeof(uint16_t), s.get());
      return out;
    };
    EXPECT_EQ(download(dev.embedding(), lay.units[0].elements), unit_image(*hw, lay, 0));
    for (int64_t l = 0; l < hw->spec().num_layers; ++l) {
      const size_t u = lay.layer_unit(l);
      EXPECT_EQ(download(dev.layer(l).attn_norm, lay.units[u].elements), unit_image(*hw, lay, u)) << "layer " << l;
    }
    const size_t h = lay.head_unit();
    const std::vector<uint16_t> image = unit_image(*hw, lay, h);
    // Each head view (the norm, its bias and lm_head's where the model has them, lm_head) at its tensor
    for (const cuda::DeviceUnitTensor& t : lay.units[h].tensors) {
      const cuda::DeviceHead& head = dev.head();
      const __nv_bfloat16* view = t.role == model::WeightRole::final_norm        ? head.final_norm
                                  : t.role == model::WeightRole::final_norm_bias ? head.final_norm_bias
                                  : t.role == model::WeightRole::lm_head_bias    ? head.lm_head_bias
                                                                                 : head.lm_head;
      ASSERT_NE(view, nullptr) << model::role_name(t.role);
      EXPECT_EQ(download(view, t.size), std::vector<uint16_t>(image.begin() + t.offset, image.begin() + t.offset + t.size))
          << model::role_name(t.role);
    }
  }
}

namespace {

// One rank, no communicator: the sharded source (whole units, resident or offloaded and copied up
// unit by unit) gives the resident engine's results bit for bit, with and without ablation.
void expect_one_rank_sharded_matches_resident(const std::string& dir) {
  SCOPED_TRACE(dir);
  const auto prompts = abl::testing::golden_prompts(dir);
  int64_t total = 0;
  for (const auto& p : prompts) total += static_cast<int64_t>(p.size()) + 1;
  const engine::Limits limits{total, 16};
  std::vector<size_t> all(prompts.size());
  for (size_t p = 0; p < all.size(); ++p) all[p] = p;
  const std::vector<std::vector<size_t>> passes = {all, {3}, {}, {0, 5}};

  auto hw = engine::HostWeights::load(dir);
  const model::ModelSpec& spec = hw->spec();
  cuda::Stream load;
  cuda::DeviceWeights resident(*hw, load.get());
  cuda::CudaEngine ref(resident, limits);
  cuda::DeviceKvCache ref_cache(spec, total, ref.stream());
  const abl::testing::PassResults want = abl::testing::run_passes(ref, ref_cache, prompts, passes, {}, nullptr);
  std::vector<float> want_all(static_cast<size_t>(total * spec.vocab_size));
  engine::Batch packed;
  int64_t row = 0;
  for (const auto& p : prompts) {
    packed.add(p.data(), static_cast<int64_t>(p.size()), row, 0);
    row += static_cast<int64_t>(p.size());
  }
  engine::Outputs every;
  every.all_logits = want_all.data();
  ref.forward(packed, ref_cache, every);

  // Ablation: two trials (global and per-layer direction), some prompts un-ablated.
  const int64_t L = spec.num_layers;
  const engine::AblationTable table = abl::testing::two_trial_table(spec, 7);
  const std::vector<int32_t> trial_of = {0, 1, -1, 1, 0, -1, 1, 0};
  const cuda::DeviceAblation ref_ab(resident, table, ref.stream());
  const abl::testing::PassResults want_ab =
      abl::testing::run_passes(ref, ref_cache, prompts, passes, trial_of, &ref_ab);

  for (bool offload : {false, true}) {
    SCOPED_TRACE(offload ? "offloaded" : "resident shards");
    cuda::Stream compute;
    cuda::DeviceShardingOptions opts;
    opts.offload_params = offload;
    auto sharded = cuda::DeviceShardedWeights::load(dir, nullptr, opts, compute.get());
    EXPECT_EQ(sharded->group_size(), 1);
    EXPECT_FALSE(sharded->collective());
    EXPECT_EQ(sharded->compute_stream(), compute.get());
    EXPECT_EQ(sharded->host_bytes() > 0, offload);
    cuda::CudaEngine eng(*sharded, limits);
    EXPECT_EQ(eng.stream(), compute.get());
    cuda::DeviceKvCache cache(spec, total, eng.stream());
    abl::testing::expect_identical(abl::testing::run_passes(eng, cache, prompts, passes, {}, nullptr), want,
                                   "one-rank sharded engine");
    std::vector<float> got_all(want_all.size());
    engine::Outputs o;
    o.all_logits = got_all.data();
    eng.forward(packed, cache, o);
    abl::testing::expect_identical(got_all, want_all, "logits at every token");
    const cuda::DeviceAblation ab(*sharded, table, eng.stream());
    abl::testing::expect_identical(abl::testing::run_passes(eng, cache, prompts, passes, trial_of, &ab), want_ab,
                                   "one-rank sharded engine, ablated");
    // Offloaded units are copied up per request (a layer unit per layer and pass, at least).
    if (offload) {
      EXPECT_GE(sharded->gathers(), L);
    } else {
      EXPECT_EQ(sharded->gathers(), 0);
    }
    // The ablation vectors must be computed on the source's compute stream.
    cuda::Stream other;
    EXPECT_THROW((void)cuda::DeviceAblation(*sharded, table, other.get()), Error);
  }
}

}  // namespace

// The app's weight source (load_device_weights builds DeviceShardedWeights on one rank too): the
// organism, and the layer units of the other families (MoE with a shared expert and a dense layer;
// Gemma 2's four norms and tied head).
TEST(DeviceShardedWeights, OneRankMatchesResidentEngine) {
  ABL_REQUIRE_GPU();
  for (const char* name : {"/organism", "/golden/qwen2-moe-shared", "/golden/gemma2-softcap"}) {
    expect_one_rank_sharded_matches_resident(fixture_dir() + name);
  }
}
