// The CUDA engine on the host (no device): supported head dims and the typed buffer plan.
#include <gtest/gtest.h>

#include "common/error_of.h"
#include "engine/cuda/engine_cuda_check.h"
#include "io/safetensors_test_util.h"

using namespace abl;
using namespace abl::cuda_engine_test;

// ---- host only: no device needed ------------------------------------------------------------

TEST(CudaEngineHost, AttentionHeadDimAndPlan) {
  EXPECT_EQ(cuda::attention_head_dim(8), 64);
  EXPECT_EQ(cuda::attention_head_dim(32), 64);
  EXPECT_EQ(cuda::attention_head_dim(64), 64);
  EXPECT_EQ(cuda::attention_head_dim(72), 80);
  EXPECT_EQ(cuda::attention_head_dim(128), 128);
  EXPECT_EQ(cuda::attention_head_dim(200), 256);
  EXPECT_THROW(cuda::attention_head_dim(300), Error);

  const model::ModelSpec spec = model::synthetic_model_spec("llama-3.1-8b");
  const engine::BufferPlan p = cuda::plan_cuda_engine(spec, {2048, 256}, 132).table;
  std::cout << p.table();
  bool has_ws = false, has_scratch = false;
  for (const auto& e : p.entries) {
    EXPECT_EQ(e.bytes % 256, 0) << e.name;
    has_ws |= e.name == "cuBLASLt workspace";
    has_scratch |= e.name == "attention scratch";
  }
  EXPECT_TRUE(has_ws && has_scratch);
  // HD 128 has a kernel: no padded buffers.
  for (const auto& e : p.entries) EXPECT_EQ(e.name.find("padded"), std::string::npos) << e.name;
  // 1000 rows and the scratch row of padded decode steps.
  EXPECT_EQ(cuda::DeviceKvCache::bytes_for(spec, 1000), 2 * 32 * 1001 * 8 * 128 * 2);
}

// The typed plan the engine carves its arena by (no GPU): every slice aligned, in arena order,
// disjoint, inside the arena; the table names the same slices and sums to the arena.
TEST(CudaEnginePlan, SlicesTileTheArenaAndMatchTheTable) {
  for (const char* preset : {"llama-3.1-8b", "qwen2.5-7b"}) {
    const model::ModelSpec spec = model::synthetic_model_spec(preset);
    const cuda::CudaEnginePlan p = cuda::plan_cuda_engine(spec, {512, 64}, cuda::kPlanSmCount);
    const std::vector<const cuda::Slice*> carved = {&p.x,    &p.h,        &p.q,      &p.k,        &p.v,
                                                    &p.att,  &p.y,        &p.gate,   &p.up,       &p.rows,
                                                    &p.last, &p.logits,   &p.next_ids, &p.kl_ref, &p.kl,
                                                    &p.captures, &p.inv_freq, &p.attn_scratch,
                                                    &p.gemm_workspace, &p.batch};
    size_t end = 0;
    for (const cuda::Slice* s : carved) {
      EXPECT_EQ(s->offset % 256, 0u);
      EXPECT_EQ(s->offset, end) << preset;  // back to back in carve order (no padded buffers here)
      end = s->offset + s->bytes;
    }
    EXPECT_EQ(end, p.total);
    EXPECT_EQ(p.table.total(), static_cast<int64_t>(p.total));
    ASSERT_EQ(p.table.entries.size(), carved.size());
    for (size_t i = 0; i < carved.size(); ++i) EXPECT_EQ(p.table.entries[i].bytes, static_cast<int64_t>(carved[i]->bytes));
    EXPECT_EQ(p.logits.bytes, size_t{64} * static_cast<size_t>(spec.vocab_size) * 4);
    EXPECT_EQ(p.x.bytes, size_t{512} * static_cast<size_t>(spec.hidden_size) * 4);
    EXPECT_EQ(p.qp.bytes, 0u);
  }
  // A head dim without a kernel (the organism's 16) carves the padded buffers too.
  model::ModelSpec tiny = model::synthetic_model_spec("llama-3.1-8b");
  tiny.head_dim = 16;
  tiny.num_heads = 4;
  tiny.num_kv_heads = 2;
  tiny.hidden_size = 64;
  const cuda::CudaEnginePlan p = cuda::plan_cuda_engine(tiny, {32, 4}, cuda::kPlanSmCount);
  EXPECT_EQ(p.qp.bytes, 32u * 4 * 64 * 2);  // (T, NH*HDp) bf16 at HDp = 64
  EXPECT_GT(p.attp.offset, p.qp.offset);
  EXPECT_EQ(cuda::cuda_engine_footprint().pass_buffers(tiny, {32, 4}).total(), static_cast<int64_t>(p.total));
}


// An all-MoE model runs every MLP in the expert buffers: no dense gate/up rows (they would be
// zero-byte lines in `plan`), the expert buffers sized by the expert width; Qwen2-MoE's shared
// expert keeps gate/up at its own width.
TEST(CudaEnginePlan, MixtureOfExpertsCarvesExpertBuffersAndNoUnusedGateUp) {
  const model::ModelSpec all_moe = model::synthetic_model_spec("qwen3-30b-a3b");
  ASSERT_EQ(all_moe.dense_mlp_width(), 0);
  const cuda::CudaEnginePlan p = cuda::plan_cuda_engine(all_moe, {512, 64}, cuda::kPlanSmCount);
  EXPECT_EQ(p.gate.bytes, 0u);
  EXPECT_EQ(p.up.bytes, 0u);
  for (const auto& e : p.table.entries) {
    EXPECT_GT(e.bytes, 0) << e.name;
    EXPECT_EQ(e.name.rfind("gate (", 0), std::string::npos) << e.name;
  }
  const int64_t Tk = 512 * all_moe.experts_per_token;
  EXPECT_EQ(p.expert_gate_up.bytes, static_cast<size_t>(Tk * 2 * all_moe.moe_intermediate_size * 2));
  EXPECT_EQ(p.table.total(), static_cast<int64_t>(p.total));

  model::ModelSpec shared = all_moe;  // as Qwen2-MoE: a shared expert beside the routed ones
  shared.shared_expert_intermediate_size = 5632;
  const cuda::CudaEnginePlan q = cuda::plan_cuda_engine(shared, {512, 64}, cuda::kPlanSmCount);
  EXPECT_EQ(q.gate.bytes, static_cast<size_t>(512 * shared.shared_expert_intermediate_size * 2));
}

// Nemotron-H's ungated relu² MLPs and experts have no gate projection: no gate rows are carved
// (dense), and the expert buffer holds the up rows only.
TEST(CudaEnginePlan, UngatedReluSquaredCarvesNoGateRows) {
  const model::ModelSpec dense = model::synthetic_model_spec("nemotron-h-8b");
  ASSERT_EQ(dense.activation, model::Activation::relu2);
  const cuda::CudaEnginePlan p = cuda::plan_cuda_engine(dense, {512, 64}, cuda::kPlanSmCount);
  EXPECT_EQ(p.gate.bytes, 0u);
  EXPECT_EQ(p.up.bytes, static_cast<size_t>(512 * dense.dense_mlp_width() * 2));
  for (const auto& e : p.table.entries) EXPECT_EQ(e.name.rfind("gate (", 0), std::string::npos) << e.name;
  EXPECT_EQ(p.table.total(), static_cast<int64_t>(p.total));

  model::ModelSpec moe = model::synthetic_model_spec("qwen3-30b-a3b");  // its experts made relu² for the plan
  moe.activation = model::Activation::relu2;
  const cuda::CudaEnginePlan q = cuda::plan_cuda_engine(moe, {512, 64}, cuda::kPlanSmCount);
  const int64_t Tk = 512 * moe.experts_per_token;
  EXPECT_EQ(q.expert_gate_up.bytes, static_cast<size_t>(Tk * moe.moe_intermediate_size * 2));
  EXPECT_EQ(q.table.total(), static_cast<int64_t>(q.total));

  const model::ModelSpec apertus = model::synthetic_model_spec("apertus-8b");  // the ungated xIELU MLP
  ASSERT_EQ(apertus.activation, model::Activation::xielu);
  const cuda::CudaEnginePlan a = cuda::plan_cuda_engine(apertus, {512, 64}, cuda::kPlanSmCount);
  EXPECT_EQ(a.gate.bytes, 0u);
  EXPECT_EQ(a.up.bytes, static_cast<size_t>(512 * apertus.intermediate_size * 2));
}

// Latent attention (DeepSeek-V2/V3, GLM-4.7-Flash) runs at the head dim of the wider of its q/k and value
// heads, both padded: the fixture's 24 / 12 at 64, DeepSeek-V3's 192 / 128 at 256. The plan carves
// q_a_proj's output (only with a q_lora_rank), kv_a's rows, the latent and kv_b's rows; the attention
// output is NH·HDv wide (o_proj's input); the KV cache holds NH padded heads per row.
TEST(CudaEnginePlan, LatentAttentionCarvesItsBuffersAndPadsKeysAndValues) {
  const model::ModelSpec mla = model::load_model_spec(fixture_dir() + "/golden/deepseek-v3-mla");
  ASSERT_TRUE(mla.mla);
  ASSERT_EQ(mla.head_dim, 24);
  ASSERT_EQ(mla.v_head(), 12);
  EXPECT_EQ(cuda::attention_head_dim(mla), 64);
  EXPECT_TRUE(cuda::attention_padded(mla));
  const int64_t T = 32, NH = mla.num_heads;
  const cuda::CudaEnginePlan p = cuda::plan_cuda_engine(mla, {T, 4}, cuda::kPlanSmCount);
  const auto aligned = [](int64_t bytes) { return static_cast<size_t>((bytes + 255) / 256 * 256); };
  EXPECT_EQ(p.q_a.bytes, aligned(T * mla.q_lora_rank * 2));
  EXPECT_EQ(p.kv_a.bytes, aligned(T * (24 + 8) * 2));
  EXPECT_EQ(p.latent.bytes, aligned(T * 24 * 2));
  EXPECT_EQ(p.kv_b.bytes, aligned(T * NH * (16 + 12) * 2));
  EXPECT_EQ(p.att.bytes, aligned(T * NH * 12 * 2));
  EXPECT_EQ(p.vp.bytes, aligned(T * NH * 64 * 2));
  EXPECT_EQ(p.k.bytes, 0u);  // the keys and values are built straight into kp, vp
  EXPECT_EQ(p.v.bytes, 0u);
  EXPECT_EQ(p.table.total(), static_cast<int64_t>(p.total));
  EXPECT_EQ(cuda::DeviceKvCache::bytes_for(mla, 100), 2 * mla.attention_layers() * 101 * NH * 64 * 2);
  // The device unit holds the latent projections in layer_slots() order.
  const cuda::DeviceUnitLayout lay = cuda::device_unit_layout(mla);
  EXPECT_EQ(lay.attention_head_dim, 64);
  std::vector<model::WeightRole> roles;
  for (const auto& t : lay.units[lay.layer_unit(0)].tensors) roles.push_back(t.role);
  for (model::WeightRole r : {model::WeightRole::q_a_proj, model::WeightRole::q_a_norm, model::WeightRole::q_b_proj,
                              model::WeightRole::kv_a_proj, model::WeightRole::kv_a_norm, model::WeightRole::kv_b_proj}) {
    EXPECT_NE(std::find(roles.begin(), roles.end(), r), roles.end()) << model::role_name(r);
  }

  const model::ModelSpec lite = model::load_model_spec(fixture_dir() + "/golden/deepseek-v2-lite");  // q_proj
  ASSERT_EQ(lite.q_lora_rank, 0);
  EXPECT_EQ(cuda::plan_cuda_engine(lite, {T, 4}, cuda::kPlanSmCount).q_a.bytes, 0u);

  const model::ModelSpec v3 = model::synthetic_model_spec("deepseek-v3");
  EXPECT_EQ(cuda::attention_head_dim(v3), 256);
  const cuda::CudaEnginePlan big = cuda::plan_cuda_engine(v3, {512, 64}, cuda::kPlanSmCount);
  EXPECT_EQ(big.qp.bytes, static_cast<size_t>(512 * 128 * 256 * 2));
  EXPECT_EQ(big.att.bytes, static_cast<size_t>(512 * 128 * 128 * 2));

  model::ModelSpec wide_v = mla;  // a value head wider than the q/k head sets HDp
  wide_v.v_head_dim = 100;
  EXPECT_EQ(cuda::attention_head_dim(wide_v), 128);
}

// A model whose experts the CUDA engine's grouped GEMMs cannot take is refused before anything is allocated,
// naming the model, the shape and --backend cpu: by the plan as by the engine (no device needed).
TEST(CudaEnginePlan, RefusesMoeShapesNamingTheCpuBackend) {
  const model::ModelSpec groups = model::load_model_spec(fixture_dir() + "/golden/deepseek-v2-groups");
  ASSERT_EQ(groups.moe_intermediate_size % 8, 4);  // experts of 20
  for (const std::string& error :
       {abl::testing::thrown_error_of([&] { cuda::check_cuda_engine_runs(groups); }),
        abl::testing::thrown_error_of([&] { cuda::plan_cuda_engine(groups, {64, 4}, cuda::kPlanSmCount); })}) {
    EXPECT_TRUE(abl::testing::contains_all(error, {"deepseek-v2-groups", "moe_intermediate_size (20)", "--backend cpu"}))
        << error;
  }
  EXPECT_NO_THROW(cuda::check_cuda_engine_runs(model::load_model_spec(fixture_dir() + "/golden/deepseek-v2-lite")));
}

// Gemma 4 runs on the CPU backend only (docs/gemma4.md §6 step 8): every way into the CUDA engine — its plan, the
// KV cache's size, the device layout the weights load into — says so before any kernel's limit (512-wide heads).
TEST(CudaEnginePlan, RefusesGemma4NamingTheCpuBackend) {
  for (const char* name : {"gemma-4-e2b", "gemma-4-31b", "gemma-4-26b-a4b"}) {
    const model::ModelSpec s = model::synthetic_model_spec(name);
    for (const std::string& error :
         {abl::testing::thrown_error_of([&] { cuda::plan_cuda_engine(s, {64, 4}, cuda::kPlanSmCount); }),
          abl::testing::thrown_error_of([&] { cuda::DeviceKvCache::bytes_for(s, 100); }),
          abl::testing::thrown_error_of([&] { cuda::device_unit_layout(s); })}) {
      EXPECT_TRUE(abl::testing::contains_all(error, {name, "Gemma4ForCausalLM", "--backend cpu"})) << error;
    }
  }
}
